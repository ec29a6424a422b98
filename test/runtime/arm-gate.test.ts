import { describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import { AzureError } from '../../src/ports/azure.js';
import { gateArm } from '../../src/runtime/arm-gate.js';
import { FakeArm } from '../../src/sim/arm/fake-arm.js';
import { SeededRandom, VirtualClock } from '../../src/sim/virtual-clock.js';

const SUB = '00000000-0000-0000-0000-000000000001';
const scope = { subscriptionId: SUB, resourceGroup: 'rg' };

/** One subscription's fake ARM with instant reads, ARM's throttling on or off. */
function world(throttling: boolean): { clock: VirtualClock; arm: FakeArm } {
  const clock = new VirtualClock(0);
  const arm = new FakeArm({
    clock,
    random: new SeededRandom(1),
    config: { regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: {} }], subnets: [], resourceGroups: [{ subscriptionId: SUB, name: 'rg' }], throttling, latencyMs: { read: { min: 0, max: 0 } } },
    instanceTypes: STATIC_INSTANCE_TYPES,
  });
  return { clock, arm };
}

describe('ARM gate', () => {
  it('after a 429, no call reaches ARM for that subscription until Retry-After has passed', async () => {
    const { clock, arm } = world(true);
    arm.injectFault({ kind: 'throttle', bucket: 'reads', drain: true });
    const gated = gateArm(arm, clock);
    const first = gated.listNics(scope).catch((e: unknown) => e);
    await clock.runUntil(0);
    const err = await first;
    expect(err).toBeInstanceOf(AzureError);
    const retryAfter = (err as AzureError).retryAfterSeconds!;
    expect(retryAfter).toBeGreaterThan(0);
    const callsAfter429 = JSON.stringify(arm.armCalls());
    // A write is refused locally; a read waits for the block to lift (paced, not all at once).
    const local = await gated.deleteNic({ ...scope, name: 'nic' }).catch((e: unknown) => e);
    expect((local as AzureError).code).toBe('TooManyRequests');
    const waiting = gated.listVms(scope);
    const second = gated.listVms(scope);
    await clock.runUntil(retryAfter * 1000 - 1);
    expect(JSON.stringify(arm.armCalls())).toBe(callsAfter429);
    await clock.runUntil(retryAfter * 1000);
    expect(arm.armCalls()['vm.list']).toEqual({ '200': 1 });
    await clock.runUntil(retryAfter * 1000 + 100);
    await expect(waiting).resolves.toEqual([]);
    await expect(second).resolves.toEqual([]);
    expect(arm.armCalls()['vm.list']).toEqual({ '200': 2 });
  });

  it('a deposed leader sends no write, even one that waited behind a throttled read', async () => {
    const { clock, arm } = world(false);
    let leader = true;
    const gated = gateArm(arm, clock, () => leader);
    leader = false;
    await expect(gated.deleteNic({ ...scope, name: 'nic' })).rejects.toThrow(/fenced/);
    expect(arm.armCalls()['nic.delete']).toBeUndefined();
  });

  it('a Compute RP 429 blocks only Microsoft.Compute calls of that subscription, for its whole Retry-After; NIC calls go on', async () => {
    const { clock, arm } = world(false);
    arm.injectFault({ kind: 'computeThrottle', location: 'eastus2', policy: 'LowCostGet30Min' });
    const gated = gateArm(arm, clock);
    const first = gated.getVm({ ...scope, name: 'vm' }).catch((e: unknown) => e);
    await clock.runUntil(0);
    const err = (await first) as AzureError;
    expect(err).toMatchObject({ code: 'TooManyRequests', retryAfterSeconds: 1200, info: { throttledBy: 'Microsoft.Compute', armCode: 'OperationNotAllowed' } });
    const before = JSON.stringify(arm.armCalls()['vm.get']);
    const local = (await gated.listVms(scope).catch((e: unknown) => e)) as AzureError;
    expect(local.code).toBe('TooManyRequests');
    expect(local.retryAfterSeconds).toBe(1200);
    expect(JSON.stringify(arm.armCalls()['vm.get'])).toBe(before);
    expect(arm.armCalls()['vm.list']).toBeUndefined();
    // The network RP is another provider: NIC calls still reach ARM.
    const nic = gated.getNic({ ...scope, name: 'nic' });
    await clock.runUntil(1);
    await expect(nic).resolves.toBeUndefined();
    expect(arm.armCalls()['nic.get']).toEqual({ '404': 1 });
    await clock.runUntil(1_200_000);
    const later = gated.listVms(scope);
    await clock.runUntil(1_200_001);
    await expect(later).resolves.toEqual([]);
  });
});
