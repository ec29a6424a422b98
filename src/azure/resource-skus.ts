import type { ResourceSku } from '@azure/arm-compute';
import type { Logger } from 'pino';
import { LiveInstanceTypeCatalog, type ScopeListing } from '../catalog/live.js';
import type { AzureFlexNodeClass } from '../ports/cluster.js';
import { PriceBook } from '../catalog/prices.js';
import { STATIC_INSTANCE_TYPES, zoneLabel, type CatalogScope, type InstanceType, type SkuRestriction } from '../catalog/skus.js';
import { parseVmSize } from '../catalog/vm-size.js';
import type { Clock } from '../ports/clock.js';
import { toAzureError } from './sdk-errors.js';

/**
 * One scope's catalog from the Resource SKUs API (ComputeManagementClient.resourceSkus.list
 * with `$filter=location eq '<location>'`, the only filter ARM supports): what each VM size
 * offers (capabilities vCPUs, MemoryGB, GPUs, MaxResourceVolumeMB, CachedDiskBytes,
 * MaxNetworkInterfaces, AcceleratedNetworkingEnabled, PremiumIO, EphemeralOSDiskSupported,
 * CpuArchitectureType) and whether this subscription may use it there (restrictions of type
 * Location or Zone, reasonCode NotAvailableForSubscription or QuotaId).
 * Response shape: https://learn.microsoft.com/rest/api/compute/resource-skus/list
 */

/** The part of ComputeManagementClient['resourceSkus'] we use. */
export interface ResourceSkuLister {
  list(options?: { filter?: string; includeExtendedLocations?: string }): AsyncIterable<ResourceSku>;
}

export interface ResourceSkuMappingOptions {
  prices?: PriceBook;
  maxPods?: number;
}

/** A fetch function for LiveInstanceTypeCatalog: one Resource SKUs call per scope. */
export function resourceSkuFetcher(
  listerFor: (subscriptionID: string) => Promise<ResourceSkuLister>,
  clock: Clock,
  options: ResourceSkuMappingOptions = {},
): (scope: CatalogScope) => Promise<ScopeListing> {
  return async (scope) => {
    const raw: ResourceSku[] = [];
    try {
      const lister = await listerFor(scope.subscriptionID);
      for await (const sku of lister.list({ filter: `location eq '${scope.location.toLowerCase()}'` })) raw.push(sku);
    } catch (err) {
      throw toAzureError(err, clock.now());
    }
    return mapResourceSkus(raw, scope, options);
  };
}

const STATIC_BY_NAME = new Map(STATIC_INSTANCE_TYPES.map((t) => [t.name.toLowerCase(), t]));

/** Resource SKUs entries (one per SKU and region, as the API returns them) → one scope's listing. */
export function mapResourceSkus(skus: readonly ResourceSku[], scope: CatalogScope, options: ResourceSkuMappingOptions = {}): ScopeListing {
  const location = scope.location.toLowerCase();
  const subscriptionID = scope.subscriptionID.toLowerCase();
  const prices = options.prices ?? new PriceBook();
  const types = new Map<string, InstanceType>();
  const restrictions = new Map<string, SkuRestriction[]>();
  for (const sku of skus) {
    if (sku.resourceType?.toLowerCase() !== 'virtualmachines' || !sku.name) continue;
    const where = [...(sku.locations ?? []), ...(sku.locationInfo ?? []).map((i) => i.location ?? '')].map((l) => l.toLowerCase());
    if (!where.includes(location)) continue;
    const key = sku.name.toLowerCase();
    const restricted = restrictionsIn(sku, location);
    if (restricted.length > 0) restrictions.set(key, restricted);
    if (restricted.some((r) => r.type === 'Location')) continue;
    const zoneRestricted = new Set(restricted.flatMap((r) => r.zones));
    const zones = (sku.locationInfo ?? []).filter((i) => i.location?.toLowerCase() === location).flatMap((i) => i.zones ?? []).filter((z) => !zoneRestricted.has(z)).sort();
    const type = toInstanceType(sku, location, options.maxPods, prices);
    if (!type) continue;
    type.availability = [{ subscriptionID, location, zones }];
    // Zonal where ARM lists zones this subscription may use: offerings (and node labels) per zone.
    if (zones.length > 0) type.zones = { [location]: zones.map((z) => zoneLabel(location, z)) };
    types.set(key, type);
  }
  return { types: [...types.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)), restrictions };
}

function restrictionsIn(sku: ResourceSku, location: string): SkuRestriction[] {
  const out: SkuRestriction[] = [];
  for (const r of sku.restrictions ?? []) {
    const type = r.type === 'Zone' ? 'Zone' : r.type === 'Location' ? 'Location' : undefined;
    if (!type) continue;
    const locations = [...(r.values ?? []), ...(r.restrictionInfo?.locations ?? [])].map((l) => l.toLowerCase());
    if (!locations.includes(location)) continue;
    out.push({ type, reasonCode: r.reasonCode ?? 'NotAvailableForSubscription', zones: type === 'Zone' ? [...(r.restrictionInfo?.zones ?? [])].sort() : [] });
  }
  return out;
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

function boolCapability(sku: ResourceSku, name: string): boolean | undefined {
  const raw = capability(sku, name);
  return raw === undefined ? undefined : raw.toLowerCase() === 'true';
}

const GIB = 1024 ** 3;

function toInstanceType(sku: ResourceSku, location: string, maxPods: number | undefined, prices: PriceBook): InstanceType | undefined {
  const name = sku.name!;
  const vcpu = numberCapability(sku, 'vCPUs');
  const memoryGB = numberCapability(sku, 'MemoryGB');
  if (vcpu === undefined || memoryGB === undefined) return undefined;
  const known = STATIC_BY_NAME.get(name.toLowerCase());
  const size = parseVmSize(name);
  const gpuCount = numberCapability(sku, 'GPUs') ?? 0;
  const gpuModel = gpuCount > 0 ? (size?.accelerator ?? known?.gpuModel) : undefined;
  const arch = capability(sku, 'CpuArchitectureType')?.toLowerCase() === 'arm64' ? 'arm64' : 'amd64';
  // "MemoryGB" is GiB in practice (Standard_D8s_v5 says 32 for its 32 GiB).
  const memoryMiB = Math.round(memoryGB * 1024);
  const resourceVolumeMB = numberCapability(sku, 'MaxResourceVolumeMB') ?? 0;
  const cachedBytes = numberCapability(sku, 'CachedDiskBytes') ?? 0;
  const ephemeral = boolCapability(sku, 'EphemeralOSDiskSupported') ?? false;
  const maxNics = numberCapability(sku, 'MaxNetworkInterfaces');
  const shape = { name, vcpu, memoryMiB, gpuCount, ...(gpuModel ? { gpuModel } : {}) };
  const priced = prices.price(shape);
  // Spot is offered where Resource SKUs says the size is LowPriorityCapable (ARM refuses it elsewhere).
  const spot = boolCapability(sku, 'LowPriorityCapable') === true ? prices.spotPrice(shape).usdPerHour : undefined;
  return {
    name,
    family: sku.family ?? known?.family ?? '',
    vcpu,
    memoryMiB,
    gpuCount,
    ...(gpuModel ? { gpuModel } : {}),
    ...(known?.gpuMemoryGiB !== undefined && gpuCount > 0 ? { gpuMemoryGiB: known.gpuMemoryGiB } : {}),
    maxPods: maxPods ?? known?.maxPods ?? 110,
    ephemeralStorageGiB: Math.floor(resourceVolumeMB / 1024),
    arch,
    pricePerHour: priced.usdPerHour,
    ...(spot !== undefined ? { spotPricePerHour: spot } : {}),
    locations: [location],
    acceleratedNetworking: boolCapability(sku, 'AcceleratedNetworkingEnabled') ?? false,
    premiumIO: boolCapability(sku, 'PremiumIO') ?? false,
    ephemeralOSDiskMaxGiB: ephemeral ? Math.floor(Math.max(cachedBytes / GIB, resourceVolumeMB / 1024)) : 0,
    ...(maxNics !== undefined ? { maxNics } : {}),
  };
}

export interface ResourceSkuCatalogOptions extends ResourceSkuMappingOptions {
  clock: Clock;
  /** ComputeManagementClient per subscription (SdkAzure.computeClient). */
  compute: (subscriptionID: string) => Promise<{ resourceSkus: ResourceSkuLister }>;
  /** Where NodeClasses point: each one's subscription and location is a scope. */
  nodeClasses: () => Promise<AzureFlexNodeClass[]>;
  refreshMs?: number;
  retryMs?: number;
  log?: Pick<Logger, 'info' | 'warn'>;
}

/**
 * The controller's catalog: a LiveInstanceTypeCatalog over the Resource SKUs API, scoped to
 * the NodeClasses in the cluster. A NodeClass marked Ready=False (bad subscription, subnet,
 * …) adds no scope, so it causes no ARM call.
 */
export function resourceSkuCatalog(o: ResourceSkuCatalogOptions): LiveInstanceTypeCatalog {
  return new LiveInstanceTypeCatalog({
    clock: o.clock,
    ...(o.refreshMs !== undefined ? { refreshMs: o.refreshMs } : {}),
    ...(o.retryMs !== undefined ? { retryMs: o.retryMs } : {}),
    scopes: async () =>
      (await o.nodeClasses())
        .filter((nc) => !nc.status.conditions.some((c) => c.type === 'Ready' && c.status === 'False'))
        .map((nc) => ({ subscriptionID: nc.spec.subscriptionID, location: nc.spec.location })),
    fetch: resourceSkuFetcher(async (sub) => (await o.compute(sub)).resourceSkus, o.clock, o),
    onFetch: (scope, outcome) => {
      if (outcome.ok) o.log?.info({ subscription: scope.subscriptionID, location: scope.location, skus: outcome.skus }, 'listed Resource SKUs');
      else o.log?.warn(
        { subscription: scope.subscriptionID, location: scope.location, err: outcome.error instanceof Error ? outcome.error.message : String(outcome.error) },
        outcome.fallback ? 'listing Resource SKUs failed; using the static catalog for this location until it succeeds' : 'refreshing Resource SKUs failed; keeping the last listing',
      );
    },
  });
}
