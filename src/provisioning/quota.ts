/**
 * Quota-aware planning: Compute usages (family, regional and low-priority vCPUs) read per
 * NodeClass subscription and location, less the cores of this controller's own creates that
 * usage does not count yet, so the provisioner plans no pod into an offering whose quota
 * cannot hold its VM.
 *
 * Reads happen when a pass first needs a location (the process starts), once an interval has
 * passed, and, debounced: after a quota refusal (a quota mark on a NodeClass newer than the
 * reading), and after this controller's own VMs the reading counts are deleted (their
 * NodeClaims gone) while the last pass left pods pending for quota, so a replacement does not
 * wait out the interval for the cores the delete freed. A read that fails or a reading older
 * than the staleness bound counts as none: the provisioner falls back to the reactive path
 * (offering marks, one canary).
 */
import type { AzurePort, ComputeUsages, CoreUsage } from '../ports/azure.js';
import type { Clock } from '../ports/clock.js';
import type { AzureFlexNodeClass, NodeClaim } from '../ports/cluster.js';
import type { InstanceType } from '../catalog/skus.js';
import { readMarks } from './offering-marks.js';
import { isQuotaReason } from '../azure/offerings.js';
import { countedByReading, inFlightCores } from './quota-in-flight.js';
import { CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT } from '../apis/well-known.js';

const ON_DEMAND_ONLY: ReadonlySet<string> = new Set([CAPACITY_TYPE_ON_DEMAND]);

export const DEFAULT_QUOTA_READ_INTERVAL_MS = 5 * 60_000;
/** A refusal (or freed cores) reads again at once, but no sooner than this after the last read of the location. */
export const DEFAULT_QUOTA_REFUSAL_DEBOUNCE_MS = 30_000;

export interface QuotaTarget {
  subscriptionId: string;
  location: string;
}

export interface QuotaReading {
  readAt: number;
  usages: ComputeUsages;
}

export interface QuotaReaderOptions {
  arm: Pick<AzurePort, 'listUsages'>;
  /** ARM's clock: readings are compared with the offering marks it stamps. */
  clock: Clock;
  intervalMs?: number;
  /** A reading older than this is not used (default three intervals). */
  staleAfterMs?: number;
  refusalDebounceMs?: number;
  /** A fresh reading (metrics). */
  onReading?: (target: QuotaTarget, reading: QuotaReading) => void;
  onReadFailed?: (target: QuotaTarget, err: unknown) => void;
}

const keyOf = (t: QuotaTarget): string => `${t.subscriptionId.toLowerCase()}/${t.location.toLowerCase()}`;

/** Where each usable NodeClass creates VMs: one usages read serves every NodeClass of a subscription and location. */
export function quotaTargets(nodeClasses: readonly AzureFlexNodeClass[]): QuotaTarget[] {
  const out = new Map<string, QuotaTarget>();
  for (const nc of nodeClasses) {
    const t = { subscriptionId: nc.spec.subscriptionID, location: nc.spec.location.toLowerCase() };
    if (!out.has(keyOf(t))) out.set(keyOf(t), t);
  }
  return [...out.values()];
}

/** The newest quota refusal marked on a NodeClass of the target (markedAt), if any. */
function lastRefusal(nodeClasses: readonly AzureFlexNodeClass[], target: QuotaTarget): number | undefined {
  let last: number | undefined;
  for (const nc of nodeClasses) {
    if (keyOf({ subscriptionId: nc.spec.subscriptionID, location: nc.spec.location }) !== keyOf(target)) continue;
    for (const m of readMarks(nc)) if (isQuotaReason(m.reason) && (last === undefined || m.markedAt > last)) last = m.markedAt;
  }
  return last;
}

export class QuotaReader {
  private readonly readings = new Map<string, QuotaReading>();
  private readonly attempted = new Map<string, number>();
  /** Per target: the NodeClaims whose VMs its reading counts (taken at the reading's first ledger). */
  private readonly counted = new Map<string, { readAt: number; names: Set<string> }>();
  /** Whether the last pass that planned left pods pending for quota. */
  private pendingForQuota = false;
  private readonly intervalMs: number;
  private readonly staleAfterMs: number;
  private readonly debounceMs: number;

  constructor(private readonly options: QuotaReaderOptions) {
    this.intervalMs = options.intervalMs ?? DEFAULT_QUOTA_READ_INTERVAL_MS;
    this.staleAfterMs = options.staleAfterMs ?? 3 * this.intervalMs;
    this.debounceMs = options.refusalDebounceMs ?? DEFAULT_QUOTA_REFUSAL_DEBOUNCE_MS;
  }

  /**
   * Reads the usages of every NodeClass location that is due: never read, interval passed,
   * refused since the last reading, or (pods pending for quota) own VMs it counts deleted since.
   */
  async refresh(nodeClasses: readonly AzureFlexNodeClass[], nodeClaims: readonly NodeClaim[] = []): Promise<void> {
    const listed = this.pendingForQuota ? new Set(nodeClaims.map((c) => c.metadata.name)) : undefined;
    for (const target of quotaTargets(nodeClasses)) {
      const freed = listed !== undefined && this.freedSinceReading(target, listed);
      if (this.due(target, lastRefusal(nodeClasses, target), freed)) await this.read(target);
    }
  }

  private due(target: QuotaTarget, refusedAt: number | undefined, freed: boolean): boolean {
    const now = this.options.clock.now();
    const tried = this.attempted.get(keyOf(target));
    if (tried === undefined || now - tried >= this.intervalMs) return true;
    const reading = this.readings.get(keyOf(target));
    const refused = refusedAt !== undefined && refusedAt >= (reading?.readAt ?? tried);
    return (refused || freed) && now - tried >= this.debounceMs;
  }

  /** Whether a NodeClaim whose VM the target's reading counts is gone (its VM deleted). */
  private freedSinceReading(target: QuotaTarget, listed: ReadonlySet<string>): boolean {
    const c = this.counted.get(keyOf(target));
    if (!c || c.readAt !== this.readings.get(keyOf(target))?.readAt) return false;
    for (const name of c.names) if (!listed.has(name)) return true;
    return false;
  }

  private async read(target: QuotaTarget): Promise<void> {
    const key = keyOf(target);
    this.attempted.set(key, this.options.clock.now());
    try {
      const usages = await this.options.arm.listUsages(target.subscriptionId, target.location);
      const reading = { readAt: this.options.clock.now(), usages };
      this.readings.set(key, reading);
      this.options.onReading?.(target, reading);
    } catch (err) {
      // Kept until stale: one failed read is not a reason to forget a recent one.
      this.options.onReadFailed?.(target, err);
    }
  }

  /**
   * What a pass that planned (not one skipped for unchanged inputs) says: whether quota left
   * pods pending (a plan its ledger dropped, or pods unschedulable with a shortfall).
   */
  planned(pendingForQuota: boolean): void {
    this.pendingForQuota = pendingForQuota;
  }

  /** The target's reading, unless there is none or it is stale (fail open). */
  reading(target: QuotaTarget): QuotaReading | undefined {
    const r = this.readings.get(keyOf(target));
    return r && this.options.clock.now() - r.readAt <= this.staleAfterMs ? r : undefined;
  }

  /** One pass's ledger: the readings less the cores of NodeClaims in flight. */
  ledger(nodeClasses: readonly AzureFlexNodeClass[], nodeClaims: readonly NodeClaim[], instanceTypes: readonly InstanceType[]): QuotaLedger {
    const headroom = new Map<string, Headroom>();
    const subsByRegion = new Map<string, string[]>();
    for (const target of quotaTargets(nodeClasses)) {
      const reading = this.reading(target);
      if (!reading) continue;
      const classes = new Set(nodeClasses.filter((nc) => keyOf({ subscriptionId: nc.spec.subscriptionID, location: nc.spec.location }) === keyOf(target)).map((nc) => nc.metadata.name));
      const mine = nodeClaims.filter((c) => classes.has(c.spec.nodeClassRef.name));
      if (this.counted.get(keyOf(target))?.readAt !== reading.readAt) {
        this.counted.set(keyOf(target), { readAt: reading.readAt, names: new Set(mine.filter((c) => countedByReading(c, reading.readAt)).map((c) => c.metadata.name)) });
      }
      const flying = inFlightCores(mine, instanceTypes, reading.readAt);
      const families = new Map<string, CoreUsage>();
      for (const [family, u] of reading.usages.families) families.set(family.toLowerCase(), { used: u.used + (flying.families.get(family.toLowerCase()) ?? 0), limit: u.limit });
      const low = reading.usages.lowPriority;
      headroom.set(keyOf(target), {
        regional: { used: reading.usages.regional.used + flying.regional, limit: reading.usages.regional.limit }, families,
        ...(low ? { lowPriority: { used: low.used + flying.lowPriority, limit: low.limit } } : {}),
      });
      const subs = subsByRegion.get(target.location) ?? [];
      subs.push(target.subscriptionId.toLowerCase());
      subsByRegion.set(target.location, subs);
    }
    return new QuotaLedger(headroom, subsByRegion, new Map(instanceTypes.map((t) => [t.name.toLowerCase(), t])));
  }
}

interface Headroom {
  regional: CoreUsage;
  families: Map<string, CoreUsage>;
  /** lowPriorityCores: the one regional quota spot VMs count against (absent: not reported). */
  lowPriority?: CoreUsage;
}

/** Why quota rules an offering out: what the Event on the pending pod names. */
export interface QuotaShortfall {
  quota: string;
  region: string;
  limit: number;
  usage: number;
  request: number;
}

export function describeShortfall(s: QuotaShortfall): string {
  return `${s.quota} quota in ${s.region} cannot hold the VM: limit ${s.limit}, usage ${s.usage} (with creates in flight), request ${s.request}`;
}

/**
 * Headroom for one planning pass. Creates this pass plans take their cores as they are
 * admitted, so a burst cannot spend the same headroom twice. Spot VMs count against the
 * regional low-priority quota only; on-demand ones against their family's and the regional.
 */
export class QuotaLedger {
  /** The first shortfall that ruled an offering out this pass (for the Event). */
  shortfall: QuotaShortfall | undefined;
  /** Set when the quota dropped a whole plan this pass: its pods stay pending. */
  pendingForQuota = false;

  constructor(
    private readonly headroom: Map<string, Headroom>,
    private readonly subsByRegion: Map<string, string[]>,
    private readonly types: Map<string, InstanceType>,
  ) {}

  /** Why the subscription's quota in the region cannot hold one VM of `sku` as `capacityType`; undefined when it can or nothing is known. */
  shortfallFor(subscriptionId: string, region: string, sku: string, capacityType: string = CAPACITY_TYPE_ON_DEMAND): QuotaShortfall | undefined {
    const h = this.headroom.get(`${subscriptionId.toLowerCase()}/${region.toLowerCase()}`);
    const type = this.types.get(sku.toLowerCase());
    if (!h || !type) return undefined;
    if (capacityType === CAPACITY_TYPE_SPOT) {
      const low = h.lowPriority;
      return low && low.used + type.vcpu > low.limit ? { quota: 'Total Regional Low-priority vCPUs', region, limit: low.limit, usage: low.used, request: type.vcpu } : undefined;
    }
    const family = h.families.get(type.family.toLowerCase());
    if (family && family.used + type.vcpu > family.limit) return { quota: type.family, region, limit: family.limit, usage: family.used, request: type.vcpu };
    if (h.regional.used + type.vcpu > h.regional.limit) return { quota: 'Total Regional vCPUs', region, limit: h.regional.limit, usage: h.regional.used, request: type.vcpu };
    return undefined;
  }

  /** For the scheduler, which asks by region: ruled out when every subscription read there is short. */
  blocks(sku: string, region: string, capacityType: string): boolean {
    if (capacityType !== CAPACITY_TYPE_ON_DEMAND && capacityType !== CAPACITY_TYPE_SPOT) return false;
    const subs = this.subsByRegion.get(region.toLowerCase());
    if (!subs || subs.length === 0) return false;
    let first: QuotaShortfall | undefined;
    for (const sub of subs) {
      const s = this.shortfallFor(sub, region, sku, capacityType);
      if (!s) return false;
      first ??= s;
    }
    this.shortfall ??= first;
    return true;
  }

  /**
   * The sizes of a planned NodeClaim its quota can hold as one of `capacityTypes` (spot first,
   * as the launch prefers it), and takes the cores of the largest (it may launch as any).
   */
  admit(subscriptionId: string, region: string, skus: readonly string[], capacityTypes: ReadonlySet<string> = ON_DEMAND_ONLY): string[] {
    const h = this.headroom.get(`${subscriptionId.toLowerCase()}/${region.toLowerCase()}`);
    const asSpot: string[] = [];
    const fitting = skus.filter((sku) => {
      if (capacityTypes.has(CAPACITY_TYPE_SPOT) && !this.shortfallFor(subscriptionId, region, sku, CAPACITY_TYPE_SPOT)) {
        asSpot.push(sku);
        return true;
      }
      if (!capacityTypes.has(CAPACITY_TYPE_ON_DEMAND)) return false;
      const s = this.shortfallFor(subscriptionId, region, sku);
      if (s) this.shortfall ??= s;
      return !s;
    });
    if (!h) return fitting;
    const byFamily = new Map<string, number>();
    let regional = 0;
    let low = 0;
    for (const sku of fitting) {
      const t = this.types.get(sku.toLowerCase());
      if (!t) continue;
      if (asSpot.includes(sku)) {
        low = Math.max(low, t.vcpu);
        continue;
      }
      byFamily.set(t.family.toLowerCase(), Math.max(byFamily.get(t.family.toLowerCase()) ?? 0, t.vcpu));
      regional = Math.max(regional, t.vcpu);
    }
    for (const [family, cores] of byFamily) {
      const u = h.families.get(family);
      if (u) u.used += cores;
    }
    h.regional.used += regional;
    if (h.lowPriority) h.lowPriority.used += low;
    return fitting;
  }
}
