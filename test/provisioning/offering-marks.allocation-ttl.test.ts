import { describe, expect, it } from 'vitest';
import { ALLOCATION_TTL_MAX_SECONDS, UNAVAILABLE_TTL_SECONDS } from '../../src/azure/errors.js';
import { allocationTtlSeconds, launchedAfter, type OfferingMark } from '../../src/provisioning/offering-marks.js';
import { T0, iso, makeNodeClaim } from './fixtures.js';

const SKU = 'Standard_D8s_v5';
const BASE = UNAVAILABLE_TTL_SECONDS.allocation;
const mark = (markedAt: number, ttlSeconds: number, extra: Partial<OfferingMark> = {}): OfferingMark =>
  ({ sku: SKU.toLowerCase(), capacityType: 'on-demand', reason: 'AllocationFailed', markedAt, expiresAt: markedAt + ttlSeconds * 1000, ...extra });
const never = (): boolean => false;
const key = { sku: SKU, capacityType: 'on-demand' as const };

describe('allocation marks: short first, doubled while the offering keeps failing', () => {
  it("starts at Karpenter's 3 minutes and doubles per failed attempt made after the last mark, up to the Azure provider's 1 h", () => {
    expect(BASE).toBe(180);
    expect(allocationTtlSeconds([], key, T0, never, BASE, ALLOCATION_TTL_MAX_SECONDS)).toBe(180);
    let ttl = BASE;
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      const at = T0 + i * 3_600_000;
      ttl = allocationTtlSeconds([mark(at, ttl)], key, at + ttl * 1000 + 1, never, BASE, ALLOCATION_TTL_MAX_SECONDS);
      seen.push(ttl);
    }
    expect(seen).toEqual([360, 720, 1440, 2880, 3600, 3600]);
  });

  it('keeps the short mark for attempts already in flight when it was made, and once the offering launched again since', () => {
    const previous = [mark(T0 + 60_000, 720)];
    expect(allocationTtlSeconds(previous, key, T0, never, BASE, ALLOCATION_TTL_MAX_SECONDS)).toBe(BASE);
    expect(allocationTtlSeconds(previous, key, T0 + 120_000, () => true, BASE, ALLOCATION_TTL_MAX_SECONDS)).toBe(BASE);
    expect(allocationTtlSeconds(previous, key, undefined, never, BASE, ALLOCATION_TTL_MAX_SECONDS)).toBe(BASE);
    expect(allocationTtlSeconds(previous, key, T0 + 120_000, never, BASE, ALLOCATION_TTL_MAX_SECONDS)).toBe(1440);
  });

  it("a zone's mark escalates only that zone's next mark", () => {
    const zonal = [mark(T0, 180, { zone: 'eastus2-1', reason: 'ZonalAllocationFailed' })];
    expect(allocationTtlSeconds(zonal, { ...key, zone: 'eastus2-1' }, T0 + 1, never, BASE, ALLOCATION_TTL_MAX_SECONDS)).toBe(360);
    expect(allocationTtlSeconds(zonal, { ...key, zone: 'eastus2-2' }, T0 + 1, never, BASE, ALLOCATION_TTL_MAX_SECONDS)).toBe(BASE);
    expect(allocationTtlSeconds(zonal, key, T0 + 1, never, BASE, ALLOCATION_TTL_MAX_SECONDS)).toBe(BASE);
  });

  it('launchedAfter: a NodeClaim whose Launched turned True after the mark, as that size (label or VM) and zone', () => {
    const launched = (name: string, at: number, labels: Record<string, string> = {}) =>
      makeNodeClaim(name, { nodePool: 'p', instanceTypes: [SKU, 'Standard_D8as_v5'], labels, conditions: [{ type: 'Launched', status: 'True', reason: 'Launched', message: '', lastTransitionTime: iso(at) }] });
    const claims = [launched('a', T0 + 10_000, { 'topology.kubernetes.io/zone': 'eastus2-2' }), launched('b', T0 - 10_000)];
    const size = (c: { metadata: { name: string } }): string | undefined => (c.metadata.name === 'a' ? SKU : 'Standard_D8as_v5');
    expect(launchedAfter(claims, size, SKU, undefined, T0)).toBe(true);
    expect(launchedAfter(claims, size, SKU, 'eastus2-2', T0)).toBe(true);
    expect(launchedAfter(claims, size, SKU, 'eastus2-1', T0)).toBe(false);
    expect(launchedAfter(claims, size, SKU, undefined, T0 + 20_000)).toBe(false);
    expect(launchedAfter(claims, size, 'Standard_D8as_v5', undefined, T0)).toBe(false);
  });
});
