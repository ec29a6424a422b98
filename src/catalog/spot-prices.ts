/**
 * Spot prices, used ONLY to rank offerings (spot before on-demand when cheaper, as Karpenter
 * does); azflex never bills or reports cost from them.
 *
 * One rule, not a table: a size's on-demand price (RETAIL_PRICES_USD_PER_HOUR, eastus, Linux,
 * or its override) times the usual spot discount of its kind: 80 % off for general-purpose,
 * memory and compute sizes and T4 GPUs, 60 % off for datacenter GPUs (V100, A100, H100, H200),
 * rounded to 4 decimals. An approximation, not a quote: spot prices move with demand per
 * region and hour, and a table of them could not be fetched where this was written. The public
 * Azure Retail Prices API (https://prices.azure.com/api/retail/prices, documented at
 * https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices)
 * gives the current ones: serviceName "Virtual Machines", priceType "Consumption", skuName
 * ending in " Spot", productName without "Windows", keyed by armSkuName, value retailPrice.
 * Operators set any of them (the chart's `prices.spot` map, read with --price-overrides),
 * e.g. with that API's answer for their region.
 *
 * Whether a size is offered as spot at all comes from Resource SKUs (capability
 * LowPriorityCapable).
 */

/** A size's spot price: its on-demand price times its kind's discount. */
export function estimateSpotPrice(onDemand: number, type: { gpuCount: number; gpuModel?: string | undefined }): number {
  const datacenterGpu = type.gpuCount > 0 && type.gpuModel !== 'T4';
  return Math.round(onDemand * (datacenterGpu ? 0.4 : 0.2) * 10_000) / 10_000;
}
