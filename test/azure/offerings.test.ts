import { describe, expect, it } from 'vitest';
import { AzureError } from '../../src/ports/azure.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { UnavailableOfferings } from '../../src/azure/offerings.js';
import { QUOTA_TTL_SECONDS, UNAVAILABLE_TTL_SECONDS } from '../../src/azure/errors.js';

const H200 = 'Standard_ND96isr_H200_v5';
const A100 = 'Standard_ND96amsr_A100_v4';
const NC_A100 = 'Standard_NC24ads_A100_v4';
const quota = (what: string, limit: number) =>
  new AzureError(
    'OperationNotAllowed',
    409,
    `Operation could not be completed as it results in exceeding approved ${what} quota. Additional details - Deployment Model: Resource Manager, Location: eastus2, Current Limit: ${limit}, Current Usage: ${limit}, Additional Required: 96`,
  );

function cache(): { clock: VirtualClock; offerings: UnavailableOfferings } {
  const clock = new VirtualClock(0);
  return { clock, offerings: new UnavailableOfferings(clock) };
}

describe('UnavailableOfferings', () => {
  it('keys by SKU × region × capacity type (case-insensitively) and expires on the injected clock', async () => {
    const { clock, offerings } = cache();
    offerings.markUnavailable(H200, 'eastus2', 'on-demand', 'AllocationFailed', 180);
    expect(offerings.isUnavailable(H200, 'eastus2', 'on-demand')).toBe(true);
    expect(offerings.isUnavailable(H200.toLowerCase(), 'EastUS2', 'on-demand')).toBe(true);
    expect(offerings.isUnavailable(H200, 'eastus2', 'spot')).toBe(false);
    expect(offerings.isUnavailable(H200, 'eastus2euap', 'on-demand')).toBe(false);
    expect(offerings.isUnavailable(A100, 'eastus2', 'on-demand')).toBe(false);
    await clock.runUntil(179_999);
    expect(offerings.isUnavailable(H200, 'eastus2', 'on-demand')).toBe(true);
    await clock.runUntil(180_000);
    expect(offerings.isUnavailable(H200, 'eastus2', 'on-demand')).toBe(false);
    expect(offerings.entries()).toEqual([]);
  });

  it('a ZonalAllocationFailed of a zonal VM marks that zone only; a regional failure covers every zone', () => {
    const { offerings } = cache();
    const zonal = new AzureError('ZonalAllocationFailed', 409, 'Allocation failed. We do not have sufficient capacity for the requested VM size in this zone.');
    offerings.recordFailure(zonal, { sku: H200, region: 'eastus2', capacityType: 'on-demand', zone: 'eastus2-1' });
    expect(offerings.isUnavailable(H200, 'eastus2', 'on-demand', 'eastus2-1')).toBe(true);
    expect(offerings.isUnavailable(H200, 'eastus2', 'on-demand', 'eastus2-2')).toBe(false);
    expect(offerings.isUnavailable(H200, 'eastus2', 'on-demand')).toBe(false);
    expect(offerings.entries()).toMatchObject([{ sku: H200.toLowerCase(), region: 'eastus2', zone: 'eastus2-1', reason: 'ZonalAllocationFailed' }]);
    offerings.recordFailure(new AzureError('AllocationFailed', 409, 'no capacity in this region'), { sku: H200, region: 'eastus2', capacityType: 'on-demand', zone: 'eastus2-2' });
    expect(offerings.isUnavailable(H200, 'eastus2', 'on-demand', 'eastus2-3')).toBe(true);
    expect(offerings.isUnavailable(H200, 'eastus2', 'on-demand')).toBe(true);
  });

  it('never shortens a mark: a later, shorter TTL leaves the longer one', async () => {
    const { clock, offerings } = cache();
    offerings.markUnavailable(H200, 'eastus2', 'on-demand', 'SkuNotAvailable', 3600);
    offerings.markUnavailable(H200, 'eastus2', 'on-demand', 'AllocationFailed', 60);
    await clock.runUntil(61_000);
    expect(offerings.blocking(H200, 'eastus2', 'on-demand')).toMatchObject({ reason: 'SkuNotAvailable', expiresAt: 3_600_000 });
  });

  it('a family quota marks every SKU of the family in that region, nothing else', () => {
    const { offerings } = cache();
    const action = offerings.recordFailure(quota('standardNDSH200v5Family Cores', 0), { sku: H200, region: 'eastus2', capacityType: 'on-demand' });
    expect(action).toMatchObject({ kind: 'insufficientCapacity', ttlSeconds: QUOTA_TTL_SECONDS.familyZeroLimit });
    expect(offerings.isUnavailable(H200, 'eastus2', 'on-demand')).toBe(true);
    expect(offerings.isUnavailable(A100, 'eastus2', 'on-demand')).toBe(false);
    expect(offerings.isUnavailable(H200, 'westus3', 'on-demand')).toBe(false);
    expect(offerings.entries()).toEqual([
      { sku: '*', family: 'standardNDSH200v5Family', region: 'eastus2', capacityType: 'on-demand', reason: 'OperationNotAllowed', markedAt: 0, expiresAt: 3_600_000 },
    ]);
  });

  it('a family quota marks sibling SKUs of the same family (NC A100 family shared by sizes)', () => {
    const clock = new VirtualClock(0);
    const families: Record<string, string> = { [NC_A100.toLowerCase()]: 'standardNCADSA100v4Family', 'standard_nc48ads_a100_v4': 'standardNCADSA100v4Family' };
    const offerings = new UnavailableOfferings(clock, { familyOf: (s) => families[s.toLowerCase()] });
    offerings.recordFailure(quota('standardNCADSA100v4Family Cores', 24), { sku: NC_A100, region: 'eastus2', capacityType: 'on-demand' });
    expect(offerings.isUnavailable('Standard_NC48ads_A100_v4', 'eastus2', 'on-demand')).toBe(true);
    expect(offerings.blocking(NC_A100, 'eastus2', 'on-demand')?.expiresAt).toBe(QUOTA_TTL_SECONDS.familyExhausted * 1000);
  });

  it('a regional quota blocks the whole region for that capacity type; low-priority quota blocks spot only', () => {
    const { offerings } = cache();
    offerings.recordFailure(quota('Total Regional Cores', 100), { sku: H200, region: 'eastus2', capacityType: 'on-demand' });
    expect(offerings.isUnavailable('Standard_D8s_v5', 'eastus2', 'on-demand')).toBe(true);
    expect(offerings.isUnavailable('Standard_D8s_v5', 'eastus2', 'spot')).toBe(false);
    offerings.recordFailure(quota('LowPriorityCores', 3), { sku: H200, region: 'westus3', capacityType: 'spot' });
    expect(offerings.isUnavailable(A100, 'westus3', 'spot')).toBe(true);
    expect(offerings.isUnavailable(A100, 'westus3', 'on-demand')).toBe(false);
  });

  it('allocation failures block both capacity types of the SKU for the Karpenter provider TTL (1 h)', () => {
    const { offerings } = cache();
    offerings.recordFailure(new AzureError('AllocationFailed', 409, 'no capacity'), { sku: H200, region: 'eastus2', capacityType: 'on-demand' });
    expect(offerings.blocking(H200, 'eastus2', 'on-demand')?.expiresAt).toBe(UNAVAILABLE_TTL_SECONDS.allocation * 1000);
    expect(offerings.isUnavailable(H200, 'eastus2', 'spot')).toBe(true);
    offerings.recordFailure(new AzureError('OverconstrainedAllocationRequest', 409, 'x'), { sku: A100, region: 'eastus2', capacityType: 'spot' });
    expect(offerings.isUnavailable(A100, 'eastus2', 'spot')).toBe(true);
    expect(offerings.isUnavailable(A100, 'eastus2', 'on-demand')).toBe(false);
  });

  it('SkuNotAvailable: 23 h on-demand, 1 h spot', () => {
    const { offerings } = cache();
    offerings.recordFailure(new AzureError('SkuNotAvailable', 409, 'x'), { sku: H200, region: 'eastus2', capacityType: 'on-demand' });
    offerings.recordFailure(new AzureError('SkuNotAvailable', 409, 'x'), { sku: H200, region: 'eastus2', capacityType: 'spot' });
    expect(offerings.blocking(H200, 'eastus2', 'on-demand')?.expiresAt).toBe(23 * 3600_000);
    expect(offerings.blocking(H200, 'eastus2', 'spot')?.expiresAt).toBe(3600_000);
  });

  it('non-capacity failures mark nothing', () => {
    const { offerings } = cache();
    for (const err of [new AzureError('TooManyRequests', 429, 'x', 5), new AzureError('InternalServerError', 500, 'x'), new AzureError('NicReservedForAnotherVm', 400, 'x'), new Error('odd')]) {
      offerings.recordFailure(err, { sku: H200, region: 'eastus2', capacityType: 'on-demand' });
    }
    expect(offerings.entries()).toEqual([]);
    expect(offerings.seqNum).toBe(0);
  });

  it('cores freed by our own VM delete lift quota marks for the family early, not capacity marks', () => {
    const { offerings } = cache();
    offerings.recordFailure(quota('standardNDSH200v5Family Cores', 192), { sku: H200, region: 'eastus2', capacityType: 'on-demand' });
    offerings.recordFailure(new AzureError('AllocationFailed', 409, 'x'), { sku: A100, region: 'eastus2', capacityType: 'on-demand' });
    const before = offerings.seqNum;
    offerings.noteCoresFreed(H200, 'eastus2');
    expect(offerings.isUnavailable(H200, 'eastus2', 'on-demand')).toBe(false);
    expect(offerings.isUnavailable(A100, 'eastus2', 'on-demand')).toBe(true);
    expect(offerings.seqNum).toBeGreaterThan(before);
  });
});
