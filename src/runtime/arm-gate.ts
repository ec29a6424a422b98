import { AzureError, isAzureError, PROVIDER, type AzurePort, type ResourceGroupScope } from '../ports/azure.js';
import type { Clock } from '../ports/clock.js';
import { classifyAzureError } from '../azure/errors.js';

/**
 * Shares ARM's 429 answers across every actor. Throttling comes from two places, and each
 * blocks what it covers: ARM's own subscription buckets (SubscriptionRequestsThrottled)
 * block every call to the subscription; a resource provider's policies (Compute's
 * x-ms-ratelimit-remaining-resource, Retry-After up to 20 minutes) block only the calls to
 * that provider in that subscription, so NIC deletes go on while Compute says wait.
 * Until Retry-After has passed, no actor spends another request there: they get the same
 * answer locally and back off on their own deadlines.
 */
export function gateArm(arm: AzurePort, clock: Clock): AzurePort {
  const blockedUntil = new Map<string, number>();
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
  const guard = async <T>(scope: ResourceGroupScope, provider: string, call: () => Promise<T>): Promise<T> => {
    const k = keys(scope.subscriptionId, provider);
    if (blockedUntil.size > 0) {
      const until = Math.max(blockedUntil.get(k.sub) ?? 0, blockedUntil.get(k.provider) ?? 0);
      const now = clock.now();
      if (now < until) {
        throw new AzureError('TooManyRequests', 429, 'throttled by ARM; waiting out Retry-After before calling again', Math.ceil((until - now) / 1000));
      }
    }
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
    getNic: (ref) => guard(ref, net, () => arm.getNic(ref)),
    createNic: (spec) => guard(spec.ref, net, () => arm.createNic(spec)),
    deleteNic: (ref) => guard(ref, net, () => arm.deleteNic(ref)),
    listNics: (scope) => guard(scope, net, () => arm.listNics(scope)),
    getVm: (ref) => guard(ref, cmp, () => arm.getVm(ref)),
    createVm: (spec) => guard(spec.ref, cmp, () => arm.createVm(spec)),
    deleteVm: (ref) => guard(ref, cmp, () => arm.deleteVm(ref)),
    listVms: (scope) => guard(scope, cmp, () => arm.listVms(scope)),
    listDisks: (scope) => guard(scope, cmp, () => arm.listDisks(scope)),
    getDisk: (ref) => guard(ref, cmp, () => arm.getDisk(ref)),
    deleteDisk: (ref) => guard(ref, cmp, () => arm.deleteDisk(ref)),
  };
}
