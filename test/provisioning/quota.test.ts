import { describe, expect, it } from 'vitest';
import { QuotaReader } from '../../src/provisioning/quota.js';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import { AzureError, type ComputeUsages } from '../../src/ports/azure.js';
import { formatMarks } from '../../src/provisioning/offering-marks.js';
import { ANNOTATION_OFFERING_MARKS } from '../../src/apis/well-known.js';
import type { NodeClaim } from '../../src/ports/cluster.js';
import { T0, makeNodeClaim, makeNodeClass } from '../provisioning/fixtures.js';

const D8 = STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_D8s_v5')!;
const FAMILY = D8.family;
const SUB = '00000000-0000-0000-0000-000000000000';

/** A clock the test moves, and a usages port that counts its reads (or fails). */
function setup(familyUsed: number, familyLimit: number, opts: { fail?: boolean } = {}) {
  let now = T0;
  const reads: number[] = [];
  const usage = { used: familyUsed, limit: familyLimit };
  const reader = new QuotaReader({
    clock: { now: () => now, setTimer: () => 0, clearTimer: () => {} },
    arm: {
      listUsages: async (): Promise<ComputeUsages> => {
        reads.push(now);
        if (opts.fail) throw new AzureError('Unknown', 403, 'AuthorizationFailed');
        return { regional: { used: usage.used, limit: 1000 }, families: new Map([[FAMILY, { ...usage }]]) };
      },
    },
  });
  return { reader, reads, usage, advance: (ms: number) => (now += ms), at: () => now };
}

describe('QuotaReader', () => {
  it('reads each location once at start, again after the interval, and not in between', async () => {
    const q = setup(0, 100);
    const classes = [makeNodeClass('a'), makeNodeClass('b')]; // one subscription and location: one read
    await q.reader.refresh(classes);
    await q.reader.refresh(classes);
    expect(q.reads).toEqual([T0]);
    q.advance(5 * 60_000);
    await q.reader.refresh(classes);
    expect(q.reads).toEqual([T0, T0 + 5 * 60_000]);
  });

  it('a quota refusal marked after the reading reads again, debounced', async () => {
    const q = setup(0, 100);
    await q.reader.refresh([makeNodeClass()]);
    const marked = (at: number) => makeNodeClass('eastus2', 'eastus2', {
      [ANNOTATION_OFFERING_MARKS]: formatMarks([{ sku: D8.name, family: FAMILY, capacityType: 'on-demand', reason: 'QuotaExceeded', markedAt: at, expiresAt: at + 60_000 }])!,
    });
    q.advance(10_000);
    await q.reader.refresh([marked(q.at())]);
    expect(q.reads).toHaveLength(1); // within the debounce
    q.advance(20_000);
    await q.reader.refresh([marked(T0 + 10_000)]);
    expect(q.reads).toEqual([T0, T0 + 30_000]);
  });

  it('rules out a size the family headroom cannot hold, counting NodeClaims in flight, and fails open when stale or unread', async () => {
    const q = setup(80, 100);
    const nc = makeNodeClass();
    await q.reader.refresh([nc]);
    const launching = makeNodeClaim('c1', { nodePool: 'p', instanceTypes: [D8.name] });
    const ledger = q.reader.ledger([nc], [launching], STATIC_INSTANCE_TYPES);
    // 80 used + 8 in flight: one more D8 (8) fits, a second does not.
    expect(ledger.blocks(D8.name, 'eastus2', 'on-demand')).toBe(false);
    expect(ledger.admit(SUB, 'eastus2', [D8.name])).toEqual([D8.name]);
    expect(ledger.blocks(D8.name, 'eastus2', 'on-demand')).toBe(true);
    expect(ledger.shortfall).toMatchObject({ quota: FAMILY, region: 'eastus2', limit: 100, usage: 96, request: 8 });
    // Spot plans against its own quota, which azflex does not read here.
    expect(ledger.blocks(D8.name, 'eastus2', 'spot')).toBe(false);
    q.advance(16 * 60_000); // past three intervals, and the re-read fails: stale, so nothing is ruled out
    const failing = setup(80, 80, { fail: true });
    await failing.reader.refresh([nc]);
    expect(failing.reader.ledger([nc], [], STATIC_INSTANCE_TYPES).blocks(D8.name, 'eastus2', 'on-demand')).toBe(false);
    expect(q.reader.ledger([nc], [], STATIC_INSTANCE_TYPES).blocks(D8.name, 'eastus2', 'on-demand')).toBe(false);
  });

  it('a NodeClaim launched before the reading is in its usage, one launched after is still in flight', async () => {
    const q = setup(88, 100);
    const nc = makeNodeClass();
    await q.reader.refresh([nc]);
    const launched = (name: string, at: number) => {
      const c = makeNodeClaim(name, { nodePool: 'p', launchedAs: D8.name, conditions: [{ type: 'Launched', status: 'True', lastTransitionTime: new Date(at).toISOString(), reason: '', message: '' }] });
      c.status.providerID = `azure:///x/${name}`;
      return c;
    };
    // 88 used: one more D8 fits unless a VM launched since the reading holds 8 of the 12 left.
    expect(q.reader.ledger([nc], [launched('old', T0 - 1000)], STATIC_INSTANCE_TYPES).shortfallFor(SUB, 'eastus2', D8.name)).toBeUndefined();
    expect(q.reader.ledger([nc], [launched('new', T0 + 1000)], STATIC_INSTANCE_TYPES).shortfallFor(SUB, 'eastus2', D8.name)).toMatchObject({ usage: 96, request: 8 });
  });
});

describe('QuotaReader: own deletes free cores', () => {
  const launched = (name: string, at: number, labels: Record<string, string> = {}) => {
    const c = makeNodeClaim(name, { nodePool: 'p', launchedAs: D8.name, labels, conditions: [{ type: 'Launched', status: 'True', lastTransitionTime: new Date(at).toISOString(), reason: '', message: '' }] });
    c.status.providerID = `azure:///x/${name}`;
    return c;
  };
  /** A pass: refresh, the ledger, a plan for one more D8, and what the pass tells the reader. */
  const pass = async (q: ReturnType<typeof setup>, claims: NodeClaim[], wantsOne = true) => {
    const nc = makeNodeClass();
    await q.reader.refresh([nc], claims);
    const ledger = q.reader.ledger([nc], claims, STATIC_INSTANCE_TYPES);
    const admitted = wantsOne ? ledger.admit(SUB, 'eastus2', [D8.name]) : [];
    if (wantsOne && admitted.length === 0) ledger.pendingForQuota = true;
    q.reader.planned(ledger.pendingForQuota);
    return admitted;
  };

  it('a pod pending for quota: once a NodeClaim the reading counts is gone, usages are read again (debounced) and the freed cores are used', async () => {
    const q = setup(16, 16); // two D8 VMs of this controller fill the family
    const a = launched('a', T0 - 60_000);
    const b = launched('b', T0 - 60_000);
    expect(await pass(q, [a, b])).toEqual([]);
    // Consolidation deletes a: its VM goes, and ARM's usage with it.
    q.usage.used = 8;
    q.advance(10_000);
    expect(await pass(q, [b])).toEqual([]); // within the debounce: the reading is still the old one
    expect(q.reads).toEqual([T0]);
    q.advance(20_000);
    expect(await pass(q, [b])).toEqual([D8.name]);
    expect(q.reads).toEqual([T0, T0 + 30_000]);
  });

  it('no read without pods pending for quota, for a NodeClaim the reading never counted, or for a reserved one', async () => {
    const q = setup(16, 16);
    const a = launched('a', T0 - 60_000);
    const b = launched('b', T0 - 60_000);
    await pass(q, [a, b], false);
    q.advance(60_000);
    await pass(q, [b], false); // a is gone, but nothing waits for quota
    expect(q.reads).toEqual([T0]);

    const r = setup(16, 16);
    const later = launched('later', T0 + 10_000); // launched after the reading: still in flight, not in it
    const reserved = launched('reserved', T0 - 60_000, { 'karpenter.sh/capacity-type': 'reserved' });
    await pass(r, [launched('c', T0 - 60_000), launched('d', T0 - 60_000), later, reserved]);
    r.advance(60_000);
    await pass(r, [launched('c', T0 - 60_000), launched('d', T0 - 60_000)]);
    expect(r.reads).toEqual([T0]);
  });
});

describe('QuotaLedger: spot', () => {
  it('plans spot against lowPriorityCores only, counting spot NodeClaims in flight there, and on-demand against the family', async () => {
    const reader = new QuotaReader({
      clock: { now: () => T0, setTimer: () => 0, clearTimer: () => {} },
      arm: { listUsages: async (): Promise<ComputeUsages> => ({ regional: { used: 0, limit: 1000 }, lowPriority: { used: 0, limit: 16 }, families: new Map([[FAMILY, { used: 96, limit: 100 }]]) }) },
    });
    const nc = makeNodeClass();
    await reader.refresh([nc]);
    const spotInFlight = makeNodeClaim('spot-a', { nodePool: 'default', labels: { 'node.kubernetes.io/instance-type': D8.name, 'karpenter.sh/capacity-type': 'spot' } });
    const ledger = reader.ledger([nc], [spotInFlight], STATIC_INSTANCE_TYPES);
    // The family is full for on-demand; 8 of 16 low-priority cores are held by the spot NodeClaim in flight.
    expect(ledger.blocks(D8.name, 'eastus2', 'on-demand')).toBe(true);
    expect(ledger.blocks(D8.name, 'eastus2', 'spot')).toBe(false);
    expect(ledger.admit(SUB, 'eastus2', [D8.name], new Set(['spot', 'on-demand']))).toEqual([D8.name]);
    // That took the last 8 low-priority cores: the next one fits neither way.
    expect(ledger.admit(SUB, 'eastus2', [D8.name], new Set(['spot', 'on-demand']))).toEqual([]);
    expect(ledger.shortfall).toMatchObject({ quota: FAMILY, limit: 100, usage: 96 });
    expect(ledger.blocks(D8.name, 'eastus2', 'spot')).toBe(true);
  });
});
