import { describe, expect, it } from 'vitest';
import { AzureError } from '../../../src/ports/azure.js';
import { ZERO_LATENCY_MS } from '../../../src/sim/arm/defaults.js';
import { legacyNamesFor, armId } from '../../../src/azure/naming.js';
import { baseConfig, flush, H200, harness, nicId, nicSpec, observe, ref, SUB, SUBNET, T0, vmSpec } from './helpers.js';

const zero = (over = {}) => baseConfig({ latencyMs: { ...ZERO_LATENCY_MS }, ...over });

function azErr(e: unknown): AzureError {
  expect(e).toBeInstanceOf(AzureError);
  return e as AzureError;
}

describe('FakeArm NICs', () => {
  it('allocates the lowest free IP after the 4 reserved addresses, and PUT is idempotent', async () => {
    const h = harness(zero());
    const { arm } = h;
    const a = await h.run(arm.createNic(nicSpec('a')));
    const b = await h.run(arm.createNic(nicSpec('b')));
    expect(a.privateIpAddress).toBe('10.1.0.4');
    expect(b.privateIpAddress).toBe('10.1.0.5');
    expect(a.provisioningState).toBe('Succeeded');
    expect(a.subnetId).toBe(SUBNET);
    const again = await h.run(arm.createNic(nicSpec('a')));
    expect(again).toEqual(a);
    expect(arm.subnetIpsUsed(SUBNET)).toBe(2);
    expect(arm.armCalls()['nic.put']).toEqual({ '201': 2, '200': 1 });
    // callers cannot mutate internal state through returned objects: views are frozen
    expect(() => {
      a.tags['x'] = 'y';
    }).toThrow(TypeError);
    expect(() => {
      a.privateIpAddress = '10.9.9.9';
    }).toThrow(TypeError);
    expect((await h.run(arm.getNic(ref(legacyNamesFor('a').nic))))?.privateIpAddress).toBe('10.1.0.4');
  });

  it('fills a /24 at exactly 251 NICs, then answers 400 SubnetIsFull; a freed address is reused first', async () => {
    const h = harness(zero());
    const { arm } = h;
    for (let i = 0; i < 251; i++) await h.run(arm.createNic(nicSpec(`n${i}`)));
    expect(arm.subnetIpsUsed(SUBNET)).toBe(251);
    const last = await h.run(arm.getNic(ref(legacyNamesFor('n250').nic)));
    expect(last?.privateIpAddress).toBe('10.1.0.254');
    const full = await h.run(arm.createNic(nicSpec('overflow'))).catch((e: unknown) => e);
    expect(azErr(full).code).toBe('SubnetIsFull');
    expect(azErr(full).statusCode).toBe(400);
    expect(azErr(full).message).toContain('10.1.0.0/24 does not have enough capacity for 1 IP addresses');
    await h.run(arm.deleteNic(ref(legacyNamesFor('n10').nic)));
    const reused = await h.run(arm.createNic(nicSpec('overflow')));
    expect(reused.privateIpAddress).toBe('10.1.0.14');
    expect(arm.peakSubnetIpsUsed(SUBNET)).toBe(251);
    expect(arm.peakSubnetIpsUsed()).toBe(251);
    expect(arm.armCalls()['nic.put']).toEqual({ '201': 252, '400': 1 });
  });

  it('treats DELETE of a missing NIC as success but counts it as 404; GET of a missing NIC is undefined', async () => {
    const h = harness(zero());
    const { arm } = h;
    await expect(h.run(arm.deleteNic(ref('nope')))).resolves.toBeUndefined();
    await expect(h.run(arm.getNic(ref('nope')))).resolves.toBeUndefined();
    expect(arm.armCalls()['nic.delete']).toEqual({ '404': 1 });
    expect(arm.armCalls()['nic.get']).toEqual({ '404': 1 });
  });

  it('rejects a NIC in an unknown subnet with InvalidParameter', async () => {
    const h = harness(zero());
    const { arm } = h;
    const err = await h.run(arm.createNic(nicSpec('a', { subnetId: SUBNET + 'x' }))).catch((e: unknown) => e);
    expect(azErr(err).code).toBe('InvalidParameter');
  });

  it('lists NICs of one resource group only', async () => {
    const h = harness(zero());
    const { arm } = h;
    await h.run(arm.createNic(nicSpec('a')));
    await h.run(arm.createNic(nicSpec('b', { ref: ref(legacyNamesFor('b').nic, 'other-rg') })));
    expect((await h.run(arm.listNics({ subscriptionId: SUB, resourceGroup: 'RG-GPU' }))).map((n) => n.name)).toEqual([legacyNamesFor('a').nic]);
    expect(arm.nicList({ subscriptionId: SUB }).length).toBe(2);
  });
});

describe('FakeArm NIC reservation (the upstream leak)', () => {
  it('a VM PUT refused for quota still reserves the NIC: delete refused until exactly 180 s', async () => {
    const h = harness(zero({ regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 100_000, familyQuotaCores: { standardNDSH200v5Family: 0 } }] }));
    const { arm } = h;
    await h.run(arm.createNic(nicSpec('a')));
    const err = azErr(await h.run(arm.createVm(vmSpec('a'))).catch((e: unknown) => e));
    expect(err.code).toBe('OperationNotAllowed');
    expect(err.statusCode).toBe(409);
    expect(err.message).toContain(
      'Operation could not be completed as it results in exceeding approved standardNDSH200v5Family Cores quota. ' +
        'Additional details - Deployment Model: Resource Manager, Location: eastus2, Current Limit: 0, Current Usage: 0, ' +
        'Additional Required: 96, (Minimum) New Limit Required: 96.',
    );
    const vmId = armId(ref(legacyNamesFor('a').vm), 'Microsoft.Compute/virtualMachines');
    expect(arm.snapshot().reservations).toEqual([{ nicId: nicId('a'), vmId, until: T0 + 180_000 }]);

    await h.advance(179_999);
    const refused = azErr(await h.run(arm.deleteNic(ref(legacyNamesFor('a').nic))).catch((e: unknown) => e));
    expect(refused.code).toBe('NicReservedForAnotherVm');
    expect(refused.statusCode).toBe(400);
    expect(refused.message).toBe(
      'NicReservedForAnotherVm: Nic(s) in request is reserved for another Virtual Machine for 180 seconds. Please provide ' +
        `another nic(s) or retry after 180 seconds. Reserved VM: ${vmId}`,
    );
    await h.advance(1);
    await h.run(arm.deleteNic(ref(legacyNamesFor('a').nic)));
    expect(arm.nicList({ subscriptionId: SUB, resourceGroup: 'rg-gpu' })).toEqual([]);
    expect(arm.reapTimesSeconds()).toEqual([180]);
    expect(arm.armCalls()['nic.delete']).toEqual({ '400': 1, '202': 1 });
    expect(arm.armCalls()['vm.put']).toEqual({ '409': 1 });
    expect(arm.vmList({ subscriptionId: SUB, resourceGroup: 'rg-gpu' })).toEqual([]);
  });

  it('honours a custom reservationSeconds in the refusal and the deadline', async () => {
    const h = harness(zero({ reservationSeconds: 30, regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 100_000, familyQuotaCores: { standardNDSH200v5Family: 0 } }] }));
    await h.run(h.arm.createNic(nicSpec('a')));
    await h.run(h.arm.createVm(vmSpec('a'))).catch(() => undefined);
    const e = azErr(await h.run(h.arm.deleteNic(ref(legacyNamesFor('a').nic))).catch((x: unknown) => x));
    expect(e.message).toContain('for 30 seconds');
    await h.advance(30_000);
    await expect(h.run(h.arm.deleteNic(ref(legacyNamesFor('a').nic)))).resolves.toBeUndefined();
  });

  it('a NIC reserved by one VM is refused to a VM PUT of another name, but the same VM may retry', async () => {
    const h = harness(zero({ regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 100_000, familyQuotaCores: { standardNDSH200v5Family: 0 } }] }));
    const { arm } = h;
    await h.run(arm.createNic(nicSpec('a')));
    await h.run(arm.createVm(vmSpec('a'))).catch(() => undefined);
    const other = azErr(await h.run(arm.createVm(vmSpec('b', { nicId: nicId('a') }))).catch((e: unknown) => e));
    expect(other.code).toBe('NicReservedForAnotherVm');
    arm.injectFault({ kind: 'quota', location: 'eastus2', family: 'standardNDSH200v5Family', cores: 96 });
    await h.advance(10_000);
    const vm = await h.run(arm.createVm(vmSpec('a')));
    expect(vm.provisioningState).toBe('Succeeded');
    // The retry renewed the reservation from its own PUT time.
    expect(arm.snapshot().reservations[0]?.until).toBe(T0 + 10_000 + 180_000);
  });

  it('reserves the NIC on SkuNotAvailable (configured unavailable, or not offered in the region)', async () => {
    const h = harness(
      zero({
        regions: [
          { subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 100_000, familyQuotaCores: { standardNDSH200v5Family: 96_000 }, unavailableSkus: [H200] },
          { subscriptionId: SUB, location: 'westus', familyQuotaCores: { standardNDSH200v5Family: 96_000 } },
        ],
      }),
    );
    const { arm } = h;
    await h.run(arm.createNic(nicSpec('a')));
    const e1 = azErr(await h.run(arm.createVm(vmSpec('a'))).catch((e: unknown) => e));
    expect(e1.code).toBe('SkuNotAvailable');
    expect(e1.statusCode).toBe(409);
    expect(e1.message).toContain(`Following SKUs have failed for Capacity Restrictions: ${H200}' is currently not available in location 'eastus2'`);
    expect(arm.snapshot().reservations).toHaveLength(1);

    await h.run(arm.createNic(nicSpec('w', { location: 'westus' })));
    const e2 = azErr(await h.run(arm.createVm(vmSpec('w', { location: 'westus' }))).catch((e: unknown) => e));
    expect(e2.code).toBe('SkuNotAvailable'); // H200 is not offered in westus by the catalog
    expect(arm.snapshot().reservations).toHaveLength(2);

    arm.injectFault({ kind: 'skuUnavailable', location: 'eastus2', sku: H200, unavailable: false });
    await h.advance(180_000);
    await expect(h.run(arm.createVm(vmSpec('a')))).resolves.toMatchObject({ provisioningState: 'Succeeded' });
  });

  it('applies the Total Regional Cores quota with its own message', async () => {
    const h = harness(zero({ regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: { standardNDSH200v5Family: 96_000 }, regionalQuotaCores: 100 }] }));
    const { arm } = h;
    await h.run(arm.createNic(nicSpec('a')));
    await h.run(arm.createNic(nicSpec('b')));
    await h.run(arm.createVm(vmSpec('a')));
    const e = azErr(await h.run(arm.createVm(vmSpec('b'))).catch((x: unknown) => x));
    expect(e.code).toBe('OperationNotAllowed');
    expect(e.message).toContain('exceeding approved Total Regional Cores quota. Additional details - Deployment Model: Resource Manager, Location: eastus2, Current Limit: 100, Current Usage: 96, Additional Required: 96, (Minimum) New Limit Required: 192.');
  });
});

describe('FakeArm VM lifecycle', () => {
  it('creates with default latencies: Creating, then Succeeded in 60-120 s with an OS disk managed by the VM', async () => {
    const h = harness(baseConfig());
    const { arm } = h;
    const nicP = observe(arm.createNic(nicSpec('a')));
    await h.advance(3_000);
    expect(nicP.done).toBe(true);
    const start = h.clock.now();
    const vmP = observe(arm.createVm(vmSpec('a')));
    await h.advance(2_000);
    const during = await arm.vmGet(ref(legacyNamesFor('a').vm));
    expect(during?.provisioningState).toBe('Creating');
    expect(arm.nicGet(ref(legacyNamesFor('a').nic))?.virtualMachineId).toBe(during?.id);
    expect(arm.snapshot().quota).toEqual([{ subscriptionId: SUB, location: 'eastus2', family: 'standardNDSH200v5Family', usedCores: 96, limitCores: 192 }]);
    await h.advance(57_000);
    expect(vmP.done).toBe(false);
    await h.advance(61_000);
    expect(vmP.done).toBe(true);
    const vm = vmP.value!;
    expect(vm.provisioningState).toBe('Succeeded');
    const callsBefore = JSON.stringify(arm.armCalls());
    expect(arm.currentVms()).toEqual([vm]);
    expect(JSON.stringify(arm.armCalls())).toBe(callsBefore); // the world's view is not an ARM call
    expect(vm.nicIds).toEqual([nicId('a')]);
    const provisioned = h.events.find((e) => e.op === 'vm.provisioned');
    expect(provisioned!.t - start).toBeGreaterThanOrEqual(60_000);
    expect(provisioned!.t - start).toBeLessThanOrEqual(120_000);
    const disks = await h.run(arm.listDisks({ subscriptionId: SUB, resourceGroup: 'rg-gpu' }));
    // the OS disk starts with the VM's tags, as ARM does
    expect(disks).toEqual([{ id: armId(ref(legacyNamesFor('a').osDisk), 'Microsoft.Compute/disks'), name: legacyNamesFor('a').osDisk, managedBy: vm.id, tags: vm.tags }]);
    // customData is a secret: never kept
    expect(JSON.stringify(arm.snapshot())).not.toContain('secret-bootstrap-token');
    expect(JSON.stringify(arm.vmGet(ref(legacyNamesFor('a').vm)))).not.toContain('secret-bootstrap-token');
  });

  it('refuses a new VM whose OS disk name is taken (ConflictingUserInput), before its NIC is reserved: the disk is never taken over', async () => {
    const h = harness(zero());
    const { arm } = h;
    await h.run(arm.createNic(nicSpec('a')));
    await h.run(arm.createVm(vmSpec('a')));
    await h.advance(1_000);
    const disk = await h.run(arm.getDisk(ref(legacyNamesFor('a').osDisk)));
    expect(disk?.managedBy).toBe(armId(ref(legacyNamesFor('a').vm), 'Microsoft.Compute/virtualMachines'));
    await h.run(arm.createNic(nicSpec('b')));
    const e = azErr(await h.run(arm.createVm(vmSpec('b', { osDiskName: legacyNamesFor('a').osDisk }))).catch((x: unknown) => x));
    expect(e).toMatchObject({ code: 'ResourceNameConflict', statusCode: 409, info: { armCode: 'ConflictingUserInput' } });
    expect(e.message).toBe('ResourceNameConflict: Disk azflex-a-osdisk already exists in resource group RG-GPU. Only CreateOption.Attach is supported.');
    expect(arm.vmGet(ref(legacyNamesFor('b').vm))).toBeUndefined();
    expect(await h.run(arm.getDisk(ref(legacyNamesFor('a').osDisk)))).toEqual(disk);
    // Refused before the NICs are looked at: b's NIC holds no reservation and deletes at once.
    expect(arm.nicDelete(ref(legacyNamesFor('b').nic))).toHaveProperty('operationId');
  });

  it('refuses to delete a NIC attached to a VM (NicInUse), and a VM delete cascades NIC and OS disk', async () => {
    const h = harness(baseConfig());
    const { arm } = h;
    const nicP = observe(arm.createNic(nicSpec('a')));
    await h.advance(3_000);
    const vmP = observe(arm.createVm(vmSpec('a')));
    await h.advance(125_000);
    expect(nicP.done && vmP.done).toBe(true);
    // past the 180 s reservation, so the refusal below is about the attachment
    await h.advance(60_000);
    const inUseP = observe(arm.deleteNic(ref(legacyNamesFor('a').nic)));
    await h.advance(3_000);
    const inUse = azErr(inUseP.error);
    expect(inUse.code).toBe('NicInUse');
    expect(inUse.statusCode).toBe(400);
    const diskP = observe(arm.deleteDisk(ref(legacyNamesFor('a').osDisk)));
    await h.advance(5_000);
    expect(azErr(diskP.error).statusCode).toBe(409);

    const delP = observe(arm.deleteVm(ref(legacyNamesFor('a').vm)));
    await h.advance(2_000);
    expect(arm.vmGet(ref(legacyNamesFor('a').vm))?.provisioningState).toBe('Deleting');
    expect(arm.snapshot().quota[0]?.usedCores).toBe(96);
    // accepted, not finished: a GPU VM takes 2-8 minutes to delete
    expect(delP.done).toBe(true);
    await h.advance(120_000);
    expect(arm.vmGet(ref(legacyNamesFor('a').vm))).toBeDefined();
    await h.advance(360_000);
    expect(delP.error).toBeUndefined();
    const snap = arm.snapshot();
    expect(snap.vms).toEqual([]);
    expect(snap.nics).toEqual([]);
    expect(snap.disks).toEqual([]);
    expect(snap.quota[0]?.usedCores).toBe(0);
    expect(arm.subnetIpsUsed(SUBNET)).toBe(0);
    expect(arm.reapTimesSeconds()).toEqual([]); // no failed create: not a reap
    expect(h.events.filter((e) => e.op.endsWith('.removed')).map((e) => e.op)).toEqual(['nic.removed', 'disk.removed', 'vm.removed']);
  });

  it('with failedVmRecords off, an async AllocationFailed rolls the VM back, releases cores, detaches the NIC and keeps the reservation', async () => {
    const h = harness(baseConfig({ failedVmRecords: false, regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 100_000, familyQuotaCores: { standardNDSH200v5Family: 96 }, allocationFailureRate: 1 }] }));
    const { arm } = h;
    const nicP = observe(arm.createNic(nicSpec('a')));
    await h.advance(3_000);
    expect(nicP.done).toBe(true);
    const put = h.clock.now();
    const vmP = observe(arm.createVm(vmSpec('a')));
    await h.advance(19_000);
    expect(vmP.done).toBe(false);
    await h.advance(42_000);
    const err = azErr(vmP.error);
    expect(err.code).toBe('AllocationFailed');
    const failed = h.events.find((e) => e.op === 'vm.failed')!;
    expect(failed.code).toBe('AllocationFailed');
    expect(failed.t - put).toBeGreaterThanOrEqual(20_000);
    expect(failed.t - put).toBeLessThanOrEqual(60_000);
    expect(arm.vmGet(ref(legacyNamesFor('a').vm))).toBeUndefined();
    expect(arm.snapshot().quota[0]?.usedCores).toBe(0);
    expect(arm.nicGet(ref(legacyNamesFor('a').nic))?.virtualMachineId).toBeUndefined();
    expect(arm.snapshot().reservations[0]?.until).toBe(put + 180_000);
    expect(() => arm.nicDelete(ref(legacyNamesFor('a').nic))).toThrowError(/NicReservedForAnotherVm/);
    await h.advance(put + 180_000 - h.clock.now());
    expect(arm.nicDelete(ref(legacyNamesFor('a').nic))).toHaveProperty('operationId');
    // accepted; the NIC goes when its delete operation ends (1-2.5 s later)
    expect(arm.nicGet(ref(legacyNamesFor('a').nic))?.provisioningState).toBe('Deleting');
    await h.advance(2_500);
    const [afterReservation] = arm.reapAfterReservationSeconds();
    expect(afterReservation).toBeGreaterThanOrEqual(1);
    expect(afterReservation).toBeLessThanOrEqual(2.5);
    expect(arm.reapTimesSeconds()).toEqual([(put + 180_000 - failed.t) / 1000 + afterReservation!]);
    // the failed create's quota came back: a second region-wide create fits again
    expect(arm.leaks(new Set())).toEqual({ nics: [], vms: [], disks: [] });
  });

  it('ZonalAllocationFailed is drawn after AllocationFailed, for zonal VMs only', async () => {
    const h = harness(zero({ regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 100_000, familyQuotaCores: { standardNDSH200v5Family: 96_000 }, zonalAllocationFailureRate: 1 }] }));
    await h.run(h.arm.createNic(nicSpec('a')));
    const e = azErr(await h.run(h.arm.createVm(vmSpec('a', { zone: '1' }))).catch((x: unknown) => x));
    expect(e.code).toBe('ZonalAllocationFailed');
    await h.run(h.arm.createNic(nicSpec('b')));
    expect(await h.run(h.arm.createVm(vmSpec('b')))).toMatchObject({ provisioningState: 'Succeeded' });
  });

  it('admits a zone only where the size is offered in it: SkuNotAvailable names the zone', async () => {
    const h = harness(zero({ regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 100_000, familyQuotaCores: { standardNDSH200v5Family: 96_000 } }] }));
    await h.run(h.arm.createNic(nicSpec('a')));
    const bad = azErr(await h.run(h.arm.createVm(vmSpec('a', { zone: '4' }))).catch((x: unknown) => x));
    expect(bad.code).toBe('SkuNotAvailable');
    expect(bad.message).toContain("location 'eastus2' zones '4'");
    expect(await h.run(h.arm.createVm(vmSpec('a', { zone: '3' })))).toMatchObject({ provisioningState: 'Succeeded', zone: '3' });
    // A re-PUT (a plain one: the port's create is create-only) may not move the VM to another zone.
    const moved = (() => {
      try {
        return h.arm.beginCreateVm({ ...vmSpec('a', { zone: '1' }), nicIds: [nicId('a')] });
      } catch (x) {
        return x;
      }
    })();
    expect(azErr(moved).info.armCode).toBe('PropertyChangeNotAllowed');
  });

  it('a delete of a VM still Creating cancels the create (OperationPreempted) and cascades the disk; the reserved NIC is only detached', async () => {
    const h = harness(baseConfig());
    const { arm } = h;
    const nicP = observe(arm.createNic(nicSpec('a')));
    await h.advance(3_000);
    expect(nicP.done).toBe(true);
    const vmP = observe(arm.createVm(vmSpec('a')));
    await h.advance(10_000);
    const delP = observe(arm.deleteVm(ref(legacyNamesFor('a').vm)));
    await h.advance(2_000);
    const e = azErr(vmP.error);
    expect(e.code).toBe('Unknown');
    expect(e.message).toContain('OperationPreempted');
    await h.advance(90_000);
    expect(delP.done).toBe(true);
    expect(arm.snapshot()).toMatchObject({ vms: [], disks: [], operations: { inProgress: 0 } });
    // Deleted 105 s after the PUT: the network RP still holds the NIC for that VM.
    expect(arm.snapshot().nics.map((n) => n.virtualMachineId)).toEqual([undefined]);
    await h.advance(80_000);
    expect(arm.nicDelete(ref(legacyNamesFor('a').nic))).toMatchObject({ operationId: expect.any(String) });
    expect(h.events.some((e2) => e2.op === 'vm.provisioned')).toBe(false);
  });

  it('the port\'s VM create is create-only; a plain VM PUT for an existing name is idempotent and takes no new reservation; PUT on a Deleting VM is refused', async () => {
    const h = harness(baseConfig());
    const { arm } = h;
    const nicP = observe(arm.createNic(nicSpec('a')));
    await h.advance(3_000);
    expect(nicP.done).toBe(true);
    const first = observe(arm.createVm(vmSpec('a')));
    await h.advance(30_000);
    const until = arm.snapshot().reservations[0]?.until;
    // As the SDK adapter's PUT with If-None-Match: * (412, then a GET): the VM as it is, no PUT.
    const second = observe(arm.createVm(vmSpec('a')));
    await h.advance(100_000);
    expect(second.value).toMatchObject({ id: first.value?.id, provisioningState: 'Creating' });
    expect(first.value?.provisioningState).toBe('Succeeded');
    expect(arm.snapshot().reservations[0]?.until ?? until).toBe(until);
    expect(arm.armCalls()['vm.put']).toEqual({ '201': 1 });
    const third = arm.beginCreateVm({ ...vmSpec('a'), nicIds: [nicId('a')] });
    expect(third.created).toBe(false);
    expect(third.operationId).toBeUndefined();
    expect(arm.snapshot().quota[0]?.usedCores).toBe(96);
    arm.beginDeleteVm(ref(legacyNamesFor('a').vm));
    expect(() => arm.beginCreateVm({ ...vmSpec('a'), nicIds: [nicId('a')] })).toThrowError(/marked for deletion/);
  });

  it('VM PUT with a missing NIC is InvalidParameter; a NIC attached to another VM is NicInUse', async () => {
    const h = harness(zero());
    const { arm } = h;
    const missing = azErr(await h.run(arm.createVm(vmSpec('a'))).catch((e: unknown) => e));
    expect(missing.code).toBe('InvalidParameter');
    expect(missing.statusCode).toBe(400);
    await h.run(arm.createNic(nicSpec('a')));
    await h.run(arm.createVm(vmSpec('a')));
    const inUse = azErr(await h.run(arm.createVm(vmSpec('b', { nicId: nicId('a') }))).catch((e: unknown) => e));
    expect(inUse.code).toBe('NicInUse');
    expect(inUse.statusCode).toBe(400);
  });

  it('deleting a missing VM or disk succeeds and counts 404; quota is enforced across VMs', async () => {
    const h = harness(zero());
    const { arm } = h;
    await h.run(arm.deleteVm(ref('gone')));
    await h.run(arm.deleteDisk(ref('gone')));
    expect(arm.armCalls()['vm.delete']).toEqual({ '404': 1 });
    expect(arm.armCalls()['disk.delete']).toEqual({ '404': 1 });
    for (const c of ['a', 'b', 'c']) await h.run(arm.createNic(nicSpec(c)));
    await h.run(arm.createVm(vmSpec('a')));
    await h.run(arm.createVm(vmSpec('b')));
    const third = azErr(await h.run(arm.createVm(vmSpec('c'))).catch((e: unknown) => e));
    expect(third.message).toContain('Current Limit: 192, Current Usage: 192, Additional Required: 96, (Minimum) New Limit Required: 288.');
  });

  it('a VM deleted with deleteOption Detach leaves an orphaned NIC and disk that leaks() reports', async () => {
    const h = harness(zero());
    const { arm } = h;
    await h.run(arm.createNic(nicSpec('a')));
    const begun = arm.beginCreateVm({ ...vmSpec('a'), nicIds: [nicId('a')] }); // Azure default: Detach
    await h.run(arm.waitForOperation(begun.operationId!));
    expect(arm.leaks(new Set(['a']))).toEqual({ nics: [], vms: [], disks: [] });
    const del = arm.beginDeleteVm(ref(legacyNamesFor('a').vm))!;
    await h.run(arm.waitForOperation(del.operationId));
    // detached, but their own tags still name a live claim
    expect(arm.leaks(new Set(['a']))).toEqual({ nics: [], vms: [], disks: [] });
    const all = arm.leaks(new Set());
    expect(all.nics.map((n) => n.name)).toEqual([legacyNamesFor('a').nic]);
    expect(all.disks.map((d) => d.name)).toEqual([legacyNamesFor('a').osDisk]);
    expect(all.disks[0]?.managedBy).toBeUndefined();
    await flush();
  });
});

describe('FakeArm leaks', () => {
  it('judges a NIC attached to a VM by the VM tag and reports VMs of dead claims', async () => {
    const h = harness(zero());
    const { arm } = h;
    await h.run(arm.createNic(nicSpec('a')));
    await h.run(arm.createNic(nicSpec('b')));
    await h.run(arm.createVm(vmSpec('a')));
    const live = arm.leaks(new Set(['a', 'b']));
    expect(live).toEqual({ nics: [], vms: [], disks: [] });
    const deadA = arm.leaks(new Set(['b']));
    expect(deadA.vms.map((v) => v.name)).toEqual([legacyNamesFor('a').vm]);
    expect(deadA.nics.map((n) => n.name)).toEqual([legacyNamesFor('a').nic]);
    expect(deadA.disks.map((d) => d.name)).toEqual([legacyNamesFor('a').osDisk]);
    const deadB = arm.leaks(new Set(['a']));
    expect(deadB.nics.map((n) => n.name)).toEqual([legacyNamesFor('b').nic]);
  });
});

describe('FakeArm adoptVm (a snapshot\'s running VM)', () => {
  it('holds the VM Succeeded with its NIC attached, OS disk and cores, as a finished create leaves them, without an ARM call', async () => {
    const h = harness(zero());
    const { arm } = h;
    arm.adoptVm(vmSpec('old', { zone: '2' }), nicSpec('old'));
    expect(arm.armCalls()).toEqual({});
    const vm = await h.run(arm.getVm(ref(legacyNamesFor('old').vm)));
    expect(vm).toMatchObject({ provisioningState: 'Succeeded', vmSize: H200, zone: '2', tags: nicSpec('old').tags });
    const nic = await h.run(arm.getNic(ref(legacyNamesFor('old').nic)));
    expect(nic?.virtualMachineId).toBe(vm?.id);
    expect(arm.snapshot().disks.map((d) => d.name)).toEqual([legacyNamesFor('old').osDisk]);
    expect(arm.quotaUsage(SUB, 'eastus2')?.families.find((f) => f.family === 'standardNDSH200v5Family')?.used).toBe(96);
    expect(arm.leaks(new Set(['old']))).toEqual({ nics: [], vms: [], disks: [] });
    // Its cores count: the family quota (192) now holds one more H200, not two.
    await h.run(arm.createNic(nicSpec('new')));
    await h.run(arm.createVm(vmSpec('new')));
    await h.run(arm.createNic(nicSpec('third')));
    const refused = await h.run(arm.createVm(vmSpec('third'))).catch((e: unknown) => e);
    expect(azErr(refused).message).toContain('standardNDSH200v5Family Cores quota');
  });
});
