/**
 * karpenter.sh/do-not-disrupt: on a pod it protects the node the pod runs on, on a Node or
 * NodeClaim it protects that node, from voluntary disruption (emptiness, consolidation,
 * drift). Expiration is forceful in karpenter.sh/v1 and ignores it; during termination
 * the pod annotation only delays eviction until the terminationGracePeriod runs out.
 * The annotation's meaning is here; disruption (its reasons) and termination (drain) read it.
 */
import type { Pod } from '../ports/cluster.js';
import { ANNOTATION_DO_NOT_DISRUPT } from './well-known.js';

export function hasDoNotDisrupt(annotations: Record<string, string> | undefined): boolean {
  return annotations?.[ANNOTATION_DO_NOT_DISRUPT] === 'true';
}

export function podBlocksDisruption(pod: Pod): boolean {
  return hasDoNotDisrupt(pod.metadata.annotations) && pod.status.phase !== 'Succeeded' && pod.status.phase !== 'Failed';
}
