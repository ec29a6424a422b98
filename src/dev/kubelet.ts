import { TAG } from '../azure/naming.js';
import { zoneLabel, type InstanceType } from '../catalog/skus.js';
import { PatchStrategy } from '@kubernetes/client-node';
import { KubeApiError, type KubeClient } from '../k8s/client.js';
import { PROVIDER_ID_PREFIX } from '../azure/naming.js';
import type { FakeArm } from '../sim/arm/fake-arm.js';
import { KWOK_MANAGED_LABEL } from './control-plane.js';
import { DevPoller, type PollerOptions } from './poller.js';
import { LABEL_DISK_CSI_ZONE, LABEL_INSTANCE_TYPE, LABEL_REGION, LABEL_ZONE, UNREGISTERED_TAINT_KEY } from '../apis/well-known.js';

/**
 * The simulated kubelet's registration of `azflex dev`, against the REAL API server: what the
 * flex node agent's kubeadm join does on each VM the fake ARM booted. Everything a kubelet
 * does afterwards is KWOK's (control-plane.ts), and the rest of a Node's life is
 * kube-controller-manager's.
 *  - A Succeeded VM registers a Node after a boot delay: name = VM name, providerID from the
 *    VM's ARM id, labels from its NodeClaim (the `karpenter.sh_nodeclaim` tag), capacity from
 *    the SKU catalog, and KWOK_MANAGED_LABEL, so KWOK makes it Ready, renews its Lease and
 *    runs its pods. Only this cluster's VMs join (another cluster may share the fake ARM).
 *  - A Node whose VM is gone (or no longer Succeeded, or stopped or deallocated) loses that
 *    label: its kubelet went silent, so the node lifecycle controller marks it Unknown,
 *    taints it and evicts its pods, as in a real cluster. A VM that runs again gets it back.
 */

interface Taint {
  key: string;
  value?: string;
  effect: string;
}
interface NodeObj {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { providerID?: string };
}
interface NodeClaimObj {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { requirements?: Array<{ key: string; operator: string; values?: string[] }>; taints?: Taint[] };
}
interface List<T> {
  items: T[];
}

const MERGE = { patch: PatchStrategy.MergePatch };
/** What a fake kubelet cannot know about a machine. */
const EMPTY_NODE_INFO = { bootID: '', machineID: '', systemUUID: '', kernelVersion: '', osImage: '', containerRuntimeVersion: '', kubeProxyVersion: '' };

export interface DevKubeletOptions extends PollerOptions {
  client: KubeClient;
  arm: FakeArm;
  /**
   * The cluster whose VMs join here (their cluster tag, as their user data's bootstrap token
   * decides for a real VM): another cluster sharing the fake ARM has its own kubelet.
   */
  clusterName: string;
  instanceTypes: readonly InstanceType[];
  /** From a VM's Succeeded to its Node registering (kubeadm join). */
  bootDelayMs?: number;
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
    const [nodes, claims] = (await Promise.all([
      c.call('list nodes', (o) => c.core.listNode({}, o)),
      c.call('list nodeclaims', (o) => c.custom.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' }, o)),
    ])) as unknown as [List<NodeObj>, List<NodeClaimObj>];
    const claimsByName = new Map(claims.items.map((cl) => [cl.metadata.name, cl]));
    const now = Date.now();
    const byProviderId = new Map(nodes.items.filter((n) => n.spec.providerID).map((n) => [n.spec.providerID!.toLowerCase(), n]));
    const live = new Set<string>();
    for (const vm of this.o.arm.currentVms()) {
      // A stopped or deallocated VM runs no kubelet.
      if (vm.provisioningState !== 'Succeeded' || vm.powerState !== undefined || vm.tags[TAG.cluster] !== this.o.clusterName) continue;
      const providerID = PROVIDER_ID_PREFIX + vm.id;
      live.add(providerID.toLowerCase());
      if (byProviderId.has(providerID.toLowerCase())) continue;
      const seen = this.firstSeen.get(vm.id) ?? now;
      this.firstSeen.set(vm.id, seen);
      if (now - seen < (this.o.bootDelayMs ?? 2000)) continue;
      this.firstSeen.delete(vm.id);
      await this.createNode(vm.name, providerID, vm.vmSize, vm.location, claimsByName.get(vm.tags[TAG.nodeClaim] ?? ''), vm.zone);
    }
    for (const node of nodes.items) {
      const pid = node.spec.providerID?.toLowerCase();
      if (!pid?.startsWith(PROVIDER_ID_PREFIX)) continue;
      const managed = node.metadata.labels?.[KWOK_MANAGED_LABEL] === 'true';
      if (managed !== live.has(pid)) await this.setKubeletRunning(node.metadata.name, live.has(pid));
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
    labels[KWOK_MANAGED_LABEL] = 'true';
    const it = this.types.get(vmSize.toLowerCase());
    labels['kubernetes.io/arch'] = it?.arch ?? 'amd64';
    const capacity: Record<string, string> = it
      ? { cpu: String(it.vcpu), memory: `${it.memoryMiB}Mi`, pods: String(it.maxPods), 'ephemeral-storage': `${it.ephemeralStorageGiB}Gi`, ...(it.gpuCount ? { 'nvidia.com/gpu': String(it.gpuCount) } : {}) }
      : {};
    // As kubelet flags from azflex's user data: registered with karpenter.sh/unregistered,
    // which the controller swaps for the NodeClaim's taints at registration.
    const taints = [...(claim?.spec.taints ?? []), { key: UNREGISTERED_TAINT_KEY, effect: 'NoExecute' as const }];
    // A kubelet registers its capacity in the create itself; KWOK then adds the conditions.
    const status = { capacity, allocatable: capacity, nodeInfo: { ...EMPTY_NODE_INFO, kubeletVersion: 'v1.34.4', architecture: it?.arch ?? 'amd64', operatingSystem: 'linux' } };
    const body = { apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, spec: { providerID, taints }, status };
    try {
      const c = this.o.client;
      await c.call('create node', (o) => c.core.createNode({ body }, o));
    } catch (e) {
      if (!(e instanceof KubeApiError && e.code === 409)) throw e;
    }
  }

  /** Hands the Node to KWOK's heartbeats, or takes it back (the kubelet went silent). */
  private async setKubeletRunning(name: string, running: boolean): Promise<void> {
    try {
      const c = this.o.client;
      const body = { metadata: { labels: { [KWOK_MANAGED_LABEL]: running ? 'true' : null } } };
      await c.call('patch node', (o) => c.core.patchNode({ name, body }, o), MERGE);
    } catch (e) {
      if (!(e instanceof KubeApiError && e.code === 404)) throw e;
    }
  }
}
