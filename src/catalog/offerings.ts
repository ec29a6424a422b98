import type { InstanceType } from './skus.js';

/**
 * The offerings of an instance type: one per capacity type it can be bought as, with its price
 * (Karpenter's cloudprovider.Offering, less the zone: zones are the type's own list, with
 * marks per zone and capacity type in the offerings cache). A NodePool's
 * karpenter.sh/capacity-type requirement selects among them; launch takes the cheapest one
 * still available (chooseOffering in src/lifecycle/nodeclaim/launch.ts).
 */
export type CapacityType = 'on-demand' | 'spot' | 'reserved';

export const CAPACITY_TYPES: readonly CapacityType[] = ['on-demand', 'spot', 'reserved'];

export function isCapacityType(value: string): value is CapacityType {
  return (CAPACITY_TYPES as readonly string[]).includes(value);
}

export interface Offering {
  capacityType: CapacityType;
  /** USD/hour: only ranks offerings (src/catalog/prices.ts, spot-prices.ts). */
  pricePerHour: number;
}

/**
 * Karpenter's order at equal price: reserved capacity first (upstream core prefers a
 * reservation the NodeClaim fits), then spot, then on-demand. Price decides before it.
 */
const PREFERENCE: Readonly<Record<CapacityType, number>> = { reserved: 0, spot: 1, 'on-demand': 2 };

/** Cheapest first; equal prices in upstream's preference order. */
export function compareOfferings(a: Offering, b: Offering): number {
  return a.pricePerHour - b.pricePerHour || PREFERENCE[a.capacityType] - PREFERENCE[b.capacityType];
}

/**
 * What the type can be bought as: on-demand always; spot where a spot price is known (the
 * Azure provider offers spot for a size when its pricing provider has a spot price); reserved
 * where a capacity reservation of the size has room (`reservable`), at the on-demand price
 * (already paid for: the tie-break then prefers it).
 */
export function offeringsOf(type: InstanceType, reservable = false): Offering[] {
  const out: Offering[] = [{ capacityType: 'on-demand', pricePerHour: type.pricePerHour }];
  if (type.spotPricePerHour !== undefined) out.push({ capacityType: 'spot', pricePerHour: type.spotPricePerHour });
  if (reservable) out.push({ capacityType: 'reserved', pricePerHour: type.pricePerHour });
  return out;
}

/** The capacity types the type offers, in CAPACITY_TYPES order. */
export function offeredCapacityTypes(type: InstanceType, reservable = false): CapacityType[] {
  return offeringsOf(type, reservable).map((o) => o.capacityType);
}

/** The cheapest offering `usable` admits (undefined: none). */
export function cheapestOffering(type: InstanceType, usable: (capacityType: CapacityType) => boolean, reservable = false): Offering | undefined {
  let best: Offering | undefined;
  for (const o of offeringsOf(type, reservable)) if (usable(o.capacityType) && (!best || compareOfferings(o, best) < 0)) best = o;
  return best;
}

/** What a node of the type costs as the capacity type it launched as (on-demand's price when that offering is unknown). */
export function offeringPrice(type: InstanceType, capacityType: string | undefined): number {
  return offeringsOf(type).find((o) => o.capacityType === capacityType)?.pricePerHour ?? type.pricePerHour;
}
