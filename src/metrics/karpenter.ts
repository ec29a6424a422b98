import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * Controller metrics. Names and labels follow Karpenter's where Karpenter has the metric,
 * so existing dashboards and alerts (karpenter_nodeclaims_*, karpenter_cloudprovider_*)
 * work unchanged; azflex_* are ours (NIC lifecycle is the thing Karpenter cannot see).
 * Registered on a caller-supplied registry, never prom-client's global one.
 */
export interface KarpenterMetrics {
  nodeClaimsCreated: Counter<'reason' | 'nodepool' | 'capacity_type'>;
  nodeClaimsTerminated: Counter<'nodepool' | 'capacity_type'>;
  nodeClaimsDisrupted: Counter<'reason' | 'nodepool' | 'capacity_type'>;
  nodesCreated: Counter<'nodepool'>;
  nodesTerminated: Counter<'nodepool'>;
  cloudProviderErrors: Counter<'controller' | 'method' | 'provider' | 'error'>;
  cloudProviderDuration: Histogram<'controller' | 'method' | 'provider'>;
  nodePoolUsage: Gauge<'nodepool' | 'resource_type'>;
  nodePoolLimit: Gauge<'nodepool' | 'resource_type'>;
}

export interface AzflexMetrics {
  /** NICs currently known, by NIC machine state (creating, attached, reserved, deleting…). */
  nics: Gauge<'state'>;
  nicsReaped: Counter<'reason'>;
  /** NICs found with no owner past the grace period; should always be 0. */
  nicsLeaked: Gauge;
  vmCreateFailures: Counter<'code' | 'sku' | 'region'>;
  isLeader: Gauge;
  leaderTransitions: Counter;
  nodeClassValidation: Gauge<'nodeclass'>;
}

export const CLOUD_PROVIDER_LABEL = 'azure-flex';

export function createKarpenterMetrics(registry: Registry): KarpenterMetrics {
  const registers = [registry];
  return {
    nodeClaimsCreated: new Counter({
      name: 'karpenter_nodeclaims_created_total',
      help: 'Number of nodeclaims created in total by Karpenter. Labeled by reason the nodeclaim was created and the owning nodepool.',
      labelNames: ['reason', 'nodepool', 'capacity_type'] as const,
      registers,
    }),
    nodeClaimsTerminated: new Counter({
      name: 'karpenter_nodeclaims_terminated_total',
      help: 'Number of nodeclaims terminated in total by Karpenter. Labeled by the owning nodepool.',
      labelNames: ['nodepool', 'capacity_type'] as const,
      registers,
    }),
    nodeClaimsDisrupted: new Counter({
      name: 'karpenter_nodeclaims_disrupted_total',
      help: 'Number of nodeclaims disrupted in total by Karpenter. Labeled by reason the nodeclaim was disrupted and the owning nodepool.',
      labelNames: ['reason', 'nodepool', 'capacity_type'] as const,
      registers,
    }),
    nodesCreated: new Counter({
      name: 'karpenter_nodes_created_total',
      help: 'Number of nodes created in total by Karpenter. Labeled by owning nodepool.',
      labelNames: ['nodepool'] as const,
      registers,
    }),
    nodesTerminated: new Counter({
      name: 'karpenter_nodes_terminated_total',
      help: 'Number of nodes terminated in total by Karpenter. Labeled by owning nodepool.',
      labelNames: ['nodepool'] as const,
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
      buckets: [0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600],
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
