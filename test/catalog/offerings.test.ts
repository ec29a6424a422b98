import { describe, expect, it } from 'vitest';
import { cheapestOffering, compareOfferings, offeredCapacityTypes, offeringPrice, offeringsOf } from '../../src/catalog/offerings.js';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';

const d8 = STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_D8s_v5')!;
const d8Spot = { ...d8, spotPricePerHour: 0.05 };

describe('offerings', () => {
  it('offers on-demand always and spot only where a spot price is known', () => {
    expect(offeredCapacityTypes({ ...d8, spotPricePerHour: undefined })).toEqual(['on-demand']);
    expect(offeringsOf(d8Spot)).toEqual([{ capacityType: 'on-demand', pricePerHour: d8.pricePerHour }, { capacityType: 'spot', pricePerHour: 0.05 }]);
  });

  it('ranks cheapest first, and at equal price reserved before spot before on-demand', () => {
    const sorted = [
      { capacityType: 'on-demand' as const, pricePerHour: 1 },
      { capacityType: 'spot' as const, pricePerHour: 1 },
      { capacityType: 'reserved' as const, pricePerHour: 1 },
      { capacityType: 'on-demand' as const, pricePerHour: 0.5 },
    ].sort(compareOfferings);
    expect(sorted.map((o) => `${o.capacityType}@${o.pricePerHour}`)).toEqual(['on-demand@0.5', 'reserved@1', 'spot@1', 'on-demand@1']);
  });

  it('takes the cheapest offering the caller admits, and prices a node by the capacity type it launched as', () => {
    expect(cheapestOffering(d8Spot, () => true)?.capacityType).toBe('spot');
    expect(cheapestOffering(d8Spot, (ct) => ct !== 'spot')?.capacityType).toBe('on-demand');
    expect(cheapestOffering(d8Spot, () => false)).toBeUndefined();
    expect(offeringPrice(d8Spot, 'spot')).toBe(0.05);
    expect(offeringPrice(d8Spot, undefined)).toBe(d8.pricePerHour);
  });
});
