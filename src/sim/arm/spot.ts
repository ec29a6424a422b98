/**
 * What ARM checks on a VM PUT's spot properties, and spot capacity by knob. Sources are in
 * docs/fidelity.md: the Spot VM page (eviction policy, max price against the current spot
 * price), the BillingProfile model (-1 or above zero), and the Spot error codes page.
 */
import type { InstanceType } from '../../catalog/skus.js';
import * as msg from './messages.js';
import type { RegionState, VmCreateRequest } from './model.js';

/** Marks a region's spot capacity for every size. */
export const ALL_SIZES = '*';

/** Parameter checks: refused before ARM looks at NICs or capacity. */
export function checkSpotParameters(req: VmCreateRequest): void {
  if (req.priority !== 'Spot') {
    if (req.evictionPolicy !== undefined) throw msg.evictionPolicyOnlyOnSpot();
    if (req.maxPrice !== undefined) throw msg.maxPriceOnlyOnSpot();
    return;
  }
  if (req.maxPrice !== undefined && req.maxPrice !== -1 && !(req.maxPrice > 0)) throw msg.maxPriceValueInvalid();
}

/**
 * Whether the size is offered as spot at all (Resource SKUs' LowPriorityCapable): the fake's
 * sizes that have a spot price. Azure refuses spot for B-series and Promo sizes.
 */
export function isSpotCapable(type: InstanceType): boolean {
  return type.spotPricePerHour !== undefined;
}

/** Size, price and capacity checks of a spot create, after the NIC checks (a refused PUT still reserves its NIC). */
export function checkSpotCreate(req: VmCreateRequest, type: InstanceType, region: RegionState): void {
  if (req.priority !== 'Spot') return;
  if (!isSpotCapable(type)) throw msg.spotNotSupportedForSize(type.name);
  const price = type.spotPricePerHour!;
  if (req.maxPrice !== undefined && req.maxPrice !== -1 && req.maxPrice < price) throw msg.spotPriceAboveMaxPrice(req.maxPrice, price, type.name);
  if (region.spotUnavailable.has(ALL_SIZES) || region.spotUnavailable.has(type.name.toLowerCase())) {
    throw msg.spotCapacityNotAvailable(req.ref.name, req.location, req.ref.subscriptionId);
  }
}
