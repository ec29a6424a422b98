import { Counter, exponentialBuckets, Gauge, Histogram, type Registry } from 'prom-client';
import type { ComputeUsages } from '../ports/azure.js';
import { LABEL_CAPACITY_TYPE, LABEL_NODEPOOL } from '../apis/well-known.js';
import { durationOrNever } from '../utils/duration.js';

/**
 * Controller metrics. Names and label sets are upstream Karpenter's (sigs.k8s.io/karpenter
 * v1.15 pkg/metrics, pkg/cloudprovider/metrics, pkg/controllers/metrics/{node,nodepool,pod},
 * pkg/controllers/provisioning/scheduling), so existing dashboards and alerts work unchanged;
 * azflex_* are ours (the NIC lifecycle is what Karpenter cannot see). Registered on a
 * caller-supplied registry, never prom-client's global one.
 */

/** Upstream's snake_case names of the well-known node labels (karpenter.sh v1 WellKnownLabels). */
export const NODE_LABEL_NAMES = ['node_name', 'nodepool', 'zone', 'region', 'instance_type', 'arch', 'os', 'capacity_type', 'windows_build', 'phase', 'managed'] as const;
export type NodeLabel = (typeof NODE_LABEL_NAMES)[number];
export const POD_LABEL_NAMES = ['name', 'namespace', 'owner', 'node', 'scheduled', 'nodepool', 'zone', 'arch', 'capacity_type', 'instance_type', 'phase', 'ready', 'managed'] as const;
export type PodLabel = (typeof POD_LABEL_NAMES)[number];

export interface KarpenterMetrics {
  nodeClaimsCreated: Counter<'reason' | 'nodepool' | 'min_values_relaxed'>;
  nodeClaimsTerminated: Counter<'nodepool' | 'capacity_type' | 'zone'>;
  nodeClaimsDisrupted: Counter<'reason' | 'nodepool' | 'capacity_type' | 'consolidation_policy' | 'termination_mode'>;
  nodeClaimsUnhealthyDisrupted: Counter<'condition' | 'nodepool' | 'capacity_type' | 'image_id' | 'termination_mode'>;
  nodesCreated: Counter<'nodepool' | 'zone'>;
  nodesTerminated: Counter<'nodepool' | 'zone'>;
  cloudProviderErrors: Counter<'controller' | 'method' | 'provider' | 'error' | 'nodepool'>;
  cloudProviderDuration: Histogram<'controller' | 'method' | 'provider'>;
  nodePoolUsage: Gauge<'nodepool' | 'resource_type'>;
  nodePoolLimit: Gauge<'nodepool' | 'resource_type'>;
  nodePoolAllowedDisruptions: Gauge<'nodepool' | 'reason'>;
  nodePoolNodesConsumingBudgets: Gauge<'nodepool' | 'reason'>;
  nodeClaimTerminationDuration: Histogram<'nodepool'>;
  instanceTerminationDuration: Histogram<'nodepool'>;
  nodesAllocatable: Gauge<NodeLabel | 'resource_type'>;
  nodesSystemOverhead: Gauge<NodeLabel | 'resource_type'>;
  nodesTotalPodRequests: Gauge<NodeLabel | 'resource_type'>;
  nodesTotalPodLimits: Gauge<NodeLabel | 'resource_type'>;
  nodesTotalDaemonRequests: Gauge<NodeLabel | 'resource_type'>;
  nodesTotalDaemonLimits: Gauge<NodeLabel | 'resource_type'>;
  nodesCurrentLifetime: Gauge<NodeLabel>;
  clusterUtilization: Gauge<'resource_type'>;
  clusterStateNodeCount: Gauge;
  podsState: Gauge<PodLabel>;
  schedulingDuration: Histogram<'controller'>;
  unschedulablePods: Gauge<'controller'>;
  /** controller-runtime's, which Karpenter exposes: a reconcile that returned an error. */
  reconcileErrors: Counter<'controller'>;
}

export interface AzflexMetrics {
  /** NICs currently known, by NIC machine state (creating, attached, reserved-180s, deleting…). */
  nics: Gauge<'state'>;
  nicsReaped: Counter<'reason'>;
  /** From the VM create failure that reserved the NIC to the NIC's deletion (target ≤ 185 s). */
  nicReapLatency: Histogram;
  /** NICs found with no owner past the grace period; should always be 0. */
  nicsLeaked: Gauge;
  vmCreateFailures: Counter<'code' | 'sku' | 'region'>;
  isLeader: Gauge;
  leaderTransitions: Counter;
  nodeClassValidation: Gauge<'nodeclass'>;
  /** Cores left under each Compute quota at the last usages read (family, or `cores` for Total Regional vCPUs). */
  quotaHeadroom: Gauge<'subscription' | 'region' | 'family'>;
}

/** The `provider` label: the Azure provider says "azure"; azflex's NodeClaims are its own. */
export const CLOUD_PROVIDER_LABEL = 'azure-flex';
/** Upstream's `controller` label value for NodeClaim launch and termination. */
export const LIFECYCLE_CONTROLLER = 'nodeclaim.lifecycle';
export const PROVISIONER_CONTROLLER = 'provisioner';

/**
 * Upstream's DurationBuckets (pkg/metrics, v1.15): controller-runtime's 5 ms … 60 s plus
 * 120 … 600 s for singleton controllers. test/metrics/karpenter.test.ts compares them
 * with the ones upstream's own code registers.
 */
export const DURATION_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1,
  1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60, 120, 150, 300, 450, 600,
];
/** client_golang's DefBuckets, which upstream's cloud-provider histogram keeps (it names no buckets). */
export const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Registers every upstream metric, in upstream's order of concerns (the order /metrics lists them in). */
export function createKarpenterMetrics(registry: Registry): KarpenterMetrics {
  const registers = [registry];
  return {
    ...nodeClaimAndNodeCounters(registers),
    ...cloudProviderMetrics(registers),
    ...nodePoolMetrics(registers),
    ...terminationDurations(registers),
    ...nodeGauges(registers),
    ...clusterStateGauges(registers),
    ...schedulerMetrics(registers),
  };
}

type Registers = Registry[];

/** pkg/metrics: NodeClaims and Nodes created, terminated and disrupted. */
function nodeClaimAndNodeCounters(
  registers: Registers,
): Pick<KarpenterMetrics, 'nodeClaimsCreated' | 'nodeClaimsTerminated' | 'nodeClaimsDisrupted' | 'nodeClaimsUnhealthyDisrupted' | 'nodesCreated' | 'nodesTerminated'> {
  return {
    nodeClaimsCreated: new Counter({
      name: 'karpenter_nodeclaims_created_total',
      help: 'NodeClaims azflex created, by why (provisioned for pending pods, or a consolidation replacement), NodePool, and whether minValues was relaxed.',
      labelNames: ['reason', 'nodepool', 'min_values_relaxed'] as const,
      registers,
    }),
    nodeClaimsTerminated: new Counter({
      name: 'karpenter_nodeclaims_terminated_total',
      help: 'NodeClaims whose termination finished, by NodePool, capacity type and zone.',
      labelNames: ['nodepool', 'capacity_type', 'zone'] as const,
      registers,
    }),
    nodeClaimsDisrupted: new Counter({
      name: 'karpenter_nodeclaims_disrupted_total',
      help: 'NodeClaims azflex disrupted, by reason, NodePool, capacity type, consolidation policy (consolidation only) and termination mode.',
      labelNames: ['reason', 'nodepool', 'capacity_type', 'consolidation_policy', 'termination_mode'] as const,
      registers,
    }),
    nodeClaimsUnhealthyDisrupted: new Counter({
      name: 'karpenter_nodeclaims_unhealthy_disrupted_total',
      help: 'NodeClaims node repair disrupted, by the Node condition that was unhealthy, NodePool, capacity type, image and termination mode.',
      labelNames: ['condition', 'nodepool', 'capacity_type', 'image_id', 'termination_mode'] as const,
      registers,
    }),
    nodesCreated: new Counter({
      name: 'karpenter_nodes_created_total',
      help: 'Nodes that registered for azflex NodeClaims, by NodePool and zone.',
      labelNames: ['nodepool', 'zone'] as const,
      registers,
    }),
    nodesTerminated: new Counter({
      name: 'karpenter_nodes_terminated_total',
      help: 'Nodes of azflex NodeClaims that went away, by NodePool and zone.',
      labelNames: ['nodepool', 'zone'] as const,
      registers,
    }),
  };
}

/** pkg/cloudprovider/metrics: the ARM calls behind the cloud provider. */
function cloudProviderMetrics(registers: Registers): Pick<KarpenterMetrics, 'cloudProviderErrors' | 'cloudProviderDuration'> {
  return {
    cloudProviderErrors: new Counter({
      name: 'karpenter_cloudprovider_errors_total',
      help: 'Cloud-provider (ARM) calls that failed, by controller, method, provider, error category and NodePool.',
      labelNames: ['controller', 'method', 'provider', 'error', 'nodepool'] as const,
      registers,
    }),
    cloudProviderDuration: new Histogram({
      name: 'karpenter_cloudprovider_duration_seconds',
      help: 'Time taken by cloud-provider (ARM) calls, by controller, method and provider.',
      labelNames: ['controller', 'method', 'provider'] as const,
      buckets: DEFAULT_BUCKETS,
      registers,
    }),
  };
}

/** pkg/controllers/metrics/nodepool: usage, limits and disruption budgets. */
function nodePoolMetrics(
  registers: Registers,
): Pick<KarpenterMetrics, 'nodePoolUsage' | 'nodePoolLimit' | 'nodePoolAllowedDisruptions' | 'nodePoolNodesConsumingBudgets'> {
  return {
    nodePoolUsage: new Gauge({
      name: 'karpenter_nodepools_usage',
      help: 'Resources of the NodeClaims of a NodePool, by NodePool and resource type.',
      labelNames: ['nodepool', 'resource_type'] as const,
      registers,
    }),
    nodePoolLimit: new Gauge({
      name: 'karpenter_nodepools_limit',
      help: 'The limits a NodePool sets on what it may provision, by NodePool and resource type.',
      labelNames: ['nodepool', 'resource_type'] as const,
      registers,
    }),
    nodePoolAllowedDisruptions: new Gauge({
      name: 'karpenter_nodepools_allowed_disruptions',
      help: 'NodeClaims of a NodePool its active budgets let be disrupted at once, by NodePool and reason (2147483647: no limit).',
      labelNames: ['nodepool', 'reason'] as const,
      registers,
    }),
    nodePoolNodesConsumingBudgets: new Gauge({
      name: 'karpenter_nodepools_nodes_consuming_budgets',
      help: 'Initialized NodeClaims of a NodePool being deleted or whose node is not Ready, which count against its budgets, by NodePool and reason.',
      labelNames: ['nodepool', 'reason'] as const,
      registers,
    }),
  };
}

/** How long a NodeClaim's termination, and its VM delete within it, took. */
function terminationDurations(registers: Registers): Pick<KarpenterMetrics, 'nodeClaimTerminationDuration' | 'instanceTerminationDuration'> {
  return {
    nodeClaimTerminationDuration: new Histogram({
      name: 'karpenter_nodeclaims_termination_duration_seconds',
      help: 'From a NodeClaim\'s deletion to its finalizer released (drain, VM, NIC and disk gone), by NodePool.',
      labelNames: ['nodepool'] as const,
      buckets: exponentialBuckets(1, 2, 12),
      registers,
    }),
    instanceTerminationDuration: new Histogram({
      name: 'karpenter_nodeclaims_instance_termination_duration_seconds',
      help: 'Time the VM delete of a NodeClaim took, by NodePool.',
      labelNames: ['nodepool'] as const,
      buckets: exponentialBuckets(1, 2, 11),
      registers,
    }),
  };
}

/** pkg/controllers/metrics/node: per-node resources and age, labelled with the node's well-known labels. */
function nodeGauges(
  registers: Registers,
): Pick<
  KarpenterMetrics,
  'nodesAllocatable' | 'nodesSystemOverhead' | 'nodesTotalPodRequests' | 'nodesTotalPodLimits' | 'nodesTotalDaemonRequests' | 'nodesTotalDaemonLimits' | 'nodesCurrentLifetime'
> {
  const nodeGauge = (name: string, help: string) =>
    new Gauge({ name, help, labelNames: [...NODE_LABEL_NAMES, 'resource_type'] as const, registers });
  return {
    nodesAllocatable: nodeGauge('karpenter_nodes_allocatable', 'Resources a node can allocate to pods (its status.allocatable).'),
    nodesSystemOverhead: nodeGauge('karpenter_nodes_system_overhead', 'Resources a node reserves for the system: its capacity minus its allocatable.'),
    nodesTotalPodRequests: nodeGauge('karpenter_nodes_total_pod_requests', 'Sum of the requests of the pods bound to a node, DaemonSet pods included.'),
    nodesTotalPodLimits: nodeGauge('karpenter_nodes_total_pod_limits', 'Sum of the limits of the pods bound to a node, DaemonSet pods included.'),
    nodesTotalDaemonRequests: nodeGauge('karpenter_nodes_total_daemon_requests', 'Sum of the requests of the DaemonSet pods bound to a node.'),
    nodesTotalDaemonLimits: nodeGauge('karpenter_nodes_total_daemon_limits', 'Sum of the limits of the DaemonSet pods bound to a node.'),
    nodesCurrentLifetime: new Gauge({
      name: 'karpenter_nodes_current_lifetime_seconds',
      help: 'Seconds since the node was created.',
      labelNames: [...NODE_LABEL_NAMES] as const,
      registers,
    }),
  };
}

/** Cluster-wide utilization and node count, and pkg/controllers/metrics/pod's one series per pod. */
function clusterStateGauges(registers: Registers): Pick<KarpenterMetrics, 'clusterUtilization' | 'clusterStateNodeCount' | 'podsState'> {
  return {
    clusterUtilization: new Gauge({
      name: 'karpenter_cluster_utilization_percent',
      help: 'Pod requests as a percentage of the allocatable resources of all nodes, by resource type.',
      labelNames: ['resource_type'] as const,
      registers,
    }),
    clusterStateNodeCount: new Gauge({
      name: 'karpenter_cluster_state_node_count',
      help: 'Nodes in the controller\'s view of the cluster, counting its NodeClaims not registered yet.',
      registers,
    }),
    podsState: new Gauge({
      name: 'karpenter_pods_state',
      help: 'One series per pod (value 1): name, namespace, owner, node and its NodePool, zone, architecture, capacity type and instance type, phase, scheduled, ready, and whether a Karpenter NodePool made its node.',
      labelNames: [...POD_LABEL_NAMES] as const,
      registers,
    }),
  };
}

/** pkg/controllers/provisioning/scheduling, and controller-runtime's reconcile errors. */
function schedulerMetrics(registers: Registers): Pick<KarpenterMetrics, 'schedulingDuration' | 'unschedulablePods' | 'reconcileErrors'> {
  return {
    schedulingDuration: new Histogram({
      name: 'karpenter_scheduler_scheduling_duration_seconds',
      help: 'Time a provisioning scheduling pass took, in seconds.',
      labelNames: ['controller'] as const,
      buckets: DURATION_BUCKETS,
      registers,
    }),
    unschedulablePods: new Gauge({
      name: 'karpenter_scheduler_unschedulable_pods_count',
      help: 'Pending pods the last provisioning pass found no NodePool for (each has a FailedScheduling Event), by controller.',
      labelNames: ['controller'] as const,
      registers,
    }),
    reconcileErrors: new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Reconciles that returned an error, by controller.',
      labelNames: ['controller'] as const,
      registers,
    }),
  };
}

export function createAzflexMetrics(registry: Registry): AzflexMetrics {
  const registers = [registry];
  return {
    nics: new Gauge({
      name: 'azflex_nics',
      help: 'NICs azflex currently tracks, by NIC lifecycle state.',
      labelNames: ['state'] as const,
      registers,
    }),
    nicsReaped: new Counter({
      name: 'azflex_nics_reaped_total',
      help: 'NICs deleted by azflex after a failed or finished VM, by reason.',
      labelNames: ['reason'] as const,
      registers,
    }),
    nicReapLatency: new Histogram({
      name: 'azflex_nic_reap_latency_seconds',
      help: 'From the VM create failure that left ARM holding a NIC reserved (180 s) to that NIC deleted.',
      buckets: [180, 181, 182, 185, 190, 200, 210, 240, 300, 360, 480, 600, 1200],
      registers,
    }),
    nicsLeaked: new Gauge({
      name: 'azflex_nics_leaked',
      help: 'NICs tagged as azflex-owned with no NodeClaim past the orphan grace period (should be 0).',
      registers,
    }),
    vmCreateFailures: new Counter({
      name: 'azflex_vm_create_failures_total',
      help: 'VM create failures by Azure error code, SKU and region.',
      labelNames: ['code', 'sku', 'region'] as const,
      registers,
    }),
    isLeader: new Gauge({
      name: 'azflex_leader',
      help: '1 while this replica holds the leader lease and may write to ARM, else 0.',
      registers,
    }),
    leaderTransitions: new Counter({
      name: 'azflex_leader_transitions_total',
      help: 'Times this replica acquired or lost the leader lease.',
      registers,
    }),
    nodeClassValidation: new Gauge({
      name: 'azflex_nodeclass_validation_succeeded',
      help: '1 when the AzureFlexNodeClass spec validates, else 0.',
      labelNames: ['nodeclass'] as const,
      registers,
    }),
    quotaHeadroom: new Gauge({
      name: 'azflex_quota_headroom_cores',
      help: 'vCPUs left under a Compute quota (limit - usage) at the last usages read, by subscription, region and VM family (cores: Total Regional vCPUs).',
      labelNames: ['subscription', 'region', 'family'] as const,
      registers,
    }),
  };
}

/** Sets azflex_quota_headroom_cores from one usages reading. */
export function recordQuotaHeadroom(gauge: AzflexMetrics['quotaHeadroom'], target: { subscriptionId: string; location: string }, usages: ComputeUsages): void {
  const labels = { subscription: target.subscriptionId, region: target.location };
  gauge.set({ ...labels, family: 'cores' }, usages.regional.limit - usages.regional.used);
  for (const [family, u] of usages.families) gauge.set({ ...labels, family }, u.limit - u.used);
}

/** Upstream's termination_mode: graceful without a terminationGracePeriod, forceful at 0, else eventual. */
export function terminationModeLabel(terminationGracePeriod: string | undefined): 'graceful' | 'eventual' | 'forceful' {
  const ms = durationOrNever(terminationGracePeriod);
  if (ms === undefined) return 'graceful';
  return ms <= 0 ? 'forceful' : 'eventual';
}

/** `WhenEmptyOrUnderutilized` → `when_empty_or_underutilized`, as upstream labels the policy. */
export function snakeCase(value: string): string {
  return value.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** Why a NodeClaim was disrupted, in upstream's reason values (pkg/metrics). */
export type NodeClaimDisruptedReason =
  | 'empty' | 'underutilized' | 'drifted' | 'expired' | 'unhealthy' | 'insufficient_capacity' | 'launch_timeout' | 'registration_timeout'
  /** Core's NodeClaim garbage collection (the instance is gone); the AWS provider's interruption kinds for an instance deleted or stopped. */
  | 'garbage_collected' | 'instance_terminated' | 'instance_stopped' | 'spot_interrupted';

/**
 * karpenter_nodeclaims_disrupted_total's labels for one NodeClaim. Upstream names a
 * consolidation policy only for consolidation (empty, underutilized), "" otherwise.
 */
export function nodeClaimDisruptedLabels(
  reason: NodeClaimDisruptedReason,
  claim: { labels: Readonly<Record<string, string>>; terminationGracePeriod?: string | undefined } | undefined,
  nodePool: string,
  consolidationPolicy = '',
): Record<'reason' | 'nodepool' | 'capacity_type' | 'consolidation_policy' | 'termination_mode', string> {
  const consolidating = reason === 'empty' || reason === 'underutilized';
  return {
    reason,
    nodepool: claim?.labels[LABEL_NODEPOOL] ?? nodePool,
    capacity_type: claim?.labels[LABEL_CAPACITY_TYPE] ?? '',
    consolidation_policy: consolidating ? snakeCase(consolidationPolicy) : '',
    termination_mode: terminationModeLabel(claim?.terminationGracePeriod),
  };
}
