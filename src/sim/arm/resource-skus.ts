import type { InstanceType } from '../../catalog/skus.js';
import { isSpotCapable } from './spot.js';
import type { Json } from './rest-shapes.js';
import { SIM_SKUS, ZONED_REGIONS, type SimSku } from './sku-catalog.js';

/**
 * GET /subscriptions/{sub}/providers/Microsoft.Compute/skus?api-version=…&$filter=location eq '…'
 * (https://learn.microsoft.com/rest/api/compute/resource-skus/list): one entry per SKU and
 * location, with `locations`, `locationInfo` (zones), `capabilities` as name/value strings,
 * and `restrictions` of type Location or Zone. Only the location filter exists; anything
 * else in $filter is ignored, as ARM documents ("Only location filter is supported").
 *
 * The listing is derived from what this fake ARM accepts in a VM PUT, so the two never
 * disagree: a location where a PUT would get SkuNotAvailable (the SKU's restricted
 * locations, or a `skuUnavailable` fault) is listed with a NotAvailableForSubscription
 * Location restriction. Sizes from src/sim/arm/sku-catalog.ts carry their full
 * capabilities; other instance types a scenario defines get the same shape from their fields.
 */
export interface SkuListSource {
  instanceTypes(): InstanceType[];
  regionsOf(subscriptionId: string): Array<{ location: string; unavailableSkus: string[] }>;
}

type JsonObject = { [key: string]: Json };

const SIM_BY_NAME = new Map(SIM_SKUS.map((s) => [s.name.toLowerCase(), s]));

export function resourceSkuList(arm: SkuListSource, subscriptionId: string, filter: string | null): JsonObject {
  const only = filter ? /location\s+eq\s+'([^']+)'/i.exec(filter)?.[1]?.toLowerCase() : undefined;
  const unavailable = new Map<string, Set<string>>();
  for (const r of arm.regionsOf(subscriptionId)) unavailable.set(r.location.toLowerCase(), new Set(r.unavailableSkus.map((s) => s.toLowerCase())));
  const value: Json[] = [];
  const types = [...arm.instanceTypes()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const type of types) {
    const sim = SIM_BY_NAME.get(type.name.toLowerCase());
    const accepted = new Set(type.locations.map((l) => l.toLowerCase()));
    const listed = new Set([...accepted, ...(sim?.restrictions ?? []).filter((r) => !r.zones).map((r) => r.location)]);
    for (const location of [...listed].sort()) {
      if (only !== undefined && location !== only) continue;
      const blocked = !accepted.has(location) || (unavailable.get(location)?.has(type.name.toLowerCase()) ?? false);
      value.push(entry(type, sim, location, blocked));
    }
  }
  return { value };
}

function entry(type: InstanceType, sim: SimSku | undefined, location: string, blocked: boolean): JsonObject {
  const zones = ZONED_REGIONS.has(location) ? ['1', '2', '3'] : [];
  const restrictions: Json[] = [];
  if (blocked) {
    const reasonCode = sim?.restrictions.find((r) => r.location === location && !r.zones)?.reasonCode ?? 'NotAvailableForSubscription';
    restrictions.push({ type: 'Location', values: [location], restrictionInfo: { locations: [location] }, reasonCode });
  }
  for (const r of sim?.restrictions ?? []) {
    if (r.location !== location || !r.zones) continue;
    restrictions.push({ type: 'Zone', values: [location], restrictionInfo: { locations: [location], zones: [...r.zones] }, reasonCode: r.reasonCode });
  }
  return {
    resourceType: 'virtualMachines',
    name: type.name,
    tier: 'Standard',
    size: type.name.replace(/^Standard_/, ''),
    family: sim?.family ?? type.family,
    locations: [location],
    locationInfo: [{ location, zones, zoneDetails: [] }],
    capabilities: capabilities(type, sim).map(([name, value]) => ({ name, value })),
    restrictions,
  };
}

function capabilities(type: InstanceType, sim: SimSku | undefined): Array<[string, string]> {
  const tempMB = (sim?.tempDiskGiB ?? type.ephemeralStorageGiB) * 1024;
  const cacheGiB = sim?.cacheGiB ?? 0;
  const ephemeral = (type.ephemeralOSDiskMaxGiB ?? Math.max(tempMB / 1024, cacheGiB)) > 0;
  const memoryGB = Math.round((type.memoryMiB / 1024) * 100) / 100;
  const caps: Array<[string, string]> = [
    ['MaxResourceVolumeMB', String(tempMB)],
    ['OSVhdSizeMB', '1047552'],
    ['vCPUs', String(type.vcpu)],
    ['MemoryPreservingMaintenanceSupported', 'True'],
    ['HyperVGenerations', sim?.hyperVGenerations ?? 'V2'],
    ['MemoryGB', String(memoryGB)],
    ['MaxDataDiskCount', String(Math.min(64, Math.max(4, type.vcpu * 2)))],
    ['CpuArchitectureType', type.arch === 'arm64' ? 'Arm64' : 'x64'],
    ['LowPriorityCapable', isSpotCapable(type) ? 'True' : 'False'],
    ['PremiumIO', bool(sim?.premiumIO ?? type.premiumIO ?? true)],
    ['VMDeploymentTypes', 'IaaS'],
    ['vCPUsAvailable', String(type.vcpu)],
    ['vCPUsPerCore', type.gpuCount > 0 ? '1' : '2'],
  ];
  if (type.gpuCount > 0) caps.push(['GPUs', String(type.gpuCount)]);
  if (cacheGiB > 0) caps.push(['CachedDiskBytes', String(cacheGiB * 1024 ** 3)]);
  caps.push(
    ['EphemeralOSDiskSupported', bool(ephemeral)],
    ['EncryptionAtHostSupported', 'True'],
    ['CapacityReservationSupported', 'True'],
    ['AcceleratedNetworkingEnabled', bool(sim?.acceleratedNetworking ?? type.acceleratedNetworking ?? true)],
    ['RdmaEnabled', bool(sim?.rdma ?? false)],
    ['MaxNetworkInterfaces', String(sim?.maxNics ?? type.maxNics ?? 2)],
  );
  return caps;
}

function bool(b: boolean): string {
  return b ? 'True' : 'False';
}

/**
 * GET …/locations/{l}/vmSizes and …/virtualMachines/{vm}/vmSizes (VirtualMachineSize):
 * `{name, numberOfCores, osDiskSizeInMB, resourceDiskSizeInMB, memoryInMB,
 * maxDataDiskCount}` per size offered in the location, from the same fields as the
 * Resource SKUs capabilities above, so the two listings agree.
 */
export function vmSizeList(types: readonly InstanceType[], location: string): JsonObject {
  const loc = location.toLowerCase();
  const value: Json[] = [];
  for (const type of [...types].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (!type.locations.some((l) => l.toLowerCase() === loc)) continue;
    const caps = new Map(capabilities(type, SIM_BY_NAME.get(type.name.toLowerCase())));
    value.push({
      name: type.name,
      numberOfCores: type.vcpu,
      osDiskSizeInMB: Number(caps.get('OSVhdSizeMB')),
      resourceDiskSizeInMB: Number(caps.get('MaxResourceVolumeMB')),
      memoryInMB: type.memoryMiB,
      maxDataDiskCount: Number(caps.get('MaxDataDiskCount')),
    });
  }
  return { value };
}
