/**
 * Spot prices, used ONLY to rank offerings (spot before on-demand when cheaper, as Karpenter
 * does); azflex never bills or reports cost from them.
 *
 * Provenance: the sizes and on-demand prices of RETAIL_PRICES_USD_PER_HOUR (eastus, Linux),
 * times the usual spot discount of the size's kind: 80 % off for general-purpose, memory and
 * compute sizes and T4 GPUs, 60 % off for the V100, A100, H100 and H200 sizes, rounded to
 * 4 decimals. These are approximations, not quotes: spot prices move with demand per region
 * and hour, and this machine has no internet access to fetch them. The public Azure Retail
 * Prices API (https://prices.azure.com/api/retail/prices, documented at
 * https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices)
 * gives the current ones: serviceName "Virtual Machines", priceType "Consumption", skuName
 * ending in " Spot", productName without "Windows", keyed by armSkuName, value retailPrice.
 * Operators override any price (the chart's `prices.spot` map, read with --price-overrides),
 * e.g. with that API's answer for their region.
 *
 * Whether a size is offered as spot at all comes from Resource SKUs (capability
 * LowPriorityCapable), not from this table; a capable size without a price gets an estimate
 * (estimateSpotPrice).
 */
export const SPOT_PRICES_REGION = 'eastus';

export const SPOT_PRICES_USD_PER_HOUR: Readonly<Record<string, number>> = {
  // General purpose, Intel (Dsv5)
  Standard_D2s_v5: 0.0192, Standard_D4s_v5: 0.0384, Standard_D8s_v5: 0.0768, Standard_D16s_v5: 0.1536,
  Standard_D32s_v5: 0.3072, Standard_D48s_v5: 0.4608, Standard_D64s_v5: 0.6144, Standard_D96s_v5: 0.9216,
  // General purpose, AMD (Dasv5)
  Standard_D2as_v5: 0.0172, Standard_D4as_v5: 0.0344, Standard_D8as_v5: 0.0688, Standard_D16as_v5: 0.1376,
  Standard_D32as_v5: 0.2752, Standard_D48as_v5: 0.4128, Standard_D64as_v5: 0.5504, Standard_D96as_v5: 0.8256,
  // General purpose with local disk (Ddsv5)
  Standard_D2ds_v5: 0.0226, Standard_D4ds_v5: 0.0452, Standard_D8ds_v5: 0.0904, Standard_D16ds_v5: 0.1808,
  Standard_D32ds_v5: 0.3616, Standard_D48ds_v5: 0.5424, Standard_D64ds_v5: 0.7232, Standard_D96ds_v5: 1.0848,
  // Memory optimised (Esv5)
  Standard_E2s_v5: 0.0252, Standard_E4s_v5: 0.0504, Standard_E8s_v5: 0.1008, Standard_E16s_v5: 0.2016,
  Standard_E32s_v5: 0.4032, Standard_E48s_v5: 0.6048, Standard_E64s_v5: 0.8064, Standard_E96s_v5: 1.2096,
  // Compute optimised (Fsv2)
  Standard_F2s_v2: 0.0169, Standard_F4s_v2: 0.0338, Standard_F8s_v2: 0.0676, Standard_F16s_v2: 0.1354,
  Standard_F32s_v2: 0.2706, Standard_F48s_v2: 0.406, Standard_F64s_v2: 0.5412, Standard_F72s_v2: 0.609,
  // GPU: T4, V100, A100, H100, H200
  Standard_NC4as_T4_v3: 0.1052, Standard_NC8as_T4_v3: 0.1504, Standard_NC16as_T4_v3: 0.2408, Standard_NC64as_T4_v3: 0.8704,
  Standard_NC6s_v3: 1.224, Standard_NC12s_v3: 2.448, Standard_NC24s_v3: 4.896,
  Standard_NC24ads_A100_v4: 1.4692, Standard_NC48ads_A100_v4: 2.9384, Standard_NC96ads_A100_v4: 5.8768,
  Standard_NC40ads_H100_v5: 2.792, Standard_NC80adis_H100_v5: 5.584,
  Standard_ND96asr_v4: 10.8788, Standard_ND96amsr_A100_v4: 13.108,
  Standard_ND96isr_H100_v5: 39.328, Standard_ND96isr_H200_v5: 44.096,
};

/** The table's rule for a size it does not list: its on-demand price times the kind's discount. */
export function estimateSpotPrice(onDemand: number, type: { gpuCount: number; gpuModel?: string | undefined }): number {
  const datacenterGpu = type.gpuCount > 0 && type.gpuModel !== 'T4';
  return Math.round(onDemand * (datacenterGpu ? 0.4 : 0.2) * 10_000) / 10_000;
}
