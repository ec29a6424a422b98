import { describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES } from '../../../src/catalog/skus.js';
import { FakeArm } from '../../../src/sim/arm/fake-arm.js';
import { ZERO_LATENCY_MS } from '../../../src/sim/arm/defaults.js';
import { createArmRestHandler } from '../../../src/sim/arm/rest.js';
import { SIM_SKUS, simInstanceTypes } from '../../../src/sim/arm/sku-catalog.js';
import { SeededRandom, VirtualClock } from '../../../src/sim/virtual-clock.js';
import { mapResourceSkus } from '../../../src/azure/resource-skus.js';
import type { ResourceSku } from '@azure/arm-compute';

const SUB = '00000000-0000-4000-8000-0000000000bb';

interface SkuEntry {
  name: string;
  family: string;
  locations: string[];
  locationInfo: Array<{ location: string; zones: string[] }>;
  capabilities: Array<{ name: string; value: string }>;
  restrictions: Array<{ type: string; values: string[]; restrictionInfo: { locations: string[]; zones?: string[] }; reasonCode: string }>;
}

function world() {
  const clock = new VirtualClock(0);
  const arm = new FakeArm({
    clock,
    random: new SeededRandom(1),
    config: {
      regions: ['eastus2', 'westus3', 'westus2'].map((location) => ({ subscriptionId: SUB, location, familyQuotaCores: {} })),
      subnets: [{ id: `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/s`, addressPrefix: '10.0.0.0/24' }],
      latencyMs: ZERO_LATENCY_MS,
    },
    instanceTypes: simInstanceTypes(),
  });
  const handler = createArmRestHandler(arm, { baseUrl: 'https://arm.test', clock, lroRetryAfterSeconds: 0 });
  const list = async (location: string): Promise<SkuEntry[]> => {
    const filter = encodeURIComponent(`location eq '${location}'`);
    const res = await handler({ method: 'GET', url: `/subscriptions/${SUB}/providers/Microsoft.Compute/skus?api-version=2021-07-01&$filter=${filter}`, headers: { authorization: 'Bearer t' } });
    expect(res.status).toBe(200);
    return (JSON.parse(res.body!) as { value: SkuEntry[] }).value;
  };
  return { arm, list };
}

const cap = (e: SkuEntry, name: string) => e.capabilities.find((c) => c.name === name)?.value;

describe('simulated Resource SKUs route', () => {
  it('lists D, E, F, NC and ND sizes, far more than the static list, in the API shape', async () => {
    const { list } = world();
    const east = await list('eastus2');
    const names = east.map((e) => e.name);
    expect(names.length).toBeGreaterThan(40);
    for (const prefix of ['Standard_D', 'Standard_E', 'Standard_F', 'Standard_NC', 'Standard_ND']) expect(names.some((n) => n.startsWith(prefix))).toBe(true);
    const staticNames = new Set(STATIC_INSTANCE_TYPES.map((t) => t.name));
    expect(names.filter((n) => n.startsWith('Standard_D') && !staticNames.has(n)).length).toBeGreaterThan(10);
    const d16 = east.find((e) => e.name === 'Standard_D16as_v5')!;
    expect(d16).toMatchObject({ family: 'standardDASv5Family', locations: ['eastus2'], locationInfo: [{ location: 'eastus2', zones: ['1', '2', '3'] }], restrictions: [] });
    expect([cap(d16, 'vCPUs'), cap(d16, 'MemoryGB'), cap(d16, 'MaxNetworkInterfaces'), cap(d16, 'AcceleratedNetworkingEnabled')]).toEqual(['16', '64', '8', 'True']);
    const a100 = east.find((e) => e.name === 'Standard_NC24ads_A100_v4')!;
    expect(cap(a100, 'GPUs')).toBe('1');
  });

  it('restrictions: H200 NotAvailableForSubscription in westus2 (and a VM PUT there is SkuNotAvailable); Dsv5 zone 3 in westus2', async () => {
    const { list, arm } = world();
    const h200 = (await list('westus2')).find((e) => e.name === 'Standard_ND96isr_H200_v5')!;
    expect(h200.restrictions).toEqual([{ type: 'Location', values: ['westus2'], restrictionInfo: { locations: ['westus2'] }, reasonCode: 'NotAvailableForSubscription' }]);
    expect(arm.instanceTypes().find((t) => t.name === 'Standard_ND96isr_H200_v5')!.locations).not.toContain('westus2');
    const d4 = (await list('westus2')).find((e) => e.name === 'Standard_D4s_v5')!;
    expect(d4.restrictions).toEqual([{ type: 'Zone', values: ['westus2'], restrictionInfo: { locations: ['westus2'], zones: ['3'] }, reasonCode: 'NotAvailableForSubscription' }]);
  });

  it('a skuUnavailable fault shows up as a Location restriction', async () => {
    const { list, arm } = world();
    arm.injectFault({ kind: 'skuUnavailable', location: 'eastus2', sku: 'Standard_D16as_v5' });
    expect((await list('eastus2')).find((e) => e.name === 'Standard_D16as_v5')!.restrictions[0]).toMatchObject({ type: 'Location', reasonCode: 'NotAvailableForSubscription' });
  });

  it('the static SKUs keep their quota families, so scenario quotas apply to them unchanged', () => {
    const types = new Map(simInstanceTypes().map((t) => [t.name, t]));
    for (const t of STATIC_INSTANCE_TYPES) expect(types.get(t.name)?.family).toBe(t.family);
    expect(SIM_SKUS.length).toBe(types.size);
  });

  it('arm64 sizes say CpuArchitectureType Arm64, and the production mapping reads them back as arm64', async () => {
    const { list } = world();
    const east = await list('eastus2');
    const archOf = (name: string) => cap(east.find((e) => e.name === name)!, 'CpuArchitectureType');
    expect([archOf('Standard_D4ps_v5'), archOf('Standard_E8ps_v5'), archOf('Standard_ND128isr_NDR_GB200_v6'), archOf('Standard_D8s_v5')]).toEqual(['Arm64', 'Arm64', 'Arm64', 'x64']);
    const mapped = mapResourceSkus(east.map((e) => ({ ...e, resourceType: 'virtualMachines' }) as ResourceSku), { subscriptionID: SUB, location: 'eastus2' });
    const arch = new Map(mapped.types.map((t) => [t.name, t.arch]));
    expect([arch.get('Standard_D4ps_v5'), arch.get('Standard_ND128isr_NDR_GB200_v6'), arch.get('Standard_D8s_v5')]).toEqual(['arm64', 'arm64', 'amd64']);
    expect(mapped.types.find((t) => t.name === 'Standard_ND128isr_NDR_GB200_v6')).toMatchObject({ gpuCount: 4, gpuModel: 'GB200', vcpu: 128 });
  });
});
