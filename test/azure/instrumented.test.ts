import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { AzureError, type AzurePort, type ResourceRef } from '../../src/ports/azure.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { instrumentAzure } from '../../src/azure/instrumented.js';
import { createArmMetrics } from '../../src/metrics/arm.js';
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
    deleteDisk: async () => {
      throw new Error('not an AzureError');
    },
  };
}

async function counts(registry: Registry): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'azflex_arm_calls_total')!;
  const out: Record<string, number> = {};
  for (const v of metric.values as Array<{ labels: Record<string, string>; value: number }>) out[`${v.labels.operation}/${v.labels.code}`] = v.value;
  return out;
}

describe('instrumentAzure', () => {
  it('counts every call by operation and outcome on its own registry, and passes results and errors through', async () => {
    const clock = new VirtualClock(0);
    const registry = new Registry();
    const port = instrumentAzure(stubPort(clock), createArmMetrics(registry), clock);
    await port.getNic(ref);
    await port.getNic(ref);
    await expect(port.createVm({} as never)).rejects.toMatchObject({ code: 'OperationNotAllowed' });
    await expect(port.createNic({} as never)).rejects.toMatchObject({ code: 'SubnetIsFull' });
    await expect(port.deleteDisk(ref)).rejects.toThrow('not an AzureError');
    await runOnClock(clock, port.deleteNic(ref));
    expect(await counts(registry)).toEqual({
      'getNic/ok': 2,
      'createVm/OperationNotAllowed': 1,
      'createNic/SubnetIsFull': 1,
      'deleteDisk/Unknown': 1,
      'deleteNic/ok': 1,
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
    expect(await counts(registry)).toEqual({ 'getVm/TooManyRequests': 1 });
  });
});
