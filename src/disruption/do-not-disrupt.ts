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

// Why voluntary disruption of a NodeClaim is blocked, or undefined when it is not: by the
// NodeClaim, its Node, or a pod on it (each part cached per object by the controller, facts.ts).
export function nodeClaimDoNotDisruptReason(nodeClaim: NodeClaim): string | undefined {
  return isSet(nodeClaim.metadata.annotations) ? `NodeClaim ${nodeClaim.metadata.name} has ${ANNOTATION_DO_NOT_DISRUPT}` : undefined;
}

export function nodeDoNotDisruptReason(node: Node): string | undefined {
  return isSet(node.metadata.annotations) ? `Node ${node.metadata.name} has ${ANNOTATION_DO_NOT_DISRUPT}` : undefined;
}

export function podDoNotDisruptReason(podsOnNode: readonly Pod[]): string | undefined {
  const pod = podsOnNode.find(podBlocksDisruption);
  return pod ? `pod ${pod.metadata.namespace}/${pod.metadata.name} has ${ANNOTATION_DO_NOT_DISRUPT}` : undefined;
}
