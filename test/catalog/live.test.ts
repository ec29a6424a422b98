import { describe, expect, it } from 'vitest';
import { LiveInstanceTypeCatalog, type ScopeListing } from '../../src/catalog/live.js';
import { STATIC_INSTANCE_TYPES, StaticInstanceTypeCatalog, restrictedSince, type SkuRestriction } from '../../src/catalog/skus.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';

const SCOPE = { subscriptionID: 'sub', location: 'eastus2' };
const D8 = STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_D8s_v5')!;

/** A catalog whose Resource SKUs answer is `restrictions` for D8s_v5, listed every `refreshMs`. */
function catalog(clock: VirtualClock, restrictions: () => SkuRestriction[], fail = () => false): LiveInstanceTypeCatalog {
  return new LiveInstanceTypeCatalog({
    clock,
    refreshMs: 60_000,
    retryMs: 60_000,
    scopes: async () => [SCOPE],
    fetch: async (): Promise<ScopeListing> => {
      if (fail()) throw new Error('ARM read refused');
      return { types: [{ ...D8, locations: ['eastus2'] }], restrictions: new Map([['standard_d8s_v5', restrictions()]]) };
    },
  });
}

describe('restrictedSince: a mark re-checked against the newest Resource SKUs listing', () => {
  it('answers only from a listing requested after the mark, per zone', async () => {
    const clock = new VirtualClock(1_000_000);
    let zone2 = true;
    const c = catalog(clock, () => (zone2 ? [{ type: 'Zone', reasonCode: 'NotAvailableForSubscription', zones: ['2'] }] : []));
    expect(restrictedSince(c, 'Standard_D8s_v5', SCOPE, 0)).toBeUndefined();
    await c.list();
    const listedAt = clock.now();
    // A mark made after the listing: the listing may predate the refusal, so no answer.
    expect(restrictedSince(c, 'Standard_D8s_v5', SCOPE, listedAt)).toBeUndefined();
    const markedAt = listedAt - 1;
    expect(restrictedSince(c, 'Standard_D8s_v5', SCOPE, markedAt, 'eastus2-2')).toBe(true);
    expect(restrictedSince(c, 'Standard_D8s_v5', SCOPE, markedAt, 'eastus2-1')).toBe(false);
    expect(restrictedSince(c, 'Standard_D8s_v5', SCOPE, markedAt)).toBe(false);
    expect(restrictedSince(c, 'Standard_D4s_v5', SCOPE, markedAt)).toBe(true);
    zone2 = false;
    await clock.runUntil(clock.now() + 60_000);
    await c.list();
    expect(restrictedSince(c, 'Standard_D8s_v5', SCOPE, listedAt, 'eastus2-2')).toBe(false);
  });

  it('a failed refresh keeps the last listing and its time; the static catalog never answers', async () => {
    const clock = new VirtualClock(1_000_000);
    let failing = false;
    const c = catalog(clock, () => [], () => failing);
    await c.list();
    const listedAt = c.listedAt(SCOPE)!;
    failing = true;
    await clock.runUntil(clock.now() + 60_000);
    await c.list();
    expect(c.listedAt(SCOPE)).toBe(listedAt);
    expect(restrictedSince(c, 'Standard_D8s_v5', SCOPE, listedAt - 1)).toBe(false);
    expect(restrictedSince(new StaticInstanceTypeCatalog(), 'Standard_D8s_v5', SCOPE, 0)).toBeUndefined();
  });
});
