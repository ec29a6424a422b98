import type { ControlPlaneInfo } from './harness.js';
import { adminRequest, eventually } from './harness.js';
import { KubeCluster } from '../../src/k8s/cluster.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type RequestRecord } from '../../src/k8s/client.js';
import type { NodeClaim } from '../../src/ports/cluster.js';
import type { FakeArmLatency } from '../../src/sim/arm/types.js';
import { RealClock } from '../../src/platform/real-clock.js';
import type { VirtualClock } from '../../src/sim/virtual-clock.js';

export const SUB = '0b3b0b3b-1111-2222-3333-444455556666';

/** ARM's real latencies are minutes; the same shape in seconds keeps the azflex dev tests short. */
export const FAST_ARM_LATENCY: FakeArmLatency = {
  read: { min: 0, max: 5 },
  nicPut: { min: 50, max: 150 },
  nicDelete: { min: 50, max: 150 },
  nicDeleteOperation: { min: 50, max: 150 },
  vmPut: { min: 50, max: 150 },
  vmCreate: { min: 1_500, max: 2_500 },
  vmCreateFailure: { min: 500, max: 1_000 },
  vmDelete: { min: 1_000, max: 1_500 },
  gpuVmDelete: { min: 1_500, max: 2_500 },
  diskDelete: { min: 100, max: 200 },
};

export type Poll<T> = () => Promise<T | undefined | false>;

/**
 * The waits of an `azflex dev` test: a timeout says what the world looked like (`diag`), and
 * `waitSkipping` moves ARM's clock (the in-process runtime's) 30 s on each poll, past NIC
 * reservations and VM deletes.
 */
export function devWaits(armClock: () => VirtualClock, diag: () => Promise<string>): {
  waitFor: <T>(what: string, fn: Poll<T>, ms: number) => Promise<T>;
  waitSkipping: <T>(what: string, fn: Poll<T>, ms: number) => Promise<T>;
} {
  const waitFor = <T>(what: string, fn: Poll<T>, ms: number): Promise<T> =>
    eventually(what, fn, ms, 250).catch(async (e: unknown) => {
      throw new Error(`${String(e)}\n${await diag()}`);
    });
  const waitSkipping = <T>(what: string, fn: Poll<T>, ms: number): Promise<T> =>
    waitFor(what, async () => {
      const clock = armClock();
      await clock.runUntil(clock.now() + 30_000);
      return fn();
    }, ms);
  return { waitFor, waitSkipping };
}

export interface Adapter {
  cluster: KubeCluster;
  client: KubeClient;
  records: RequestRecord[];
  /** Errors the cluster reported, but for dropped watch connections (see watchDrops). */
  errors: unknown[];
  /**
   * Watch connections aborted under the cache (seen in CI on a loaded machine while other test
   * files share the API server): the cache reconnects from its resourceVersion, so they are
   * kept apart from the errors tests assert on.
   */
  watchDrops: unknown[];
}

/**
 * A KubeCluster whose every request is recorded through client-node's middleware (for RBAC
 * audits and "served from cache" checks).
 */
export function makeAdapter(kubeConfig: KubeConfig, instance = 'test', o: { watchTimeoutSeconds?: number } = {}): Adapter {
  const records: RequestRecord[] = [];
  const errors: unknown[] = [];
  const watchDrops: unknown[] = [];
  const client = new KubeClient(kubeConfig, { hooks: [{ after: (r) => records.push(r) }] });
  const cluster = new KubeCluster({
    client,
    clock: new RealClock(),
    reportingInstance: instance,
    watchTimeoutSeconds: o.watchTimeoutSeconds ?? 60,
    onError: (e) => (e instanceof Error && e.name === 'AbortError' ? watchDrops : errors).push(e),
  });
  return { cluster, client, records, errors, watchDrops };
}

export function nodeClaimObject(name: string, nodeClassName: string, extra: Partial<NodeClaim['metadata']> = {}): NodeClaim {
  return {
    metadata: { name, uid: '', labels: { 'karpenter.sh/nodepool': 'np' }, annotations: {}, finalizers: [], creationTimestamp: '', ...extra },
    spec: {
      nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: nodeClassName },
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D8s_v5'] }],
      resources: { requests: { cpu: '1' } },
      taints: [],
      startupTaints: [],
    },
    status: { conditions: [] },
  };
}

export function nodeClassBody(name: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'flex.aks.azure.com/v1alpha1',
    kind: 'AzureFlexNodeClass',
    metadata: { name },
    spec: {
      subscriptionID: SUB,
      location: 'eastus2',
      resourceGroup: 'rg-flex',
      subnetID: `/subscriptions/${SUB}/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`,
      imageReference: { publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' },
      ...spec,
    },
  };
}

export async function ensureNamespace(info: ControlPlaneInfo, name: string, labels: Record<string, string> = {}): Promise<void> {
  try {
    await adminRequest(info, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
  } catch (e) {
    if ((e as { code?: number }).code !== 409) throw e;
  }
}

/** Removes every finalizer and deletes; for cleanup between tests. */
export async function forceDelete(info: ControlPlaneInfo, path: string): Promise<void> {
  try {
    await adminRequest(info, 'PATCH', path, { metadata: { finalizers: null } });
  } catch {
    /* already gone */
  }
  try {
    await adminRequest(info, 'DELETE', path);
  } catch {
    /* already gone */
  }
}

/** A manually driven Clock (for "every 10 minutes" without waiting 10 minutes). */
export class ManualClock {
  private t: number;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();
  constructor(start = Date.UTC(2026, 0, 1)) {
    this.t = start;
  }
  now(): number {
    return this.t;
  }
  setTimer(delayMs: number, fn: () => void): number {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + delayMs, fn });
    return id;
  }
  clearTimer(id: number): void {
    this.timers.delete(id);
  }
  advance(ms: number): void {
    this.t += ms;
    for (const [id, timer] of [...this.timers]) {
      if (timer.at <= this.t) {
        this.timers.delete(id);
        timer.fn();
      }
    }
  }
}

/**
 * An H200 NodePool (nvidia.com/gpu taint, 16-GPU limit) on its own eastus2 NodeClass, both
 * named `name`, in the given subscription and subnet; its nodes carry the label gpu=<gpu>.
 */
export async function createH200Pool(info: ControlPlaneInfo, name: string, o: { subscriptionID: string; resourceGroup: string; subnetID: string; gpu: string }): Promise<void> {
  await adminRequest(info, 'POST', '/apis/flex.aks.azure.com/v1alpha1/azureflexnodeclasses', nodeClassBody(name, {
    subscriptionID: o.subscriptionID, resourceGroup: o.resourceGroup, subnetID: o.subnetID,
  }));
  await adminRequest(info, 'POST', '/apis/karpenter.sh/v1/nodepools', {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        metadata: { labels: { gpu: o.gpu } },
        spec: {
          nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name },
          requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_ND96isr_H200_v5'] }],
          taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }],
        },
      },
      limits: { 'nvidia.com/gpu': '16' },
    },
  });
}

/** An 8-GPU pod for that pool's nodes (gpu=<gpu>), tolerating their taint. */
export function gpuPodBody(name: string, gpu: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      nodeSelector: { gpu },
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
      containers: [{ name: 'c', image: 'busybox', resources: { requests: { 'nvidia.com/gpu': '8' }, limits: { 'nvidia.com/gpu': '8' } } }],
    },
  };
}

/**
 * That pod, pending as kube-scheduler reports a pod no node can take (PodScheduled=False,
 * Unschedulable): the provisioner's trigger. The tests' control plane runs no scheduler.
 */
export async function createUnschedulableGpuPod(info: ControlPlaneInfo, namespace: string, name: string, gpu: string): Promise<void> {
  await adminRequest(info, 'POST', `/api/v1/namespaces/${namespace}/pods`, gpuPodBody(name, gpu));
  await adminRequest(info, 'PATCH', `/api/v1/namespaces/${namespace}/pods/${name}/status`, {
    status: { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/0 nodes', lastTransitionTime: new Date().toISOString() }] },
  });
}
