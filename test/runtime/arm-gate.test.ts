import { describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import { AzureError, type AzurePort, type VmSpec } from '../../src/ports/azure.js';
import { gateArm } from '../../src/runtime/arm-gate.js';
import { ZERO_LATENCY_MS } from '../../src/sim/arm/defaults.js';
import { FakeArm } from '../../src/sim/arm/fake-arm.js';
import type { ComputeThrottlePolicy } from '../../src/sim/arm/types.js';
import { SeededRandom, VirtualClock } from '../../src/sim/virtual-clock.js';

const SUB = '00000000-0000-0000-0000-000000000001';
const scope = { subscriptionId: SUB, resourceGroup: 'rg' };

const SUB2 = '00000000-0000-0000-0000-000000000002';

/** Two subscriptions' fake ARM with instant answers, ARM's throttling on or off, Compute's policies as given. */
function world(throttling: boolean, computeThrottling?: ComputeThrottlePolicy[]): { clock: VirtualClock; arm: FakeArm } {
  const clock = new VirtualClock(0);
  const arm = new FakeArm({
    clock,
    random: new SeededRandom(1),
    config: {
      regions: [SUB, SUB2].map((subscriptionId) => ({ subscriptionId, location: 'eastus2', familyQuotaCores: {} })),
      subnets: [],
      resourceGroups: [SUB, SUB2].map((subscriptionId) => ({ subscriptionId, name: 'rg' })),
      throttling,
      latencyMs: { ...ZERO_LATENCY_MS },
      ...(computeThrottling ? { computeThrottling } : {}),
    },
    instanceTypes: STATIC_INSTANCE_TYPES,
  });
  return { clock, arm };
}

/** A VM PUT (its NIC does not exist: ARM refuses it, but the policy counts it as served). */
function vmSpec(sub: string, name: string): VmSpec {
  return {
    ref: { subscriptionId: sub, resourceGroup: 'rg', name },
    location: 'eastus2',
    vmSize: 'Standard_D8s_v5',
    nicId: `/subscriptions/${sub}/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/${name}-nic`,
    osDiskName: `${name}-os`,
    osDiskSizeGB: 64,
    image: { reference: { publisher: 'Canonical', offer: 'ubuntu-24_04-lts', sku: 'server', version: 'latest' } },
    adminUsername: 'azureuser',
    sshPublicKeys: [],
    customData: '',
    priority: 'Regular',
    tags: {},
  };
}

/** What one call came to: sent (ARM's status), or refused locally (the Retry-After it was told). */
async function outcome(clock: VirtualClock, call: Promise<unknown>): Promise<{ sent: number } | { local: number }> {
  const settled = call.then(
    () => ({ sent: 200 }),
    (e: unknown) => {
      const err = e as AzureError;
      return err.message.includes('throttled by ARM;') ? { local: err.retryAfterSeconds! } : { sent: err.statusCode };
    },
  );
  await clock.runUntil(clock.now());
  return settled;
}

const vmPuts = (arm: FakeArm): Record<string, number> => arm.armCalls()['vm.put'] ?? {};
const tryPut = (clock: VirtualClock, gated: AzurePort, name: string, sub = SUB) => outcome(clock, gated.createVm(vmSpec(sub, name)));

describe('ARM gate', () => {
  it('after a 429 from the read bucket, no read reaches ARM for that subscription until Retry-After has passed', async () => {
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
    // A read waits for the block to lift (paced, not all at once).
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

  it('a Compute RP 429 blocks only its operation group (VM GETs) in that subscription, for its whole Retry-After; VM lists and NIC calls go on', async () => {
    const { clock, arm } = world(false);
    arm.injectFault({ kind: 'computeThrottle', location: 'eastus2', policy: 'LowCostGet30Min' });
    const gated = gateArm(arm, clock);
    const first = gated.getVm({ ...scope, name: 'vm' }).catch((e: unknown) => e);
    await clock.runUntil(0);
    const err = (await first) as AzureError;
    expect(err).toMatchObject({ code: 'TooManyRequests', retryAfterSeconds: 1200, info: { throttledBy: 'Microsoft.Compute', armCode: 'OperationNotAllowed' } });
    const before = JSON.stringify(arm.armCalls()['vm.get']);
    // A read that would wait 20 minutes is refused locally.
    const local = (await gated.getVm({ ...scope, name: 'vm' }).catch((e: unknown) => e)) as AzureError;
    expect(local.code).toBe('TooManyRequests');
    expect(local.retryAfterSeconds).toBe(1200);
    expect(JSON.stringify(arm.armCalls()['vm.get'])).toBe(before);
    // HighCostGet is another of Compute's policies: VM lists still reach ARM.
    const list = gated.listVms(scope);
    await clock.runUntil(1);
    await expect(list).resolves.toEqual([]);
    expect(arm.armCalls()['vm.list']).toEqual({ '200': 1 });
    // The network RP is another provider: NIC calls still reach ARM.
    const nic = gated.getNic({ ...scope, name: 'nic' });
    await clock.runUntil(1);
    await expect(nic).resolves.toBeUndefined();
    expect(arm.armCalls()['nic.get']).toEqual({ '404': 1 });
    // Once Retry-After has passed, the gate sends the next GET (Compute's 30-minute window is
    // still full, so it answers another 429, with the rest of its wait).
    await clock.runUntil(1_200_000);
    expect(await outcome(clock, gated.getVm({ ...scope, name: 'vm' }))).toEqual({ sent: 429 });
    expect(arm.armCalls()['vm.get']).toEqual({ '429': 2 });
  });

  it('while Compute refuses VM creates, cleanup is not held behind them: VM, NIC and disk DELETEs reach ARM', async () => {
    const { clock, arm } = world(false);
    arm.injectFault({ kind: 'computeThrottle', location: 'eastus2', policy: 'PutVM3Min' });
    const gated = gateArm(arm, clock);
    expect(await tryPut(clock, gated, 'vm-a')).toEqual({ sent: 429 });
    // Every later create is refused locally, for as long as Compute said.
    const local = await tryPut(clock, gated, 'vm-b');
    expect(local).toMatchObject({ local: expect.any(Number) });
    expect(vmPuts(arm)).toEqual({ '429': 1 });
    // Deletes are Compute's DeleteVM policy and ARM's delete bucket: they go at once.
    await expect(outcome(clock, gated.deleteVm({ ...scope, name: 'vm-a' }))).resolves.toEqual({ sent: 200 });
    await expect(outcome(clock, gated.deleteNic({ ...scope, name: 'vm-a-nic' }))).resolves.toEqual({ sent: 200 });
    await expect(outcome(clock, gated.deleteDisk({ ...scope, name: 'vm-a-os' }))).resolves.toEqual({ sent: 200 });
    expect(arm.armCalls()['vm.delete']).toBeDefined();
    expect(arm.armCalls()['nic.delete']).toBeDefined();
    expect(arm.armCalls()['disk.delete']).toBeDefined();
    // Another subscription's creates are another budget.
    expect(await tryPut(clock, gated, 'vm-c', SUB2)).not.toHaveProperty('local');
  });

  it('tells a create it would refuse before the create spends its GET, as that create\'s own refusal', async () => {
    const { clock, arm } = world(false, [{ name: 'PutVM1Min', ops: ['vm.put'], limit: 1, windowSeconds: 60 }]);
    const gated = gateArm(arm, clock);
    expect(gated.vmPutRefusal(SUB)).toBeUndefined();
    expect(await tryPut(clock, gated, 'vm-0')).not.toHaveProperty('local');
    expect(await tryPut(clock, gated, 'vm-1')).toEqual({ sent: 429 });
    // Asked, the gate answers what the PUT would get, and counts it: the next one is told a later opening.
    expect(gated.vmPutRefusal(SUB)).toMatchObject({ code: 'TooManyRequests', statusCode: 429, retryAfterSeconds: 61 });
    expect(await tryPut(clock, gated, 'vm-2')).toEqual({ local: 122 });
    expect(gated.vmPutRefusal(SUB2)).toBeUndefined();
    expect(vmPuts(arm)['429']).toBe(1);
  });

  it('a drained ARM write bucket holds back PUTs of that subscription only: its deletes and reads go on', async () => {
    const { clock, arm } = world(true);
    arm.injectFault({ kind: 'throttle', subscriptionId: SUB, bucket: 'writes', drain: true });
    const gated = gateArm(arm, clock);
    const nicSpec = (name: string, sub = SUB) => ({ ref: { subscriptionId: sub, resourceGroup: 'rg', name }, location: 'eastus2', subnetId: '/subscriptions/x/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/s', tags: {} });
    expect(await outcome(clock, gated.createNic(nicSpec('nic-a')))).toEqual({ sent: 429 });
    expect(await outcome(clock, gated.createNic(nicSpec('nic-b')))).toMatchObject({ local: expect.any(Number) });
    expect(arm.armCalls()['nic.put']).toEqual({ '429': 1 });
    await expect(outcome(clock, gated.deleteNic({ ...scope, name: 'nic-a' }))).resolves.toEqual({ sent: 200 });
    await expect(outcome(clock, gated.getNic({ ...scope, name: 'nic-a' }))).resolves.toEqual({ sent: 200 });
    expect(await outcome(clock, gated.createNic(nicSpec('nic-c', SUB2)))).not.toHaveProperty('local');
  });

  it('after a Compute block, refused creates are told when the policy has room, each a different opening, and none is sent into a full window', async () => {
    // Compute's VM PUT policy here: 3 per minute.
    const { clock, arm } = world(false, [{ name: 'PutVM1Min', ops: ['vm.put'], limit: 3, windowSeconds: 60 }]);
    const gated = gateArm(arm, clock);
    for (const [i, at] of [0, 10_000, 20_000].entries()) {
      await clock.runUntil(at);
      expect(await tryPut(clock, gated, `vm-${i}`)).not.toHaveProperty('local');
    }
    // The window is full: ARM refuses the 4th with Retry-After until the first ages out (60 s).
    await clock.runUntil(30_000);
    expect(await tryPut(clock, gated, 'vm-3')).toEqual({ sent: 429 });
    expect(vmPuts(arm)['429']).toBe(1);
    // Ten more creates (the refused one among them) are refused locally, each told a later opening.
    const told: number[] = [];
    for (let i = 3; i < 13; i++) {
      const o = await tryPut(clock, gated, `vm-${i}`);
      expect(o).toHaveProperty('local');
      told.push(30_000 + (o as { local: number }).local * 1000);
    }
    expect(told.slice(0, 3)).toEqual([61_000, 71_000, 81_000]);
    expect(told.slice(3, 6)).toEqual([122_000, 132_000, 142_000]);
    expect(new Set(told).size).toBe(told.length);
    // Each comes back when told and goes; ARM never refuses another one.
    for (const [i, at] of told.entries()) {
      await clock.runUntil(at);
      expect(await tryPut(clock, gated, `vm-${i + 3}`)).not.toHaveProperty('local');
    }
    expect(vmPuts(arm)['429']).toBe(1);
  });

  it('a create that comes back early is refused again, and does not take an opening promised to another', async () => {
    const { clock, arm } = world(false, [{ name: 'PutVM1Min', ops: ['vm.put'], limit: 1, windowSeconds: 60 }]);
    const gated = gateArm(arm, clock);
    expect(await tryPut(clock, gated, 'vm-0')).not.toHaveProperty('local');
    expect(await tryPut(clock, gated, 'vm-1')).toEqual({ sent: 429 });
    const first = await tryPut(clock, gated, 'vm-1');
    const second = await tryPut(clock, gated, 'vm-2');
    expect(first).toEqual({ local: 61 });
    expect(second).toEqual({ local: 122 });
    await clock.runUntil(30_000);
    expect(await tryPut(clock, gated, 'vm-3')).toHaveProperty('local');
    expect(vmPuts(arm)['429']).toBe(1);
  });
});
