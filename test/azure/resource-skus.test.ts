import { describe, expect, it } from 'vitest';
import type { ResourceSku } from '@azure/arm-compute';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { mapResourceSkus, resourceSkuFetcher, type ResourceSkuLister } from '../../src/azure/resource-skus.js';
import { LiveInstanceTypeCatalog } from '../../src/catalog/live.js';
import { PriceBook } from '../../src/catalog/prices.js';
import { isOffered } from '../../src/catalog/skus.js';
import { SdkAzure } from '../../src/azure/sdk-adapter.js';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import { CannedArm, armError, fakeCredential, runOnClock } from './helpers/canned-arm.js';

const caps = (c: Record<string, string>) => Object.entries(c).map(([name, value]) => ({ name, value }));

/** As the API returns them: one entry per SKU and region. */
const H200_EASTUS2: ResourceSku = {
  resourceType: 'virtualMachines',
  name: 'Standard_ND96isr_H200_v5',
  family: 'standardNDSH200v5Family',
  locations: ['eastus2'],
  locationInfo: [{ location: 'eastus2', zones: ['1', '2'] }],
  capabilities: caps({ vCPUs: '96', MemoryGB: '1850', GPUs: '8', CpuArchitectureType: 'x64', MaxResourceVolumeMB: '28672000' }),
  restrictions: [],
};
const H200_WESTUS3_RESTRICTED: ResourceSku = {
  ...H200_EASTUS2,
  locations: ['westus3'],
  locationInfo: [{ location: 'westus3' }],
  restrictions: [{ type: 'Location', values: ['westus3'], reasonCode: 'NotAvailableForSubscription', restrictionInfo: { locations: ['westus3'] } }],
};
const H200_SWEDEN_ZONE_RESTRICTED: ResourceSku = {
  ...H200_EASTUS2,
  locations: ['swedencentral'],
  locationInfo: [{ location: 'swedencentral', zones: ['1'] }],
  restrictions: [{ type: 'Zone', values: ['swedencentral'], reasonCode: 'NotAvailableForSubscription', restrictionInfo: { locations: ['swedencentral'], zones: ['1'] } }],
};
const ARM64: ResourceSku = {
  resourceType: 'virtualMachines',
  name: 'Standard_D8ps_v5',
  family: 'standardDPSv5Family',
  locations: ['eastus2'],
  capabilities: caps({ vCPUs: '8', MemoryGB: '32', CpuArchitectureType: 'Arm64', MaxResourceVolumeMB: '0' }),
};
const NOT_VM: ResourceSku = { resourceType: 'disks', name: 'Premium_LRS', locations: ['eastus2'] };
const ONLY_RESTRICTED: ResourceSku = {
  resourceType: 'virtualMachines',
  name: 'Standard_NC40ads_H100_v5',
  family: 'standardNCadsH100v5Family',
  locations: ['eastus2'],
  capabilities: caps({ vCPUs: '40', MemoryGB: '320', GPUs: '1' }),
  restrictions: [{ type: 'Location', values: ['eastus2'], reasonCode: 'NotAvailableForSubscription' }],
};

const SUB = '00000000-0000-4000-8000-00000000000A';
const scope = (location: string, subscriptionID = SUB) => ({ subscriptionID, location });

describe('mapResourceSkus (one subscription and location)', () => {
  it('maps capabilities; a Location restriction removes the SKU and is kept as a restriction', () => {
    const listing = mapResourceSkus([H200_EASTUS2, H200_WESTUS3_RESTRICTED, H200_SWEDEN_ZONE_RESTRICTED, ARM64, NOT_VM, ONLY_RESTRICTED], scope('eastus2'));
    expect(listing.types.map((t) => t.name)).toEqual(['Standard_D8ps_v5', 'Standard_ND96isr_H200_v5']);
    const h200 = listing.types.find((t) => t.name === 'Standard_ND96isr_H200_v5')!;
    const known = STATIC_INSTANCE_TYPES.find((t) => t.name === h200.name)!;
    expect(h200).toEqual({
      name: 'Standard_ND96isr_H200_v5',
      family: 'standardNDSH200v5Family',
      vcpu: 96,
      memoryMiB: 1850 * 1024,
      gpuCount: 8,
      gpuModel: 'H200',
      gpuMemoryGiB: 141,
      maxPods: 110,
      ephemeralStorageGiB: 28000,
      arch: 'amd64',
      pricePerHour: known.pricePerHour,
      locations: ['eastus2'],
      availability: [{ subscriptionID: SUB.toLowerCase(), location: 'eastus2', zones: ['1', '2'] }],
      // locationInfo's zones, labelled as the Azure provider labels nodes ("<region>-<id>"): one offering per zone.
      zones: { eastus2: ['eastus2-1', 'eastus2-2'] },
      acceleratedNetworking: false,
      premiumIO: false,
      ephemeralOSDiskMaxGiB: 0,
    });
    expect(listing.restrictions.get('standard_nc40ads_h100_v5')).toEqual([{ type: 'Location', reasonCode: 'NotAvailableForSubscription', zones: [] }]);
    const arm = listing.types.find((t) => t.name === 'Standard_D8ps_v5')!;
    expect(arm).toMatchObject({ arch: 'arm64', gpuCount: 0, memoryMiB: 32 * 1024 });
    expect(arm).not.toHaveProperty('gpuModel');
  });

  it('restricted in westus3 for this subscription: not offered there, and says why', () => {
    const listing = mapResourceSkus([H200_WESTUS3_RESTRICTED], scope('westus3'));
    expect(listing.types).toEqual([]);
    expect(listing.restrictions.get('standard_nd96isr_h200_v5')?.[0]?.reasonCode).toBe('NotAvailableForSubscription');
  });

  it('a Zone restriction keeps the region (azflex VMs are regional) and removes the zone', () => {
    const listing = mapResourceSkus([H200_SWEDEN_ZONE_RESTRICTED], scope('swedencentral'));
    expect(listing.types[0]!.availability).toEqual([{ subscriptionID: SUB.toLowerCase(), location: 'swedencentral', zones: [] }]);
    expect(listing.restrictions.get('standard_nd96isr_h200_v5')).toEqual([{ type: 'Zone', reasonCode: 'NotAvailableForSubscription', zones: ['1'] }]);
  });

  it('prices: override, then the committed table, then an estimate from the shape', () => {
    const withOverride = mapResourceSkus([H200_EASTUS2, ARM64], scope('eastus2'), { prices: new PriceBook({ onDemand: { standard_d8ps_v5: 0.3 } }), maxPods: 50 });
    expect(withOverride.types.find((t) => t.name === 'Standard_D8ps_v5')).toMatchObject({ pricePerHour: 0.3, maxPods: 50 });
    const estimated = mapResourceSkus([ARM64], scope('eastus2')).types[0]!;
    expect(estimated.pricePerHour).toBeGreaterThan(0.3);
    expect(estimated.pricePerHour).toBeLessThan(0.45);
  });
});

describe('LiveInstanceTypeCatalog over Resource SKUs', () => {
  function lister(pages: ResourceSku[][]): ResourceSkuLister & { calls: Array<string | undefined>; fail: boolean } {
    const self = {
      calls: [] as Array<string | undefined>,
      fail: false,
      list(options?: { filter?: string }): AsyncIterable<ResourceSku> {
        self.calls.push(options?.filter);
        const failing = self.fail;
        return (async function* () {
          if (failing) throw new Error('The long-running operation has failed. InternalServerError. boom');
          for (const page of pages) yield* page;
        })();
      },
    };
    return self;
  }

  it('one filtered call per scope, cached until the refresh interval on the injected clock, stale data kept on a failed refresh', async () => {
    const clock = new VirtualClock(0);
    const source = lister([[H200_EASTUS2, H200_WESTUS3_RESTRICTED, ARM64]]);
    const catalog = new LiveInstanceTypeCatalog({
      clock, refreshMs: 60_000, retryMs: 5_000,
      scopes: async () => [scope('EastUS2'), scope('westus3'), scope('eastus2')],
      fetch: resourceSkuFetcher(async () => source, clock),
    });
    const [a, b] = await Promise.all([catalog.list(), catalog.get('standard_nd96isr_h200_v5')]);
    expect(a.map((t) => t.name)).toEqual(['Standard_D8ps_v5', 'Standard_ND96isr_H200_v5']);
    expect(b?.gpuCount).toBe(8);
    expect(isOffered(b!, SUB, 'eastus2')).toBe(true);
    expect(isOffered(b!, SUB, 'westus3')).toBe(false);
    expect(isOffered(b!, 'another-subscription', 'eastus2')).toBe(false);
    expect(catalog.restriction('Standard_ND96isr_H200_v5', scope('westus3'))?.reasonCode).toBe('NotAvailableForSubscription');
    expect(catalog.restriction('Standard_ND96isr_H200_v5', scope('eastus2'))).toBeUndefined();
    expect(source.calls.sort()).toEqual(["location eq 'eastus2'", "location eq 'westus3'"]);
    expect(catalog.fetchCount).toBe(2);
    await clock.runUntil(59_999);
    await catalog.list();
    expect(catalog.fetchCount).toBe(2);
    await clock.runUntil(60_000);
    source.fail = true;
    expect((await catalog.list()).length).toBe(2);
    expect(catalog.fetchCount).toBe(4);
    source.fail = false;
    await clock.runUntil(64_999);
    await catalog.list();
    expect(catalog.fetchCount).toBe(4);
    await clock.runUntil(65_000);
    await catalog.list();
    expect(catalog.fetchCount).toBe(6);
  });

  it('a scope never listed (offline, ARM refusing) falls back to the static list for that location, and retries', async () => {
    const clock = new VirtualClock(0);
    const source = lister([[{ ...ARM64, locations: ['westeurope'] }]]);
    source.fail = true;
    const failures: unknown[] = [];
    const catalog = new LiveInstanceTypeCatalog({
      clock, retryMs: 1_000, scopes: async () => [scope('westeurope')], fetch: resourceSkuFetcher(async () => source, clock),
      onFetch: (_s, outcome) => { if (!outcome.ok) failures.push(outcome.error); },
    });
    const fallback = await catalog.list();
    expect(fallback.map((t) => t.name)).toEqual(STATIC_INSTANCE_TYPES.filter((t) => t.locations.includes('westeurope')).map((t) => t.name).sort());
    expect(failures[0]).toMatchObject({ name: 'AzureError', code: 'InternalServerError' });
    source.fail = false;
    await clock.runUntil(1_000);
    expect((await catalog.list()).map((t) => t.name)).toEqual(['Standard_D8ps_v5']);
  });

  it('works on the real SDK: ComputeManagementClient.resourceSkus.list through the adapter pipeline', async () => {
    const clock = new VirtualClock(0);
    const arm = new CannedArm(clock);
    arm.on('GET', /\/providers\/Microsoft.Compute\/skus$/, (req) =>
      req.query.get('$filter') === "location eq 'eastus2'"
        ? { status: 200, body: { value: [H200_EASTUS2, ARM64, NOT_VM] } }
        : armError(400, 'InvalidParameter', 'bad filter'),
    );
    const azure = new SdkAzure({ clock, credential: fakeCredential, endpoint: 'https://arm.test', httpClient: arm });
    const catalog = new LiveInstanceTypeCatalog({
      clock, scopes: async () => [scope('eastus2', 'sub-1')],
      fetch: resourceSkuFetcher(async (sub) => (await azure.computeClient(sub)).resourceSkus, clock),
    });
    const types = await runOnClock(clock, catalog.list());
    expect(types.map((t) => `${t.name}@${t.locations.join(',')}`)).toEqual(['Standard_D8ps_v5@eastus2', 'Standard_ND96isr_H200_v5@eastus2']);
    expect(arm.requests[0]!.query.get('api-version')).toBe('2021-07-01');
    expect(arm.requests[0]!.path).toContain('/subscriptions/sub-1/providers/Microsoft.Compute/skus');
  });
});
