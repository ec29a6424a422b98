import type { Node, NodeClaim, Pod } from '../ports/cluster.js';
import { hasDoNotDisrupt, podBlocksDisruption } from '../apis/do-not-disrupt.js';
import { ANNOTATION_DO_NOT_DISRUPT } from '../apis/well-known.js';

// Why voluntary disruption of a NodeClaim is blocked, or undefined when it is not: by the
// NodeClaim, its Node, or a pod on it (each part cached per object by the controller, facts.ts).
export function nodeClaimDoNotDisruptReason(nodeClaim: NodeClaim): string | undefined {
  return hasDoNotDisrupt(nodeClaim.metadata.annotations) ? `NodeClaim ${nodeClaim.metadata.name} has ${ANNOTATION_DO_NOT_DISRUPT}` : undefined;
}

export function nodeDoNotDisruptReason(node: Node): string | undefined {
  return hasDoNotDisrupt(node.metadata.annotations) ? `Node ${node.metadata.name} has ${ANNOTATION_DO_NOT_DISRUPT}` : undefined;
}

export function podDoNotDisruptReason(podsOnNode: readonly Pod[]): string | undefined {
  const pod = podsOnNode.find(podBlocksDisruption);
  return pod ? `pod ${pod.metadata.namespace}/${pod.metadata.name} has ${ANNOTATION_DO_NOT_DISRUPT}` : undefined;
}
