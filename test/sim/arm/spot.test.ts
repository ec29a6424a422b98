import { describe, expect, it } from 'vitest';
import { AzureError } from '../../../src/ports/azure.js';
import { ZERO_LATENCY_MS } from '../../../src/sim/arm/defaults.js';
import type { VmCreateRequest } from '../../../src/sim/arm/model.js';
import { classifyAzureError } from '../../../src/azure/errors.js';
import { STATIC_INSTANCE_TYPES } from '../../../src/catalog/skus.js';
import { FakeArm } from '../../../src/sim/arm/fake-arm.js';
import { SeededRandom, VirtualClock } from '../../../src/sim/virtual-clock.js';
import { baseConfig, harness, H200, nicId, nicSpec, ref, SUB, SUBNET, T0, vmSpec } from './helpers.js';
import { legacyNamesFor } from '../../../src/azure/naming.js';

/**
 * ARM's checks of a Spot VM PUT, each with the code and text of "Error messages for Azure Spot
 * Virtual Machines and scale sets", and spot capacity by knob (docs/fidelity.md).
 */
const config = () => baseConfig({
  latencyMs: { ...ZERO_LATENCY_MS },
  regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: { standardNDSH200v5Family: 192 }, regionalQuotaCores: 1000, lowPriorityQuotaCores: 1000 }],
});

function refusal(fn: () => unknown): AzureError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AzureError);
    return e as AzureError;
  }
  throw new Error('expected a refusal');
}

const request = (claim: string, over: Partial<VmCreateRequest>): VmCreateRequest => ({
  ref: ref(legacyNamesFor(claim).vm), location: 'eastus2', vmSize: H200, nicIds: [nicId(claim)], nicDeleteOption: 'Delete',
  osDiskName: legacyNamesFor(claim).osDisk, osDiskSizeGB: 256, osDiskDeleteOption: 'Delete',
  image: { reference: { publisher: 'p', offer: 'o', sku: 's', version: 'latest' } }, adminUsername: 'azureuser', sshPublicKeys: [], priority: 'Regular', tags: {},
  ...over,
});

describe('fake ARM: Spot VM requests', () => {
  it('refuses an eviction policy or a max price on a Regular VM, and a max price that is neither -1 nor above zero', () => {
    const { arm } = harness(config());
    arm.nicPut(nicSpec('a'));
    expect(refusal(() => arm.beginCreateVm(request('a', { evictionPolicy: 'Delete' }))).info.armCode).toBe('EvictionPolicyCanBeSetOnlyOnAzureSpotVirtualMachines');
    expect(refusal(() => arm.beginCreateVm(request('a', { maxPrice: 1 }))).info.armCode).toBe('MaxPriceIsSupportedOnlyForAzureSpotVirtualMachines');
    const invalid = refusal(() => arm.beginCreateVm(request('a', { priority: 'Spot', evictionPolicy: 'Delete', maxPrice: 0 })));
    expect({ code: invalid.code, status: invalid.statusCode, armCode: invalid.info.armCode }).toEqual({ code: 'InvalidParameter', status: 400, armCode: 'MaxPriceValueInvalid' });
  });

  it('refuses a max price below the current spot price; -1 or a price at or above it creates the VM with its max price', async () => {
    const h = harness(config());
    const spotPrice = STATIC_INSTANCE_TYPES.find((t) => t.name === H200)!.spotPricePerHour!;
    h.arm.nicPut(nicSpec('a'));
    const low = refusal(() => h.arm.beginCreateVm(request('a', { priority: 'Spot', evictionPolicy: 'Delete', maxPrice: spotPrice / 2 })));
    expect(low.code).toBe('SpotPriceGreaterThanProvidedMaxPrice');
    expect(low.message).toContain(`lower than the current spot price '${spotPrice} USD'`);
    expect(classifyAzureError(low, { capacityType: 'spot' })).toMatchObject({ kind: 'insufficientCapacity', ttlSeconds: 3600 });
    await h.advance(181_000); // the refused PUT reserved the NIC
    const vm = await h.run(h.arm.createVm(vmSpec('a', { priority: 'Spot', spotMaxPrice: spotPrice })));
    expect(vm.provisioningState).toBe('Succeeded');
    expect(h.arm.vmGet(ref(legacyNamesFor('a').vm))).toMatchObject({ priority: 'Spot', evictionPolicy: 'Delete', maxPrice: spotPrice });
  });

  it('refuses spot for a size Resource SKUs does not call LowPriorityCapable', () => {
    const noSpot = STATIC_INSTANCE_TYPES.map((t) => (t.name === H200 ? { ...t, spotPricePerHour: undefined } : t));
    const arm = new FakeArm({ clock: new VirtualClock(T0), random: new SeededRandom(1), config: config(), instanceTypes: noSpot });
    arm.nicPut(nicSpec('a'));
    const e = refusal(() => arm.beginCreateVm(request('a', { priority: 'Spot', evictionPolicy: 'Delete' })));
    expect({ code: e.code, status: e.statusCode }).toEqual({ code: 'AzureSpotIsNotSupportedForThisVMSize', status: 400 });
    expect(classifyAzureError(e, { capacityType: 'spot' })).toMatchObject({ kind: 'insufficientCapacity', ttlSeconds: 23 * 3600 });
  });

  it('spotCapacity takes spot capacity away (SkuNotAvailable, a 1 h spot mark) while on-demand still creates, and gives it back', () => {
    const { arm } = harness(config());
    arm.injectFault({ kind: 'spotCapacity', location: 'eastus2', available: false });
    arm.nicPut(nicSpec('a'));
    const e = refusal(() => arm.beginCreateVm(request('a', { priority: 'Spot', evictionPolicy: 'Delete' })));
    expect({ code: e.code, status: e.statusCode }).toEqual({ code: 'SkuNotAvailable', status: 409 });
    expect(classifyAzureError(e, { capacityType: 'spot' })).toMatchObject({ kind: 'insufficientCapacity', ttlSeconds: 3600 });
    arm.nicPut(nicSpec('b'));
    expect(arm.beginCreateVm(request('b', {})).created).toBe(true);
    arm.injectFault({ kind: 'spotCapacity', location: 'eastus2', available: true });
    arm.nicPut(nicSpec('c'));
    expect(arm.beginCreateVm(request('c', { priority: 'Spot', evictionPolicy: 'Delete' })).created).toBe(true);
  });
});
