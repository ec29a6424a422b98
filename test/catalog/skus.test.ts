import { describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import { parseVmSize } from '../../src/catalog/vm-size.js';
import { PriceBook, parsePriceOverrides, RETAIL_PRICES_USD_PER_HOUR } from '../../src/catalog/prices.js';
import { instanceTypeRequirements } from '../../src/provisioning/requirements.js';
import { simInstanceTypes } from '../../src/sim/arm/sku-catalog.js';

describe('VM size names (Azure naming convention, as the Azure Karpenter provider reads them)', () => {
  it.each([
    ['Standard_D8s_v5', { family: 'D', series: 'Ds_v5', version: '5' }],
    ['Standard_D16as_v5', { family: 'D', series: 'Das_v5', version: '5' }],
    ['Standard_F72s_v2', { family: 'F', series: 'Fs_v2', version: '2' }],
    ['Standard_NC24ads_A100_v4', { family: 'N', series: 'NCads_v4', version: '4', accelerator: 'A100' }],
    ['Standard_NC4as_T4_v3', { family: 'N', series: 'NCas_v3', version: '3', accelerator: 'T4' }],
    ['Standard_ND96isr_H200_v5', { family: 'N', series: 'NDisr_v5', version: '5', accelerator: 'H200' }],
    ['Standard_NC6s_v3', { family: 'N', series: 'NCs_v3', version: '3', accelerator: 'V100' }],
    ['Standard_ND96asr_v4', { family: 'N', series: 'NDasr_v4', version: '4', accelerator: 'A100' }],
    ['Standard_M8-2ms', { family: 'M', series: 'Mms', version: '1' }],
    ['Standard_DC4as_cc_v5', { family: 'D', series: 'DCas_v5', version: '5' }],
    ['Standard_D4ps_v5', { family: 'D', series: 'Dps_v5', version: '5' }],
    // "_NDR" names the InfiniBand generation, not a GPU.
    ['Standard_ND128isr_NDR_GB200_v6', { family: 'N', series: 'NDisr_v6', version: '6', accelerator: 'GB200' }],
  ])('%s', (name, parts) => {
    expect(parseVmSize(name)).toEqual({ subfamily: expect.any(String), ...parts });
  });

  it('every simulated size parses', () => {
    for (const t of simInstanceTypes()) expect(parseVmSize(t.name), t.name).toBeDefined();
  });
});

describe('well-known labels of an instance type', () => {
  it('follow the provider: sku-family is the letter, sku-version the number, capabilities as true/false', () => {
    const d16 = simInstanceTypes().find((t) => t.name === 'Standard_D16ds_v5')!;
    const labels = instanceTypeRequirements(d16, 'eastus2').labels();
    expect(labels).toMatchObject({
      'karpenter.azure.com/sku-name': 'Standard_D16ds_v5',
      'karpenter.azure.com/sku-family': 'D',
      'karpenter.azure.com/sku-series': 'Dds_v5',
      'karpenter.azure.com/sku-version': '5',
      'karpenter.azure.com/sku-cpu': '16',
      'karpenter.azure.com/sku-memory': String(64 * 1024),
      'karpenter.azure.com/sku-gpu-count': '0',
      'karpenter.azure.com/sku-networking-accelerated': 'true',
      'karpenter.azure.com/sku-storage-premium-capable': 'true',
      'karpenter.azure.com/sku-storage-ephemeralos-maxsize': '600',
    });
    expect(labels).not.toHaveProperty('karpenter.azure.com/sku-gpu-name');
    const h200 = instanceTypeRequirements(STATIC_INSTANCE_TYPES[0]!, 'eastus2').labels();
    expect(h200).toMatchObject({ 'karpenter.azure.com/sku-family': 'N', 'karpenter.azure.com/sku-gpu-name': 'H200', 'karpenter.azure.com/sku-gpu-manufacturer': 'nvidia' });
  });
});

describe('arm64 sizes', () => {
  const arm = (types: readonly { name: string; arch: string }[]) => types.filter((t) => t.arch === 'arm64').map((t) => t.name);

  it('the static catalog and serve-arm\'s carry Dpsv5, Epsv5 and ND GB200 v6 as arm64, everything else as amd64', () => {
    expect(arm(STATIC_INSTANCE_TYPES)).toEqual(['Standard_D4ps_v5', 'Standard_E8ps_v5', 'Standard_ND128isr_NDR_GB200_v6']);
    const sim = simInstanceTypes();
    expect(arm(sim).every((n) => /^Standard_(D\d+ps_v5|E\d+ps_v5|ND128isr_NDR_GB200_v6)$/.test(n))).toBe(true);
    expect(arm(sim)).toEqual(expect.arrayContaining(arm(STATIC_INSTANCE_TYPES)));
    // The sizes both list agree on shape and price.
    for (const t of STATIC_INSTANCE_TYPES.filter((t) => t.arch === 'arm64')) {
      const s = sim.find((x) => x.name === t.name)!;
      expect([s.vcpu, s.memoryMiB, s.gpuCount, s.arch, s.pricePerHour], t.name).toEqual([t.vcpu, t.memoryMiB, t.gpuCount, t.arch, t.pricePerHour]);
    }
  });

  it('label kubernetes.io/arch and the provider\'s sku labels; the Grace GPU size as an NVIDIA GPU', () => {
    const byName = (n: string) => STATIC_INSTANCE_TYPES.find((t) => t.name === n)!;
    expect(instanceTypeRequirements(byName('Standard_D4ps_v5'), 'eastus2').labels()).toMatchObject({
      'kubernetes.io/arch': 'arm64', 'karpenter.azure.com/sku-family': 'D', 'karpenter.azure.com/sku-series': 'Dps_v5', 'karpenter.azure.com/sku-cpu': '4',
    });
    expect(instanceTypeRequirements(byName('Standard_ND128isr_NDR_GB200_v6'), 'eastus2').labels()).toMatchObject({
      'kubernetes.io/arch': 'arm64', 'karpenter.azure.com/sku-gpu-name': 'GB200', 'karpenter.azure.com/sku-gpu-manufacturer': 'nvidia', 'karpenter.azure.com/sku-gpu-count': '4',
    });
    expect(instanceTypeRequirements(byName('Standard_D8s_v5'), 'eastus2').labels()['kubernetes.io/arch']).toBe('amd64');
  });

  it('Dpsv5 and Epsv5 are priced from the table, ND GB200 v6 (no list price sourced) by its shape', () => {
    const book = new PriceBook();
    expect(book.price(STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_D4ps_v5')!)).toEqual({ usdPerHour: 0.154, source: 'table' });
    expect(book.price(STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_E8ps_v5')!)).toEqual({ usdPerHour: 0.403, source: 'table' });
    const gb200 = STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_ND128isr_NDR_GB200_v6')!;
    expect(book.price(gb200)).toEqual({ usdPerHour: gb200.pricePerHour, source: 'estimate' });
  });
});

describe('prices', () => {
  it('override > table > estimate; the estimate is within 10 % of the table for Dsv5, Esv5, Fsv2', () => {
    const book = new PriceBook({ onDemand: { STANDARD_D8S_V5: 0.2 } });
    expect(book.price({ name: 'Standard_D8s_v5', vcpu: 8, memoryMiB: 32768, gpuCount: 0 })).toEqual({ usdPerHour: 0.2, source: 'override' });
    expect(book.price({ name: 'Standard_D4s_v5', vcpu: 4, memoryMiB: 16384, gpuCount: 0 })).toEqual({ usdPerHour: 0.192, source: 'table' });
    for (const t of simInstanceTypes().filter((t) => /^Standard_(D\d+s|E\d+s|F\d+s)_v[25]$/.test(t.name))) {
      const listed = RETAIL_PRICES_USD_PER_HOUR[t.name]!;
      const estimated = new PriceBook({}, {}).price(t);
      expect(estimated.source).toBe('estimate');
      expect(Math.abs(estimated.usdPerHour - listed) / listed, t.name).toBeLessThan(0.1);
    }
  });

  it('spot: override > table > the table\'s discount of the on-demand price', () => {
    const book = new PriceBook({ spot: { Standard_D8s_v5: 0.05 } });
    expect(book.spotPrice({ name: 'Standard_D8s_v5', vcpu: 8, memoryMiB: 32768, gpuCount: 0 })).toEqual({ usdPerHour: 0.05, source: 'override' });
    expect(book.spotPrice({ name: 'Standard_D4s_v5', vcpu: 4, memoryMiB: 16384, gpuCount: 0 })).toEqual({ usdPerHour: 0.0384, source: 'estimate' });
    const unlisted = book.spotPrice({ name: 'Standard_X8', vcpu: 8, memoryMiB: 32768, gpuCount: 0 });
    expect(unlisted).toEqual({ usdPerHour: Math.round(book.price({ name: 'Standard_X8', vcpu: 8, memoryMiB: 32768, gpuCount: 0 }).usdPerHour * 0.2 * 10_000) / 10_000, source: 'estimate' });
  });

  it('override files: one precise error', () => {
    expect(parsePriceOverrides({ Standard_D4s_v5: '0.15' }, 'p.yaml')).toEqual({ onDemand: { Standard_D4s_v5: 0.15 }, spot: {} });
    expect(parsePriceOverrides({ spot: { Standard_D4s_v5: 0.03 } }, 'p.yaml')).toEqual({ onDemand: {}, spot: { Standard_D4s_v5: 0.03 } });
    expect(() => parsePriceOverrides({ spot: { Standard_D4s_v5: -1 } }, 'p.yaml')).toThrow('p.yaml: spot: price of Standard_D4s_v5 must be a non-negative number, got -1');
    expect(() => parsePriceOverrides({ Standard_D4s_v5: 'cheap' }, 'p.yaml')).toThrow('p.yaml: price of Standard_D4s_v5 must be a non-negative number, got "cheap"');
    expect(() => parsePriceOverrides(['x'], 'p.yaml')).toThrow('p.yaml: expected a map of SKU name to USD/hour');
  });
});
