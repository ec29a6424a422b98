import { TAG } from '../azure/naming.js';
import type { InstanceType } from '../catalog/skus.js';
import { KubeApiError, type KubeRest } from '../k8s/rest.js';
import { LABEL } from '../runtime/annotations.js';
import { PROVIDER_ID_PREFIX } from '../runtime/effects.js';
import type { FakeArm } from '../sim/arm/fake-arm.js';
import { RealClock } from '../platform/real-clock.js';
import { PeriodicLoop } from '../runtime/loop.js';

/**
 * The simulated kubelet of `azflex dev`, against the REAL API server: what the flex node
 * agent's kubeadm join and the kubelet would do on each VM the fake ARM booted.
 *  - A Succeeded VM registers a Node after a boot delay: name = VM name, providerID from the
 *    VM's ARM id, labels from its NodeClaim (the `karpenter.sh_nodeclaim` tag), capacity from
 *    the SKU catalog, Ready=True through the status subresource.
 *  - No node lifecycle controller runs, so the `node.kubernetes.io/not-ready` taint the
 *    TaintNodesByCondition admission plugin puts on every new Node is lifted here.
 *  - Pods kube-scheduler bound to a node become Running; pods being deleted are confirmed
 *    gone (what a kubelet does after the containers stop), as are pods on vanished Nodes
 *    (the pod GC's job).
 *  - A Node whose VM is gone (or no longer Succeeded) turns NotReady.
 */

interface Taint {
  key: string;
  value?: string;
  effect: string;
}
interface Condition {
  type: string;
  status: string;
}
interface NodeObj {
  metadata: { name: string; resourceVersion?: string; deletionTimestamp?: string };
  spec: { providerID?: string; taints?: Taint[] };
  status?: { conditions?: Condition[] };
}
interface NodeClaimObj {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { requirements?: Array<{ key: string; operator: string; values?: string[] }>; taints?: Taint[] };
}
interface PodObj {
  metadata: { name: string; namespace: string; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status?: { phase?: string };
}
interface List<T> {
  items: T[];
}

export const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';

export interface DevKubeletOptions {
  rest: KubeRest;
  arm: FakeArm;
  instanceTypes: readonly InstanceType[];
  /** From a VM's Succeeded to its Node registering (kubeadm join). */
  bootDelayMs?: number;
  pollMs?: number;
  onError?: (e: unknown) => void;
}

function readyCondition(status: 'True' | 'False', reason: string, message: string): Record<string, string> {
  const now = new Date().toISOString();
  return { type: 'Ready', status, reason, message, lastHeartbeatTime: now, lastTransitionTime: now };
}

function isReady(node: NodeObj): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function notFound(e: unknown): boolean {
  return e instanceof KubeApiError && e.code === 404;
}

export class DevKubelet {
  private readonly firstSeen = new Map<string, number>();
  private readonly types: Map<string, InstanceType>;
  private loop: PeriodicLoop | undefined;

  constructor(private readonly o: DevKubeletOptions) {
    this.types = new Map(o.instanceTypes.map((t) => [t.name.toLowerCase(), t]));
  }

  start(): void {
    this.loop ??= new PeriodicLoop({
      name: 'dev.kubelet',
      clock: new RealClock(),
      intervalMs: this.o.pollMs ?? 500,
      initialDelayMs: 0,
      run: () => this.tick(),
      ...(this.o.onError ? { onError: this.o.onError } : {}),
    }).start();
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
    this.loop = undefined;
  }

  async tick(): Promise<void> {
    const rest = this.o.rest;
    const [nodes, claims, pods] = await Promise.all([
      rest.request<List<NodeObj>>('GET', '/api/v1/nodes'),
      rest.request<List<NodeClaimObj>>('GET', '/apis/karpenter.sh/v1/nodeclaims'),
      rest.request<List<PodObj>>('GET', '/api/v1/pods'),
    ]);
    await this.registerNodes(nodes.items, new Map(claims.items.map((c) => [c.metadata.name, c])));
    await this.runPods(pods.items, new Set(nodes.items.map((n) => n.metadata.name)));
  }

  private async registerNodes(nodes: NodeObj[], claims: Map<string, NodeClaimObj>): Promise<void> {
    const now = Date.now();
    const byProviderId = new Map(nodes.filter((n) => n.spec.providerID).map((n) => [n.spec.providerID!.toLowerCase(), n]));
    const live = new Set<string>();
    for (const vm of this.o.arm.currentVms()) {
      if (vm.provisioningState !== 'Succeeded') continue;
      const providerID = PROVIDER_ID_PREFIX + vm.id;
      live.add(providerID.toLowerCase());
      const node = byProviderId.get(providerID.toLowerCase());
      if (node) {
        await this.liftNotReadyTaint(node);
        continue;
      }
      const seen = this.firstSeen.get(vm.id) ?? now;
      this.firstSeen.set(vm.id, seen);
      if (now - seen < (this.o.bootDelayMs ?? 2000)) continue;
      this.firstSeen.delete(vm.id);
      await this.createNode(vm.name, providerID, vm.vmSize, vm.location, claims.get(vm.tags[TAG.nodeClaim] ?? ''));
    }
    for (const node of nodes) {
      const pid = node.spec.providerID?.toLowerCase();
      if (!pid?.startsWith(PROVIDER_ID_PREFIX) || live.has(pid) || !isReady(node)) continue;
      await this.patchNodeStatus(node.metadata.name, { conditions: [readyCondition('False', 'KubeletStopped', 'the VM is gone')] });
    }
  }

  private async createNode(name: string, providerID: string, vmSize: string, location: string, claim: NodeClaimObj | undefined): Promise<void> {
    const labels: Record<string, string> = { ...(claim?.metadata.labels ?? {}) };
    for (const r of claim?.spec.requirements ?? []) if (r.operator === 'In' && r.values?.length === 1) labels[r.key] = r.values[0]!;
    labels[LABEL.instanceType] = vmSize;
    labels[LABEL.region] = location;
    labels['kubernetes.io/hostname'] = name;
    labels['kubernetes.io/os'] = 'linux';
    const it = this.types.get(vmSize.toLowerCase());
    labels['kubernetes.io/arch'] = it?.arch ?? 'amd64';
    const capacity: Record<string, string> = it
      ? { cpu: String(it.vcpu), memory: `${it.memoryMiB}Mi`, pods: String(it.maxPods), 'ephemeral-storage': `${it.ephemeralStorageGiB}Gi`, ...(it.gpuCount ? { 'nvidia.com/gpu': String(it.gpuCount) } : {}) }
      : {};
    try {
      await this.o.rest.request('POST', '/api/v1/nodes', {
        body: { apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, spec: { providerID, taints: claim?.spec.taints ?? [] } },
      });
    } catch (e) {
      if (!(e instanceof KubeApiError && e.code === 409)) throw e;
    }
    await this.patchNodeStatus(name, {
      capacity,
      allocatable: capacity,
      conditions: [readyCondition('True', 'KubeletReady', 'azflex dev simulated kubelet')],
      nodeInfo: { kubeletVersion: 'v1.34.4', architecture: it?.arch ?? 'amd64', operatingSystem: 'linux' },
    });
  }

  /** Lifted with the read resourceVersion, so a taint the controller adds meanwhile is not lost. */
  private async liftNotReadyTaint(node: NodeObj): Promise<void> {
    const taints = node.spec.taints ?? [];
    if (!isReady(node) || !taints.some((t) => t.key === NOT_READY_TAINT)) return;
    try {
      await this.o.rest.request('PATCH', `/api/v1/nodes/${node.metadata.name}`, {
        contentType: 'application/merge-patch+json',
        body: { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints: taints.filter((t) => t.key !== NOT_READY_TAINT) } },
      });
    } catch (e) {
      // A conflict or a deleted node: the next tick sees the new state.
      if (!(e instanceof KubeApiError)) throw e;
    }
  }

  private async patchNodeStatus(name: string, status: Record<string, unknown>): Promise<void> {
    try {
      await this.o.rest.request('PATCH', `/api/v1/nodes/${name}/status`, { contentType: 'application/merge-patch+json', body: { status } });
    } catch (e) {
      if (!notFound(e)) throw e;
    }
  }

  private async runPods(pods: PodObj[], nodeNames: ReadonlySet<string>): Promise<void> {
    for (const pod of pods) {
      const { name, namespace } = pod.metadata;
      const nodeName = pod.spec.nodeName;
      if (!nodeName) continue;
      const path = `/api/v1/namespaces/${namespace}/pods/${name}`;
      try {
        if (pod.metadata.deletionTimestamp || !nodeNames.has(nodeName)) {
          await this.o.rest.request('DELETE', path, { query: { gracePeriodSeconds: 0 } });
        } else if (pod.status?.phase === 'Pending') {
          const now = new Date().toISOString();
          const cond = (type: string) => ({ type, status: 'True', lastTransitionTime: now });
          await this.o.rest.request('PATCH', `${path}/status`, {
            contentType: 'application/merge-patch+json',
            body: { status: { phase: 'Running', startTime: now, conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map(cond) } },
          });
        }
      } catch (e) {
        if (!notFound(e)) throw e;
      }
    }
  }
}
