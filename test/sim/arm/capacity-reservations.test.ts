import { describe, expect, it } from 'vitest';
import { ComputeManagementClient, type VirtualMachine } from '@azure/arm-compute';
import { NetworkManagementClient } from '@azure/arm-network';
import type { FakeArmConfig, FakeArmRegionConfig } from '../../../src/sim/arm/types.js';
import { parseFakeArmConfig } from '../../../src/sim/arm/scenario-config.js';
import { FakeArm } from '../../../src/sim/arm/fake-arm.js';
import { simInstanceTypes } from '../../../src/sim/arm/sku-catalog.js';
import { SeededRandom, VirtualClock } from '../../../src/sim/virtual-clock.js';
import { CMP, credential, faceServer } from './face-client.js';
import { H200, RG, SUB, SUBNET, baseConfig, harness, nicSpec, ref, vmSpec } from './helpers.js';

/**
 * Capacity reservation groups through the official SDK over HTTPS: the group and its
 * reservations with their instance views, VMs created into a reservation (no quota check and
 * no allocation failure while it has room), overallocation beyond its quantity, refusals.
 */
const CRG_RG = 'rg-capacity';
const GROUP_ID = `/subscriptions/${SUB}/resourceGroups/${CRG_RG}/providers/Microsoft.Compute/capacityReservationGroups/gpu-crg`;
const H200_CORES = 96;
const H100 = 'Standard_ND96isr_H100_v5';

function config(region: Partial<FakeArmRegionConfig> = {}): FakeArmConfig {
  return {
    regions: [{
      subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 4000,
      // The reservation's 2 x 96 cores fill the family quota: a VM beyond them is refused for quota.
      familyQuotaCores: { standardNDSH200v5Family: 2 * H200_CORES },
      allocationFailureRate: 1,
      capacityReservationGroups: [{ resourceGroup: CRG_RG, name: 'gpu-crg', zones: ['1', '2'], reservations: [{ name: 'h200-z1', sku: H200, zone: '1', quantity: 2 }] }],
      ...region,
    }],
    subnets: [{ id: SUBNET, addressPrefix: '10.1.0.0/24' }],
    listLagSeconds: { appearSeconds: 0, disappearSeconds: 0 },
    latencyMs: { vmCreate: { min: 60_000, max: 60_000 }, vmCreateFailure: { min: 30_000, max: 30_000 }, vmDelete: { min: 30_000, max: 30_000 }, gpuVmDelete: { min: 30_000, max: 30_000 } },
  };
}

const serveFace = faceServer(7);

async function serve(cfg: FakeArmConfig = config()) {
  const { s, ca, call, run, advance } = await serveFace(cfg);
  const opts = { endpoint: s.endpoint, tlsOptions: { ca }, retryOptions: { maxRetries: 0 } };
  const compute = new ComputeManagementClient(credential, SUB, opts);
  const network = new NetworkManagementClient(credential, SUB, opts);
  const create = async (name: string, over: Partial<VirtualMachine> = {}) => {
    await run(network.networkInterfaces.beginCreateOrUpdateAndWait(RG, `${name}-nic`, { location: 'eastus2', ipConfigurations: [{ name: 'ipconfig1', subnet: { id: SUBNET } }] }));
    return run(compute.virtualMachines.beginCreateOrUpdateAndWait(RG, name, vmParams(name, over)));
  };
  return { compute, call, run, advance, create };
}

function vmParams(name: string, over: Partial<VirtualMachine>): VirtualMachine {
  return {
    location: 'eastus2',
    zones: ['1'],
    hardwareProfile: { vmSize: H200 },
    capacityReservation: { capacityReservationGroup: { id: GROUP_ID } },
    storageProfile: { imageReference: { publisher: 'Canonical', offer: 'ubuntu-24_04-lts', sku: 'server', version: 'latest' }, osDisk: { createOption: 'FromImage', deleteOption: 'Delete' } },
    osProfile: { computerName: name, adminUsername: 'azureuser', linuxConfiguration: { disablePasswordAuthentication: true, ssh: { publicKeys: [{ path: '/home/azureuser/.ssh/authorized_keys', keyData: 'ssh-ed25519 AAAA' }] } } },
    networkProfile: { networkInterfaces: [{ id: `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/networkInterfaces/${name}-nic`, deleteOption: 'Delete' }] },
    ...over,
  };
}

const vmId = (name: string) => `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachines/${name}`;

describe('capacity reservation groups', () => {
  it('serves the group and its reservations with their instance views; the reservation holds its quota from the start', async () => {
    const { compute, run, call } = await serve();
    const group = await run(compute.capacityReservationGroups.get(CRG_RG, 'gpu-crg', { expand: 'instanceView' }));
    expect([group.id, group.location, group.zones, group.capacityReservations?.map((r) => r.id)]).toEqual([GROUP_ID, 'eastus2', ['1', '2'], [`${GROUP_ID}/capacityReservations/h200-z1`]]);
    expect(group.instanceView?.capacityReservations).toEqual([expect.objectContaining({ name: 'h200-z1', utilizationInfo: { currentCapacity: 2, virtualMachinesAllocated: [] } })]);
    const listed = [];
    for await (const r of compute.capacityReservations.listByCapacityReservationGroup(CRG_RG, 'gpu-crg')) listed.push(r);
    expect(listed.map((r) => [r.name, r.sku.name, r.sku.capacity, r.zones, r.provisioningState, r.instanceView])).toEqual([['h200-z1', H200, 2, ['1'], 'Succeeded', undefined]]);
    const inGroups = [];
    for await (const g of compute.capacityReservationGroups.listByResourceGroup(CRG_RG)) inGroups.push(g.name);
    expect(inGroups).toEqual(['gpu-crg']);
    const usages = await call('GET', `/subscriptions/${SUB}/providers/Microsoft.Compute/locations/eastus2/usages?api-version=${CMP}`);
    const family = (usages.json['value'] as Array<{ name: { value: string }; currentValue: number }>).find((u) => u.name.value === 'standardNDSH200v5Family');
    expect(family?.currentValue).toBe(2 * H200_CORES);
    // Writes of groups and reservations are not modelled: the scenario declares them.
    expect((await call('DELETE', `${GROUP_ID}?api-version=${CMP}`)).status).toBe(501);
    await expect(run(compute.capacityReservationGroups.get(CRG_RG, 'nope'))).rejects.toMatchObject({ statusCode: 404 });
  });

  it('a VM into a reservation with room takes a slot (no quota, no allocation failure); beyond the quantity it is overallocated and admitted like any VM', async () => {
    const { compute, run, create } = await serve();
    const a = await create('a');
    const b = await create('b');
    expect([a.provisioningState, b.provisioningState, a.capacityReservation?.capacityReservationGroup?.id]).toEqual(['Succeeded', 'Succeeded', GROUP_ID]);
    const r = await run(compute.capacityReservations.get(CRG_RG, 'gpu-crg', 'h200-z1', { expand: 'instanceView' }));
    expect(r.instanceView?.utilizationInfo).toEqual({ currentCapacity: 2, virtualMachinesAllocated: [{ id: vmId('a') }, { id: vmId('b') }] });
    expect(r.virtualMachinesAssociated).toEqual([{ id: vmId('a') }, { id: vmId('b') }]);
    // The third is overallocated: the family quota is the reservation's, so it is refused for quota.
    await expect(create('c')).rejects.toMatchObject({ statusCode: 409, code: 'OperationNotAllowed', message: expect.stringContaining('quota') });
    // Once a reserved VM is gone its slot is free again.
    await run(compute.virtualMachines.beginDeleteAndWait(RG, 'a'));
    expect((await create('d')).provisioningState).toBe('Succeeded');
  });

  it('an overallocated VM uses regular quota and capacity: its allocation can fail', async () => {
    const { compute, run, create } = await serve(config({ familyQuotaCores: { standardNDSH200v5Family: 3 * H200_CORES } }));
    await create('a');
    await create('b');
    await expect(create('c')).rejects.toMatchObject({ message: expect.stringContaining('AllocationFailed') });
    const r = await run(compute.capacityReservations.get(CRG_RG, 'gpu-crg', 'h200-z1', { expand: 'instanceView' }));
    expect(r.instanceView?.utilizationInfo?.virtualMachinesAllocated).toEqual([{ id: vmId('a') }, { id: vmId('b') }]);
  });

  it('refuses a VM naming a group that is not there, in another region, or without a reservation of its size and zone', async () => {
    const { create } = await serve();
    await expect(create('zone2', { zones: ['2'] })).rejects.toMatchObject({ statusCode: 400, code: 'InvalidParameter', message: expect.stringContaining('no capacity reservation for VM size Standard_ND96isr_H200_v5 in zone 2') });
    await expect(create('regional', { zones: undefined })).rejects.toMatchObject({ statusCode: 400, message: expect.stringContaining('without a zone') });
    await expect(create('size', { hardwareProfile: { vmSize: 'Standard_D2s_v5' } })).rejects.toMatchObject({ statusCode: 400, message: expect.stringContaining('no capacity reservation for VM size Standard_D2s_v5') });
    await expect(create('missing', { capacityReservation: { capacityReservationGroup: { id: `${GROUP_ID}x` } } })).rejects.toMatchObject({ statusCode: 400, message: expect.stringContaining('was not found') });
  });

  it('the AzurePort face: a VM created into the group takes a slot and shows in the group\'s read until it is deleted', async () => {
    const cfg = baseConfig();
    cfg.regions[0]!.capacityReservationGroups = [{ resourceGroup: RG, name: 'regional', reservations: [{ name: 'h200', sku: H200, quantity: 1 }] }];
    const h = harness(cfg);
    const id = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Compute/capacityReservationGroups/regional`;
    await h.run(h.arm.createNic(nicSpec('a')));
    const vm = await h.run(h.arm.createVm(vmSpec('a', { capacityReservationGroupId: id })));
    const read = async () => (await h.run(h.arm.getCapacityReservationGroup(ref('regional'))))?.reservations[0];
    expect(await read()).toMatchObject({ vmSize: H200, capacity: 1, allocatedVmIds: [vm.id] });
    expect((await read())?.zone).toBeUndefined();
    await h.run(h.arm.deleteVm(ref(vm.name)));
    await h.advance(30 * 60_000);
    expect((await read())?.allocatedVmIds).toEqual([]);
    expect(await h.run(h.arm.getCapacityReservationGroup(ref('other')))).toBeUndefined();
  });

  it('the configuration refuses a zonal group reservation without one of its zones, and two reservations of one size', () => {
    const group = (reservations: unknown[], zones?: string[]) => ({ ...config(), regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: {}, capacityReservationGroups: [{ resourceGroup: CRG_RG, name: 'g', ...(zones ? { zones } : {}), reservations }] }] });
    expect(() => parseFakeArmConfig(group([{ name: 'r', sku: H200, quantity: 1 }], ['1']), 'x')).toThrow(/zonal group/);
    expect(() => parseFakeArmConfig(group([{ name: 'r', sku: H200, quantity: 1 }, { name: 's', sku: H200, quantity: 1 }]), 'x')).toThrow(/one reservation per size/);
    expect(parseFakeArmConfig(group([{ name: 'r', sku: H200, quantity: 1 }]), 'x').regions[0]?.capacityReservationGroups?.[0]?.name).toBe('g');
  });

  it('no reservation of a size the subscription may not deploy there: restricted in the location or the zone, or made unavailable', () => {
    // Resource SKUs of the HTTPS face's catalog: H200 is restricted in westus2, H100 in zone 2 of eastus.
    const world = (location: string, sku: string, zone?: string, unavailableSkus?: string[]) => new FakeArm({
      clock: new VirtualClock(0), random: new SeededRandom(1), instanceTypes: simInstanceTypes(),
      config: {
        regions: [{
          subscriptionId: SUB, location, familyQuotaCores: {}, ...(unavailableSkus ? { unavailableSkus } : {}),
          capacityReservationGroups: [{ resourceGroup: CRG_RG, name: 'g', ...(zone ? { zones: [zone] } : {}), reservations: [{ name: 'r', sku, ...(zone ? { zone } : {}), quantity: 1 }] }],
        }],
        subnets: [],
      },
    });
    expect(() => world('westus2', H200)).toThrow(/Standard_ND96isr_H200_v5 is not available in westus2 for this subscription/);
    expect(() => world('eastus', H100, '2')).toThrow(/not available in eastus zone 2/);
    expect(() => world('eastus2', H200, undefined, [H200])).toThrow(/not available in eastus2/);
    expect(world('eastus', H100, '1').capacityReservationGroupGet({ subscriptionId: SUB, resourceGroup: CRG_RG, name: 'g' })?.reservations).toHaveLength(1);
    expect(world('westus3', H200).capacityReservationGroupGet({ subscriptionId: SUB, resourceGroup: CRG_RG, name: 'g' })?.reservations).toHaveLength(1);
  });
});
