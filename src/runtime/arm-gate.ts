import { AzureError, isAzureError, type AzurePort, type ResourceGroupScope } from '../ports/azure.js';
import type { Clock } from '../ports/clock.js';

/**
 * Shares ARM's 429 answers across every actor: once ARM says "Retry-After: N" for a
 * subscription, no actor spends another request (and a token) there until N has passed;
 * they get the same answer locally and back off on their own deadlines.
 */
export function gateArm(arm: AzurePort, clock: Clock): AzurePort {
  const blockedUntil = new Map<string, number>();
  const guard = async <T>(scope: ResourceGroupScope, call: () => Promise<T>): Promise<T> => {
    const key = scope.subscriptionId.toLowerCase();
    const until = blockedUntil.get(key) ?? 0;
    const now = clock.now();
    if (now < until) {
      throw new AzureError('TooManyRequests', 429, 'throttled by ARM; waiting out Retry-After before calling again', Math.ceil((until - now) / 1000));
    }
    try {
      return await call();
    } catch (err) {
      if (isAzureError(err) && err.code === 'TooManyRequests') {
        blockedUntil.set(key, Math.max(blockedUntil.get(key) ?? 0, clock.now() + (err.retryAfterSeconds ?? 17) * 1000));
      }
      throw err;
    }
  };
  return {
    getNic: (ref) => guard(ref, () => arm.getNic(ref)),
    createNic: (spec) => guard(spec.ref, () => arm.createNic(spec)),
    deleteNic: (ref) => guard(ref, () => arm.deleteNic(ref)),
    listNics: (scope) => guard(scope, () => arm.listNics(scope)),
    getVm: (ref) => guard(ref, () => arm.getVm(ref)),
    createVm: (spec) => guard(spec.ref, () => arm.createVm(spec)),
    deleteVm: (ref) => guard(ref, () => arm.deleteVm(ref)),
    listVms: (scope) => guard(scope, () => arm.listVms(scope)),
    listDisks: (scope) => guard(scope, () => arm.listDisks(scope)),
    deleteDisk: (ref) => guard(ref, () => arm.deleteDisk(ref)),
  };
}
