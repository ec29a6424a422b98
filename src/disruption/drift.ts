/**
 * Drift: a NodeClaim no longer matches what its NodePool and NodeClass would create today.
 *   - NodeClassDrifted: its flex.aks.azure.com/nodeclass-hash differs from the NodeClass's
 *     current hash (image, subnet, location, …; see src/apis/nodeclass-hash.ts);
 *   - NodePoolDrifted: its karpenter.sh/nodepool-hash differs from the template's hash;
 *   - RequirementsDrifted: its labels no longer satisfy the NodePool's requirements.
 * Claims stamped with another hash version are not drifted: an upgrade that changes the
 * hashed fields must not replace every node in the cluster.
 */
import type { AzureFlexNodeClass, NodeClaim, NodePool } from '../ports/cluster.js';
import { isNodeClaimDrifted } from '../apis/nodeclass-hash.js';
import { NODEPOOL_HASH_VERSION, nodePoolTemplateHash } from '../provisioning/nodepool-hash.js';
import { Requirements } from '../provisioning/requirements.js';
import { ANNOTATION_NODEPOOL_HASH, ANNOTATION_NODEPOOL_HASH_VERSION } from '../apis/well-known.js';

export type DriftReason = 'NodeClassDrifted' | 'NodePoolDrifted' | 'RequirementsDrifted';

export function driftReason(nodeClaim: NodeClaim, nodePool: NodePool, nodeClass: AzureFlexNodeClass | undefined): DriftReason | undefined {
  if (nodeClass && isNodeClaimDrifted(nodeClaim, nodeClass)) return 'NodeClassDrifted';
  const stamped = nodeClaim.metadata.annotations[ANNOTATION_NODEPOOL_HASH];
  const version = nodeClaim.metadata.annotations[ANNOTATION_NODEPOOL_HASH_VERSION];
  if (stamped !== undefined && (version === undefined || version === NODEPOOL_HASH_VERSION) && stamped !== nodePoolTemplateHash(nodePool)) {
    return 'NodePoolDrifted';
  }
  // Only keys the NodePool constrains and the claim's labels state are compared: a label the
  // node lacks is not evidence of drift (Karpenter compares against the claim's labels too).
  const poolRequirements = Requirements.fromSelectors(nodePool.spec.template.spec.requirements);
  const labels = Requirements.fromLabels(nodeClaim.metadata.labels);
  if (labels.intersects(poolRequirements) !== undefined) return 'RequirementsDrifted';
  return undefined;
}
