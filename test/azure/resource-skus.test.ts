import { describe, expect, it } from 'vitest';
import type { ResourceSku } from '@azure/arm-compute';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { ResourceSkuCatalog, mapResourceSkus, type ResourceSkuLister } from '../../src/azure/resource-skus.js';
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

describe('mapResourceSkus', () => {
  it('maps capabilities, merges regions and drops regions restricted for the subscription', () => {
    const types = mapResourceSkus([H200_EASTUS2, H200_WESTUS3_RESTRICTED, H200_SWEDEN_ZONE_RESTRICTED, ARM64, NOT_VM, ONLY_RESTRICTED]);
    expect(types.map((t) => t.name)).toEqual(['Standard_D8ps_v5', 'Standard_ND96isr_H200_v5']);
    const h200 = types.find((t) => t.name === 'Standard_ND96isr_H200_v5')!;
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
      locations: ['eastus2', 'swedencentral'],
    });
    const arm = types.find((t) => t.name === 'Standard_D8ps_v5')!;
    expect(arm).toMatchObject({ arch: 'arm64', gpuCount: 0, memoryMiB: 32 * 1024, pricePerHour: Number.POSITIVE_INFINITY });
    expect(arm).not.toHaveProperty('gpuModel');
  });

  it('honours an allowlist and explicit prices', () => {
    const types = mapResourceSkus([H200_EASTUS2, ARM64], { skuNames: ['standard_d8ps_v5'], prices: { Standard_D8ps_v5: 0.3 }, maxPods: 50 });
    expect(types).toHaveLength(1);
    expect(types[0]).toMatchObject({ name: 'Standard_D8ps_v5', pricePerHour: 0.3, maxPods: 50 });
  });
});

describe('ResourceSkuCatalog', () => {
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

  it('caches for the TTL on the injected clock, one filtered call per region, and serves stale data on refresh failure', async () => {
    const clock = new VirtualClock(0);
    const source = lister([[H200_EASTUS2, ARM64]]);
    const catalog = new ResourceSkuCatalog(source, { clock, ttlMs: 60_000, locations: ['EastUS2', 'westus3'] });
    const [a, b] = await Promise.all([catalog.list(), catalog.get('standard_nd96isr_h200_v5')]);
    expect(a.map((t) => t.name)).toEqual(['Standard_D8ps_v5', 'Standard_ND96isr_H200_v5']);
    expect(b?.gpuCount).toBe(8);
    expect(source.calls).toEqual(["location eq 'eastus2'", "location eq 'westus3'"]);
    expect(catalog.fetchCount).toBe(1);
    await clock.runUntil(59_999);
    await catalog.list();
    expect(catalog.fetchCount).toBe(1);
    await clock.runUntil(60_000);
    source.fail = true;
    expect((await catalog.list()).length).toBe(2);
    expect(catalog.fetchCount).toBe(2);
    source.fail = false;
    await catalog.list();
    expect(catalog.fetchCount).toBe(3);
  });

  it('a first refresh that fails is an AzureError', async () => {
    const source = lister([]);
    source.fail = true;
    const catalog = new ResourceSkuCatalog(source, { clock: new VirtualClock(0) });
    await expect(catalog.list()).rejects.toMatchObject({ name: 'AzureError', code: 'InternalServerError' });
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
    const compute = await azure.computeClient('sub-1');
    const catalog = new ResourceSkuCatalog(compute.resourceSkus, { clock, locations: ['eastus2'] });
    const types = await runOnClock(clock, catalog.list());
    expect(types.map((t) => `${t.name}@${t.locations.join(',')}`)).toEqual(['Standard_D8ps_v5@eastus2', 'Standard_ND96isr_H200_v5@eastus2']);
    expect(arm.requests[0]!.query.get('api-version')).toBe('2021-07-01');
  });
});
