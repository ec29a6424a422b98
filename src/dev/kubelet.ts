import { TAG } from '../azure/naming.js';
import { zoneLabel, type InstanceType } from '../catalog/skus.js';
import { PatchStrategy } from '@kubernetes/client-node';
import { KubeApiError, type KubeClient } from '../k8s/client.js';
import { PROVIDER_ID_PREFIX } from '../azure/naming.js';
import type { FakeArm } from '../sim/arm/fake-arm.js';
import { DevPoller, type PollerOptions } from './poller.js';
import { LABEL_DISK_CSI_ZONE, LABEL_INSTANCE_TYPE, LABEL_REGION, LABEL_ZONE, UNREGISTERED_TAINT_KEY } from '../apis/well-known.js';

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
 *  - A Node whose VM is gone (or no longer Succeeded, or stopped or deallocated) turns NotReady.
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
  metadata: { name: string; resourceVersion?: string; deletionTimestamp?: unknown };
  spec: { providerID?: string; taints?: Taint[] };
  status?: { conditions?: Condition[] };
}
interface NodeClaimObj {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { requirements?: Array<{ key: string; operator: string; values?: string[] }>; taints?: Taint[] };
}
interface PodObj {
  metadata: { name: string; namespace: string; deletionTimestamp?: unknown };
  spec: { nodeName?: string };
  status?: { phase?: string };
}
interface List<T> {
  items: T[];
}

const MERGE = { patch: PatchStrategy.MergePatch };

export const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';

export interface DevKubeletOptions extends PollerOptions {
  client: KubeClient;
  arm: FakeArm;
  instanceTypes: readonly InstanceType[];
  /** From a VM's Succeeded to its Node registering (kubeadm join). */
  bootDelayMs?: number;
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

export class DevKubelet extends DevPoller {
  private readonly firstSeen = new Map<string, number>();
  private readonly types: Map<string, InstanceType>;

  constructor(private readonly o: DevKubeletOptions) {
    super('dev.kubelet', o);
    this.types = new Map(o.instanceTypes.map((t) => [t.name.toLowerCase(), t]));
  }

  async tick(): Promise<void> {
    const c = this.o.client;
    // Typed reads come back as client-node models; these fields have the wire names.
    const [nodes, claims, pods] = (await Promise.all([
      c.call('list nodes', (o) => c.core.listNode({}, o)),
      c.call('list nodeclaims', (o) => c.custom.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' }, o)),
      c.call('list pods', (o) => c.core.listPodForAllNamespaces({}, o)),
    ])) as unknown as [List<NodeObj>, List<NodeClaimObj>, List<PodObj>];
    await this.registerNodes(nodes.items, new Map(claims.items.map((c) => [c.metadata.name, c])));
    await this.runPods(pods.items, new Set(nodes.items.map((n) => n.metadata.name)));
  }

  private async registerNodes(nodes: NodeObj[], claims: Map<string, NodeClaimObj>): Promise<void> {
    const now = Date.now();
    const byProviderId = new Map(nodes.filter((n) => n.spec.providerID).map((n) => [n.spec.providerID!.toLowerCase(), n]));
    const live = new Set<string>();
    for (const vm of this.o.arm.currentVms()) {
      // A stopped or deallocated VM runs no kubelet.
      if (vm.provisioningState !== 'Succeeded' || vm.powerState !== undefined) continue;
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
      await this.createNode(vm.name, providerID, vm.vmSize, vm.location, claims.get(vm.tags[TAG.nodeClaim] ?? ''), vm.zone);
    }
    for (const node of nodes) {
      const pid = node.spec.providerID?.toLowerCase();
      if (!pid?.startsWith(PROVIDER_ID_PREFIX) || live.has(pid) || !isReady(node)) continue;
      await this.patchNodeStatus(node.metadata.name, { conditions: [readyCondition('False', 'KubeletStopped', 'the VM is gone')] });
    }
  }

  private async createNode(name: string, providerID: string, vmSize: string, location: string, claim: NodeClaimObj | undefined, zone?: string): Promise<void> {
    const labels: Record<string, string> = { ...(claim?.metadata.labels ?? {}) };
    for (const r of claim?.spec.requirements ?? []) if (r.operator === 'In' && r.values?.length === 1) labels[r.key] = r.values[0]!;
    labels[LABEL_INSTANCE_TYPE] = vmSize;
    labels[LABEL_REGION] = location;
    // The VM's zone, as the cloud provider and the Azure disk CSI node plugin label it (the
    // kube-scheduler matches a zonal disk's PV node affinity against the CSI key).
    if (zone) labels[LABEL_ZONE] = labels[LABEL_DISK_CSI_ZONE] = zoneLabel(location, zone);
    labels['kubernetes.io/hostname'] = name;
    labels['kubernetes.io/os'] = 'linux';
    const it = this.types.get(vmSize.toLowerCase());
    labels['kubernetes.io/arch'] = it?.arch ?? 'amd64';
    const capacity: Record<string, string> = it
      ? { cpu: String(it.vcpu), memory: `${it.memoryMiB}Mi`, pods: String(it.maxPods), 'ephemeral-storage': `${it.ephemeralStorageGiB}Gi`, ...(it.gpuCount ? { 'nvidia.com/gpu': String(it.gpuCount) } : {}) }
      : {};
    try {
      const c = this.o.client;
      // As kubelet flags from azflex's user data: registered with karpenter.sh/unregistered,
      // which the controller swaps for the NodeClaim's taints at registration.
      const taints = [...(claim?.spec.taints ?? []), { key: UNREGISTERED_TAINT_KEY, effect: 'NoExecute' as const }];
      const body = { apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, spec: { providerID, taints } };
      await c.call('create node', (o) => c.core.createNode({ body }, o));
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
      const c = this.o.client;
      const body = { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints: taints.filter((t) => t.key !== NOT_READY_TAINT) } };
      await c.call('patch node', (o) => c.core.patchNode({ name: node.metadata.name, body }, o), MERGE);
    } catch (e) {
      // A conflict or a deleted node: the next tick sees the new state.
      if (!(e instanceof KubeApiError)) throw e;
    }
  }

  private async patchNodeStatus(name: string, status: Record<string, unknown>): Promise<void> {
    try {
      const c = this.o.client;
      await c.call('patch node status', (o) => c.core.patchNodeStatus({ name, body: { status } }, o), MERGE);
    } catch (e) {
      if (!notFound(e)) throw e;
    }
  }

  private async runPods(pods: PodObj[], nodeNames: ReadonlySet<string>): Promise<void> {
    for (const pod of pods) {
      const { name, namespace } = pod.metadata;
      const nodeName = pod.spec.nodeName;
      if (!nodeName) continue;
      const c = this.o.client;
      try {
        if (pod.metadata.deletionTimestamp || !nodeNames.has(nodeName)) {
          await c.call('delete pod', (o) => c.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 }, o));
        } else if (pod.status?.phase === 'Pending') {
          const now = new Date().toISOString();
          const cond = (type: string) => ({ type, status: 'True', lastTransitionTime: now });
          const body = { status: { phase: 'Running', startTime: now, conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map(cond) } };
          await c.call('patch pod status', (o) => c.core.patchNamespacedPodStatus({ name, namespace, body }, o), MERGE);
        }
      } catch (e) {
        if (!notFound(e)) throw e;
      }
    }
  }
}
