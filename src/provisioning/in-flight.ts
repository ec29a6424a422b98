/**
 * NodeClaims this process created that its informer does not show yet (Karpenter's in-flight
 * / nominated capacity): counted as existing, so the pods they absorb are not planned twice
 * while the cache lags. Memory only, and that is safe: a restarted process starts from its
 * informers' first LIST, which shows everything created before.
 */
import type { ClusterPort, NodeClaim } from '../ports/cluster.js';
import type { Clock } from '../ports/clock.js';

/**
 * Bound on how long a NodeClaim this provisioner created counts as in flight while its
 * informer does not show it. Watch latency is seconds at worst; a claim still unseen after
 * this was deleted before the cache saw it, and its pods are planned again.
 */
export const IN_FLIGHT_TTL_MS = 2 * 60_000;

export class InFlightNodeClaims {
  private readonly claims = new Map<string, { claim: NodeClaim; createdAt: number }>();

  constructor(
    private readonly cluster: ClusterPort,
    private readonly clock: Clock,
    private readonly ttlMs: number = IN_FLIGHT_TTL_MS,
  ) {}

  /** A NodeClaim the API server has just accepted. */
  add(claim: NodeClaim): void {
    this.claims.set(claim.metadata.name, { claim, createdAt: this.clock.now() });
  }

  /**
   * The informer's NodeClaims plus the ones created here that it does not show yet. One
   * stops counting once the cache shows it, once the cache has applied events past its
   * creation without holding it (it was deleted: a launch that failed fast), or after the
   * TTL when the port cannot say how far its cache is.
   */
  withListed(listed: NodeClaim[]): NodeClaim[] {
    if (this.claims.size === 0) return listed;
    const now = this.clock.now();
    const seenThrough = this.cluster.seenThrough?.('nodeClaims');
    const shown = new Set(listed.map((c) => c.metadata.name));
    const unseen: NodeClaim[] = [];
    for (const [name, { claim, createdAt }] of this.claims) {
      if (shown.has(name) || now - createdAt > this.ttlMs || resourceVersionReached(seenThrough, claim.metadata.resourceVersion)) this.claims.delete(name);
      else unseen.push(claim);
    }
    return unseen.length > 0 ? [...listed, ...unseen] : listed;
  }
}

/**
 * resourceVersions are etcd revisions (decimal integers) on every API server; compared only
 * to tell whether a cache got past a write. Anything else counts as not reached.
 */
function resourceVersionReached(seenThrough: string | undefined, created: string | undefined): boolean {
  if (seenThrough === undefined || created === undefined || !/^\d+$/.test(seenThrough) || !/^\d+$/.test(created)) return false;
  return BigInt(seenThrough) >= BigInt(created);
}
