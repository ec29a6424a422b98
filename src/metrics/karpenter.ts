import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * Controller metrics. Names and label sets are upstream Karpenter's (sigs.k8s.io/karpenter
 * v1.15 pkg/metrics, pkg/cloudprovider/metrics, pkg/controllers/metrics/{node,nodepool,pod},
 * pkg/controllers/provisioning/scheduling), so existing dashboards and alerts work unchanged;
 * azflex_* are ours (the NIC lifecycle is what Karpenter cannot see). Registered on a
 * caller-supplied registry, never prom-client's global one.
 */

/** Upstream's snake_case names of the well-known node labels (karpenter.sh v1 WellKnownLabels). */
export const NODE_LABEL_NAMES = ['node_name', 'nodepool', 'zone', 'region', 'instance_type', 'arch', 'os', 'capacity_type', 'windows_build', 'phase'] as const;
export type NodeLabel = (typeof NODE_LABEL_NAMES)[number];
export const POD_LABEL_NAMES = ['name', 'namespace', 'owner', 'node', 'scheduled', 'nodepool', 'zone', 'arch', 'capacity_type', 'instance_type', 'phase', 'ready', 'managed'] as const;
export type PodLabel = (typeof POD_LABEL_NAMES)[number];

export interface KarpenterMetrics {
  nodeClaimsCreated: Counter<'reason' | 'nodepool' | 'min_values_relaxed'>;
  nodeClaimsTerminated: Counter<'nodepool' | 'capacity_type' | 'zone'>;
  nodeClaimsDisrupted: Counter<'reason' | 'nodepool' | 'capacity_type' | 'consolidation_policy' | 'termination_mode'>;
  nodesCreated: Counter<'nodepool' | 'zone'>;
  nodesTerminated: Counter<'nodepool' | 'zone'>;
  cloudProviderErrors: Counter<'controller' | 'method' | 'provider' | 'error'>;
  cloudProviderDuration: Histogram<'controller' | 'method' | 'provider'>;
  nodePoolUsage: Gauge<'nodepool' | 'resource_type'>;
  nodePoolLimit: Gauge<'nodepool' | 'resource_type'>;
  nodesAllocatable: Gauge<NodeLabel | 'resource_type'>;
  nodesTotalPodRequests: Gauge<NodeLabel | 'resource_type'>;
  nodesTotalPodLimits: Gauge<NodeLabel | 'resource_type'>;
  nodesCurrentLifetime: Gauge<NodeLabel>;
  podsState: Gauge<PodLabel>;
  schedulingDuration: Histogram<'controller'>;
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
}

/** The `provider` label: the Azure provider says "azure"; azflex's NodeClaims are its own. */
export const CLOUD_PROVIDER_LABEL = 'azure-flex';
/** Upstream's `controller` label value for NodeClaim launch and termination. */
export const LIFECYCLE_CONTROLLER = 'nodeclaim.lifecycle';
export const PROVISIONER_CONTROLLER = 'provisioner';

/** Upstream's DurationBuckets (pkg/metrics): 5 ms … 60 s. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60];

export function createKarpenterMetrics(registry: Registry): KarpenterMetrics {
  const registers = [registry];
  const nodeGauge = (name: string, help: string) =>
    new Gauge({ name, help, labelNames: [...NODE_LABEL_NAMES, 'resource_type'] as const, registers });
  return {
    nodeClaimsCreated: new Counter({
      name: 'karpenter_nodeclaims_created_total',
      help: 'Number of nodeclaims created in total by Karpenter. Labeled by reason the nodeclaim was created, the owning nodepool, and if min values was relaxed for this nodeclaim.',
      labelNames: ['reason', 'nodepool', 'min_values_relaxed'] as const,
      registers,
    }),
    nodeClaimsTerminated: new Counter({
      name: 'karpenter_nodeclaims_terminated_total',
      help: 'Number of nodeclaims terminated in total by Karpenter. Labeled by the owning nodepool, capacity type, and zone.',
      labelNames: ['nodepool', 'capacity_type', 'zone'] as const,
      registers,
    }),
    nodeClaimsDisrupted: new Counter({
      name: 'karpenter_nodeclaims_disrupted_total',
      help: 'Number of nodeclaims disrupted in total by Karpenter. Labeled by reason the nodeclaim was disrupted, the owning nodepool, the capacity type, the consolidation policy, and the termination mode.',
      labelNames: ['reason', 'nodepool', 'capacity_type', 'consolidation_policy', 'termination_mode'] as const,
      registers,
    }),
    nodesCreated: new Counter({
      name: 'karpenter_nodes_created_total',
      help: 'Number of nodes created in total by Karpenter. Labeled by owning nodepool and zone.',
      labelNames: ['nodepool', 'zone'] as const,
      registers,
    }),
    nodesTerminated: new Counter({
      name: 'karpenter_nodes_terminated_total',
      help: 'Number of nodes terminated in total by Karpenter. Labeled by owning nodepool and zone.',
      labelNames: ['nodepool', 'zone'] as const,
      registers,
    }),
    cloudProviderErrors: new Counter({
      name: 'karpenter_cloudprovider_errors_total',
      help: 'Total number of errors returned from CloudProvider calls.',
      labelNames: ['controller', 'method', 'provider', 'error'] as const,
      registers,
    }),
    cloudProviderDuration: new Histogram({
      name: 'karpenter_cloudprovider_duration_seconds',
      help: 'Duration of cloud provider method calls. Labeled by the controller, method name and provider.',
      labelNames: ['controller', 'method', 'provider'] as const,
      buckets: DURATION_BUCKETS,
      registers,
    }),
    nodePoolUsage: new Gauge({
      name: 'karpenter_nodepools_usage',
      help: 'The amount of resources that have been provisioned for a nodepool. Labeled by nodepool name and resource type.',
      labelNames: ['nodepool', 'resource_type'] as const,
      registers,
    }),
    nodePoolLimit: new Gauge({
      name: 'karpenter_nodepools_limit',
      help: 'Limits specified on the nodepool that restrict the quantity of resources provisioned. Labeled by nodepool name and resource type.',
      labelNames: ['nodepool', 'resource_type'] as const,
      registers,
    }),
    nodesAllocatable: nodeGauge('karpenter_nodes_allocatable', 'Node allocatable are the resources allocatable by nodes.'),
    nodesTotalPodRequests: nodeGauge('karpenter_nodes_total_pod_requests', 'Node total pod requests are the resources requested by pods bound to nodes, including the DaemonSet pods.'),
    nodesTotalPodLimits: nodeGauge('karpenter_nodes_total_pod_limits', 'Node total pod limits are the resources specified by pod limits, including the DaemonSet pods.'),
    nodesCurrentLifetime: new Gauge({
      name: 'karpenter_nodes_current_lifetime_seconds',
      help: 'Node age in seconds',
      labelNames: [...NODE_LABEL_NAMES] as const,
      registers,
    }),
    podsState: new Gauge({
      name: 'karpenter_pods_state',
      help: 'Pod state is the current state of pods. This metric can be used several ways as it is labeled by the pod name, namespace, owner, node, nodepool name, zone, architecture, capacity type, instance type and pod phase.',
      labelNames: [...POD_LABEL_NAMES] as const,
      registers,
    }),
    schedulingDuration: new Histogram({
      name: 'karpenter_scheduler_scheduling_duration_seconds',
      help: 'Duration of scheduling simulations used for deprovisioning and provisioning in seconds.',
      labelNames: ['controller'] as const,
      buckets: DURATION_BUCKETS,
      registers,
    }),
    reconcileErrors: new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
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
  };
}
