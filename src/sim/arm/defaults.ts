import type { FakeArmConfig, FakeArmLatency } from './types.js';

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
      },
    ],
    subnets: [{ id: DEFAULT_SUBNET_ID, addressPrefix: '10.1.0.0/24' }],
    reservationSeconds: DEFAULT_RESERVATION_SECONDS,
  };
}
