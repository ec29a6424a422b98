import { parseScenario, type Scenario, type ScenarioInput } from './scenario.js';

/** The built-in scenarios of `azflex simulate`. Each reproduces one way Azure says no. */
const H200 = 'Standard_ND96isr_H200_v5';
const H200_FAMILY = 'standardNDSH200v5Family';
const SUB = '00000000-0000-0000-0000-000000000001';
/**
 * Real subscriptions start with a finite Total Regional vCPUs quota and no GPU family quota:
 * every scenario grants what it needs explicitly (GPU families per scenario, regional here).
 */
const REGIONAL_CORES = 1000;

const h200Pool = {
  name: 'h200',
  nodeClass: 'h200-eastus2',
  instanceTypes: [H200],
  labels: { gpu: 'h200' },
  taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' as const }],
  limits: { 'nvidia.com/gpu': '64' },
};

const h200Class = { name: 'h200-eastus2', location: 'eastus2', subscriptionID: SUB, subnetPrefix: '10.1.0.0/24' };

const gpuPods = (count: number, extra: Partial<ScenarioInput['workload'][number]> = {}) => ({
  count,
  prefix: 'train',
  requests: { cpu: '80', memory: '1000Gi', 'nvidia.com/gpu': '8' },
  nodeSelector: { gpu: 'h200' },
  tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' as const, effect: 'NoSchedule' as const }],
  ...extra,
});

const BUILT_IN: Record<string, ScenarioInput> = {
  'quota-storm': {
    name: 'quota-storm',
    description:
      'The upstream incident: an H200 NodePool in eastus2 with family quota for 2 nodes, more GPU pods pending than fit, a create attempt every ~10 s, a /24 subnet, 8 hours.',
    hours: 8,
    regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: REGIONAL_CORES, familyQuotaCores: { [H200_FAMILY]: 192 } }],
    nodeClasses: [h200Class],
    nodePools: [h200Pool],
    workload: [gpuPods(3)],
  },
  'quota-blind': {
    name: 'quota-blind',
    description:
      'quota-storm where the controller may not read Compute usages (403): it learns the family quota only from refused creates, the offering marks and their canaries.',
    hours: 8,
    regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: REGIONAL_CORES, familyQuotaCores: { [H200_FAMILY]: 192 } }],
    nodeClasses: [h200Class],
    nodePools: [h200Pool],
    workload: [gpuPods(3)],
    arm: { usages: { readable: false } },
  },
  'capacity-flap': {
    name: 'capacity-flap',
    description: 'Quota is fine but H200 capacity comes and goes: accepted creates fail asynchronously with AllocationFailed/ZonalAllocationFailed.',
    hours: 8,
    regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: REGIONAL_CORES, familyQuotaCores: { [H200_FAMILY]: 96 * 8 }, allocationFailureRate: 0.6, zonalAllocationFailureRate: 0.2 }],
    nodeClasses: [h200Class],
    nodePools: [h200Pool],
    workload: [gpuPods(6)],
    faults: {
      schedule: [
        { at: 2 * 3600, fault: { kind: 'capacity', location: 'eastus2', allocationFailureRate: 0, zonalAllocationFailureRate: 0 } },
        { at: 3 * 3600, fault: { kind: 'capacity', location: 'eastus2', allocationFailureRate: 0.9, zonalAllocationFailureRate: 0.05 } },
        { at: 6 * 3600, fault: { kind: 'capacity', location: 'eastus2', allocationFailureRate: 0.1, zonalAllocationFailureRate: 0 } },
      ],
    },
  },
  throttle: {
    name: 'throttle',
    description: 'A burst of CPU and GPU pods while ARM throttles: the write bucket is drained at the start and 5xx/timeouts are frequent.',
    hours: 2,
    regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: REGIONAL_CORES, familyQuotaCores: { [H200_FAMILY]: 192, standardDSv5Family: 800 } }],
    nodeClasses: [h200Class],
    nodePools: [
      h200Pool,
      { name: 'cpu', nodeClass: 'h200-eastus2', instanceTypes: ['Standard_D8s_v5'], labels: { workload: 'cpu' }, limits: { cpu: '800' } },
    ],
    workload: [
      gpuPods(4),
      { count: 60, prefix: 'web', requests: { cpu: '6', memory: '16Gi' }, nodeSelector: { workload: 'cpu' } },
    ],
    faults: {
      throttling: true,
      transientFaultRate: 0.05,
      timeoutRate: 0.03,
      schedule: [
        { at: 0, fault: { kind: 'throttle', bucket: 'writes', drain: true } },
        { at: 1800, fault: { kind: 'throttle', bucket: 'deletes', drain: true } },
      ],
    },
  },
  'crash-restart': {
    name: 'crash-restart',
    description: 'quota-storm with the controller killed at random await points 20 times and restarted 30 s later.',
    hours: 8,
    regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: REGIONAL_CORES, familyQuotaCores: { [H200_FAMILY]: 192 }, allocationFailureRate: 0.1 }],
    nodeClasses: [h200Class],
    nodePools: [h200Pool],
    workload: [gpuPods(3)],
    faults: { restarts: 20, restartDelaySeconds: 30 },
  },
  churn: {
    name: 'churn',
    description: 'Pods come and go: CPU web pods in waves with a limited lifetime and short GPU jobs; empty nodes are consolidated away.',
    hours: 6,
    regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: REGIONAL_CORES, familyQuotaCores: { [H200_FAMILY]: 384, standardDSv5Family: 400 }, allocationFailureRate: 0.1 }],
    nodeClasses: [h200Class],
    nodePools: [
      { ...h200Pool, consolidateAfter: '5m' },
      { name: 'cpu', nodeClass: 'h200-eastus2', instanceTypes: ['Standard_D8s_v5'], labels: { workload: 'cpu' }, limits: { cpu: '400' }, consolidateAfter: '2m' },
    ],
    workload: [
      { count: 20, prefix: 'web', requests: { cpu: '3', memory: '8Gi' }, nodeSelector: { workload: 'cpu' }, lifetimeSeconds: 1800, repeatEverySeconds: 2700 },
      gpuPods(3, { prefix: 'job', lifetimeSeconds: 3600, repeatEverySeconds: 5400, at: 600 }),
    ],
  },
  'spot-fallback': {
    name: 'spot-fallback',
    description:
      'An H200 NodePool allowing [spot, on-demand] where spot has no capacity for the first hour: the spot refusal marks spot only (1 h) and the next pass plans on-demand; pods that come after the mark expires get spot.',
    hours: 3,
    regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: REGIONAL_CORES, familyQuotaCores: { [H200_FAMILY]: 192 }, lowPriorityQuotaCores: 384 }],
    nodeClasses: [h200Class],
    nodePools: [{ ...h200Pool, capacityTypes: ['spot', 'on-demand'] }],
    workload: [gpuPods(2), gpuPods(2, { prefix: 'late', at: 4500 })],
    faults: {
      schedule: [
        { at: 0, fault: { kind: 'spotCapacity', location: 'eastus2', available: false } },
        { at: 3600, fault: { kind: 'spotCapacity', location: 'eastus2', available: true } },
      ],
    },
  },
  'spot-evictions': {
    name: 'spot-evictions',
    description:
      'An H200 NodePool on spot where ARM evicts 30% of spot VMs an hour (policy Delete): each evicted NodeClaim is replaced and its pods run again; evictions stop for the last half hour so the end state can be judged.',
    hours: 6,
    regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: REGIONAL_CORES, familyQuotaCores: { [H200_FAMILY]: 384 }, lowPriorityQuotaCores: 768, spotEvictionRatePerHour: 0.3 }],
    nodeClasses: [h200Class],
    nodePools: [{ ...h200Pool, capacityTypes: ['spot', 'on-demand'] }],
    workload: [gpuPods(4)],
    faults: { schedule: [{ at: 5.5 * 3600, fault: { kind: 'spotEviction', location: 'eastus2', ratePerHour: 0 } }] },
  },
  'reserved-h200': {
    name: 'reserved-h200',
    description:
      'Three regions for H200: eastus2 with no H200 quota, westus3 with a capacity reservation group of 2 H200, swedencentral with on-demand quota for 3. The westus3 NodePool allows [reserved, on-demand]: 5 GPU pods get 2 reserved nodes in westus3 and 3 on-demand ones in swedencentral, and no create is refused for quota.',
    hours: 1,
    regions: [
      { subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: REGIONAL_CORES, familyQuotaCores: {} },
      {
        subscriptionId: SUB, location: 'westus3', regionalQuotaCores: REGIONAL_CORES, familyQuotaCores: { [H200_FAMILY]: 192 },
        capacityReservationGroups: [{ resourceGroup: 'azflex-reservations', name: 'h200-crg', reservations: [{ name: 'h200', sku: H200, quantity: 2 }] }],
      },
      { subscriptionId: SUB, location: 'swedencentral', regionalQuotaCores: REGIONAL_CORES, familyQuotaCores: { [H200_FAMILY]: 288 } },
    ],
    nodeClasses: [
      { ...h200Class, resourceGroup: 'azflex-eastus2' },
      { name: 'h200-westus3', location: 'westus3', subscriptionID: SUB, resourceGroup: 'azflex-westus3', subnetPrefix: '10.2.0.0/24', capacityReservationGroups: ['h200-crg'] },
      { name: 'h200-swedencentral', location: 'swedencentral', subscriptionID: SUB, resourceGroup: 'azflex-swedencentral', subnetPrefix: '10.3.0.0/24' },
    ],
    nodePools: [
      { ...h200Pool, name: 'h200-eastus2', weight: 30 },
      { ...h200Pool, name: 'h200-westus3', nodeClass: 'h200-westus3', weight: 20, capacityTypes: ['reserved', 'on-demand'] },
      { ...h200Pool, name: 'h200-swedencentral', nodeClass: 'h200-swedencentral', weight: 10 },
    ],
    workload: [gpuPods(5)],
  },
  fleet: {
    name: 'fleet',
    description:
      'A large platform: ~1,000 D8s_v5 nodes for ~10,000 pods, 8,000 long-lived and 2,000 that come and go every hour, with 2% allocation failures and consolidation, for 24 hours.',
    hours: 24,
    regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 12_000, familyQuotaCores: { standardDSv5Family: 12_000 }, allocationFailureRate: 0.02 }],
    nodeClasses: [{ name: 'cpu-eastus2', location: 'eastus2', subscriptionID: SUB, subnetPrefix: '10.4.0.0/20' }],
    nodePools: [{ name: 'cpu', nodeClass: 'cpu-eastus2', instanceTypes: ['Standard_D8s_v5'], labels: { workload: 'cpu' }, limits: { cpu: '10000' }, consolidateAfter: '10m' }],
    workload: [
      { count: 8_000, prefix: 'svc', requests: { cpu: '700m', memory: '2Gi' }, nodeSelector: { workload: 'cpu' } },
      { count: 2_000, prefix: 'batch', at: 600, requests: { cpu: '700m', memory: '2Gi' }, nodeSelector: { workload: 'cpu' }, lifetimeSeconds: 1800, repeatEverySeconds: 3600 },
    ],
  },
};

export const BUILT_IN_SCENARIOS: readonly string[] = Object.keys(BUILT_IN);

export function builtInScenarioInput(name: string): ScenarioInput | undefined {
  const raw = Object.hasOwn(BUILT_IN, name) ? BUILT_IN[name] : undefined;
  return raw ? structuredClone(raw) : undefined;
}

export function builtInScenario(name: string): Scenario | undefined {
  const raw = Object.hasOwn(BUILT_IN, name) ? BUILT_IN[name] : undefined;
  return raw ? parseScenario(raw, `built-in scenario ${name}`) : undefined;
}
