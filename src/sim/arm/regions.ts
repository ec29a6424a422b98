import { regionKey, sameId, type RegionState } from './model.js';
import type { FakeArmRegionConfig } from './types.js';

/**
 * The configured regions of each subscription, with what changes in them at run time: quota
 * and usage, SKU availability, capacity failure and Spot eviction rates.
 */
export class Regions {
  private readonly regions = new Map<string, RegionState>();
  /** First configured region per subscription: the throttling region for calls without a location. */
  private readonly homeRegion = new Map<string, string>();
  private readonly homeByCaller = new Map<string, string>();

  constructor(configs: readonly FakeArmRegionConfig[]) {
    for (const r of configs) this.add(r);
  }

  get(subscriptionId: string, location: string): RegionState | undefined {
    return this.regions.get(regionKey(subscriptionId, location));
  }

  values(): IterableIterator<RegionState> {
    return this.regions.values();
  }

  /** The regions a fault names; a fault naming none is a scenario error. */
  match(location: string, subscriptionId: string | undefined): RegionState[] {
    const out = [...this.regions.values()].filter(
      (r) => sameId(r.location, location) && (subscriptionId === undefined || sameId(r.subscriptionId, subscriptionId)),
    );
    if (out.length === 0) throw new Error(`fake ARM: no configured region ${location}${subscriptionId ? ` in ${subscriptionId}` : ''}`);
    return out;
  }

  /** The configured home region of a subscription (lower-cased key), if any. */
  homeOf(subscriptionId: string): string | undefined {
    return this.homeRegion.get(subscriptionId.toLowerCase());
  }

  /** The region a call naming no resource is charged to ('global' for an unknown subscription). */
  homeRegionOf(subscriptionId: string): string {
    let home = this.homeByCaller.get(subscriptionId);
    if (home === undefined) {
      home = this.homeRegion.get(subscriptionId.toLowerCase()) ?? 'global';
      // Regions are added at construction only, so the answer never changes.
      this.homeByCaller.set(subscriptionId, home);
    }
    return home;
  }

  /** Configured regions with their current availability (for the Resource SKUs API). */
  regionsOf(subscriptionId: string): Array<{ location: string; unavailableSkus: string[] }> {
    const out: Array<{ location: string; unavailableSkus: string[] }> = [];
    for (const r of this.regions.values()) {
      if (r.subscriptionId.toLowerCase() === subscriptionId.toLowerCase()) out.push({ location: r.location, unavailableSkus: [...r.unavailable] });
    }
    return out;
  }

  private add(r: FakeArmRegionConfig): void {
    const key = regionKey(r.subscriptionId, r.location);
    this.regions.set(key, {
      subscriptionId: r.subscriptionId,
      location: r.location,
      familyQuota: new Map(Object.entries(r.familyQuotaCores)),
      familyUsed: new Map(),
      regionalQuota: r.regionalQuotaCores,
      lowPriorityQuota: r.lowPriorityQuotaCores,
      lowPriorityUsed: 0,
      totalUsed: 0,
      unavailable: new Set((r.unavailableSkus ?? []).map((s) => s.toLowerCase())),
      spotUnavailable: new Set(),
      allocationFailureRate: r.allocationFailureRate ?? 0,
      zonalAllocationFailureRate: r.zonalAllocationFailureRate ?? 0,
      overconstrainedAllocationFailureRate: r.overconstrainedAllocationFailureRate ?? 0,
      spotEvictionRatePerHour: r.spotEvictionRatePerHour ?? 0,
      spotEvictionRateBySku: new Map(Object.entries(r.spotEvictionRatePerHourBySku ?? {}).map(([sku, rate]) => [sku.toLowerCase(), rate])),
    });
    const sub = r.subscriptionId.toLowerCase();
    if (!this.homeRegion.has(sub)) this.homeRegion.set(sub, r.location);
  }
}
