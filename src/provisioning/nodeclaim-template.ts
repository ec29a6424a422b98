import type { AzureFlexNodeClass, NodeClaim, NodePool } from '../ports/cluster.js';
import { NODECLASS_HASH_VERSION } from '../apis/nodeclass-hash.js';
import {
  ANNOTATION_CAPACITY_RESERVATION_GROUP, ANNOTATION_NODECLASS_HASH, ANNOTATION_NODECLASS_HASH_VERSION, ANNOTATION_NODEPOOL_HASH,
  ANNOTATION_NODEPOOL_HASH_VERSION, FINALIZER_TERMINATION, LABEL_NODEPOOL,
} from '../apis/well-known.js';
import { NODEPOOL_HASH_VERSION, nodePoolTemplateHash } from './nodepool-hash.js';
import { Requirements } from './requirements.js';
import type { NodeClaimPlan } from './scheduling/types.js';

/**
 * The NodeClaim for a plan: template labels and taints, requirements narrowed to the plan,
 * the drift hashes of NodeClass and NodePool, and the termination finalizer that makes
 * deletion go through drain and VM teardown. Shared by provisioning and consolidation. The
 * NodePool owns it, as upstream's do: deleting a NodePool has the garbage collector delete its
 * NodeClaims, which terminate as any other.
 */
export function buildNodeClaim(
  name: string, plan: NodeClaimPlan, nodePool: NodePool, nodeClass: AzureFlexNodeClass,
  options: { now: number; nodeClassHash: (nodeClass: AzureFlexNodeClass) => string },
): NodeClaim {
  const template = nodePool.spec.template;
  const requirementLabels = Requirements.fromSelectors(plan.requirements).labels();
  return {
    metadata: {
      name,
      uid: '',
      labels: { ...requirementLabels, ...template.metadata.labels, [LABEL_NODEPOOL]: nodePool.metadata.name },
      annotations: {
        ...template.metadata.annotations,
        [ANNOTATION_NODECLASS_HASH]: options.nodeClassHash(nodeClass),
        [ANNOTATION_NODECLASS_HASH_VERSION]: NODECLASS_HASH_VERSION,
        [ANNOTATION_NODEPOOL_HASH]: nodePoolTemplateHash(nodePool),
        [ANNOTATION_NODEPOOL_HASH_VERSION]: NODEPOOL_HASH_VERSION,
        ...(plan.capacityReservationGroupId !== undefined ? { [ANNOTATION_CAPACITY_RESERVATION_GROUP]: plan.capacityReservationGroupId } : {}),
      },
      finalizers: [FINALIZER_TERMINATION],
      creationTimestamp: new Date(options.now).toISOString(),
      ...(nodePool.metadata.uid
        ? { ownerReferences: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name: nodePool.metadata.name, uid: nodePool.metadata.uid, blockOwnerDeletion: true }] }
        : {}),
    },
    spec: {
      nodeClassRef: { ...template.spec.nodeClassRef },
      requirements: plan.requirements,
      resources: { requests: plan.requests },
      taints: template.spec.taints.map((t) => ({ ...t })),
      startupTaints: template.spec.startupTaints.map((t) => ({ ...t })),
      ...(template.spec.expireAfter !== undefined ? { expireAfter: template.spec.expireAfter } : {}),
      ...(template.spec.terminationGracePeriod !== undefined ? { terminationGracePeriod: template.spec.terminationGracePeriod } : {}),
    },
    status: { conditions: [] },
  };
}
