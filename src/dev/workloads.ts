import { PatchStrategy, type V1Pod } from '@kubernetes/client-node';
import { KubeApiError, type KubeClient } from '../k8s/client.js';
import { DevPoller, type PollerOptions } from './poller.js';

/**
 * The part of kube-controller-manager `azflex dev` needs and envtest does not ship: a
 * Deployment keeps `replicas` pods (created directly, without a ReplicaSet in between), and
 * pods whose Deployment is gone are deleted (the garbage collector's job). Enough for
 * `kubectl apply -f examples/` (and examples/topology/, with volumes.ts), `kubectl scale`
 * and `kubectl delete deployment`.
 */

interface OwnerRef {
  kind: string;
  uid: string;
}
interface DeploymentObj {
  metadata: { name: string; namespace: string; uid: string; deletionTimestamp?: unknown };
  spec: { replicas?: number; template: { metadata?: { labels?: Record<string, string> }; spec: Record<string, unknown> } };
}
interface PodObj {
  metadata: { name: string; namespace: string; ownerReferences?: OwnerRef[]; deletionTimestamp?: unknown };
  spec: { nodeName?: string };
  status?: { phase?: string };
}
interface List<T> {
  items: T[];
}

export interface DevWorkloadsOptions extends PollerOptions {
  client: KubeClient;
}

export class DevWorkloads extends DevPoller {

  constructor(private readonly o: DevWorkloadsOptions) {
    super('dev.workloads', o);
  }

  async tick(): Promise<void> {
    const c = this.o.client;
    // Typed reads come back as client-node models; these fields have the wire names.
    const [deployments, pods] = (await Promise.all([
      c.call('list deployments', (o) => c.apps.listDeploymentForAllNamespaces({}, o)),
      c.call('list pods', (o) => c.core.listPodForAllNamespaces({}, o)),
    ])) as unknown as [List<DeploymentObj>, List<PodObj>];
    const ownerOf = (p: PodObj): string | undefined => p.metadata.ownerReferences?.find((r) => r.kind === 'Deployment')?.uid;
    const live = new Set(deployments.items.filter((d) => !d.metadata.deletionTimestamp).map((d) => d.metadata.uid));
    for (const pod of pods.items) {
      const owner = ownerOf(pod);
      if (owner !== undefined && !live.has(owner) && !pod.metadata.deletionTimestamp) await this.deletePod(pod);
    }
    for (const d of deployments.items) {
      if (d.metadata.deletionTimestamp) continue;
      const mine = pods.items.filter((p) => ownerOf(p) === d.metadata.uid && !p.metadata.deletionTimestamp);
      const want = d.spec.replicas ?? 1;
      for (let i = mine.length; i < want; i++) await this.createPod(d);
      // Scale-down removes unscheduled pods first, as a ReplicaSet does.
      const extra = [...mine].sort((a, b) => Number(Boolean(a.spec.nodeName)) - Number(Boolean(b.spec.nodeName))).slice(0, Math.max(0, mine.length - want));
      for (const pod of extra) await this.deletePod(pod);
      const ready = mine.filter((p) => p.status?.phase === 'Running').length;
      const body = { status: { replicas: Math.min(mine.length, want), readyReplicas: ready, availableReplicas: ready, updatedReplicas: Math.min(mine.length, want) } };
      await this.ignoreMissing(
        c.call('patch deployment status', (o) => c.apps.patchNamespacedDeploymentStatus({ name: d.metadata.name, namespace: d.metadata.namespace, body }, o), {
          patch: PatchStrategy.MergePatch,
        }),
      );
    }
  }

  private async createPod(d: DeploymentObj): Promise<void> {
    const { name, namespace, uid } = d.metadata;
    const body = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: `${name}-`,
        namespace,
        labels: d.spec.template.metadata?.labels ?? {},
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name, uid, controller: true, blockOwnerDeletion: true }],
      },
      spec: d.spec.template.spec,
    } as unknown as V1Pod;
    const c = this.o.client;
    await c.call('create pod', (o) => c.core.createNamespacedPod({ namespace, body }, o));
  }

  private deletePod(pod: PodObj): Promise<void> {
    const c = this.o.client;
    return this.ignoreMissing(c.call('delete pod', (o) => c.core.deleteNamespacedPod({ name: pod.metadata.name, namespace: pod.metadata.namespace }, o)));
  }

  private async ignoreMissing(p: Promise<unknown>): Promise<void> {
    try {
      await p;
    } catch (e) {
      if (!(e instanceof KubeApiError && e.code === 404)) throw e;
    }
  }
}
