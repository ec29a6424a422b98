/**
 * karpenter.sh/do-not-disrupt: on a pod it protects the node the pod runs on, on a Node or
 * NodeClaim it protects that node, from voluntary disruption (emptiness, consolidation,
 * drift). Expiration is forceful in karpenter.sh/v1 and ignores it; during termination
 * the pod annotation only delays eviction until the terminationGracePeriod runs out.
 */
import type { Node, NodeClaim, Pod } from '../ports/cluster.js';
import { ANNOTATION_DO_NOT_DISRUPT } from '../apis/well-known.js';

function isSet(annotations: Record<string, string> | undefined): boolean {
  return annotations?.[ANNOTATION_DO_NOT_DISRUPT] === 'true';
}

export function podBlocksDisruption(pod: Pod): boolean {
  return isSet(pod.metadata.annotations) && pod.status.phase !== 'Succeeded' && pod.status.phase !== 'Failed';
}

/** Why voluntary disruption of this NodeClaim is blocked, or undefined when it is not. */
export function doNotDisruptReason(nodeClaim: NodeClaim, node: Node | undefined, podsOnNode: readonly Pod[]): string | undefined {
  if (isSet(nodeClaim.metadata.annotations)) return `NodeClaim ${nodeClaim.metadata.name} has ${ANNOTATION_DO_NOT_DISRUPT}`;
  if (node && isSet(node.metadata.annotations)) return `Node ${node.metadata.name} has ${ANNOTATION_DO_NOT_DISRUPT}`;
  const pod = podsOnNode.find(podBlocksDisruption);
  if (pod) return `pod ${pod.metadata.namespace}/${pod.metadata.name} has ${ANNOTATION_DO_NOT_DISRUPT}`;
  return undefined;
}
