/** Builders for the typed cluster objects the provisioning and disruption tests use. */
import pino from 'pino';
import type {
  AzureFlexNodeClass, Condition, NodeClaim, NodePool, NodeSelectorRequirement, Pod, ResourceList, Taint, Toleration,
} from '../../src/ports/cluster.js';
import type { FakeCluster } from '../../src/sim/cluster.js';

export const T0 = Date.parse('2026-01-01T00:00:00Z');
export const iso = (ms: number): string => new Date(ms).toISOString();

/** Controllers under test log nothing. */
export const silentLog = pino({ level: 'silent' });

let uid = 0;
const nextUid = (): string => `uid-${++uid}`;

export interface PodOptions {
  namespace?: string;
  requests?: ResourceList;
  containers?: ResourceList[];
  initContainers?: ResourceList[];
  overhead?: ResourceList;
  nodeSelector?: Record<string, string>;
  affinityTerms?: NodeSelectorRequirement[][];
  tolerations?: Toleration[];
  nodeName?: string;
  unschedulable?: boolean;
  ownerKind?: Pod['ownerKind'];
  annotations?: Record<string, string>;
  phase?: Pod['status']['phase'];
  deletionTimestamp?: string;
}

export function makePod(name: string, options: PodOptions = {}): Pod {
  const containers = options.containers ?? [options.requests ?? { cpu: '100m', memory: '128Mi' }];
  const conditions: Condition[] = options.unschedulable === false ? [] : [
    { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available', lastTransitionTime: iso(T0) },
  ];
  return {
    metadata: {
      name, namespace: options.namespace ?? 'default', uid: nextUid(), labels: {}, annotations: options.annotations ?? {},
      finalizers: [], creationTimestamp: iso(T0), ...(options.deletionTimestamp ? { deletionTimestamp: options.deletionTimestamp } : {}),
    },
    spec: {
      ...(options.nodeName ? { nodeName: options.nodeName } : {}),
      nodeSelector: options.nodeSelector ?? {},
      ...(options.affinityTerms ? {
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: options.affinityTerms.map((m) => ({ matchExpressions: m })) } } },
      } : {}),
      tolerations: options.tolerations ?? [],
      containers: containers.map((requests, i) => ({ name: `c${i}`, resources: { requests } })),
      initContainers: (options.initContainers ?? []).map((requests, i) => ({ name: `i${i}`, resources: { requests } })),
      ...(options.overhead ? { overhead: options.overhead } : {}),
    },
    status: { phase: options.phase ?? (options.nodeName ? 'Running' : 'Pending'), conditions: options.nodeName ? [] : conditions },
    ...(options.ownerKind ? { ownerKind: options.ownerKind } : {}),
  };
}

export interface NodePoolOptions {
  nodeClassName?: string;
  requirements?: NodeSelectorRequirement[];
  labels?: Record<string, string>;
  taints?: Taint[];
  startupTaints?: Taint[];
  limits?: ResourceList;
  weight?: number;
  consolidationPolicy?: NodePool['spec']['disruption']['consolidationPolicy'];
  consolidateAfter?: string;
  budgets?: NodePool['spec']['disruption']['budgets'];
  expireAfter?: string;
  kind?: string;
}

export function makeNodePool(name: string, options: NodePoolOptions = {}): NodePool {
  return {
    metadata: { name, uid: nextUid(), labels: {}, annotations: {}, finalizers: [], creationTimestamp: iso(T0) },
    spec: {
      template: {
        metadata: { labels: options.labels ?? {}, annotations: {} },
        spec: {
          nodeClassRef: { group: 'flex.aks.azure.com', kind: options.kind ?? 'AzureFlexNodeClass', name: options.nodeClassName ?? 'eastus2' },
          requirements: options.requirements ?? [],
          taints: options.taints ?? [],
          startupTaints: options.startupTaints ?? [],
          ...(options.expireAfter ? { expireAfter: options.expireAfter } : {}),
        },
      },
      disruption: {
        consolidationPolicy: options.consolidationPolicy ?? 'WhenEmpty',
        consolidateAfter: options.consolidateAfter ?? '30s',
        budgets: options.budgets ?? [{ nodes: '10%' }],
      },
      limits: options.limits ?? {},
      ...(options.weight !== undefined ? { weight: options.weight } : {}),
    },
    status: { conditions: [] },
  };
}

export function makeNodeClass(name = 'eastus2', location = 'eastus2', annotations: Record<string, string> = {}): AzureFlexNodeClass {
  return {
    metadata: { name, uid: nextUid(), labels: {}, annotations, finalizers: [], creationTimestamp: iso(T0) },
    spec: {
      subscriptionID: '00000000-0000-0000-0000-000000000000', location, resourceGroup: 'rg', subnetID: '/subscriptions/x/subnets/s',
      imageReference: { publisher: 'p', offer: 'o', sku: 's', version: '1' }, securityType: 'Standard', osDiskSizeGB: 128,
      sshPublicKeys: [], allocateNodePublicIP: false, maxPodsPerNode: 110, tags: {},
    },
    status: { conditions: [] },
  };
}

export interface NodeClaimOptions {
  nodePool: string;
  instanceTypes?: string[];
  launchedAs?: string;
  nodeName?: string;
  capacity?: ResourceList;
  allocatable?: ResourceList;
  conditions?: Condition[];
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  taints?: Taint[];
  expireAfter?: string;
}

export function makeNodeClaim(name: string, options: NodeClaimOptions): NodeClaim {
  return {
    metadata: {
      name, uid: nextUid(), labels: {
        'karpenter.sh/nodepool': options.nodePool,
        ...(options.launchedAs ? { 'node.kubernetes.io/instance-type': options.launchedAs } : {}),
        ...(options.labels ?? {}),
      },
      annotations: options.annotations ?? {}, finalizers: ['karpenter.sh/termination'],
      creationTimestamp: options.creationTimestamp ?? iso(T0),
      ...(options.deletionTimestamp ? { deletionTimestamp: options.deletionTimestamp } : {}),
    },
    spec: {
      nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'eastus2' },
      requirements: [
        { key: 'karpenter.sh/nodepool', operator: 'In', values: [options.nodePool] },
        { key: 'node.kubernetes.io/instance-type', operator: 'In', values: options.instanceTypes ?? [options.launchedAs ?? 'Standard_D8s_v5'] },
      ],
      resources: { requests: {} },
      taints: options.taints ?? [],
      startupTaints: [],
      ...(options.expireAfter ? { expireAfter: options.expireAfter } : {}),
    },
    status: {
      ...(options.nodeName ? { nodeName: options.nodeName } : {}),
      ...(options.capacity ? { capacity: options.capacity } : {}),
      ...(options.allocatable ? { allocatable: options.allocatable } : {}),
      conditions: options.conditions ?? [],
    },
  };
}

export const GPU_TAINT: Taint = { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' };
export const GPU_TOLERATION: Toleration = { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' };

/** The pods the simulator's cluster holds now, in insertion order. */
export const podsOf = (cluster: FakeCluster): Pod[] => [...cluster.pods.values()];

/** Replaces every pod in the simulator's cluster with `pods` (each write bumps a resourceVersion, as the API server's do). */
export function setPods(cluster: FakeCluster, pods: readonly Pod[]): void {
  for (const p of podsOf(cluster)) cluster.removePod(p.metadata.namespace, p.metadata.name);
  for (const p of pods) cluster.putPod(p);
}
