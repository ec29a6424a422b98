import type { CapacityType } from '../catalog/offerings.js';
import type { Clock } from '../ports/clock.js';
import { STATIC_INSTANCE_TYPES } from '../catalog/skus.js';
import { classifyAzureError, type FailureAction } from './errors.js';

/**
 * The unavailable-offerings cache: SKU × region × capacity type → "do not try before T".
 * It is what stops a NodePool whose SKU has no quota from hammering ARM: the scheduler
 * skips an offering while it is marked. Time comes from the injected clock only.
 *
 * Beyond the Azure Karpenter provider (which marks one instance type per failure), a mark
 * can cover a whole VM family in a region (a family quota refuses every size of the family)
 * or a whole region for a capacity type (regional and low-priority quotas), so one refusal
 * stops attempts at every offering it implies instead of one per SKU.
 */

/** '*' in `sku` means every SKU; `family` set means every SKU of that family; `zone` set: that zone only. */
export interface UnavailableEntry {
  sku: string;
  family?: string;
  region: string;
  /** Zone label ("eastus2-1"): a zonal allocation failure marks only that zone of the SKU. */
  zone?: string;
  capacityType: CapacityType;
  reason: string;
  markedAt: number;
  expiresAt: number;
}

export interface OfferingAttempt {
  sku: string;
  region: string;
  capacityType: CapacityType;
  /** Zone label of a zonal VM create. */
  zone?: string;
}

/** The unavailable-offerings cache as the runtime and the provisioner use it (UnavailableOfferings below). */
export interface OfferingsCache {
  isUnavailable(sku: string, region: string, capacityType: CapacityType, zone?: string): boolean;
  apply(action: FailureAction, attempt: { sku: string; region: string; capacityType: CapacityType; zone?: string }): void;
  /** One of our VMs went away: quota marks for its family may lift early. */
  noteCoresFreed(sku: string, region: string): void;
  /** Live marks (persisted to the NodeClass so they survive a restart, see offering-marks.ts). */
  entries(): UnavailableEntry[];
  /** Drops a SKU's marks in a region (its SkuNotAvailable restriction is gone). */
  lift(sku: string, region: string): void;
}

export interface UnavailableOfferingsOptions {
  /** VM family of a SKU as quota counts it; default: the static catalog. */
  familyOf?: (sku: string) => string | undefined;
}

const ANY_SKU = '*';

export class UnavailableOfferings implements OfferingsCache {
  private readonly marks = new Map<string, UnavailableEntry>();
  private readonly familyOf: (sku: string) => string | undefined;
  private seq = 0;

  constructor(
    private readonly clock: Clock,
    options: UnavailableOfferingsOptions = {},
  ) {
    this.familyOf = options.familyOf ?? staticFamilyOf;
  }

  /** Bumps on every change, so callers can cache filtered offerings until it moves. */
  get seqNum(): number {
    return this.seq;
  }

  /** Marks one offering. A mark is only ever extended, never shortened, by a later one. */
  markUnavailable(sku: string, region: string, capacityType: CapacityType, reason: string, ttlSeconds: number): void {
    this.put({ sku, region, capacityType, reason }, ttlSeconds);
  }

  /** Every SKU of `family` in `region` (a family cores quota refuses them all). */
  markFamilyUnavailable(family: string, region: string, capacityType: CapacityType, reason: string, ttlSeconds: number): void {
    this.put({ sku: ANY_SKU, family, region, capacityType, reason }, ttlSeconds);
  }

  /** Every SKU in `region` for a capacity type (regional or low-priority quota). */
  markRegionUnavailable(region: string, capacityType: CapacityType, reason: string, ttlSeconds: number): void {
    this.put({ sku: ANY_SKU, region, capacityType, reason }, ttlSeconds);
  }

  /** With a zone: whether that zone's offering is blocked (by a zone mark or anything regional). */
  isUnavailable(sku: string, region: string, capacityType: CapacityType, zone?: string): boolean {
    return this.blocking(sku, region, capacityType, zone) !== undefined;
  }

  /** The mark that blocks an offering, if any (the longest-lived one). */
  blocking(sku: string, region: string, capacityType: CapacityType, zone?: string): UnavailableEntry | undefined {
    const family = this.familyOf(sku);
    const keys = [key(sku, region, capacityType), key(ANY_SKU, region, capacityType)];
    if (family) keys.push(familyKey(family, region, capacityType));
    if (zone) keys.push(zoneKey(sku, region, zone, capacityType));
    let found: UnavailableEntry | undefined;
    for (const k of keys) {
      const entry = this.live(k);
      if (entry && (!found || entry.expiresAt > found.expiresAt)) found = entry;
    }
    return found;
  }

  /**
   * Classifies a failed create and marks what it implies; returns the classification so the
   * caller acts on the same decision. Non-capacity failures mark nothing.
   */
  recordFailure(err: unknown, attempt: OfferingAttempt): FailureAction {
    const action = classifyAzureError(err, { capacityType: attempt.capacityType });
    this.apply(action, attempt);
    return action;
  }

  /**
   * Marks what an already-classified failure implies (for callers that classified it
   * themselves, e.g. inside a state machine, and kept the FailureAction).
   */
  apply(action: FailureAction, attempt: OfferingAttempt): void {
    if (action.kind !== 'insufficientCapacity') return;
    const { sku, region, capacityType } = attempt;
    const reason = action.code;
    if (attempt.zone && (action.code === 'ZonalAllocationFailed' || action.code === 'OverconstrainedZonalAllocationRequest')) {
      // The zone ran out, not the region: the SKU's other zones stay offered (the Azure provider marks per zone too).
      this.put({ sku, region, zone: attempt.zone, capacityType, reason }, action.ttlSeconds);
      return;
    }
    if (action.reason === 'quota') {
      const quota = action.quota;
      switch (quota?.scope) {
        case 'family': {
          const family = quota.family ?? this.familyOf(sku);
          if (family) this.markFamilyUnavailable(family, region, capacityType, reason, action.ttlSeconds);
          else this.markUnavailable(sku, region, capacityType, reason, action.ttlSeconds);
          break;
        }
        case 'regional':
          this.markRegionUnavailable(region, capacityType, reason, action.ttlSeconds);
          break;
        case 'lowPriority':
          // Low-priority cores are the spot quota, whatever capacity type the attempt asked for.
          this.markRegionUnavailable(region, 'spot', reason, action.ttlSeconds);
          break;
        default:
          this.markUnavailable(sku, region, capacityType, reason, action.ttlSeconds);
      }
      return;
    }
    if (action.code === 'AllocationFailed') {
      // "No capacity for this size in the region": spot draws on the same hardware.
      this.markUnavailable(sku, region, 'on-demand', reason, action.ttlSeconds);
      this.markUnavailable(sku, region, 'spot', reason, action.ttlSeconds);
      return;
    }
    this.markUnavailable(sku, region, capacityType, reason, action.ttlSeconds);
  }

  /**
   * azflex deleted a VM of this family in this region: the cores it held are free again, so
   * quota marks for the family (and the regional ones) no longer hold. Allocation and
   * SKU-availability marks stay: our delete says nothing about Azure's hardware.
   */
  noteCoresFreed(sku: string, region: string): void {
    const family = this.familyOf(sku);
    let changed = false;
    for (const [k, entry] of this.marks) {
      if (entry.region !== region.toLowerCase() || !isQuotaReason(entry.reason)) continue;
      const sameFamily = family !== undefined && entry.family?.toLowerCase() === family.toLowerCase();
      const regionWide = entry.sku === ANY_SKU && entry.family === undefined && entry.capacityType === 'on-demand';
      const sameSku = entry.sku === sku.toLowerCase();
      if (sameFamily || regionWide || sameSku) {
        this.marks.delete(k);
        changed = true;
      }
    }
    if (changed) this.seq++;
  }

  /** Drops the marks naming this SKU in a region (family and region-wide marks stay). */
  lift(sku: string, region: string): void {
    let changed = false;
    for (const [k, entry] of this.marks) {
      if (entry.region === region.toLowerCase() && entry.sku === sku.toLowerCase()) {
        this.marks.delete(k);
        changed = true;
      }
    }
    if (changed) this.seq++;
  }

  /** Live marks, soonest-expiring first (for status, metrics and the live view). */
  entries(): UnavailableEntry[] {
    const now = this.clock.now();
    for (const [k, entry] of this.marks) if (entry.expiresAt <= now) this.marks.delete(k);
    return [...this.marks.values()].sort((a, b) => a.expiresAt - b.expiresAt || compareKeys(a, b)).map((e) => ({ ...e }));
  }

  clear(): void {
    this.marks.clear();
    this.seq++;
  }

  private put(target: Omit<UnavailableEntry, 'markedAt' | 'expiresAt'>, ttlSeconds: number): void {
    const now = this.clock.now();
    const entry: UnavailableEntry = {
      ...target,
      sku: target.sku === ANY_SKU ? ANY_SKU : target.sku.toLowerCase(),
      region: target.region.toLowerCase(),
      markedAt: now,
      expiresAt: now + Math.max(0, ttlSeconds) * 1000,
    };
    const k = entry.family ? familyKey(entry.family, entry.region, entry.capacityType)
      : entry.zone ? zoneKey(entry.sku, entry.region, entry.zone, entry.capacityType) : key(entry.sku, entry.region, entry.capacityType);
    const existing = this.live(k);
    if (existing && existing.expiresAt >= entry.expiresAt) return;
    this.marks.set(k, entry);
    this.seq++;
  }

  private live(k: string): UnavailableEntry | undefined {
    const entry = this.marks.get(k);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.clock.now()) {
      this.marks.delete(k);
      return undefined;
    }
    return entry;
  }
}

function key(sku: string, region: string, capacityType: CapacityType): string {
  return `${capacityType}:${sku.toLowerCase()}:${region.toLowerCase()}`;
}

function zoneKey(sku: string, region: string, zone: string, capacityType: CapacityType): string {
  return `${capacityType}:${sku.toLowerCase()}:${region.toLowerCase()}:${zone.toLowerCase()}`;
}

function familyKey(family: string, region: string, capacityType: CapacityType): string {
  return `${capacityType}:family=${family.toLowerCase()}:${region.toLowerCase()}`;
}

export function isQuotaReason(reason: string): boolean {
  return reason === 'OperationNotAllowed' || reason === 'QuotaExceeded' || reason === 'quota';
}

function compareKeys(a: UnavailableEntry, b: UnavailableEntry): number {
  const ka = `${a.region}:${a.capacityType}:${a.family ?? ''}:${a.sku}:${a.zone ?? ''}`;
  const kb = `${b.region}:${b.capacityType}:${b.family ?? ''}:${b.sku}:${b.zone ?? ''}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

const STATIC_FAMILIES = new Map(STATIC_INSTANCE_TYPES.map((t) => [t.name.toLowerCase(), t.family]));

function staticFamilyOf(sku: string): string | undefined {
  return STATIC_FAMILIES.get(sku.toLowerCase());
}
