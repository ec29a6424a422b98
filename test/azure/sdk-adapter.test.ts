import { describe, expect, it } from 'vitest';
import { RestError } from '@azure/core-rest-pipeline';
import { AzureError, type NicSpec, type VmSpec } from '../../src/ports/azure.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { SdkAzure, type SdkAzureOptions } from '../../src/azure/sdk-adapter.js';
import { classifyAzureError } from '../../src/azure/errors.js';
import { CannedArm, armError, fakeCredential, runOnClock } from './helpers/canned-arm.js';

const SUB = '00000000-0000-0000-0000-000000000001';
const RG = 'flex-rg';
const BASE = `/subscriptions/${SUB}/resourceGroups/${RG}/providers`;
const NIC_PATH = new RegExp(`^${BASE}/Microsoft.Network/networkInterfaces/azflex-a-nic$`);
const VM_PATH = new RegExp(`^${BASE}/Microsoft.Compute/virtualMachines/azflex-a$`);
const OP_PATH = /^\/operations\//;
const SUBNET = `/subscriptions/${SUB}/resourceGroups/net-rg/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`;
const NIC_ID = `${BASE}/Microsoft.Network/networkInterfaces/azflex-a-nic`;
const VM_ID = `${BASE}/Microsoft.Compute/virtualMachines/azflex-a`;
const HOST = 'https://arm.test';

function setup(extra: Partial<SdkAzureOptions> = {}): { clock: VirtualClock; arm: CannedArm; azure: SdkAzure } {
  const clock = new VirtualClock(1_700_000_000_000);
  const arm = new CannedArm(clock);
  const azure = new SdkAzure({ clock, credential: fakeCredential, endpoint: HOST, httpClient: arm, ...extra });
  return { clock, arm, azure };
}

const nicSpec: NicSpec = {
  ref: { subscriptionId: SUB, resourceGroup: RG, name: 'azflex-a-nic' },
  location: 'eastus2',
  subnetId: SUBNET,
  tags: { 'azflex.io_cluster': 'c1', 'karpenter.sh_nodeclaim': 'a' },
};

const vmSpec: VmSpec = {
  ref: { subscriptionId: SUB, resourceGroup: RG, name: 'azflex-a' },
  location: 'eastus2',
  vmSize: 'Standard_ND96isr_H200_v5',
  nicId: NIC_ID,
  osDiskName: 'azflex-a-osdisk',
  osDiskSizeGB: 256,
  image: { reference: { publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' } },
  adminUsername: 'azureuser',
  sshPublicKeys: ['ssh-ed25519 AAAAC3 test@azflex'],
  customData: 'H4sIAAAAAAAAA+customdata',
  priority: 'Regular',
  tags: { 'azflex.io_cluster': 'c1' },
};

const nicBody = (state = 'Succeeded', vmId?: string) => ({
  id: NIC_ID,
  name: 'azflex-a-nic',
  location: 'eastus2',
  tags: nicSpec.tags,
  properties: {
    provisioningState: state,
    ...(vmId ? { virtualMachine: { id: vmId } } : {}),
    ipConfigurations: [{ name: 'ipconfig1', properties: { primary: true, privateIPAddress: '10.1.0.4', subnet: { id: SUBNET } } }],
  },
});

const vmBody = (state = 'Succeeded') => ({
  id: VM_ID,
  name: 'azflex-a',
  location: 'eastus2',
  tags: vmSpec.tags,
  properties: {
    provisioningState: state,
    hardwareProfile: { vmSize: vmSpec.vmSize },
    storageProfile: { osDisk: { name: 'azflex-a-osdisk', createOption: 'FromImage' } },
    networkProfile: { networkInterfaces: [{ id: NIC_ID, properties: { primary: true, deleteOption: 'Delete' } }] },
  },
});

const asyncOp = (id: string, retryAfter = '3') => ({
  'azure-asyncoperation': `${HOST}/operations/${id}?api-version=2026-04-01`,
  'retry-after': retryAfter,
});

describe('SdkAzure on the real SDK pipeline (canned ARM over httpClient)', () => {
  it('creates a NIC: GET 404, PUT, polls Azure-AsyncOperation on the virtual clock honouring Retry-After, maps the result', async () => {
    const { clock, arm, azure } = setup();
    arm
      .on('GET', NIC_PATH, armError(404, 'NotFound', 'not found'), { status: 200, body: nicBody() })
      .on('PUT', NIC_PATH, { status: 201, headers: asyncOp('op1', '3'), body: nicBody('Updating') })
      .on('GET', OP_PATH, { status: 200, headers: { 'retry-after': '5' }, body: { status: 'InProgress' } }, { status: 200, body: { status: 'Succeeded' } });
    const t0 = clock.now();
    const nic = await runOnClock(clock, azure.createNic(nicSpec));

    expect(nic).toEqual({
      id: NIC_ID,
      name: 'azflex-a-nic',
      location: 'eastus2',
      subnetId: SUBNET,
      privateIpAddress: '10.1.0.4',
      provisioningState: 'Succeeded',
      tags: nicSpec.tags,
    });
    const put = arm.seen('PUT')[0]!;
    expect(put.body).toEqual({
      location: 'eastus2',
      tags: nicSpec.tags,
      properties: {
        enableAcceleratedNetworking: false,
        ipConfigurations: [{ name: 'ipconfig1', properties: { primary: true, privateIPAllocationMethod: 'Dynamic', subnet: { id: SUBNET } } }],
      },
    });
    expect(put.headers.authorization).toBe('Bearer fake-arm-token');
    // Polls are spaced by ARM's Retry-After (3 s, then 5 s), measured on the virtual clock.
    const polls = arm.seen('GET', OP_PATH).map((r) => r.at - t0);
    expect(polls).toEqual([3000, 8000]);
  });

  it('does not re-PUT a NIC that exists (GET before PUT)', async () => {
    const { clock, arm, azure } = setup();
    arm.on('GET', NIC_PATH, { status: 200, body: nicBody('Succeeded', VM_ID) });
    const nic = await runOnClock(clock, azure.createNic(nicSpec));
    expect(nic.virtualMachineId).toBe(VM_ID);
    expect(arm.seen('PUT')).toHaveLength(0);
  });

  it('creates a VM with the documented body: NIC and OS disk deleteOption Delete, ssh keys, customData, Standard security', async () => {
    const { clock, arm, azure } = setup();
    arm
      .on('GET', VM_PATH, armError(404, 'ResourceNotFound', 'gone'), { status: 200, body: vmBody() })
      .on('PUT', VM_PATH, { status: 201, headers: asyncOp('vm1', '10'), body: vmBody('Creating') })
      .on('GET', OP_PATH, { status: 200, body: { status: 'Succeeded' } });
    const vm = await runOnClock(clock, azure.createVm(vmSpec));
    expect(vm).toEqual({
      id: VM_ID,
      name: 'azflex-a',
      location: 'eastus2',
      vmSize: 'Standard_ND96isr_H200_v5',
      nicIds: [NIC_ID],
      osDiskName: 'azflex-a-osdisk',
      provisioningState: 'Succeeded',
      tags: vmSpec.tags,
    });
    const body = arm.seen('PUT')[0]!.body as { properties: Record<string, unknown> };
    expect(body.properties.networkProfile).toEqual({ networkInterfaces: [{ id: NIC_ID, properties: { primary: true, deleteOption: 'Delete' } }] });
    expect(body.properties.storageProfile).toEqual({
      imageReference: { publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' },
      osDisk: { name: 'azflex-a-osdisk', createOption: 'FromImage', deleteOption: 'Delete', caching: 'ReadWrite', diskSizeGB: 256, managedDisk: { storageAccountType: 'StandardSSD_LRS' } },
    });
    expect(body.properties.osProfile).toEqual({
      computerName: 'azflex-a',
      adminUsername: 'azureuser',
      customData: vmSpec.customData,
      linuxConfiguration: {
        disablePasswordAuthentication: true,
        ssh: { publicKeys: [{ path: '/home/azureuser/.ssh/authorized_keys', keyData: 'ssh-ed25519 AAAAC3 test@azflex' }] },
      },
    });
    expect(body.properties.securityProfile).toEqual({ securityType: 'Standard' });
    expect(body.properties.priority).toBe('Regular');
    expect(body.properties.hardwareProfile).toEqual({ vmSize: 'Standard_ND96isr_H200_v5' });
  });

  it('spot VMs are evicted by deletion; TrustedLaunch and gallery images map to their ARM fields', async () => {
    const { clock, arm, azure } = setup();
    arm.on('GET', VM_PATH, armError(404, 'ResourceNotFound', 'gone'), { status: 200, body: vmBody() }).on('PUT', VM_PATH, { status: 200, body: vmBody() });
    const image = { id: '/CommunityGalleries/flex-1234/Images/ubuntu/Versions/latest' };
    await runOnClock(clock, azure.createVm({ ...vmSpec, priority: 'Spot', image, securityType: 'TrustedLaunch' } as VmSpec));
    const body = arm.seen('PUT')[0]!.body as { properties: Record<string, unknown> & { storageProfile: { imageReference: unknown } } };
    expect(body.properties.priority).toBe('Spot');
    expect(body.properties.evictionPolicy).toBe('Delete');
    expect(body.properties.billingProfile).toEqual({ maxPrice: -1 });
    expect(body.properties.securityProfile).toEqual({ securityType: 'TrustedLaunch', uefiSettings: { secureBootEnabled: true, vTpmEnabled: true } });
    expect(body.properties.storageProfile.imageReference).toEqual({ communityGalleryImageId: image.id });
  });

  it("a spot VM pays at most the NodeClass's spotMaxPrice", async () => {
    const { clock, arm, azure } = setup();
    arm.on('GET', VM_PATH, armError(404, 'ResourceNotFound', 'gone'), { status: 200, body: vmBody() }).on('PUT', VM_PATH, { status: 200, body: vmBody() });
    await runOnClock(clock, azure.createVm({ ...vmSpec, priority: 'Spot', spotMaxPrice: 0.5 }));
    const body = arm.seen('PUT')[0]!.body as { properties: Record<string, unknown> };
    expect(body.properties.billingProfile).toEqual({ maxPrice: 0.5 });
  });

  it('returns an existing VM as ARM has it, without a second PUT (a re-PUT would re-reserve the NIC)', async () => {
    const { clock, arm, azure } = setup();
    arm.on('GET', VM_PATH, { status: 200, body: vmBody('Failed') });
    const vm = await runOnClock(clock, azure.createVm(vmSpec));
    expect(vm.provisioningState).toBe('Failed');
    expect(arm.seen('PUT')).toHaveLength(0);
  });

  it('a synchronous quota refusal is an AzureError the taxonomy reads as a family quota', async () => {
    const { clock, arm, azure } = setup();
    const msg =
      'Operation could not be completed as it results in exceeding approved standardNDSH200v5Family Cores quota. Additional details - Deployment Model: Resource Manager, Location: eastus2, Current Limit: 0, Current Usage: 0, Additional Required: 96';
    arm.on('GET', VM_PATH, armError(404, 'ResourceNotFound', 'gone')).on('PUT', VM_PATH, armError(409, 'OperationNotAllowed', msg));
    const err = await runOnClock(clock, azure.createVm(vmSpec)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AzureError);
    expect(err).toMatchObject({ code: 'OperationNotAllowed', statusCode: 409 });
    const action = classifyAzureError(err);
    expect(action).toMatchObject({ kind: 'insufficientCapacity', reason: 'quota', ttlSeconds: 3600, quota: { scope: 'family', family: 'standardNDSH200v5Family', currentLimit: 0 } });
  });

  it('an async allocation failure (LRO Failed) surfaces as AllocationFailed', async () => {
    const { clock, arm, azure } = setup();
    arm
      .on('GET', VM_PATH, armError(404, 'ResourceNotFound', 'gone'))
      .on('PUT', VM_PATH, { status: 201, headers: asyncOp('vm2', '15'), body: vmBody('Creating') })
      .on('GET', OP_PATH, { status: 200, body: { status: 'InProgress' } }, { status: 200, body: { status: 'Failed', error: { code: 'AllocationFailed', message: 'Allocation failed. We do not have sufficient capacity.' } } });
    const t0 = clock.now();
    const err = await runOnClock(clock, azure.createVm(vmSpec)).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'AzureError', code: 'AllocationFailed' });
    expect((err as Error).message).toContain('sufficient capacity');
    // No Retry-After on the first poll: the default 10 s interval, again on the virtual clock.
    expect(arm.seen('GET', OP_PATH).map((r) => r.at - t0)).toEqual([15_000, 25_000]);
  });

  it('a PUT 404 (missing resource group or subnet) is a configuration error, not "absent"', async () => {
    const { clock, arm, azure } = setup();
    arm.on('GET', NIC_PATH, armError(404, 'ResourceGroupNotFound', 'no rg')).on('PUT', NIC_PATH, armError(404, 'ResourceGroupNotFound', 'no rg'));
    await expect(runOnClock(clock, azure.createNic(nicSpec))).rejects.toMatchObject({ code: 'InvalidParameter' });
  });

  it('a 404 ARM could not route (InvalidResourceType: an api-version it does not serve) is an error, never "gone", on reads and deletes', async () => {
    const { clock, arm, azure } = setup();
    const unrouted = armError(404, 'InvalidResourceType', "The resource type 'virtualMachines' could not be found in the namespace 'Microsoft.Compute' for api version '2099-01-01'.");
    arm.on('GET', VM_PATH, unrouted).on('DELETE', NIC_PATH, unrouted);
    await expect(runOnClock(clock, azure.getVm(vmSpec.ref))).rejects.toMatchObject({ code: 'InvalidParameter', statusCode: 404 });
    await expect(runOnClock(clock, azure.deleteNic(nicSpec.ref))).rejects.toMatchObject({ code: 'InvalidParameter', statusCode: 404 });
  });

  it('deletes: 404 is success, NicReservedForAnotherVm is surfaced, a VM delete returns once ARM accepted it', async () => {
    const { clock, arm, azure } = setup();
    arm
      .on('DELETE', NIC_PATH, armError(400, 'NicReservedForAnotherVm', 'Nic(s) in request is reserved for another Virtual Machine for 180 seconds.'), armError(404, 'NotFound', 'gone'))
      .on('DELETE', VM_PATH, { status: 202, headers: { location: `${HOST}/operations/del1`, 'retry-after': '20' } })
      .on('GET', OP_PATH, { status: 202, headers: { 'retry-after': '20' } }, { status: 204 });
    await expect(runOnClock(clock, azure.deleteNic(nicSpec.ref))).rejects.toMatchObject({ code: 'NicReservedForAnotherVm', statusCode: 400 });
    await expect(runOnClock(clock, azure.deleteNic(nicSpec.ref))).resolves.toBeUndefined();
    const t0 = clock.now();
    await runOnClock(clock, azure.deleteVm(vmSpec.ref));
    // No polling: a GPU VM takes minutes to delete, and the controller observes it go.
    expect(clock.now()).toBe(t0);
    expect(arm.seen('DELETE', VM_PATH)).toHaveLength(1);
    expect(arm.seen('GET', OP_PATH)).toEqual([]);
  });

  it('reads retry 429 on the clock, waiting Retry-After; writes do not retry', async () => {
    const { clock, arm, azure } = setup();
    arm
      .on('GET', VM_PATH, armError(429, 'SubscriptionRequestsThrottled', 'slow down', { 'retry-after': '7' }), { status: 200, body: vmBody() })
      .on('DELETE', NIC_PATH, armError(500, 'InternalServerError', 'boom'));
    const t0 = clock.now();
    const vm = await runOnClock(clock, azure.getVm(vmSpec.ref));
    expect(vm?.name).toBe('azflex-a');
    expect(arm.seen('GET', VM_PATH).map((r) => r.at - t0)).toEqual([0, 7000]);
    await expect(runOnClock(clock, azure.deleteNic(nicSpec.ref))).rejects.toMatchObject({ code: 'InternalServerError', statusCode: 500 });
    expect(arm.seen('DELETE')).toHaveLength(1);
  });

  it('a read still throttled after the retries surfaces TooManyRequests with Retry-After', async () => {
    const { clock, arm, azure } = setup({ readRetry: { maxRetries: 1 } });
    arm.on('GET', VM_PATH, armError(429, 'TooManyRequests', 'slow down', { 'retry-after': '11' }));
    const err = await runOnClock(clock, azure.getVm(vmSpec.ref)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TooManyRequests', statusCode: 429, retryAfterSeconds: 11 });
    expect(classifyAzureError(err)).toEqual({ kind: 'throttled', retryAfterSeconds: 11, code: 'TooManyRequests' });
  });

  it('a connection reset is a RequestTimeout (transient)', async () => {
    const { clock, arm, azure } = setup({ readRetry: { maxRetries: 0 } });
    const reset = new RestError('socket hang up', { code: 'ECONNRESET' });
    arm.on('GET', VM_PATH, reset).on('PUT', NIC_PATH, reset).on('GET', NIC_PATH, armError(404, 'NotFound', 'x'));
    await expect(runOnClock(clock, azure.getVm(vmSpec.ref))).rejects.toMatchObject({ code: 'RequestTimeout' });
    await expect(runOnClock(clock, azure.createNic(nicSpec))).rejects.toMatchObject({ code: 'RequestTimeout' });
  });

  it('a transient poll failure is retried on the clock instead of failing the operation', async () => {
    const { clock, arm, azure } = setup();
    arm
      .on('GET', NIC_PATH, armError(404, 'NotFound', 'x'), { status: 200, body: nicBody() })
      .on('PUT', NIC_PATH, { status: 201, headers: asyncOp('op9', '2'), body: nicBody('Updating') })
      .on('GET', OP_PATH, armError(503, 'ServiceUnavailable', 'busy', { 'retry-after': '4' }), { status: 200, body: { status: 'Succeeded' } });
    const nic = await runOnClock(clock, azure.createNic(nicSpec));
    expect(nic.provisioningState).toBe('Succeeded');
    expect(arm.seen('GET', OP_PATH)).toHaveLength(2);
  });

  it('gives up on an LRO after lroTiming.timeoutMs with RequestTimeout', async () => {
    const { clock, arm, azure } = setup({ lroTiming: { timeoutMs: 60_000 } });
    arm
      .on('GET', VM_PATH, armError(404, 'ResourceNotFound', 'gone'))
      .on('PUT', VM_PATH, { status: 201, headers: asyncOp('slow', '10'), body: vmBody('Creating') })
      .on('GET', OP_PATH, { status: 200, headers: { 'retry-after': '10' }, body: { status: 'InProgress' } });
    await expect(runOnClock(clock, azure.createVm(vmSpec))).rejects.toMatchObject({ code: 'RequestTimeout' });
    expect(arm.seen('GET', OP_PATH).length).toBe(6);
  });

  it('lists follow nextLink across pages and map NICs, VMs and disks', async () => {
    const { clock, arm, azure } = setup();
    const diskPath = new RegExp(`^${BASE}/Microsoft.Compute/disks$`);
    arm
      .on('GET', new RegExp(`^${BASE}/Microsoft.Compute/virtualMachines$`), (req) =>
        req.query.get('page') === '2'
          ? { status: 200, body: { value: [{ ...vmBody(), name: 'azflex-b', id: VM_ID.replace('azflex-a', 'azflex-b') }] } }
          : { status: 200, body: { value: [vmBody()], nextLink: `${HOST}${BASE}/Microsoft.Compute/virtualMachines?api-version=2026-04-01&page=2` } },
      )
      .on('GET', new RegExp(`^${BASE}/Microsoft.Network/networkInterfaces$`), { status: 200, body: { value: [nicBody('Succeeded', VM_ID)] } })
      .on('GET', diskPath, { status: 200, body: { value: [{ id: `${BASE}/Microsoft.Compute/disks/azflex-a-osdisk`, name: 'azflex-a-osdisk', location: 'eastus2', managedBy: VM_ID, tags: {} }] } });
    const scope = { subscriptionId: SUB, resourceGroup: RG };
    expect((await runOnClock(clock, azure.listVms(scope))).map((v) => v.name)).toEqual(['azflex-a', 'azflex-b']);
    expect((await runOnClock(clock, azure.listNics(scope)))[0]).toMatchObject({ name: 'azflex-a-nic', virtualMachineId: VM_ID });
    expect(await runOnClock(clock, azure.listDisks(scope))).toEqual([{ id: `${BASE}/Microsoft.Compute/disks/azflex-a-osdisk`, name: 'azflex-a-osdisk', managedBy: VM_ID, tags: {} }]);
  });

  it('a list under a missing resource group is empty', async () => {
    const { clock, arm, azure } = setup();
    arm.on('GET', new RegExp(`^${BASE}/Microsoft.Compute/virtualMachines$`), armError(404, 'ResourceGroupNotFound', 'no rg'));
    expect(await runOnClock(clock, azure.listVms({ subscriptionId: SUB, resourceGroup: RG }))).toEqual([]);
  });
});

describe('every taxonomy row through the real SDK (canned ARM), sync refusal and async LRO failure', () => {
  const LOW = 'Operation could not be completed as it results in exceeding approved LowPriorityCores quota. Additional details - Deployment Model: Resource Manager, Location: eastus2, Current Limit: 3, Current Usage: 0, Additional Required: 96';
  const REGIONAL = 'Operation could not be completed as it results in exceeding approved Total Regional Cores quota. Additional details - Location: eastus2, Current Limit: 100, Current Usage: 96, Additional Required: 96';
  const FAMILY = 'Operation could not be completed as it results in exceeding approved standardNDSH200v5Family Cores quota. Additional details - Location: eastus2, Current Limit: 192, Current Usage: 192, Additional Required: 96';
  const rows: Array<{ arm: string; status: number; message: string; code: string; kind: string; async: boolean }> = [
    { arm: 'OperationNotAllowed', status: 409, message: FAMILY, code: 'OperationNotAllowed', kind: 'insufficientCapacity', async: true },
    { arm: 'OperationNotAllowed', status: 409, message: REGIONAL, code: 'OperationNotAllowed', kind: 'insufficientCapacity', async: true },
    { arm: 'OperationNotAllowed', status: 409, message: LOW, code: 'OperationNotAllowed', kind: 'insufficientCapacity', async: true },
    { arm: 'QuotaExceeded', status: 409, message: 'Quota exceeded', code: 'QuotaExceeded', kind: 'insufficientCapacity', async: true },
    { arm: 'SkuNotAvailable', status: 409, message: 'The requested VM size is not available', code: 'SkuNotAvailable', kind: 'insufficientCapacity', async: true },
    { arm: 'AllocationFailed', status: 409, message: 'Allocation failed.', code: 'AllocationFailed', kind: 'insufficientCapacity', async: true },
    { arm: 'ZonalAllocationFailed', status: 409, message: 'Allocation failed in zone.', code: 'ZonalAllocationFailed', kind: 'insufficientCapacity', async: true },
    { arm: 'OverconstrainedAllocationRequest', status: 409, message: 'Overconstrained.', code: 'OverconstrainedAllocationRequest', kind: 'insufficientCapacity', async: true },
    { arm: 'OverconstrainedZonalAllocationRequest', status: 409, message: 'Overconstrained zonal.', code: 'OverconstrainedZonalAllocationRequest', kind: 'insufficientCapacity', async: true },
    { arm: 'NicReservedForAnotherVm', status: 400, message: 'Nic(s) in request is reserved for another Virtual Machine for 180 seconds.', code: 'NicReservedForAnotherVm', kind: 'reserved', async: false },
    { arm: 'NicInUse', status: 400, message: 'Network Interface is used by existing VM.', code: 'NicInUse', kind: 'inUse', async: false },
    { arm: 'SubnetIsFull', status: 400, message: 'Subnet is full.', code: 'SubnetIsFull', kind: 'subnetFull', async: false },
    { arm: 'SubscriptionRequestsThrottled', status: 429, message: 'throttled', code: 'TooManyRequests', kind: 'throttled', async: false },
    { arm: 'InternalServerError', status: 500, message: 'boom', code: 'InternalServerError', kind: 'transient', async: true },
    { arm: 'RequestTimeout', status: 408, message: 'timed out', code: 'RequestTimeout', kind: 'transient', async: false },
  ];
  for (const row of rows) {
    it(`${row.arm} ${row.status}${row.message === LOW ? ' (low priority)' : row.message === REGIONAL ? ' (regional)' : ''}`, async () => {
      const { clock, arm, azure } = setup();
      arm.on('GET', VM_PATH, armError(404, 'ResourceNotFound', 'gone')).on('PUT', VM_PATH, armError(row.status, row.arm, row.message, { 'retry-after': '9' }));
      const sync = await runOnClock(clock, azure.createVm(vmSpec)).catch((e: unknown) => e);
      expect(sync).toMatchObject({ name: 'AzureError', code: row.code, statusCode: row.status });
      expect(classifyAzureError(sync).kind).toBe(row.kind);
      if (row.kind === 'throttled') expect(classifyAzureError(sync)).toMatchObject({ retryAfterSeconds: 9 });
      if (!row.async) return;
      const { clock: c2, arm: a2, azure: z2 } = setup();
      a2
        .on('GET', VM_PATH, armError(404, 'ResourceNotFound', 'gone'))
        .on('PUT', VM_PATH, { status: 201, headers: asyncOp('x', '1'), body: vmBody('Creating') })
        .on('GET', OP_PATH, { status: 200, body: { status: 'Failed', error: { code: row.arm, message: row.message } } });
      const failed = await runOnClock(c2, z2.createVm(vmSpec)).catch((e: unknown) => e);
      expect(failed).toMatchObject({ name: 'AzureError', code: row.code });
      expect(classifyAzureError(failed).kind).toBe(row.kind);
    });
  }
});
