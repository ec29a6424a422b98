import type { InstanceType } from '../../catalog/skus.js';
import { RETAIL_PRICES_USD_PER_HOUR, estimatePrice } from '../../catalog/prices.js';
import { estimateSpotPrice } from '../../catalog/spot-prices.js';
import { STATIC_INSTANCE_TYPES, zoneLabel } from '../../catalog/skus.js';
import { parseVmSize } from '../../catalog/vm-size.js';

/**
 * The simulated cloud's VM sizes: what the fake ARM accepts in a VM PUT and lists on the
 * Resource SKUs route. Sizes, vCPUs, memory, temporary disk, NIC limits and GPU counts
 * follow the series pages on learn.microsoft.com (Dsv5, Dasv5, Ddsv5, Esv5, Fsv2, Dpsv5 and
 * Epsv5 (arm64), NCasT4_v3, NCv3, NC A100 v4, NCads H100 v5, NDasrA100_v4, NDm A100 v4,
 * ND H100 v5, ND H200 v5, ND GB200 v6 (arm64: Grace CPUs; its NIC count is not published and
 * is the other ND sizes' 8 here)); quota family names are the ones ARM's quota errors print. Regions and
 * restrictions are a plausible world, not a copy of any subscription: H200 is
 * NotAvailableForSubscription in westus2 (the static catalog has none there either), V100 in swedencentral, and some series are
 * zone-restricted, so the controller meets every restriction shape the API has.
 */

export interface SimSkuRestriction {
  location: string;
  /** Absent: the whole location; present: only these zones. */
  zones?: string[];
  reasonCode: 'NotAvailableForSubscription' | 'QuotaId';
}

export interface SimSku {
  name: string;
  /** Quota family (ARM's `family`). */
  family: string;
  vcpu: number;
  memoryGiB: number;
  /** Temporary (resource) disk, GiB; 0 = none. */
  tempDiskGiB: number;
  /** Cache for ephemeral OS disks, GiB; 0 = none. */
  cacheGiB: number;
  gpus: number;
  maxNics: number;
  acceleratedNetworking: boolean;
  premiumIO: boolean;
  rdma: boolean;
  hyperVGenerations: 'V1,V2' | 'V2';
  arch: 'amd64' | 'arm64';
  locations: string[];
  restrictions: SimSkuRestriction[];
}

const ALL_REGIONS = ['eastus', 'eastus2', 'eastus2euap', 'southcentralus', 'swedencentral', 'uksouth', 'westeurope', 'westus2', 'westus3'];
const GPU_REGIONS = ['eastus', 'eastus2', 'southcentralus', 'swedencentral', 'westeurope', 'westus2', 'westus3'];
/** Regions with availability zones (eastus2euap is a canary region: regional only here). */
export const ZONED_REGIONS: ReadonlySet<string> = new Set(ALL_REGIONS.filter((r) => r !== 'eastus2euap'));

type Row = [vcpu: number, memoryGiB: number, tempDiskGiB: number, cacheGiB: number, maxNics: number, gpus?: number];

interface Series {
  /** Builds the size name from the vCPU count. */
  name: (vcpu: number) => string;
  family: string;
  rows: Row[];
  premiumIO?: boolean;
  rdma?: (vcpu: number) => boolean;
  hyperV?: 'V1,V2' | 'V2';
  arch?: 'arm64';
  locations: string[];
  restrictions?: SimSkuRestriction[];
}

const nics = (vcpu: number): number => (vcpu <= 4 ? 2 : vcpu <= 8 ? 4 : 8);
const general = (memPerCpu: number, temp: (v: number) => number, cache: (v: number) => number, sizes: number[]): Row[] =>
  sizes.map((v) => [v, v * memPerCpu, temp(v), cache(v), nics(v)]);
const D_SIZES = [2, 4, 8, 16, 32, 48, 64, 96];

const SERIES: Series[] = [
  { name: (v) => `Standard_D${v}s_v5`, family: 'standardDSv5Family', rows: general(4, () => 0, () => 0, D_SIZES), locations: ALL_REGIONS,
    restrictions: [{ location: 'westus2', zones: ['3'], reasonCode: 'NotAvailableForSubscription' }] },
  { name: (v) => `Standard_D${v}as_v5`, family: 'standardDASv5Family', rows: general(4, () => 0, () => 0, D_SIZES), locations: ALL_REGIONS },
  { name: (v) => `Standard_D${v}ds_v5`, family: 'standardDDSv5Family', rows: general(4, (v) => v * 37.5, (v) => v * 25, D_SIZES),
    locations: ALL_REGIONS },
  { name: (v) => `Standard_E${v}s_v5`, family: 'standardESv5Family', rows: general(8, () => 0, () => 0, [2, 4, 8, 16, 32, 48, 64]).concat([[96, 672, 0, 0, 8]]),
    locations: ALL_REGIONS, restrictions: [{ location: 'westeurope', zones: ['1'], reasonCode: 'NotAvailableForSubscription' }] },
  { name: (v) => `Standard_D${v}ps_v5`, family: 'standardDPSv5Family', arch: 'arm64', rows: general(4, () => 0, () => 0, [2, 4, 8, 16, 32, 48, 64]), locations: ALL_REGIONS },
  { name: (v) => `Standard_E${v}ps_v5`, family: 'standardEPSv5Family', arch: 'arm64', rows: general(8, () => 0, () => 0, [2, 4, 8, 16, 20]).concat([[32, 208, 0, 0, 8]]),
    locations: ALL_REGIONS },
  { name: (v) => `Standard_F${v}s_v2`, family: 'standardFSv2Family', rows: general(2, (v) => v * 8, (v) => v * 16, [2, 4, 8, 16, 32, 48, 64, 72]), locations: ALL_REGIONS },
  { name: (v) => `Standard_NC${v}as_T4_v3`, family: 'standardNCASv3_T4Family', hyperV: 'V1,V2',
    rows: [[4, 28, 176, 0, 2, 1], [8, 56, 352, 0, 4, 1], [16, 110, 352, 0, 8, 1], [64, 440, 2816, 0, 8, 4]], locations: GPU_REGIONS },
  { name: (v) => `Standard_NC${v}s_v3`, family: 'standardNCSv3Family', hyperV: 'V1,V2',
    rows: [[6, 112, 736, 0, 4, 1], [12, 224, 1474, 0, 8, 2], [24, 448, 2948, 0, 8, 4]], locations: GPU_REGIONS,
    restrictions: [{ location: 'swedencentral', reasonCode: 'NotAvailableForSubscription' }] },
  { name: (v) => `Standard_NC${v}ads_A100_v4`, family: 'standardNCADSA100v4Family',
    rows: [[24, 220, 958, 0, 2, 1], [48, 440, 1916, 0, 4, 2], [96, 880, 3832, 0, 8, 4]], locations: GPU_REGIONS },
  { name: (v) => (v === 40 ? 'Standard_NC40ads_H100_v5' : 'Standard_NC80adis_H100_v5'), family: 'standardNCadsH100v5Family',
    rows: [[40, 320, 3576, 0, 2, 1], [80, 640, 7152, 0, 4, 2]], locations: GPU_REGIONS },
  { name: () => 'Standard_ND96asr_v4', family: 'standardNDASv4_A100Family', rows: [[96, 900, 6000, 0, 8, 8]], rdma: () => true, locations: GPU_REGIONS },
  { name: () => 'Standard_ND96amsr_A100_v4', family: 'standardNDAMSv4_A100Family', rows: [[96, 1900, 6400, 0, 8, 8]], rdma: () => true, locations: GPU_REGIONS },
  { name: () => 'Standard_ND96isr_H100_v5', family: 'standardNDSH100v5Family', rows: [[96, 1900, 28000, 0, 8, 8]], rdma: () => true, locations: GPU_REGIONS,
    restrictions: [{ location: 'eastus', zones: ['2'], reasonCode: 'NotAvailableForSubscription' }] },
  { name: () => 'Standard_ND96isr_H200_v5', family: 'standardNDSH200v5Family', rows: [[96, 1850, 28000, 0, 8, 8]], rdma: () => true,
    locations: [...GPU_REGIONS, 'eastus2euap', 'uksouth'].sort(),
    restrictions: [{ location: 'westus2', reasonCode: 'NotAvailableForSubscription' }] },
  { name: () => 'Standard_ND128isr_NDR_GB200_v6', family: 'standardNDISRGB200V6NDRFamily', arch: 'arm64', rows: [[128, 864, 16000, 0, 8, 4]], rdma: () => true,
    locations: ['eastus2', 'westus3'] },
];

function build(): SimSku[] {
  const out: SimSku[] = [];
  for (const series of SERIES) {
    for (const [vcpu, memoryGiB, tempDiskGiB, cacheGiB, maxNics, gpus] of series.rows) {
      const name = series.name(vcpu);
      out.push({
        name, family: series.family, vcpu, memoryGiB, tempDiskGiB, cacheGiB, gpus: gpus ?? 0, maxNics,
        acceleratedNetworking: vcpu >= 2, premiumIO: series.premiumIO ?? true, rdma: series.rdma?.(vcpu) ?? false,
        hyperVGenerations: series.hyperV ?? 'V2', arch: series.arch ?? 'amd64', locations: [...series.locations], restrictions: [...(series.restrictions ?? [])],
      });
    }
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export const SIM_SKUS: readonly SimSku[] = build();

const STATIC_BY_NAME = new Map(STATIC_INSTANCE_TYPES.map((t) => [t.name.toLowerCase(), t]));

/**
 * The same sizes as the fake ARM's instance types: a VM PUT of one of them is accepted
 * where the SKU is listed and not location-restricted (elsewhere: SkuNotAvailable). The
 * static catalog's SKUs keep their quota family names so scenario quotas still apply.
 */
export function simInstanceTypes(skus: readonly SimSku[] = SIM_SKUS): InstanceType[] {
  return skus.map((s) => {
    const known = STATIC_BY_NAME.get(s.name.toLowerCase());
    const gpuModel = s.gpus > 0 ? parseVmSize(s.name)?.accelerator : undefined;
    const memoryMiB = s.memoryGiB * 1024;
    const blocked = new Set(s.restrictions.filter((r) => r.zones === undefined).map((r) => r.location));
    const pricePerHour = RETAIL_PRICES_USD_PER_HOUR[s.name] ?? estimatePrice({ vcpu: s.vcpu, memoryMiB, gpuCount: s.gpus, ...(gpuModel ? { gpuModel } : {}) });
    return {
      name: s.name,
      family: known?.family ?? s.family,
      vcpu: s.vcpu,
      memoryMiB,
      gpuCount: s.gpus,
      ...(gpuModel ? { gpuModel } : {}),
      ...(known?.gpuMemoryGiB !== undefined ? { gpuMemoryGiB: known.gpuMemoryGiB } : {}),
      maxPods: 110,
      ephemeralStorageGiB: s.tempDiskGiB,
      arch: s.arch,
      pricePerHour,
      spotPricePerHour: estimateSpotPrice(pricePerHour, { gpuCount: s.gpus, ...(gpuModel ? { gpuModel } : {}) }),
      locations: s.locations.filter((l) => !blocked.has(l)),
      // The zones the Resource SKUs route lists (locationInfo) minus zone restrictions: what a zonal PUT may name.
      zones: Object.fromEntries(s.locations.filter((l) => !blocked.has(l) && ZONED_REGIONS.has(l)).map((l) => {
        const restricted = new Set(s.restrictions.filter((r) => r.location === l).flatMap((r) => r.zones ?? []));
        return [l, ['1', '2', '3'].filter((z) => !restricted.has(z)).map((z) => zoneLabel(l, z))];
      })),
      acceleratedNetworking: s.acceleratedNetworking,
      premiumIO: s.premiumIO,
      ephemeralOSDiskMaxGiB: Math.max(s.tempDiskGiB, s.cacheGiB),
      maxNics: s.maxNics,
    };
  });
}
