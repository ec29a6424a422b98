import { describe, expect, it } from 'vitest';
import { AzureError, type AzurePort } from '../../../src/ports/azure.js';
import type { Clock } from '../../../src/ports/clock.js';
import { ZERO_LATENCY_MS } from '../../../src/sim/arm/defaults.js';
import type { FakeArmConfig } from '../../../src/sim/arm/fake-arm.js';
import { SeededRandom } from '../../../src/sim/virtual-clock.js';
import { legacyNamesFor } from '../../../src/azure/naming.js';
import { baseConfig, harness, nicSpec, ref, SUB, SUBNET, vmSpec, type Harness } from './helpers.js';

const zero = (over: Partial<FakeArmConfig> = {}): FakeArmConfig => baseConfig({ latencyMs: { ...ZERO_LATENCY_MS }, ...over });

function azErr(e: unknown): AzureError {
  expect(e).toBeInstanceOf(AzureError);
  return e as AzureError;
}

describe('FakeArm throttling', () => {
  it('allows 200 writes, then 429 with Retry-After from the 10/s refill; a token is back after 100 ms', async () => {
    const h = harness(zero({ throttling: true, subnets: [{ id: SUBNET, addressPrefix: '10.1.0.0/23' }] }));
    const { arm } = h;
    for (let i = 0; i < 200; i++) arm.nicPut(nicSpec(`n${i}`));
    expect(arm.lastCallHeaders().headers['x-ms-ratelimit-remaining-subscription-writes']).toBe('0');
    const e = azErr(await h.run(arm.createNic(nicSpec('x'))).catch((x: unknown) => x));
    expect(e.code).toBe('TooManyRequests');
    expect(e.statusCode).toBe(429);
    expect(e.retryAfterSeconds).toBe(1);
    // Deletes and reads have their own buckets.
    expect(arm.nicDelete(ref(legacyNamesFor('n0').nic))).toHaveProperty('operationId');
    expect(arm.nicGet(ref(legacyNamesFor('n1').nic))?.name).toBe(legacyNamesFor('n1').nic);
    await h.advance(99);
    expect(() => arm.nicPut(nicSpec('x'))).toThrowError(/TooManyRequests/);
    await h.advance(1);
    expect(arm.nicPut(nicSpec('x')).created).toBe(true);
    expect(() => arm.nicPut(nicSpec('y'))).toThrowError(/TooManyRequests/);
    await h.advance(20_000); // refills to capacity, never beyond
    for (let i = 0; i < 200; i++) arm.nicPut(nicSpec(`m${i}`));
    expect(() => arm.nicPut(nicSpec('y'))).toThrowError(/TooManyRequests/);
    expect(arm.armCalls()['nic.put']).toEqual({ '201': 401, '429': 4 });
  });

  it('reads: 250 tokens at 25/s; buckets are per region, calls without a location use the first region', async () => {
    const h = harness(
      zero({
        throttling: true,
        regions: [
          { subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 100_000, familyQuotaCores: { standardNDSH200v5Family: 96_000 } },
          { subscriptionId: SUB, location: 'swedencentral', familyQuotaCores: { standardNDSH200v5Family: 96_000 } },
        ],
      }),
    );
    const { arm } = h;
    arm.nicPut(nicSpec('se', { location: 'swedencentral' }));
    for (let i = 0; i < 250; i++) arm.nicList({ subscriptionId: SUB, resourceGroup: 'rg-gpu' }); // eastus2 bucket
    let err: unknown;
    try {
      arm.vmGet(ref('missing')); // no location: eastus2 bucket
    } catch (e) {
      err = e;
    }
    expect(azErr(err).retryAfterSeconds).toBe(1);
    // the NIC lives in swedencentral: its GET draws from that region's bucket
    expect(arm.nicGet(ref(legacyNamesFor('se').nic))?.location).toBe('swedencentral');
    await h.advance(40);
    expect(arm.vmGet(ref('missing'))).toBeUndefined();
  });

  it('injectFault throttle drains a bucket (Retry-After grows with the deficit) and can switch throttling off', async () => {
    const h = harness(zero());
    const { arm } = h;
    arm.nicPut(nicSpec('a')); // throttling off: unlimited
    arm.injectFault({ kind: 'throttle', enabled: true, drain: true, bucket: 'deletes', location: 'eastus2' });
    const e = azErr(await h.run(arm.deleteNic(ref(legacyNamesFor('a').nic))).catch((x: unknown) => x));
    expect(e.retryAfterSeconds).toBe(1);
    expect(arm.nicPut(nicSpec('b')).created).toBe(true); // writes untouched
    arm.injectFault({ kind: 'throttle', enabled: false });
    expect(arm.nicDelete(ref(legacyNamesFor('a').nic))).toHaveProperty('operationId');
    expect(h.events.filter((ev) => ev.op === 'fault.injected')).toHaveLength(2);
  });
});

describe('FakeArm transient faults and lost responses', () => {
  it('a 500 has no effect', async () => {
    const h = harness(zero({ transientFaultRate: 1 }));
    const e = azErr(await h.run(h.arm.createNic(nicSpec('a'))).catch((x: unknown) => x));
    expect(e).toMatchObject({ code: 'InternalServerError', statusCode: 500 });
    h.arm.injectFault({ kind: 'transient', transientFaultRate: 0 });
    expect(h.arm.nicList({ subscriptionId: SUB })).toEqual([]);
  });

  it('a write that times out after taking effect leaves the resource; the idempotent retry finds it', async () => {
    const h = harness(zero({ timeoutRate: 1, timeoutAfterEffectRate: 1 }));
    const { arm } = h;
    const e = azErr(await h.run(arm.createNic(nicSpec('a'))).catch((x: unknown) => x));
    expect(e.code).toBe('RequestTimeout');
    const e2 = azErr(await h.run(arm.createVm(vmSpec('a'))).catch((x: unknown) => x));
    expect(e2.code).toBe('RequestTimeout');
    arm.injectFault({ kind: 'transient', timeoutRate: 0 });
    const nic = arm.nicPut(nicSpec('a'));
    expect(nic.created).toBe(false);
    // The create is create-only: the VM the timed-out PUT made is answered as it is.
    const vm = await h.run(arm.createVm(vmSpec('a')));
    expect(vm.provisioningState).toBe('Creating');
    expect(arm.armCalls()['vm.put']).toEqual({ '408': 1 });
    expect(arm.armCalls()['nic.put']).toEqual({ '408': 1, '200': 1 });
  });

  it('a timeout before the effect changes nothing', async () => {
    const h = harness(zero({ timeoutRate: 1, timeoutAfterEffectRate: 0 }));
    azErr(await h.run(h.arm.createNic(nicSpec('a'))).catch((x: unknown) => x));
    h.arm.injectFault({ kind: 'transient', timeoutRate: 0 });
    expect(h.arm.nicPut(nicSpec('a')).created).toBe(true);
  });
});

describe('FakeArm control', () => {
  it('injectFault quota and capacity change later creates; snapshot is plain JSON', async () => {
    const h = harness(zero());
    const { arm } = h;
    arm.injectFault({ kind: 'quota', location: 'eastus2', family: 'standardNDSH200v5Family', cores: 0 });
    arm.nicPut(nicSpec('a'));
    azErr(await h.run(arm.createVm(vmSpec('a'))).catch((x: unknown) => x));
    arm.injectFault({ kind: 'quota', location: 'eastus2', family: 'standardNDSH200v5Family', cores: 96 });
    arm.injectFault({ kind: 'capacity', location: 'eastus2', allocationFailureRate: 1 });
    const e = azErr(await h.run(arm.createVm(vmSpec('a'))).catch((x: unknown) => x));
    expect(e.code).toBe('AllocationFailed');
    arm.injectFault({ kind: 'capacity', location: 'eastus2', allocationFailureRate: 0 });
    // The Failed VM is answered as it is by the port's create-only create; a plain PUT retries its provisioning.
    expect((await h.run(arm.createVm(vmSpec('a')))).provisioningState).toBe('Failed');
    arm.beginCreateVm({ ...vmSpec('a'), nicIds: [vmSpec('a').nicId] });
    await h.advance(3_600_000);
    const snap = arm.snapshot();
    expect(JSON.parse(JSON.stringify(snap))).toEqual(snap);
    expect(snap.quota[0]).toMatchObject({ usedCores: 96, limitCores: 96 });
    expect(() => arm.injectFault({ kind: 'quota', location: 'mars', cores: 1 })).toThrowError(/no configured region/);
  });
});

/** A reasonable controller: retries throttling/transients, deletes what a failed create left behind. */
async function lifecycle(arm: AzurePort, clock: Clock, claim: string, holdMs: number): Promise<void> {
  const sleep = (ms: number) => new Promise<void>((r) => clock.setTimer(ms, r));
  const retry = async <T>(fn: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await fn();
      } catch (e) {
        if (!(e instanceof AzureError)) throw e;
        await sleep(e.retryAfterSeconds !== undefined ? e.retryAfterSeconds * 1000 : e.code === 'NicReservedForAnotherVm' ? 15_000 : 5_000);
      }
    }
  };
  await retry(() => arm.createNic(nicSpec(claim)));
  let created = false;
  try {
    await arm.createVm(vmSpec(claim));
    created = true;
    await sleep(holdMs);
  } catch {
    // fall through to cleanup
  }
  await retry(() => arm.deleteVm(ref(legacyNamesFor(claim).vm)));
  await retry(() => arm.deleteNic(ref(legacyNamesFor(claim).nic)));
  // A lost create response may have left a VM whose disk outlived it: look only then.
  if (!created) await retry(() => arm.deleteDisk(ref(legacyNamesFor(claim).osDisk)));
}

async function runWorkload(seed: number, claims: number, overrides: Partial<FakeArmConfig> = {}): Promise<Harness> {
  const h = harness(
    baseConfig({
      regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 100_000, familyQuotaCores: { standardNDSH200v5Family: 96 * 400 }, allocationFailureRate: 0.3 }],
      subnets: [{ id: SUBNET, addressPrefix: '10.1.0.0/20' }],
      throttling: true,
      transientFaultRate: 0.03,
      timeoutRate: 0.03,
      ...overrides,
    }),
    seed,
  );
  const workload = new SeededRandom(seed ^ 0x5bd1e995);
  const all: Promise<void>[] = [];
  for (let i = 0; i < claims; i++) {
    const start = Math.floor(workload.next() * 600_000);
    const hold = Math.floor(workload.next() * 8 * 3_600_000);
    all.push(new Promise<void>((r) => h.clock.setTimer(start, r)).then(() => lifecycle(h.arm, h.clock, `c${i}`, hold)));
  }
  await h.run(Promise.all(all));
  return h;
}

describe('FakeArm determinism and scale', () => {
  it('the same seed yields an identical event stream; another seed does not; a careful controller leaks nothing', async () => {
    const a = await runWorkload(42, 60);
    const b = await runWorkload(42, 60);
    const c = await runWorkload(43, 60);
    expect(a.events.length).toBeGreaterThan(300);
    expect(JSON.stringify(b.events)).toBe(JSON.stringify(a.events));
    expect(JSON.stringify(c.events)).not.toBe(JSON.stringify(a.events));
    expect(a.arm.leaks(new Set())).toEqual({ nics: [], vms: [], disks: [] });
    const calls = a.arm.armCalls();
    expect(calls['vm.put']?.['201']).toBeGreaterThan(0);
    expect(a.events.some((e) => e.code === 'AllocationFailed')).toBe(true);
    expect(a.arm.reapTimesSeconds().length).toBeGreaterThan(0);
    for (const t of a.arm.reapTimesSeconds()) expect(t).toBeGreaterThanOrEqual(0);
  });

  // Speed is measured by `npm run bench`, never asserted here (the machine is noisy).
  it('1000 NodeClaim lifecycles over 8 simulated hours with 5xx and timeouts leave nothing behind', async () => {
    const h = await runWorkload(7, 1000, { transientFaultRate: 0.01, timeoutRate: 0.01 });
    const simHours = (h.clock.now() - h.events[0]!.t) / 3_600_000;
    expect(simHours).toBeGreaterThan(7);
    expect(h.arm.leaks(new Set())).toEqual({ nics: [], vms: [], disks: [] });
  });

  it('the synchronous face returns every address after 50,000 NIC puts and deletes', () => {
    const h = harness(zero({ subnets: [{ id: SUBNET, addressPrefix: '10.1.0.0/16' }] }));
    const n = 50_000;
    const specs = Array.from({ length: n }, (_, i) => nicSpec(`p${i}`));
    for (const spec of specs) h.arm.nicPut(spec);
    for (const spec of specs) h.arm.nicDelete(spec.ref);
    expect(h.arm.subnetIpsUsed(SUBNET)).toBe(0);
    expect(h.arm.armCalls()).toEqual({ 'nic.put': { '201': n }, 'nic.delete': { '202': n } });
  });
});
