/**
 * Scheduling benchmark: pods/second to turn N pending pods of mixed shapes into NodeClaim
 * plans (the reference is Karpenter core's BenchmarkScheduling). Two pod mixes:
 *   - "mixed": ~60 distinct shapes (cpu/memory web pods, GPU training pods with tolerations,
 *     node selectors and affinity), the realistic case the grouping is built for;
 *   - "unique": every pod a different cpu/memory request, the worst case for grouping.
 * Inputs are generated from a fixed seed, so runs are comparable.
 */
import { pathToFileURL } from 'node:url';
import { STATIC_INSTANCE_TYPES } from '../src/catalog/skus.js';
import type { AzureFlexNodeClass, NodePool, Pod, ResourceList, Toleration } from '../src/ports/cluster.js';
import { schedule, type SchedulingInput } from '../src/provisioning/scheduler.js';
import { median } from './median.js';

const POD_COUNTS = [1, 100, 1_000, 5_000, 10_000] as const;
const RUNS = 7;
const CREATED = '2026-01-01T00:00:00Z';
const GPU_TOLERATION: Toleration = { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' };

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function pick<T>(rand: () => number, values: readonly T[]): T {
  return values[Math.floor(rand() * values.length)]!;
}

function pod(i: number, requests: ResourceList, extra: Partial<Pod['spec']> = {}): Pod {
  return {
    metadata: { name: `p-${i}`, namespace: 'bench', uid: `u-${i}`, labels: {}, annotations: {}, finalizers: [], creationTimestamp: CREATED },
    spec: { nodeSelector: {}, tolerations: [], containers: [{ name: 'main', resources: { requests } }], initContainers: [], ...extra },
    status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '', lastTransitionTime: CREATED }] },
  };
}

export function mixedPods(count: number, seed: number): Pod[] {
  const rand = lcg(seed);
  const pods: Pod[] = [];
  for (let i = 0; i < count; i++) {
    const roll = rand();
    if (roll < 0.1) {
      pods.push(pod(i, { cpu: pick(rand, ['4', '8', '16']), memory: pick(rand, ['32Gi', '64Gi']), 'nvidia.com/gpu': pick(rand, ['1', '2', '4', '8']) }, {
        tolerations: [GPU_TOLERATION],
        ...(rand() < 0.5 ? { nodeSelector: { 'karpenter.azure.com/sku-gpu-name': pick(rand, ['H200', 'A100', 'H100']) } } : {}),
      }));
    } else if (roll < 0.2) {
      pods.push(pod(i, { cpu: pick(rand, ['250m', '1']), memory: pick(rand, ['256Mi', '1Gi']) }, {
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }, { key: 'karpenter.azure.com/sku-cpu', operator: 'Lt', values: ['33'] }] },
        ] } } },
      }));
    } else {
      pods.push(pod(i, { cpu: pick(rand, ['100m', '250m', '500m', '1', '2', '4']), memory: pick(rand, ['128Mi', '512Mi', '1Gi', '2Gi', '4Gi']) }, {
        ...(rand() < 0.3 ? { nodeSelector: { 'kubernetes.io/os': 'linux' } } : {}),
      }));
    }
  }
  return pods;
}

export function uniquePods(count: number, seed: number): Pod[] {
  const rand = lcg(seed);
  return Array.from({ length: count }, (_, i) => pod(i, { cpu: `${100 + Math.floor(rand() * 3900)}m`, memory: `${64 + Math.floor(rand() * 8000)}Mi` }));
}

function nodePool(name: string, gpu: boolean): NodePool {
  return {
    metadata: { name, uid: name, labels: {}, annotations: {}, finalizers: [], creationTimestamp: CREATED },
    spec: {
      template: {
        metadata: { labels: {}, annotations: {} },
        spec: {
          nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'eastus2' },
          requirements: [{ key: 'karpenter.azure.com/sku-gpu-count', operator: gpu ? 'Gt' : 'In', values: ['0'] }],
          taints: gpu ? [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] : [],
          startupTaints: [],
        },
      },
      disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '30s', budgets: [{ nodes: '10%' }] },
      limits: gpu ? { 'nvidia.com/gpu': '100000' } : {},
      weight: gpu ? 10 : 0,
    },
    status: { conditions: [] },
  };
}

const NODE_CLASS: AzureFlexNodeClass = {
  metadata: { name: 'eastus2', uid: 'nc', labels: {}, annotations: {}, finalizers: [], creationTimestamp: CREATED },
  spec: {
    subscriptionID: 'sub', location: 'eastus2', resourceGroup: 'rg', subnetID: 'subnet', securityType: 'Standard', osDiskSizeGB: 128,
    sshPublicKeys: [], allocateNodePublicIP: false, maxPodsPerNode: 110, tags: {},
  },
  status: { conditions: [] },
};

export function input(pendingPods: Pod[]): SchedulingInput {
  return {
    pendingPods,
    nodePools: [nodePool('gpu', true), nodePool('cpu', false)],
    nodeClasses: [NODE_CLASS],
    instanceTypes: STATIC_INSTANCE_TYPES,
    existingNodeClaims: [],
    daemonSetPods: [pod(-1, { cpu: '100m', memory: '128Mi' }, { tolerations: [{ operator: 'Exists' }] })],
    isOfferingUnavailable: () => false,
  };
}

interface Measurement {
  pods: number;
  medianMs: number;
  podsPerSecond: number;
  nodeClaims: number;
  unschedulable: number;
}

function measure(makePods: (count: number, seed: number) => Pod[], count: number): Measurement {
  const times: number[] = [];
  let nodeClaims = 0;
  let unschedulable = 0;
  // Warm-up lets the JIT and the quantity cache settle, as Go's benchmark loop does.
  for (let w = 0; w < 2; w++) schedule(input(makePods(count, 1000 + w)));
  for (let run = 0; run < RUNS; run++) {
    const data = input(makePods(count, run + 1));
    const start = process.hrtime.bigint();
    const result = schedule(data);
    const elapsedNs = Number(process.hrtime.bigint() - start);
    times.push(elapsedNs / 1e6);
    nodeClaims = result.nodeClaims.length;
    unschedulable = result.unschedulable.length;
  }
  const medianMs = median(times);
  return { pods: count, medianMs: Number(medianMs.toFixed(3)), podsPerSecond: Math.round(count / (medianMs / 1000)), nodeClaims, unschedulable };
}

export async function benchScheduling(): Promise<Record<string, unknown>> {
  // One untimed pass over every size first: the figures should describe optimised code, as
  // Go's compiled benchmark does, not V8 tiering up during the small cases.
  for (const n of POD_COUNTS) {
    schedule(input(mixedPods(n, 999)));
    schedule(input(uniquePods(n, 999)));
  }
  return {
    benchmark: 'scheduling',
    runs: RUNS,
    statistic: 'median',
    instanceTypes: STATIC_INSTANCE_TYPES.length,
    mixed: POD_COUNTS.map((n) => measure(mixedPods, n)),
    unique: POD_COUNTS.map((n) => measure(uniquePods, n)),
  };
}

// `tsx bench/scheduling.ts` runs it on its own.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchScheduling().then((r) => console.log(JSON.stringify(r, null, 2)), (e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
