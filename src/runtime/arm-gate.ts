import { AzureError, isAzureError, PROVIDER, type AzurePort, type ResourceGroupScope } from '../ports/azure.js';
import type { Clock } from '../ports/clock.js';
import { classifyAzureError } from '../azure/errors.js';

/**
 * Shares ARM's 429 answers across every actor. Throttling comes from two places, and each
 * blocks what it covers: ARM's own subscription buckets (SubscriptionRequestsThrottled)
 * block every call to the subscription; a resource provider's policies (Compute's
 * x-ms-ratelimit-remaining-resource, Retry-After up to 20 minutes) block only the calls to
 * that provider in that subscription, so NIC deletes go on while Compute says wait.
 * Until Retry-After has passed, no actor spends another request there. A write gets the same
 * answer locally and backs off on its own deadline. A read (every effect starts with one)
 * waits instead, for a slot READ_SPACING_MS after the previous waiting read's: when a ramp
 * of hundreds of actors hit the bucket, failing them all at once had each back off, retry
 * the moment the block lifted and be refused again (a 1,000-node ramp spent ~100,000 local
 * refusals and their transitions), while paced reads go out at about ARM's refill rate.
 * A read that would wait longer than MAX_READ_WAIT_MS is refused locally, as a write is.
 */
const READ_SPACING_MS = 40; // ARM refills 25 reads/s per subscription (docs/fidelity.md)
const MAX_READ_WAIT_MS = 10_000;

export function gateArm(arm: AzurePort, clock: Clock, isLeader?: () => boolean): AzurePort {
  const blockedUntil = new Map<string, number>();
  /** Per subscription: when the next waiting read may go. */
  const nextReadSlot = new Map<string, number>();
  // Keys by subscription and provider, built once each: every ARM call passes here.
  const keysOf = new Map<string, Map<string, { sub: string; provider: string }>>();
  const keys = (subscriptionId: string, provider: string): { sub: string; provider: string } => {
    let byProvider = keysOf.get(subscriptionId);
    if (!byProvider) keysOf.set(subscriptionId, (byProvider = new Map()));
    let k = byProvider.get(provider);
    if (!k) {
      const sub = subscriptionId.toLowerCase();
      byProvider.set(provider, (k = { sub, provider: `${sub}|${provider.toLowerCase()}` }));
    }
    return k;
  };
  const blockedFor = (k: { sub: string; provider: string }): number =>
    blockedUntil.size > 0 ? Math.max(blockedUntil.get(k.sub) ?? 0, blockedUntil.get(k.provider) ?? 0) : 0;
  const refuse = (ms: number): AzureError =>
    new AzureError('TooManyRequests', 429, 'throttled by ARM; waiting out Retry-After before calling again', Math.max(1, Math.ceil(ms / 1000)));
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => clock.setTimer(ms, resolve));
  const guard = async <T>(scope: ResourceGroupScope, provider: string, kind: 'read' | 'write', call: () => Promise<T>): Promise<T> => {
    const k = keys(scope.subscriptionId, provider);
    for (let until = blockedFor(k); clock.now() < until; until = blockedFor(k)) {
      const now = clock.now();
      if (kind === 'write') throw refuse(until - now);
      const slot = Math.max(until, nextReadSlot.get(k.sub) ?? 0);
      if (slot - now > MAX_READ_WAIT_MS) throw refuse(slot - now);
      nextReadSlot.set(k.sub, slot + READ_SPACING_MS);
      await sleep(slot - now);
    }
    // Fencing at the last moment: a read may have waited, and leadership may have moved meanwhile.
    if (kind === 'write' && isLeader && !isLeader()) throw new Error('not the leader: ARM writes are fenced');
    try {
      return await call();
    } catch (err) {
      const action = classifyAzureError(err);
      if (isAzureError(err) && action.kind === 'throttled') {
        const by = err.info.throttledBy;
        // Unknown origin: assume ARM itself, the wider block.
        const key = by === undefined || by === 'arm' ? k.sub : `${k.sub}|${by.toLowerCase()}`;
        blockedUntil.set(key, Math.max(blockedUntil.get(key) ?? 0, clock.now() + action.retryAfterSeconds * 1000));
      }
      throw err;
    }
  };
  const net = PROVIDER.network;
  const cmp = PROVIDER.compute;
  return {
    getNic: (ref) => guard(ref, net, 'read', () => arm.getNic(ref)),
    createNic: (spec) => guard(spec.ref, net, 'write', () => arm.createNic(spec)),
    deleteNic: (ref) => guard(ref, net, 'write', () => arm.deleteNic(ref)),
    listNics: (scope) => guard(scope, net, 'read', () => arm.listNics(scope)),
    getVm: (ref) => guard(ref, cmp, 'read', () => arm.getVm(ref)),
    createVm: (spec) => guard(spec.ref, cmp, 'write', () => arm.createVm(spec)),
    deleteVm: (ref) => guard(ref, cmp, 'write', () => arm.deleteVm(ref)),
    listVms: (scope) => guard(scope, cmp, 'read', () => arm.listVms(scope)),
    listDisks: (scope) => guard(scope, cmp, 'read', () => arm.listDisks(scope)),
    getDisk: (ref) => guard(ref, cmp, 'read', () => arm.getDisk(ref)),
    deleteDisk: (ref) => guard(ref, cmp, 'write', () => arm.deleteDisk(ref)),
  };
}
