/**
 * The SKU catalog: what an instance type offers and where. Production builds it from the
 * Resource SKUs API for each NodeClass's subscription and location (src/catalog/live.ts,
 * src/azure/resource-skus.ts); this static list of the seed's SKUs is only the offline
 * fallback and the simulator's default world. Prices are USD/hour (src/catalog/prices.ts)
 * used only to prefer the cheapest fitting SKU.
 */

import { estimateSpotPrice } from './spot-prices.js';

/** Where a catalog listing applies: one NodeClass's subscription and location. */
export interface CatalogScope {
  subscriptionID: string;
  location: string;
}

/** A restriction the Resource SKUs API reports for a SKU in one subscription and location. */
export interface SkuRestriction {
  /** Location: the SKU cannot be used in the region at all; Zone: not in `zones`. */
  type: 'Location' | 'Zone';
  /** NotAvailableForSubscription, QuotaId, ... as ARM says. */
  reasonCode: string;
  zones: string[];
}

/** One place a SKU can be deployed for a subscription (restricted places are not listed). */
export interface SkuAvailability {
  subscriptionID: string;
  location: string;
  /** Zones the subscription may use there (zone restrictions removed); empty: regional only. */
  zones: string[];
}

export interface InstanceType {
  name: string;
  /** VM family as Azure's core quota counts it (e.g. standardNDSH200v5Family). */
  family: string;
  vcpu: number;
  memoryMiB: number;
  gpuCount: number;
  gpuModel?: string;
  gpuMemoryGiB?: number;
  maxPods: number;
  ephemeralStorageGiB: number;
  arch: 'amd64' | 'arm64';
  /** On-demand USD/hour (src/catalog/prices.ts). */
  pricePerHour: number;
  /** Spot USD/hour (src/catalog/spot-prices.ts); absent: the size has no spot offering. */
  spotPricePerHour?: number;
  /** Regions where the SKU is usable (by at least one subscription, for a live catalog). */
  locations: string[];
  /**
   * Availability zones per location, as node label values ("eastus2-1"). A location without
   * an entry is regional: its nodes carry no topology.kubernetes.io/zone label.
   */
  zones?: Readonly<Record<string, readonly string[]>>;
  /**
   * Live catalogs only: exactly which subscription may use it where. When present it is
   * authoritative (see isOffered); the static list leaves it out and `locations` decides.
   */
  availability?: SkuAvailability[];
  /** Resource SKUs capabilities the provider's karpenter.azure.com/sku-* labels carry. */
  acceleratedNetworking?: boolean;
  premiumIO?: boolean;
  /** Largest ephemeral OS disk the size can hold (GiB); absent or 0: not supported. */
  ephemeralOSDiskMaxGiB?: number;
  maxNics?: number;
}

export interface InstanceTypeCatalog {
  /** Every SKU usable by some NodeClass (union over scopes; see isOffered for one scope). */
  list(): Promise<InstanceType[]>;
  get(name: string): Promise<InstanceType | undefined>;
  /**
   * Cheap and synchronous, from the last listing (no ARM call): the restriction ARM reports
   * for this SKU in this subscription and location (and zone, when given), if any. A SKU the
   * listing does not carry at all counts as a Location restriction with reasonCode NotListed.
   */
  restriction(sku: string, scope: CatalogScope, zone?: string): SkuRestriction | undefined;
  /**
   * When the listing restriction() answers from for this scope was requested from ARM
   * (undefined: never listed, or answering from the offline fallback).
   */
  listedAt?(scope: CatalogScope): number | undefined;
}

/**
 * Resource SKUs' answer to "does ARM still restrict this SKU for this subscription in this
 * location?", but only from a listing requested after `since` (the time of the mark being
 * re-checked): an older listing may predate what ARM refused, so it says nothing and the
 * mark is kept until a newer listing exists. undefined: no such listing. `zone` (a zone
 * label, "eastus2-1") asks about that zone: a Location or that zone's Zone restriction.
 */
export function restrictedSince(catalog: InstanceTypeCatalog, sku: string, scope: CatalogScope, since: number, zone?: string): boolean | undefined {
  const at = catalog.listedAt?.(scope);
  if (at === undefined || at <= since) return undefined;
  return catalog.restriction(sku, scope, zone === undefined ? undefined : zoneId(zone)) !== undefined;
}

/** Whether a NodeClass with this subscription and location may launch the SKU. */
export function isOffered(type: InstanceType, subscriptionID: string, location: string): boolean {
  const loc = location.toLowerCase();
  if (!type.availability) return type.locations.includes(loc) || type.locations.some((l) => l.toLowerCase() === loc);
  const sub = subscriptionID.toLowerCase();
  return type.availability.some((a) => a.location === loc && a.subscriptionID === sub);
}

/**
 * Regions where Azure has availability zones, as the static catalog assumes (eastus2euap, a
 * canary region, is treated as regional). Zone ids are "1".."3"; labels are "<region>-<id>",
 * the Azure Karpenter provider's format (utils.MakeZone).
 */
export const STATIC_ZONED_REGIONS: ReadonlySet<string> = new Set([
  'eastus', 'eastus2', 'southcentralus', 'swedencentral', 'uksouth', 'westeurope', 'westus2', 'westus3',
]);

/** The zone label value for a zone id in a location: "eastus2-1". */
export function zoneLabel(location: string, zoneId: string): string {
  return `${location.toLowerCase()}-${zoneId}`;
}

/** The zone id ARM's `zones` field takes for a label value: "eastus2-1" → "1". */
export function zoneId(label: string): string {
  return label.slice(label.lastIndexOf('-') + 1);
}

/** Zones of every zoned location in `locations`, as the static catalog offers them. */
function staticZones(locations: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const l of locations) if (STATIC_ZONED_REGIONS.has(l)) out[l] = ['1', '2', '3'].map((z) => zoneLabel(l, z));
  return out;
}

const STATIC_TYPES: ReadonlyArray<Omit<InstanceType, 'zones' | 'spotPricePerHour'>> = [
  {
    name: 'Standard_ND96isr_H200_v5', family: 'standardNDSH200v5Family', vcpu: 96, memoryMiB: 1850 * 1024,
    gpuCount: 8, gpuModel: 'H200', gpuMemoryGiB: 141, maxPods: 110, ephemeralStorageGiB: 28000, arch: 'amd64',
    acceleratedNetworking: true, premiumIO: true, ephemeralOSDiskMaxGiB: 28000, maxNics: 8,
    pricePerHour: 110.24, locations: ['eastus2', 'eastus2euap', 'swedencentral', 'uksouth', 'westus3'],
  },
  {
    name: 'Standard_ND96amsr_A100_v4', family: 'standardNDAMSv4_A100Family', vcpu: 96, memoryMiB: 1900 * 1024,
    gpuCount: 8, gpuModel: 'A100', gpuMemoryGiB: 80, maxPods: 110, ephemeralStorageGiB: 6400, arch: 'amd64',
    acceleratedNetworking: true, premiumIO: true, ephemeralOSDiskMaxGiB: 6400, maxNics: 8,
    pricePerHour: 32.77, locations: ['eastus', 'eastus2', 'southcentralus', 'westus2', 'westeurope'],
  },
  {
    name: 'Standard_NC40ads_H100_v5', family: 'standardNCadsH100v5Family', vcpu: 40, memoryMiB: 320 * 1024,
    gpuCount: 1, gpuModel: 'H100', gpuMemoryGiB: 94, maxPods: 110, ephemeralStorageGiB: 3576, arch: 'amd64',
    acceleratedNetworking: true, premiumIO: true, ephemeralOSDiskMaxGiB: 3576, maxNics: 2,
    pricePerHour: 6.98, locations: ['eastus', 'eastus2', 'southcentralus', 'westeurope', 'swedencentral'],
  },
  {
    name: 'Standard_NC24ads_A100_v4', family: 'standardNCADSA100v4Family', vcpu: 24, memoryMiB: 220 * 1024,
    gpuCount: 1, gpuModel: 'A100', gpuMemoryGiB: 80, maxPods: 110, ephemeralStorageGiB: 958, arch: 'amd64',
    acceleratedNetworking: true, premiumIO: true, ephemeralOSDiskMaxGiB: 958, maxNics: 2,
    pricePerHour: 3.67, locations: ['eastus', 'eastus2', 'southcentralus', 'westeurope', 'westus2'],
  },
  {
    name: 'Standard_D8s_v5', family: 'standardDSv5Family', vcpu: 8, memoryMiB: 32 * 1024,
    gpuCount: 0, maxPods: 110, ephemeralStorageGiB: 128, arch: 'amd64',
    acceleratedNetworking: true, premiumIO: true, ephemeralOSDiskMaxGiB: 0, maxNics: 4,
    pricePerHour: 0.384, locations: ['eastus', 'eastus2', 'eastus2euap', 'westeurope', 'swedencentral', 'westus2'],
  },
  // arm64. Dpsv5 and Epsv5 run on Ampere Altra; Resource SKUs says CpuArchitectureType Arm64.
  {
    name: 'Standard_D4ps_v5', family: 'standardDPSv5Family', vcpu: 4, memoryMiB: 16 * 1024,
    gpuCount: 0, maxPods: 110, ephemeralStorageGiB: 128, arch: 'arm64',
    acceleratedNetworking: true, premiumIO: true, ephemeralOSDiskMaxGiB: 0, maxNics: 2,
    pricePerHour: 0.154, locations: ['eastus', 'eastus2', 'westeurope', 'swedencentral', 'westus2'],
  },
  {
    name: 'Standard_E8ps_v5', family: 'standardEPSv5Family', vcpu: 8, memoryMiB: 64 * 1024,
    gpuCount: 0, maxPods: 110, ephemeralStorageGiB: 128, arch: 'arm64',
    acceleratedNetworking: true, premiumIO: true, ephemeralOSDiskMaxGiB: 0, maxNics: 4,
    pricePerHour: 0.403, locations: ['eastus', 'eastus2', 'westeurope', 'swedencentral', 'westus2'],
  },
  // ND GB200 v6: two Grace (arm64) CPUs and four Blackwell GPUs of 192 GB per VM, 128 vCPUs,
  // 864 GiB, 16 TB of local NVMe (the series page on learn.microsoft.com; memory and quota
  // family as Resource SKUs lists them). No list price was sourced for it, so the price is
  // estimatePrice's figure for its shape (prices.ts; test/catalog/skus.test.ts checks it). Its
  // regions are a plausible offline fallback, not a sourced list: the live Resource SKUs
  // listing decides where it is offered.
  {
    name: 'Standard_ND128isr_NDR_GB200_v6', family: 'standardNDISRGB200V6NDRFamily', vcpu: 128, memoryMiB: 864 * 1024,
    gpuCount: 4, gpuModel: 'GB200', gpuMemoryGiB: 192, maxPods: 110, ephemeralStorageGiB: 16000, arch: 'arm64',
    acceleratedNetworking: true, premiumIO: true, ephemeralOSDiskMaxGiB: 0,
    pricePerHour: 23.424, locations: ['eastus2', 'westus3'],
  },
];

/** Every static size is LowPriorityCapable in Resource SKUs (Azure refuses spot only for B-series and Promo sizes). */
export const STATIC_INSTANCE_TYPES: readonly InstanceType[] = STATIC_TYPES.map((t) => ({
  ...t, spotPricePerHour: estimateSpotPrice(t.pricePerHour, t), zones: staticZones(t.locations),
}));

/** Zone labels the type offers in a location (empty: regional there). */
export function zonesIn(type: InstanceType, location: string): readonly string[] {
  return type.zones?.[location.toLowerCase()] ?? [];
}

export class StaticInstanceTypeCatalog implements InstanceTypeCatalog {
  private readonly byName: Map<string, InstanceType>;
  constructor(private readonly types: readonly InstanceType[] = STATIC_INSTANCE_TYPES) {
    this.byName = new Map(types.map((t) => [t.name.toLowerCase(), t]));
  }
  async list(): Promise<InstanceType[]> {
    return [...this.types];
  }
  async get(name: string): Promise<InstanceType | undefined> {
    return this.byName.get(name.toLowerCase());
  }
  restriction(sku: string, scope: CatalogScope): SkuRestriction | undefined {
    const type = this.byName.get(sku.toLowerCase());
    return type && isOffered(type, scope.subscriptionID, scope.location) ? undefined : NOT_LISTED;
  }
}

/** What restriction() answers for a SKU the listing for that scope does not carry. */
export const NOT_LISTED: SkuRestriction = Object.freeze({ type: 'Location', reasonCode: 'NotListed', zones: [] }) as SkuRestriction;
