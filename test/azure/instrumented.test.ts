import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { AzureError, type AzurePort, type ResourceRef } from '../../src/ports/azure.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { instrumentAzure } from '../../src/azure/instrumented.js';
import { createArmMetrics, createArmRequestMetrics } from '../../src/azure/metrics.js';
import { resourceTypeOf } from '../../src/azure/clients.js';
import { SdkAzure } from '../../src/azure/sdk-adapter.js';
import { CannedArm, armError, fakeCredential, runOnClock } from './helpers/canned-arm.js';

const ref: ResourceRef = { subscriptionId: 's', resourceGroup: 'rg', name: 'n' };

function stubPort(clock: VirtualClock): AzurePort {
  const fail = (code: AzureError['code']) => async (): Promise<never> => {
    throw new AzureError(code, 409, 'x');
  };
  return {
    getNic: async () => undefined,
    createNic: fail('SubnetIsFull'),
    deleteNic: async () => {
      await new Promise<void>((resolve) => clock.setTimer(2500, resolve));
    },
    listNics: async () => [],
    getVm: async () => undefined,
    createVm: fail('OperationNotAllowed'),
    deleteVm: async () => undefined,
    listVms: async () => [],
    listDisks: async () => [],
    getDisk: async () => undefined,
    listUsages: async () => ({ regional: { used: 0, limit: 10 }, families: new Map() }),
    getCapacityReservationGroup: async () => undefined,
    deleteDisk: async () => {
      throw new Error('not an AzureError');
    },
  };
}

async function counts(registry: Registry): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'azflex_arm_calls_total')!;
  const out: Record<string, number> = {};
  for (const v of metric.values as Array<{ labels: Record<string, string>; value: number }>) out[`${v.labels.operation}/${v.labels.code}@${v.labels.subscription}`] = v.value;
  return out;
}

describe('instrumentAzure', () => {
  it('counts every call by operation and outcome on its own registry, and passes results and errors through', async () => {
    const clock = new VirtualClock(0);
    const registry = new Registry();
    const port = instrumentAzure(stubPort(clock), createArmMetrics(registry), clock);
    await port.getNic(ref);
    await port.getNic(ref);
    await expect(port.createVm({ ref } as never)).rejects.toMatchObject({ code: 'OperationNotAllowed' });
    await expect(port.createNic({ ref } as never)).rejects.toMatchObject({ code: 'SubnetIsFull' });
    await expect(port.deleteDisk(ref)).rejects.toThrow('not an AzureError');
    await runOnClock(clock, port.deleteNic(ref));
    expect(await counts(registry)).toEqual({
      'getNic/ok@s': 2,
      'createVm/OperationNotAllowed@s': 1,
      'createNic/SubnetIsFull@s': 1,
      'deleteDisk/Unknown@s': 1,
      'deleteNic/ok@s': 1,
    });
    const text = await registry.metrics();
    expect(text).toContain('azflex_arm_call_duration_seconds_sum{operation="deleteNic"} 2.5');
  });

  it('wraps the SDK adapter the same way (a throttled read counts as TooManyRequests)', async () => {
    const clock = new VirtualClock(0);
    const arm = new CannedArm(clock).on('GET', /virtualMachines\/n$/, armError(429, 'TooManyRequests', 'slow', { 'retry-after': '1' }));
    const registry = new Registry();
    const port = instrumentAzure(
      new SdkAzure({ clock, credential: fakeCredential, endpoint: 'https://arm.test', httpClient: arm, readRetry: { maxRetries: 0 } }),
      createArmMetrics(registry),
      clock,
    );
    await expect(runOnClock(clock, port.getVm(ref))).rejects.toMatchObject({ code: 'TooManyRequests' });
    expect(await counts(registry)).toEqual({ 'getVm/TooManyRequests@s': 1 });
  });

  it('counts every HTTP request of the SDK adapter (LRO polls included) and ARM\'s rate-limit headroom', async () => {
    const clock = new VirtualClock(0);
    const base = 'https://arm.test';
    const nic = { id: '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/n', name: 'n', location: 'eastus2', properties: { provisioningState: 'Succeeded', ipConfigurations: [] } };
    const arm = new CannedArm(clock)
      .on('GET', /networkInterfaces\/n$/, armError(404, 'NotFound', 'x'), { status: 200, body: nic })
      .on('PUT', /networkInterfaces\/n$/, {
        status: 201,
        headers: { 'azure-asyncoperation': `${base}/subscriptions/s/providers/Microsoft.Network/locations/eastus2/operations/op1`, 'retry-after': '1', 'x-ms-ratelimit-remaining-subscription-writes': '1199' },
        body: nic,
      })
      .on('GET', /operations\/op1$/, { status: 200, body: { status: 'Succeeded' }, headers: { 'x-ms-ratelimit-remaining-subscription-reads': '11999' } });
    const registry = new Registry();
    const azure = new SdkAzure({ clock, credential: fakeCredential, endpoint: base, httpClient: arm, requestMetrics: createArmRequestMetrics(registry) });
    await runOnClock(clock, azure.createNic({ ref, location: 'eastus2', subnetId: '/subnets/x', tags: {} }));
    const metrics = await registry.getMetricsAsJSON();
    const requests = metrics.find((m) => m.name === 'azflex_arm_http_requests_total')!.values as Array<{ labels: Record<string, string>; value: number }>;
    expect(Object.fromEntries(requests.map((v) => [`${v.labels.method} ${v.labels.resource} ${v.labels.status}`, v.value]))).toEqual({
      'GET Microsoft.Network/networkInterfaces 404': 1,
      'PUT Microsoft.Network/networkInterfaces 201': 1,
      'GET Microsoft.Network/operations 200': 1,
      'GET Microsoft.Network/networkInterfaces 200': 1,
    });
    const gauge = metrics.find((m) => m.name === 'azflex_arm_ratelimit_remaining')!.values as Array<{ labels: Record<string, string>; value: number }>;
    expect(Object.fromEntries(gauge.map((v) => [v.labels.kind, v.value]))).toEqual({ writes: 1199, reads: 11999 });
    expect(resourceTypeOf('https://x/subscriptions/s/providers/Microsoft.Compute/skus?api-version=1')).toBe('Microsoft.Compute/skus');
  });
});
