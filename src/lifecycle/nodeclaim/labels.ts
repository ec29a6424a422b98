import type { InstanceType } from '../../catalog/skus.js';
import type { NodeClaim } from '../../ports/cluster.js';
import { AKS_LABEL_MODE, AKS_LABEL_PRIORITY, AKS_LABEL_SCALESET_PRIORITY, AKS_MODE_SYSTEM, AKS_MODE_USER, LABEL_CAPACITY_TYPE } from '../../apis/well-known.js';
import { Requirements, aksPriorityOf, clusterLabelValue, instanceTypeRequirements } from '../../provisioning/requirements.js';

/**
 * The labels a launch adds to its NodeClaim, as upstream's launch does with what the cloud
 * provider resolved: every single-valued requirement of the instance type it launched
 * (node.kubernetes.io/instance-type, kubernetes.io/arch and os, topology.kubernetes.io/region,
 * karpenter.sh/capacity-type, karpenter.azure.com/sku-* and placement-scope, AKS's
 * kubernetes.azure.com/sku-cpu, sku-memory, scalesetpriority, priority and, with a node
 * resource group configured, cluster), never overriding a label the NodeClaim already has.
 * kubernetes.azure.com/mode is `system` when the NodeClaim's requirements leave only that,
 * otherwise AKS's default `user`; scalesetpriority and priority follow its capacity type (`spot`
 * or `regular`). Registration copies them to the Node, so a pod that selects
 * `karpenter.azure.com/sku-gpu-count Gt 4` or `kubernetes.azure.com/mode In [user]` can bind to
 * the node that was made for it, and AKS's DaemonSets (which need kubernetes.azure.com/cluster
 * to exist) run there. The launch renders the same set into the kubelet's node labels.
 * Undefined when nothing is missing.
 */
export function launchLabels(claim: NodeClaim, instanceType: InstanceType, region: string, nodeResourceGroup?: string): Record<string, string> | undefined {
  const missing: Record<string, string> = {};
  const own = claim.metadata.labels;
  for (const [key, value] of Object.entries(instanceTypeRequirements(instanceType, region, undefined, clusterLabelValue(nodeResourceGroup)).labels())) {
    if (own[key] === undefined) missing[key] = value;
  }
  if (own[AKS_LABEL_MODE] === undefined) missing[AKS_LABEL_MODE] = modeOf(claim);
  // The priority of the capacity type the NodeClaim launched as (its label, set at creation when single).
  const capacityType = own[LABEL_CAPACITY_TYPE] ?? missing[LABEL_CAPACITY_TYPE];
  if (capacityType !== undefined) {
    for (const key of [AKS_LABEL_SCALESET_PRIORITY, AKS_LABEL_PRIORITY]) if (own[key] === undefined) missing[key] = aksPriorityOf(capacityType);
  }
  return Object.keys(missing).length > 0 ? missing : undefined;
}

/** `system` only when the NodeClaim's requirements rule `user` out (a NodePool or pod asked for system nodes). */
function modeOf(claim: NodeClaim): string {
  const mode = claim.spec.requirements.some((r) => r.key === AKS_LABEL_MODE) ? Requirements.fromSelectors(claim.spec.requirements).get(AKS_LABEL_MODE) : undefined;
  return mode && !mode.has(AKS_MODE_USER) && mode.has(AKS_MODE_SYSTEM) ? AKS_MODE_SYSTEM : AKS_MODE_USER;
}
