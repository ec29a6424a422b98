import type { InstanceType } from '../../catalog/skus.js';
import type { NodeClaim } from '../../ports/cluster.js';
import { instanceTypeRequirements } from '../../provisioning/requirements.js';

/**
 * The labels a launch adds to its NodeClaim, as upstream's launch does with what the cloud
 * provider resolved: every single-valued requirement of the instance type it launched
 * (node.kubernetes.io/instance-type, kubernetes.io/arch and os, topology.kubernetes.io/region,
 * karpenter.sh/capacity-type, karpenter.azure.com/sku-*), never overriding a label the
 * NodeClaim already has. Registration copies them to the Node, so a pod that selects
 * `karpenter.azure.com/sku-gpu-count Gt 4` or `sku-family In [N]` can bind to the node that was
 * made for it. Undefined when nothing is missing.
 */
export function launchLabels(claim: NodeClaim, instanceType: InstanceType, region: string): Record<string, string> | undefined {
  const missing: Record<string, string> = {};
  for (const [key, value] of Object.entries(instanceTypeRequirements(instanceType, region).labels())) {
    if (claim.metadata.labels[key] === undefined) missing[key] = value;
  }
  return Object.keys(missing).length > 0 ? missing : undefined;
}
