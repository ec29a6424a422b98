import type { ResourceSku } from '@azure/arm-compute';
import type { Clock } from '../ports/clock.js';
import { STATIC_INSTANCE_TYPES, type InstanceType, type InstanceTypeCatalog } from '../catalog/skus.js';
import { toAzureError } from './sdk-errors.js';

/**
 * InstanceTypeCatalog from the Resource SKUs API (ComputeManagementClient.resourceSkus.list):
 * what each VM size offers (vCPUs, MemoryGB, GPUs, architecture) and where this subscription
 * may use it (location restrictions removed). Cached with a TTL on the injected clock: the
 * list is large and changes rarely, and ARM's read quota is shared with the lifecycle.
 */

/** The part of ComputeManagementClient['resourceSkus'] we use. */
export interface ResourceSkuLister {
  list(options?: { filter?: string }): AsyncIterable<ResourceSku>;
}

export interface ResourceSkuCatalogOptions {
  clock: Clock;
  /** Default 1 h. */
  ttlMs?: number;
  /** Query only these regions (one `location eq` call each); default: every region (one big call). */
  locations?: string[];
  /** Keep only these SKUs (the Phase 1 allowlist); default: every VM size. */
  skuNames?: string[];
  /** USD/hour by SKU name; falls back to the static catalog's prices. Unknown prices sort last. */
  prices?: Record<string, number>;
  maxPods?: number;
}

export const DEFAULT_SKU_CACHE_TTL_MS = 60 * 60 * 1000;

interface Snapshot {
  at: number;
  types: InstanceType[];
  byName: Map<string, InstanceType>;
}

export class ResourceSkuCatalog implements InstanceTypeCatalog {
  private snapshot: Snapshot | undefined;
  private inflight: Promise<Snapshot> | undefined;
  private fetches = 0;
  private readonly ttlMs: number;

  constructor(
    private readonly lister: ResourceSkuLister,
    private readonly options: ResourceSkuCatalogOptions,
  ) {
    this.ttlMs = options.ttlMs ?? DEFAULT_SKU_CACHE_TTL_MS;
  }

  async list(): Promise<InstanceType[]> {
    return [...(await this.current()).types];
  }

  async get(name: string): Promise<InstanceType | undefined> {
    return (await this.current()).byName.get(name.toLowerCase());
  }

  /** Number of times the API was called for a full refresh (tests, metrics). */
  get fetchCount(): number {
    return this.fetches;
  }

  private async current(): Promise<Snapshot> {
    const now = this.options.clock.now();
    if (this.snapshot && now - this.snapshot.at < this.ttlMs) return this.snapshot;
    this.inflight ??= this.refresh().finally(() => {
      this.inflight = undefined;
    });
    try {
      return await this.inflight;
    } catch (err) {
      // Stale beats nothing: a throttled or failing refresh keeps the last good list.
      if (this.snapshot) return this.snapshot;
      throw toAzureError(err, now);
    }
  }

  private async refresh(): Promise<Snapshot> {
    this.fetches++;
    const raw: ResourceSku[] = [];
    const filters = this.options.locations?.length ? this.options.locations.map((l) => `location eq '${l.toLowerCase()}'`) : [undefined];
    for (const filter of filters) {
      for await (const sku of this.lister.list(filter ? { filter } : {})) raw.push(sku);
    }
    const types = mapResourceSkus(raw, this.options);
    this.snapshot = { at: this.options.clock.now(), types, byName: new Map(types.map((t) => [t.name.toLowerCase(), t])) };
    return this.snapshot;
  }
}

const STATIC_BY_NAME = new Map(STATIC_INSTANCE_TYPES.map((t) => [t.name.toLowerCase(), t]));

/** Resource SKUs (one entry per SKU and region, as the API returns them) → instance types. */
export function mapResourceSkus(skus: readonly ResourceSku[], options: Pick<ResourceSkuCatalogOptions, 'skuNames' | 'prices' | 'maxPods'> = {}): InstanceType[] {
  const allow = options.skuNames ? new Set(options.skuNames.map((n) => n.toLowerCase())) : undefined;
  const merged = new Map<string, InstanceType>();
  for (const sku of skus) {
    if (sku.resourceType?.toLowerCase() !== 'virtualmachines' || !sku.name) continue;
    if (allow && !allow.has(sku.name.toLowerCase())) continue;
    const locations = usableLocations(sku);
    const existing = merged.get(sku.name.toLowerCase());
    if (existing) {
      for (const l of locations) if (!existing.locations.includes(l)) existing.locations.push(l);
      continue;
    }
    const type = toInstanceType(sku, locations, options);
    if (type) merged.set(sku.name.toLowerCase(), type);
  }
  const out = [...merged.values()];
  for (const t of out) t.locations.sort();
  // Only SKUs usable somewhere: a SKU restricted everywhere is not an offering.
  return out.filter((t) => t.locations.length > 0).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Regions minus the ones restricted for this subscription (reasonCode NotAvailableForSubscription). */
function usableLocations(sku: ResourceSku): string[] {
  const restricted = new Set<string>();
  for (const r of sku.restrictions ?? []) {
    // Zone restrictions leave the region usable without a zone, which is how azflex deploys.
    if (r.type !== 'Location') continue;
    for (const l of [...(r.values ?? []), ...(r.restrictionInfo?.locations ?? [])]) restricted.add(l.toLowerCase());
  }
  const all = [...(sku.locations ?? []), ...(sku.locationInfo ?? []).map((i) => i.location ?? '')].map((l) => l.toLowerCase()).filter((l) => l !== '');
  return [...new Set(all)].filter((l) => !restricted.has(l));
}

function capability(sku: ResourceSku, name: string): string | undefined {
  return sku.capabilities?.find((c) => c.name?.toLowerCase() === name.toLowerCase())?.value;
}

function numberCapability(sku: ResourceSku, name: string): number | undefined {
  const raw = capability(sku, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  return Number.isFinite(n) ? n : undefined;
}

const GPU_MODELS: ReadonlyArray<[RegExp, string]> = [
  [/H200/i, 'H200'],
  [/H100/i, 'H100'],
  [/A100/i, 'A100'],
  [/A10/i, 'A10'],
  [/V100/i, 'V100'],
  [/T4/i, 'T4'],
  [/MI300X/i, 'MI300X'],
];

function toInstanceType(sku: ResourceSku, locations: string[], options: Pick<ResourceSkuCatalogOptions, 'prices' | 'maxPods'>): InstanceType | undefined {
  const name = sku.name!;
  const vcpu = numberCapability(sku, 'vCPUs');
  const memoryGB = numberCapability(sku, 'MemoryGB');
  if (vcpu === undefined || memoryGB === undefined) return undefined;
  const known = STATIC_BY_NAME.get(name.toLowerCase());
  const gpuCount = numberCapability(sku, 'GPUs') ?? 0;
  const gpuModel = gpuCount > 0 ? (known?.gpuModel ?? GPU_MODELS.find(([re]) => re.test(name))?.[1]) : undefined;
  const arch = capability(sku, 'CpuArchitectureType')?.toLowerCase() === 'arm64' ? 'arm64' : 'amd64';
  const resourceVolumeMB = numberCapability(sku, 'MaxResourceVolumeMB');
  return {
    name,
    family: sku.family ?? known?.family ?? '',
    vcpu,
    memoryMiB: Math.round(memoryGB * 1024),
    gpuCount,
    ...(gpuModel ? { gpuModel } : {}),
    ...(known?.gpuMemoryGiB !== undefined && gpuCount > 0 ? { gpuMemoryGiB: known.gpuMemoryGiB } : {}),
    maxPods: options.maxPods ?? known?.maxPods ?? 110,
    ephemeralStorageGiB: resourceVolumeMB !== undefined ? Math.floor(resourceVolumeMB / 1024) : (known?.ephemeralStorageGiB ?? 0),
    arch,
    pricePerHour: options.prices?.[name] ?? known?.pricePerHour ?? Number.POSITIVE_INFINITY,
    locations: [...locations],
  };
}
