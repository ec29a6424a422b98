import type { Clock } from '../ports/clock.js';
import {
  NOT_LISTED, STATIC_INSTANCE_TYPES, zoneId, type CatalogScope, type InstanceType, type InstanceTypeCatalog, type SkuRestriction,
} from './skus.js';

/**
 * The production catalog: for each scope (a NodeClass's subscription and location) the
 * Resource SKUs listing (`$filter=location eq '<location>'`), cached and refreshed every
 * `refreshMs` on the injected clock. A failed refresh keeps the last good listing; a scope
 * that was never listed falls back to the static list (offline, or ARM refusing reads) and
 * is retried after `retryMs`. Listings are fetched on demand, one in flight per scope, so
 * ARM's shared read quota pays one call per scope per refresh.
 */

/** One scope's listing: SKUs usable there, and what ARM says about the restricted ones. */
export interface ScopeListing {
  types: InstanceType[];
  /** Lower-cased SKU name → restrictions in this scope (Location and/or Zone). */
  restrictions: Map<string, SkuRestriction[]>;
}

export interface LiveCatalogOptions {
  clock: Clock;
  /** Lists one scope (src/azure/resource-skus.ts over the SDK). */
  fetch: (scope: CatalogScope) => Promise<ScopeListing>;
  /** The scopes to cover now: the usable NodeClasses' subscriptions and locations. */
  scopes: () => Promise<CatalogScope[]>;
  /** Default 1 h: sizes and restrictions change rarely; SkuNotAvailable is handled by the offerings cache meanwhile. */
  refreshMs?: number;
  /** Retry of a scope whose last listing failed. Default 1 min. */
  retryMs?: number;
  /** Offline fallback; default the static list. */
  fallback?: readonly InstanceType[];
  onFetch?: (scope: CatalogScope, outcome: { ok: true; skus: number } | { ok: false; error: unknown; fallback: boolean }) => void;
}

export const DEFAULT_CATALOG_REFRESH_MS = 60 * 60 * 1000;
export const DEFAULT_CATALOG_RETRY_MS = 60 * 1000;

interface Entry {
  scope: CatalogScope;
  listing: ScopeListing;
  /** When to list again. */
  dueAt: number;
  /** When the listing in use was requested (undefined for the fallback). */
  listedAt?: number;
  fallback: boolean;
  inflight?: Promise<void>;
}

interface Merged {
  key: string;
  types: InstanceType[];
  byName: Map<string, InstanceType>;
}

export function scopeKey(scope: CatalogScope): string {
  return `${scope.subscriptionID.toLowerCase()}/${scope.location.toLowerCase()}`;
}

export class LiveInstanceTypeCatalog implements InstanceTypeCatalog {
  private readonly entries = new Map<string, Entry>();
  private readonly refreshMs: number;
  private readonly retryMs: number;
  private merged: Merged | undefined;
  private generation = 0;
  private fetches = 0;

  constructor(private readonly o: LiveCatalogOptions) {
    this.refreshMs = o.refreshMs ?? DEFAULT_CATALOG_REFRESH_MS;
    this.retryMs = o.retryMs ?? DEFAULT_CATALOG_RETRY_MS;
  }

  async list(): Promise<InstanceType[]> {
    return (await this.current()).types;
  }

  async get(name: string): Promise<InstanceType | undefined> {
    return (await this.current()).byName.get(name.toLowerCase());
  }

  restriction(sku: string, scope: CatalogScope, zone?: string): SkuRestriction | undefined {
    const entry = this.entries.get(scopeKey(scope));
    if (!entry) return undefined;
    const key = sku.toLowerCase();
    const restrictions = entry.listing.restrictions.get(key) ?? [];
    const location = restrictions.find((r) => r.type === 'Location');
    if (location) return location;
    if (zone !== undefined) {
      const zonal = restrictions.find((r) => r.type === 'Zone' && r.zones.includes(zone));
      if (zonal) return zonal;
    }
    return entry.listing.types.some((t) => t.name.toLowerCase() === key) ? undefined : NOT_LISTED;
  }

  listedAt(scope: CatalogScope): number | undefined {
    const entry = this.entries.get(scopeKey(scope));
    return entry && !entry.fallback ? entry.listedAt : undefined;
  }

  /** Resource SKUs calls made (tests and metrics). */
  get fetchCount(): number {
    return this.fetches;
  }

  /** Lists every due scope now (the periodic refresh); never throws. */
  async refresh(): Promise<void> {
    await this.current();
  }

  private async current(): Promise<Merged> {
    const scopes = dedupe(await this.o.scopes());
    const now = this.o.clock.now();
    // Due scopes are listed; scopes being listed (a concurrent caller started it) are awaited.
    const waits = scopes.flatMap((s) => {
      const e = this.entries.get(scopeKey(s));
      return !e || e.inflight || now >= e.dueAt ? [this.load(s)] : [];
    });
    if (waits.length > 0) await Promise.all(waits);
    const key = `${this.generation}|${scopes.map(scopeKey).sort().join(',')}`;
    if (this.merged?.key === key) return this.merged;
    this.merged = merge(key, scopes.map((s) => this.entries.get(scopeKey(s))!).filter((e) => e !== undefined));
    return this.merged;
  }

  private load(scope: CatalogScope): Promise<void> {
    const key = scopeKey(scope);
    const existing = this.entries.get(key);
    if (existing?.inflight) return existing.inflight;
    const run = (async (): Promise<void> => {
      this.fetches++;
      // The request's time, not the answer's: what ARM did meanwhile may be missing from it.
      const requestedAt = this.o.clock.now();
      try {
        const listing = await this.o.fetch(scope);
        this.entries.set(key, { scope, listing, dueAt: this.o.clock.now() + this.refreshMs, fallback: false, listedAt: requestedAt });
        this.o.onFetch?.(scope, { ok: true, skus: listing.types.length });
      } catch (error) {
        const previous = this.entries.get(key);
        // Stale beats nothing: keep the last real listing; only a never-listed scope falls back.
        const keep = previous && !previous.fallback ? previous.listing : fallbackListing(scope, this.o.fallback ?? STATIC_INSTANCE_TYPES);
        this.entries.set(key, {
          scope, listing: keep, dueAt: this.o.clock.now() + this.retryMs, fallback: !previous || previous.fallback,
          ...(previous?.listedAt !== undefined && !previous.fallback ? { listedAt: previous.listedAt } : {}),
        });
        this.o.onFetch?.(scope, { ok: false, error, fallback: !previous || previous.fallback });
      }
      this.generation++;
    })();
    if (existing) existing.inflight = run;
    else this.entries.set(key, { scope, listing: { types: [], restrictions: new Map() }, dueAt: Number.POSITIVE_INFINITY, fallback: true, inflight: run });
    return run;
  }
}

/** The static list, as if ARM had listed it for this scope. */
function fallbackListing(scope: CatalogScope, types: readonly InstanceType[]): ScopeListing {
  const location = scope.location.toLowerCase();
  const out: InstanceType[] = [];
  for (const t of types) {
    if (!t.locations.includes(location)) continue;
    const zones = t.zones?.[location];
    out.push({
      ...t,
      locations: [location],
      ...(zones ? { zones: { [location]: zones } } : { zones: {} }),
      availability: [{ subscriptionID: scope.subscriptionID.toLowerCase(), location, zones: (zones ?? []).map(zoneId) }],
    });
  }
  return { types: out, restrictions: new Map() };
}

/** Union over scopes: one InstanceType per SKU, with every scope's availability. */
function merge(key: string, entries: readonly Entry[]): Merged {
  const byName = new Map<string, InstanceType>();
  for (const entry of entries) {
    for (const t of entry.listing.types) {
      const name = t.name.toLowerCase();
      const seen = byName.get(name);
      if (!seen) {
        byName.set(name, { ...t, locations: [...t.locations], availability: [...(t.availability ?? [])], zones: { ...t.zones } });
        continue;
      }
      for (const l of t.locations) if (!seen.locations.includes(l)) seen.locations.push(l);
      // Scopes of one location may allow different zones (zone restrictions are per subscription): the union is offered, and launch checks the restriction.
      const zones = seen.zones as Record<string, readonly string[]>;
      for (const [l, list] of Object.entries(t.zones ?? {})) zones[l] = zones[l] ? [...new Set([...zones[l], ...list])].sort() : list;
      for (const a of t.availability ?? []) {
        if (!seen.availability!.some((x) => x.subscriptionID === a.subscriptionID && x.location === a.location)) seen.availability!.push(a);
      }
    }
  }
  const types = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const t of types) t.locations.sort();
  return { key, types, byName };
}

function dedupe(scopes: readonly CatalogScope[]): CatalogScope[] {
  const out = new Map<string, CatalogScope>();
  for (const s of scopes) {
    if (!s.subscriptionID || !s.location) continue;
    out.set(scopeKey(s), { subscriptionID: s.subscriptionID.toLowerCase(), location: s.location.toLowerCase() });
  }
  return [...out.values()];
}
