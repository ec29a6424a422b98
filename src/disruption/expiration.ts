/**
 * expireAfter: a NodeClaim older than its expireAfter is replaced. In karpenter.sh/v1 this is
 * forceful — not subject to budgets or do-not-disrupt — because expiry exists to bound node
 * age (security patches, credential rotation); terminationGracePeriod bounds the drain.
 */
import type { NodeClaim } from '../ports/cluster.js';
import { durationOrNever } from '../utils/duration.js';

/** When the NodeClaim expires (ms since epoch), or undefined if it never does. */
export function expiresAt(nodeClaim: NodeClaim): number | undefined {
  const ttl = durationOrNever(nodeClaim.spec.expireAfter);
  if (ttl === undefined) return undefined;
  return Date.parse(nodeClaim.metadata.creationTimestamp) + ttl;
}

export function isExpired(nodeClaim: NodeClaim, now: number): boolean {
  const at = expiresAt(nodeClaim);
  return at !== undefined && now >= at;
}
