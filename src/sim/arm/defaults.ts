import type { ComputeThrottlePolicy, FakeArmConfig, FakeArmLatency } from './types.js';

/**
 * Latencies observed on ARM for these operations (order of magnitude, not a promise; the
 * long-running ones are sourced in docs/fidelity.md): a VM create takes 1-4 minutes, a GPU
 * VM delete 2-8 minutes (the host is deprovisioned), a NIC delete is an async operation of
 * a few seconds.
 */
export const DEFAULT_LATENCY_MS: Readonly<FakeArmLatency> = {
  read: { min: 50, max: 200 },
  nicPut: { min: 1_000, max: 3_000 },
  nicDelete: { min: 100, max: 500 },
  nicDeleteOperation: { min: 1_000, max: 2_500 },
  vmPut: { min: 300, max: 1_500 },
  vmCreate: { min: 60_000, max: 240_000 },
  vmCreateFailure: { min: 20_000, max: 60_000 },
  vmDelete: { min: 30_000, max: 90_000 },
  gpuVmDelete: { min: 120_000, max: 480_000 },
  diskDelete: { min: 1_000, max: 5_000 },
};

/** Every latency zero: handy for unit tests that only care about state. */
export const ZERO_LATENCY_MS: Readonly<FakeArmLatency> = {
  read: { min: 0, max: 0 },
  nicPut: { min: 0, max: 0 },
  nicDelete: { min: 0, max: 0 },
  nicDeleteOperation: { min: 0, max: 0 },
  vmPut: { min: 0, max: 0 },
  vmCreate: { min: 0, max: 0 },
  vmCreateFailure: { min: 0, max: 0 },
  vmDelete: { min: 0, max: 0 },
  gpuVmDelete: { min: 0, max: 0 },
  diskDelete: { min: 0, max: 0 },
};

export const DEFAULT_RESERVATION_SECONDS = 180;

/** Default quotas of a subscription (docs/fidelity.md): finite everywhere, none for GPU families. */
export const DEFAULT_QUOTA = { familyCores: 100, gpuFamilyCores: 0, regionalCores: 100, lowPriorityCores: 100 } as const;

/** VM families ARM ships with a zero default quota: the N-series GPU families. */
export function isGpuFamily(family: string): boolean {
  return /^standardN[CDGV]/i.test(family);
}

export const DEFAULT_LIST_PAGE_SIZE = 100;
/** How long ARM's list cache trails the resources (GET is always current). */
export const DEFAULT_LIST_LAG_SECONDS = { appearSeconds: 5, disappearSeconds: 5 } as const;

/**
 * Compute RP throttling policies per subscription and region, as they show up in
 * x-ms-ratelimit-remaining-resource (names as ARM prints them; limits of that order).
 */
export const COMPUTE_THROTTLE_POLICIES: readonly ComputeThrottlePolicy[] = [
  { name: 'PutVM3Min', ops: ['vm.put'], limit: 240, windowSeconds: 180 },
  { name: 'PutVM30Min', ops: ['vm.put'], limit: 1200, windowSeconds: 1800 },
  { name: 'DeleteVM3Min', ops: ['vm.delete'], limit: 240, windowSeconds: 180 },
  { name: 'DeleteVM30Min', ops: ['vm.delete'], limit: 1200, windowSeconds: 1800 },
  { name: 'LowCostGet3Min', ops: ['vm.get'], limit: 4000, windowSeconds: 180 },
  { name: 'LowCostGet30Min', ops: ['vm.get'], limit: 32000, windowSeconds: 1800 },
  { name: 'HighCostGet3Min', ops: ['vm.list'], limit: 160, windowSeconds: 180 },
  { name: 'HighCostGet30Min', ops: ['vm.list'], limit: 1600, windowSeconds: 1800 },
];
/** Compute answers a throttled call with Retry-After up to 20 minutes. */
export const MAX_COMPUTE_RETRY_AFTER_SECONDS = 1200;

/**
 * api-versions the fake serves per provider (what ARM publishes; the SDKs azflex ships use
 * the newest). Anything else is refused the way ARM refuses it.
 */
export const SUPPORTED_API_VERSIONS: Readonly<Record<string, readonly string[]>> = {
  'microsoft.network': [
    '2022-07-01', '2022-09-01', '2022-11-01', '2023-02-01', '2023-04-01', '2023-05-01', '2023-06-01', '2023-09-01',
    '2023-11-01', '2024-01-01', '2024-03-01', '2024-05-01', '2024-07-01', '2024-10-01', '2025-01-01', '2025-03-01',
    '2025-05-01', '2025-07-01', '2026-01-01',
  ],
  'microsoft.compute': [
    '2021-07-01', '2022-03-01', '2022-08-01', '2022-11-01', '2023-03-01', '2023-04-02', '2023-07-01', '2023-09-01',
    '2023-10-02', '2024-03-01', '2024-03-02', '2024-07-01', '2024-11-01', '2025-01-02', '2025-02-01', '2025-04-01',
    '2025-11-01', '2025-12-03', '2026-03-02', '2026-04-01',
  ],
  'microsoft.resources': ['2021-04-01', '2022-09-01', '2023-07-01', '2024-03-01', '2024-07-01', '2024-11-01', '2025-04-01'],
};
export const DEFAULT_TIMEOUT_AFTER_EFFECT_RATE = 0.5;

export const DEFAULT_SUBSCRIPTION_ID = '00000000-0000-4000-8000-000000000001';
export const DEFAULT_RESOURCE_GROUP = 'azflex-eastus2';
export const DEFAULT_SUBNET_ID =
  `/subscriptions/${DEFAULT_SUBSCRIPTION_ID}/resourceGroups/${DEFAULT_RESOURCE_GROUP}/providers/Microsoft.Network/virtualNetworks/azflex-vnet/subnets/nodes`;

/**
 * The `default` scenario: the seed's live setup, one eastus2 region whose H200 family
 * quota fits exactly two ND96isr_H200_v5 VMs (2 x 96 cores), and one /24 subnet.
 */
export function defaultFakeArmConfig(): FakeArmConfig {
  return {
    regions: [
      {
        subscriptionId: DEFAULT_SUBSCRIPTION_ID,
        location: 'eastus2',
        familyQuotaCores: { standardNDSH200v5Family: 192 },
        regionalQuotaCores: 350,
      },
    ],
    subnets: [{ id: DEFAULT_SUBNET_ID, addressPrefix: '10.1.0.0/24' }],
    reservationSeconds: DEFAULT_RESERVATION_SECONDS,
  };
}
