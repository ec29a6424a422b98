import type { InstanceType } from './skus.js';
import { estimateSpotPrice } from './spot-prices.js';

/**
 * On-demand prices, used ONLY to rank SKUs that fit the same pods (cheapest first); azflex
 * never bills, budgets or reports cost from them.
 *
 * Provenance: Linux pay-as-you-go list prices in USD per hour for region eastus (the
 * cross-region reference; the seed's SKUs are priced the same in eastus2), as the public
 * Azure Retail Prices API (https://prices.azure.com/api/retail/prices, documented at
 * https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices)
 * returns them: items with serviceName "Virtual Machines", type "Consumption",
 * unitOfMeasure "1 Hour", priceType "Consumption", productName without "Windows", keyed by
 * armSkuName, value retailPrice. Transcribed by hand from public list prices as of
 * PRICES_AS_OF; this machine has no internet access, so they were not re-fetched. Regional
 * differences (usually < 20 %) are ignored: ranking within one NodePool's region only
 * needs the order. Operators override any price (chart value `prices`, mounted as a
 * ConfigMap file and read with `--price-overrides`), e.g. to rank by their negotiated rate.
 *
 * A SKU without a price gets an estimate from its shape (estimatePrice), so new sizes from
 * the Resource SKUs API rank sensibly instead of last.
 */
export const PRICES_AS_OF = '2024-11';
export const PRICES_REGION = 'eastus';

export const RETAIL_PRICES_USD_PER_HOUR: Readonly<Record<string, number>> = {
  // General purpose, Intel (Dsv5)
  Standard_D2s_v5: 0.096, Standard_D4s_v5: 0.192, Standard_D8s_v5: 0.384, Standard_D16s_v5: 0.768,
  Standard_D32s_v5: 1.536, Standard_D48s_v5: 2.304, Standard_D64s_v5: 3.072, Standard_D96s_v5: 4.608,
  // General purpose, AMD (Dasv5)
  Standard_D2as_v5: 0.086, Standard_D4as_v5: 0.172, Standard_D8as_v5: 0.344, Standard_D16as_v5: 0.688,
  Standard_D32as_v5: 1.376, Standard_D48as_v5: 2.064, Standard_D64as_v5: 2.752, Standard_D96as_v5: 4.128,
  // General purpose with local disk (Ddsv5)
  Standard_D2ds_v5: 0.113, Standard_D4ds_v5: 0.226, Standard_D8ds_v5: 0.452, Standard_D16ds_v5: 0.904,
  Standard_D32ds_v5: 1.808, Standard_D48ds_v5: 2.712, Standard_D64ds_v5: 3.616, Standard_D96ds_v5: 5.424,
  // Memory optimised (Esv5)
  Standard_E2s_v5: 0.126, Standard_E4s_v5: 0.252, Standard_E8s_v5: 0.504, Standard_E16s_v5: 1.008,
  Standard_E32s_v5: 2.016, Standard_E48s_v5: 3.024, Standard_E64s_v5: 4.032, Standard_E96s_v5: 6.048,
  // Compute optimised (Fsv2)
  Standard_F2s_v2: 0.0846, Standard_F4s_v2: 0.169, Standard_F8s_v2: 0.338, Standard_F16s_v2: 0.677,
  Standard_F32s_v2: 1.353, Standard_F48s_v2: 2.03, Standard_F64s_v2: 2.706, Standard_F72s_v2: 3.045,
  // General purpose and memory optimised, Arm64 (Dpsv5, Epsv5; Ampere Altra)
  Standard_D2ps_v5: 0.077, Standard_D4ps_v5: 0.154, Standard_E2ps_v5: 0.101, Standard_E4ps_v5: 0.202, Standard_E8ps_v5: 0.403,
  // GPU: T4, V100, A100, H100, H200
  Standard_NC4as_T4_v3: 0.526, Standard_NC8as_T4_v3: 0.752, Standard_NC16as_T4_v3: 1.204, Standard_NC64as_T4_v3: 4.352,
  Standard_NC6s_v3: 3.06, Standard_NC12s_v3: 6.12, Standard_NC24s_v3: 12.24,
  Standard_NC24ads_A100_v4: 3.673, Standard_NC48ads_A100_v4: 7.346, Standard_NC96ads_A100_v4: 14.692,
  Standard_NC40ads_H100_v5: 6.98, Standard_NC80adis_H100_v5: 13.96,
  Standard_ND96asr_v4: 27.197, Standard_ND96amsr_A100_v4: 32.77,
  Standard_ND96isr_H100_v5: 98.32, Standard_ND96isr_H200_v5: 110.24,
};

/**
 * A shape-based stand-in for a missing price, fitted by eye to the table above (Dsv5,
 * Esv5 and Fsv2 land within 10 %): per vCPU, per GiB and per GPU of the named model.
 */
const GPU_HOURLY: Readonly<Record<string, number>> = { T4: 0.35, V100: 3.0, A100: 3.4, H100: 6.5, H200: 13.5, MI300X: 12 };

export function estimatePrice(type: Pick<InstanceType, 'vcpu' | 'memoryMiB' | 'gpuCount' | 'gpuModel'>): number {
  const gpu = type.gpuCount > 0 ? type.gpuCount * (GPU_HOURLY[type.gpuModel ?? ''] ?? 4) : 0;
  return Math.round((0.031 * type.vcpu + 0.004 * (type.memoryMiB / 1024) + gpu) * 10_000) / 10_000;
}

export type PriceSource = 'override' | 'table' | 'estimate';

/** Operators' prices per capacity type: VM size → USD/hour. */
export interface PriceOverrides {
  onDemand: Readonly<Record<string, number>>;
  spot: Readonly<Record<string, number>>;
}

export const NO_PRICE_OVERRIDES: PriceOverrides = { onDemand: {}, spot: {} };

type Priced = Pick<InstanceType, 'name' | 'vcpu' | 'memoryMiB' | 'gpuCount' | 'gpuModel'>;

/** On-demand: override > committed table > estimate; spot: override > the spot rule of its on-demand price. Case-insensitive SKU names. */
export class PriceBook {
  private readonly onDemand: Lookup;
  private readonly spot: Lookup;

  constructor(
    overrides: Partial<PriceOverrides> = {},
    table: Readonly<Record<string, number>> = RETAIL_PRICES_USD_PER_HOUR,
  ) {
    this.onDemand = new Lookup(overrides.onDemand ?? {}, table);
    this.spot = new Lookup(overrides.spot ?? {}, {});
  }

  price(type: Priced): { usdPerHour: number; source: PriceSource } {
    return this.onDemand.find(type.name) ?? { usdPerHour: estimatePrice(type), source: 'estimate' };
  }

  /** The spot price of a size Resource SKUs says is LowPriorityCapable. */
  spotPrice(type: Priced): { usdPerHour: number; source: PriceSource } {
    return this.spot.find(type.name) ?? { usdPerHour: estimateSpotPrice(this.price(type).usdPerHour, type), source: 'estimate' };
  }
}

class Lookup {
  private readonly overrides: Map<string, number>;
  private readonly table: Map<string, number>;
  constructor(overrides: Readonly<Record<string, number>>, table: Readonly<Record<string, number>>) {
    this.overrides = new Map(Object.entries(overrides).map(([k, v]) => [k.toLowerCase(), v]));
    this.table = new Map(Object.entries(table).map(([k, v]) => [k.toLowerCase(), v]));
  }
  find(name: string): { usdPerHour: number; source: PriceSource } | undefined {
    const key = name.toLowerCase();
    const override = this.overrides.get(key);
    if (override !== undefined) return { usdPerHour: override, source: 'override' };
    const listed = this.table.get(key);
    return listed !== undefined ? { usdPerHour: listed, source: 'table' } : undefined;
  }
}

/**
 * Parses a price override file: a YAML or JSON map of SKU name → USD/hour for on-demand, and
 * under the key `spot` the same for spot (what the chart's `prices` value renders into its
 * ConfigMap). One precise error per bad entry.
 */
export function parsePriceOverrides(doc: unknown, source: string): PriceOverrides {
  if (doc === null || doc === undefined) return NO_PRICE_OVERRIDES;
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`${source}: expected a map of SKU name to USD/hour`);
  const { spot, ...onDemand } = doc as Record<string, unknown>;
  if (spot !== undefined && (spot === null || typeof spot !== 'object' || Array.isArray(spot))) throw new Error(`${source}: spot: expected a map of SKU name to USD/hour`);
  return { onDemand: priceMap(onDemand, source), spot: priceMap((spot ?? {}) as Record<string, unknown>, `${source}: spot`) };
}

function priceMap(doc: Record<string, unknown>, source: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [sku, value] of Object.entries(doc)) {
    const n = typeof value === 'string' ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) throw new Error(`${source}: price of ${sku} must be a non-negative number, got ${JSON.stringify(value)}`);
    if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(sku)) throw new Error(`${source}: "${sku}" is not a VM size name`);
    out[sku] = n;
  }
  return out;
}
