import { describe, expect, it } from 'vitest';
import { ComputeManagementClient, restorePoller, type VirtualMachine } from '@azure/arm-compute';
import { NetworkManagementClient } from '@azure/arm-network';
import type { FakeArmConfig } from '../../../src/sim/arm/types.js';
import { CMP, NET, credential, faceServer } from './face-client.js';
import { H200, RG, SUB, SUBNET } from './helpers.js';
import { classifyAzureError } from '../../../src/azure/errors.js';
import { toAzureError } from '../../../src/azure/sdk-errors.js';

/**
 * The ARM face under calls azflex itself never makes but a user, a tool or another SDK
 * method does: VM lists with their query options, instance views, usages (quota), sizes,
 * preconditions, existence checks and the refusals for what the simulator does not serve.
 * Over HTTPS, through the official SDK clients and a plain HTTPS client.
 */
const D2 = 'Standard_D2s_v5';

function config(over: Partial<FakeArmConfig> = {}): FakeArmConfig {
  return {
    regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: { standardNDSH200v5Family: 192, standardDSv5Family: 8 }, regionalQuotaCores: 400 }],
    subnets: [{ id: SUBNET, addressPrefix: '10.1.0.0/24' }],
    listLagSeconds: { appearSeconds: 0, disappearSeconds: 0 },
    latencyMs: { vmCreate: { min: 60_000, max: 60_000 }, vmCreateFailure: { min: 30_000, max: 30_000 }, vmDelete: { min: 30_000, max: 30_000 }, gpuVmDelete: { min: 30_000, max: 30_000 } },
    ...over,
  };
}

const serveFace = faceServer(5);

async function serve(cfg: FakeArmConfig = config()) {
  const face = await serveFace(cfg);
  const { s, ca, call, run, advance } = face;
  const opts = { endpoint: s.endpoint, tlsOptions: { ca }, retryOptions: { maxRetries: 0 } };
  const compute = new ComputeManagementClient(credential, SUB, opts);
  const network = new NetworkManagementClient(credential, SUB, opts);
  /** A NIC and a VM on it through the SDKs (the VM PUT accepted; its create still running). */
  const startVm = async (name: string, vmSize = D2, zones?: string[]) => {
    await run(network.networkInterfaces.beginCreateOrUpdateAndWait(RG, `${name}-nic`, { location: 'eastus2', ipConfigurations: [{ name: 'ipconfig1', subnet: { id: SUBNET } }] }));
    return run(compute.virtualMachines.beginCreateOrUpdate(RG, name, vmParams(name, vmSize, zones)));
  };
  return { s, ca, call, compute, network, run, advance, startVm };
}

const all = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of items) out.push(x);
  return out;
};
const nicId = (nic: string) => `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/networkInterfaces/${nic}`;
const vmPath = (name: string) => `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachines/${name}`;

function vmParams(name: string, vmSize: string, zones?: string[]): VirtualMachine {
  return {
    location: 'eastus2',
    ...(zones ? { zones } : {}),
    hardwareProfile: { vmSize },
    storageProfile: {
      imageReference: { publisher: 'Canonical', offer: 'ubuntu-24_04-lts', sku: 'server', version: 'latest' },
      osDisk: { createOption: 'FromImage', deleteOption: 'Delete' },
    },
    osProfile: { computerName: name, adminUsername: 'azureuser', linuxConfiguration: { disablePasswordAuthentication: true, ssh: { publicKeys: [{ path: '/home/azureuser/.ssh/authorized_keys', keyData: 'ssh-ed25519 AAAA u' }] } } },
    networkProfile: { networkInterfaces: [{ id: nicId(`${name}-nic`), primary: true, deleteOption: 'Delete' }] },
  };
}

const codes = (vm: VirtualMachine) => vm.instanceView?.statuses?.map((s) => s.code);

describe('ARM face: VM lists and instance views through @azure/arm-compute', () => {
  it('list and listAll follow nextLink over pages; statusOnly and $expand carry instance views; the scale-set $filter matches no VM, another $filter is 400', async () => {
    const { compute, call, run, advance, startVm } = await serve(config({ listPageSize: 2 }));
    for (const n of ['a', 'b', 'c']) await startVm(`vm-${n}`);
    await advance(61);
    expect((await run(all(compute.virtualMachines.list(RG)))).map((v) => v.name)).toEqual(['vm-a', 'vm-b', 'vm-c']);
    const raw = await call('GET', `${vmPath('').slice(0, -1)}?api-version=${CMP}&$expand=instanceView&$filter=${encodeURIComponent("virtualMachineScaleSet/id eq '/x'")}`);
    expect(raw.json['value']).toEqual([]);
    const first = await call('GET', `/subscriptions/${SUB}/providers/Microsoft.Compute/virtualMachines?api-version=${CMP}&statusOnly=true`);
    // The next page keeps the query (statusOnly) and adds a $skiptoken.
    expect(new URL(String(first.json['nextLink'])).searchParams.get('statusOnly')).toBe('true');
    const status = await run(all(compute.virtualMachines.listAll({ statusOnly: 'true' })));
    expect(status.map((v) => [v.name, codes(v)])).toEqual(['vm-a', 'vm-b', 'vm-c'].map((n) => [n, ['ProvisioningState/succeeded', 'PowerState/running']]));
    expect((await run(all(compute.virtualMachines.listAll()))).every((v) => v.instanceView === undefined)).toBe(true);
    const scaleSet = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/pool`;
    expect(await run(all(compute.virtualMachines.list(RG, { filter: `virtualMachineScaleSet/id eq '${scaleSet}'`, expand: 'instanceView' })))).toEqual([]);
    const bad = await run(all(compute.virtualMachines.list(RG, { filter: "name eq 'vm-a'" }))).catch((e: unknown) => e);
    expect(bad).toMatchObject({ statusCode: 400, code: 'InvalidParameter' });
    expect((await run(all(compute.virtualMachines.listByLocation('East US 2')))).map((v) => v.name)).toEqual(['vm-a', 'vm-b', 'vm-c']);
    expect(await run(all(compute.virtualMachines.listByLocation('westeurope')))).toEqual([]);
  });

  it('get with $expand=instanceView and instanceView(): creating, succeeded and running, failed with the allocation error, deleting', async () => {
    const { compute, run, advance, call } = await serve();
    // Raw calls here: they leave the manual clock alone, so the VM is seen while it is created and deleted.
    await call('PUT', `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/networkInterfaces/ok-nic?api-version=${NET}`, JSON.stringify({ location: 'eastus2', properties: { ipConfigurations: [{ name: 'ipconfig1', properties: { subnet: { id: SUBNET } } }] } }));
    const { location: _l, ...rest } = vmParams('ok', D2);
    const put = await call('PUT', `${vmPath('ok')}?api-version=${CMP}`, JSON.stringify({ location: 'eastus2', properties: { ...rest, networkProfile: { networkInterfaces: [{ id: nicId('ok-nic'), properties: { primary: true, deleteOption: 'Delete' } }] } } }));
    expect(put.status).toBe(201);
    const creating = await call('GET', `${vmPath('ok')}?api-version=${CMP}&$expand=instanceView`);
    expect((creating.json['properties'] as { instanceView: unknown }).instanceView).toEqual({
      computerName: 'ok',
      hyperVGeneration: 'V2',
      statuses: [{ code: 'ProvisioningState/creating', level: 'Info', displayStatus: 'Creating' }],
    });
    expect((await call('GET', `${vmPath('ok')}?api-version=${CMP}`)).json['properties']).not.toHaveProperty('instanceView');
    await advance(61);
    const view = await run(compute.virtualMachines.instanceView(RG, 'OK'));
    expect(view.statuses?.map((s) => [s.code, s.level, s.displayStatus])).toEqual([
      ['ProvisioningState/succeeded', 'Info', 'Provisioning succeeded'],
      ['PowerState/running', 'Info', 'VM running'],
    ]);
    expect(view.disks?.map((d) => d.name)).toEqual(['ok_OsDisk_1']);
    expect(codes(await run(compute.virtualMachines.get(RG, 'ok', { expand: 'instanceView' })))).toEqual(['ProvisioningState/succeeded', 'PowerState/running']);
    expect((await call('DELETE', `${vmPath('ok')}?api-version=${CMP}`)).status).toBe(202);
    const deleting = await call('GET', `${vmPath('ok')}/instanceView?api-version=${CMP}`);
    expect(deleting.json['statuses']).toEqual([{ code: 'ProvisioningState/deleting', level: 'Info', displayStatus: 'Deleting' }]);

    // An async allocation failure: the Failed VM's instance view says why.
    const f = await serve(config({ regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: { standardDSv5Family: 8 }, regionalQuotaCores: 400, allocationFailureRate: 1 }] }));
    // core-lro reports an LRO's failure as an Error whose message carries the operation's code and message.
    await expect(f.run(f.startVm('f').then((p) => p.pollUntilDone()))).rejects.toThrow(/AllocationFailed\. Allocation failed/);
    const failed = await f.run(f.compute.virtualMachines.instanceView(RG, 'f'));
    expect(failed.statuses).toEqual([
      expect.objectContaining({ code: 'ProvisioningState/failed/AllocationFailed', level: 'Error', displayStatus: 'Provisioning failed', message: expect.stringMatching(/^Allocation failed\. We do not have sufficient capacity/) }),
    ]);
  });
});

describe('ARM face: usages, sizes and preconditions', () => {
  it('usage.list shows each family and Total Regional vCPUs, moving with creates and deletes and agreeing with the quota refusal', async () => {
    const { compute, run, advance, startVm } = await serve();
    const usage = async () => new Map((await run(all(compute.usage.list('eastus2')))).map((u) => [u.name.value, u]));
    const before = await usage();
    expect(before.get('cores')).toMatchObject({ unit: 'Count', currentValue: 0, limit: 400, name: { localizedValue: 'Total Regional vCPUs' } });
    expect(before.get('standardDSv5Family')).toMatchObject({ currentValue: 0, limit: 8, name: { localizedValue: 'Standard DSv5 Family vCPUs' } });
    expect(before.get('standardNDSH200v5Family')).toMatchObject({ currentValue: 0, limit: 192 });
    expect(before.get('virtualMachines')).toMatchObject({ currentValue: 0, limit: 25_000 });
    await startVm('a');
    await startVm('b', 'Standard_D4s_v5');
    const during = await usage();
    expect([during.get('standardDSv5Family')?.currentValue, during.get('cores')?.currentValue, during.get('virtualMachines')?.currentValue]).toEqual([6, 6, 2]);
    // One more D4s_v5 (4 vCPUs) would exceed the family's 8: the refusal names the same numbers.
    const refused = await startVm('c', 'Standard_D4s_v5').catch((e: unknown) => e);
    expect(refused).toMatchObject({ statusCode: 409, code: 'OperationNotAllowed' });
    expect(String((refused as Error).message)).toContain('Current Limit: 8, Current Usage: 6, Additional Required: 4');
    await run(compute.virtualMachines.beginDeleteAndWait(RG, 'b'));
    await advance(61);
    expect((await usage()).get('standardDSv5Family')?.currentValue).toBe(2);
    await expect(run(all(compute.usage.list('westeurope')))).rejects.toMatchObject({ statusCode: 400 });
  });

  it('usages lag (knob usages.lagSeconds): a create shows in usage.list only after the lag', async () => {
    const { compute, run, advance, startVm } = await serve(config({ usages: { lagSeconds: 600 } }));
    const family = async () => new Map((await run(all(compute.usage.list('eastus2')))).map((u) => [u.name.value, u.currentValue])).get('standardDSv5Family');
    await startVm('a');
    expect(await family()).toBe(0);
    await advance(601);
    expect(await family()).toBe(2);
  });

  it('Spot VMs count against Total Regional Low-priority vCPUs only: no family or regional cores, and their own refusal', async () => {
    const cfg = config({ regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: { standardDSv5Family: 0 }, regionalQuotaCores: 0, lowPriorityQuotaCores: 6 }] });
    const { compute, network, run, advance } = await serve(cfg);
    const usage = async () => new Map((await run(all(compute.usage.list('eastus2')))).map((u) => [u.name.value, u]));
    const startSpot = async (name: string, vmSize: string) => {
      await run(network.networkInterfaces.beginCreateOrUpdateAndWait(RG, `${name}-nic`, { location: 'eastus2', ipConfigurations: [{ name: 'ipconfig1', subnet: { id: SUBNET } }] }));
      return run(compute.virtualMachines.beginCreateOrUpdate(RG, name, { ...vmParams(name, vmSize), priority: 'Spot', evictionPolicy: 'Delete', billingProfile: { maxPrice: -1 } }));
    };
    // The family and regional quotas are 0, yet a Spot D2s_v5 is admitted.
    await startSpot('s1', D2);
    const during = await usage();
    expect(during.get('lowPriorityCores')).toMatchObject({ currentValue: 2, limit: 6, name: { localizedValue: 'Total Regional Low-priority vCPUs' } });
    expect([during.get('cores')?.currentValue, during.get('standardDSv5Family')?.currentValue]).toEqual([0, 0]);
    // A D4s_v5 more would need 2 + 4 + 4 > 6 on the third: ARM's LowPriorityCores refusal, which the controller reads as Spot quota.
    await startSpot('s2', 'Standard_D4s_v5');
    const refused = await startSpot('s3', 'Standard_D4s_v5').catch((e: unknown) => e);
    expect(refused).toMatchObject({ statusCode: 409, code: 'OperationNotAllowed' });
    expect(String((refused as Error).message)).toMatch(/exceeding approved LowPriorityCores quota\. .*Current Limit: 6, Current Usage: 6, Additional Required: 4/);
    expect(classifyAzureError(toAzureError(refused))).toMatchObject({ kind: 'insufficientCapacity', quota: { scope: 'lowPriority' } });
    await run(compute.virtualMachines.beginDeleteAndWait(RG, 's2'));
    await advance(61);
    expect((await usage()).get('lowPriorityCores')?.currentValue).toBe(2);
  });

  it('VM sizes of a location and of a VM agree with Resource SKUs', async () => {
    const { compute, run, startVm } = await serve();
    const sizes = await run(all(compute.virtualMachineSizes.list('eastus2')));
    const skus = await run(all(compute.resourceSkus.list({ filter: "location eq 'eastus2'" })));
    const offered = skus.filter((k) => k.restrictions?.length === 0).map((k) => k.name);
    expect(sizes.map((z) => z.name).sort()).toEqual([...offered].sort());
    const h200 = sizes.find((z) => z.name === H200)!;
    const cap = (n: string) => skus.find((k) => k.name === H200)?.capabilities?.find((c) => c.name === n)?.value;
    expect([h200.numberOfCores, h200.memoryInMB, h200.maxDataDiskCount]).toEqual([Number(cap('vCPUs')), Number(cap('MemoryGB')) * 1024, Number(cap('MaxDataDiskCount'))]);
    await startVm('a');
    expect((await run(all(compute.virtualMachines.listAvailableSizes(RG, 'a')))).length).toBe(sizes.length);
  });

  it('a VM PUT with If-Match / If-None-Match: 412 PreconditionFailed unless the etag matches; the VM is untouched', async () => {
    const { compute, run, advance, startVm, call } = await serve();
    await startVm('a');
    await advance(61);
    const vm = await run(compute.virtualMachines.get(RG, 'a'));
    expect(vm.etag).toMatch(/^"\d+"$/);
    await expect(run(compute.virtualMachines.beginCreateOrUpdate(RG, 'a', vmParams('a', D2), { ifMatch: '"999"' }))).rejects.toMatchObject({
      statusCode: 412,
      code: 'PreconditionFailed',
      message: `Etag provided in if-match header "999" does not match etag ${vm.etag} of resource.`,
    });
    await expect(run(compute.virtualMachines.beginCreateOrUpdate(RG, 'a', vmParams('a', D2), { ifNoneMatch: '*' }))).rejects.toMatchObject({ statusCode: 412, code: 'PreconditionFailed' });
    expect((await run(compute.virtualMachines.beginCreateOrUpdateAndWait(RG, 'a', vmParams('a', D2), { ifMatch: vm.etag }))).provisioningState).toBe('Succeeded');
    // If-Match names a resource that must exist.
    const missing = await call('PUT', `${vmPath('nope')}?api-version=${CMP}`, JSON.stringify(vmParams('nope', D2)), { 'if-match': '*' });
    expect([missing.status, missing.json.error?.code]).toEqual([412, 'PreconditionFailed']);
  });

  it('a poller resumes from its serialized state in a new client; a second delete of a gone VM succeeds (204)', async () => {
    const { s, ca, compute, network, run, call } = await serve();
    await run(network.networkInterfaces.beginCreateOrUpdateAndWait(RG, 'a-nic', { location: 'eastus2', ipConfigurations: [{ name: 'ipconfig1', subnet: { id: SUBNET } }] }));
    // The current (non-deprecated) PollerLike API: submitted, serialized, restored elsewhere.
    const poller = compute.virtualMachines.createOrUpdate(RG, 'a', vmParams('a', D2));
    await run(poller.submitted());
    const state = await poller.serialize();
    const fresh = new ComputeManagementClient(credential, SUB, { endpoint: s.endpoint, tlsOptions: { ca }, retryOptions: { maxRetries: 0 } });
    const puts = () => Object.values(s.arm.armCalls()['vm.put'] ?? {}).reduce((n, c) => n + c, 0);
    const resumed = restorePoller(fresh, state, fresh.virtualMachines.createOrUpdate);
    expect((await run(resumed.pollUntilDone())).provisioningState).toBe('Succeeded');
    // Resuming polls the operation; it never sends the PUT again.
    expect(puts()).toBe(1);
    await run(compute.virtualMachines.delete(RG, 'a').pollUntilDone());
    await run(compute.virtualMachines.beginDeleteAndWait(RG, 'a'));
    expect((await call('DELETE', `${vmPath('a')}?api-version=${CMP}`)).status).toBe(204);
  });
});

describe('ARM face: PUT semantics', () => {
  it('a re-PUT or a PATCH replaces tags (NIC and VM, the VM etag moves); a PUT without location is LocationRequired; another location is InvalidResourceLocation', async () => {
    const { compute, network, run, advance, startVm, call } = await serve();
    await startVm('a');
    await advance(61);
    const nic = await run(network.networkInterfaces.beginCreateOrUpdateAndWait(RG, 'a-nic', { location: 'eastus2', tags: { team: 'ml' }, ipConfigurations: [{ name: 'ipconfig1', subnet: { id: SUBNET } }] }));
    expect(nic.tags).toEqual({ team: 'ml' });
    expect((await run(network.networkInterfaces.get(RG, 'a-nic'))).tags).toEqual({ team: 'ml' });
    const before = await run(compute.virtualMachines.get(RG, 'a'));
    const after = await run(compute.virtualMachines.beginCreateOrUpdateAndWait(RG, 'a', { ...vmParams('a', D2), tags: { owner: 'me' } }));
    expect(after.tags).toEqual({ owner: 'me' });
    expect(after.etag).not.toBe(before.etag);
    expect(after.provisioningState).toBe('Succeeded');

    const noLocation = await call('PUT', `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/networkInterfaces/b-nic?api-version=${NET}`, JSON.stringify({ properties: { ipConfigurations: [{ name: 'ipconfig1', properties: { subnet: { id: SUBNET } } }] } }));
    expect([noLocation.status, noLocation.json.error]).toEqual([400, { code: 'LocationRequired', message: 'The location property is required for this definition.' }]);
    const elsewhere = await run(network.networkInterfaces.beginCreateOrUpdateAndWait(RG, 'a-nic', { location: 'westus', ipConfigurations: [{ name: 'ipconfig1', subnet: { id: SUBNET } }] })).catch((e: unknown) => e);
    expect(elsewhere).toMatchObject({
      statusCode: 400,
      code: 'InvalidResourceLocation',
      message: `The resource 'a-nic' already exists in location 'eastus2' in resource group '${RG}'. A resource with the same name cannot be created in location 'westus'. Please select a new resource name.`,
    });
    await expect(run(compute.virtualMachines.beginCreateOrUpdate(RG, 'a', { ...vmParams('a', D2), location: 'West US' }))).rejects.toMatchObject({ statusCode: 400, code: 'InvalidResourceLocation' });
    // PATCH of tags: Compute's update (an LRO) and Network's updateTags replace the tags whole.
    const patched = await run(compute.virtualMachines.beginUpdateAndWait(RG, 'a', { tags: { owner: 'you', cost: 'x' } }));
    expect([patched.tags, patched.provisioningState]).toEqual([{ owner: 'you', cost: 'x' }, 'Succeeded']);
    expect((await run(compute.virtualMachines.get(RG, 'a'))).tags).toEqual({ owner: 'you', cost: 'x' });
    // The spec declares final-state-via: location for the update too: its Location URL answers with the VM.
    const raw = await call('PATCH', `${vmPath('a')}?api-version=${CMP}`, JSON.stringify({ tags: { owner: 'raw' } }));
    expect([raw.status, typeof raw.headers['location'], typeof raw.headers['azure-asyncoperation']]).toEqual([200, 'string', 'string']);
    const final = await call('GET', String(raw.headers['location']));
    expect([final.status, final.json.name, final.json.tags]).toEqual([200, 'a', { owner: 'raw' }]);
    const etagBefore = (await run(network.networkInterfaces.get(RG, 'a-nic'))).etag;
    const retagged = await run(network.networkInterfaces.updateTags(RG, 'a-nic', { tags: { team: 'infra' } }));
    expect(retagged.tags).toEqual({ team: 'infra' });
    expect(retagged.etag).not.toBe(etagBefore);
    await expect(run(network.networkInterfaces.updateTags(RG, 'nope', { tags: {} }))).rejects.toMatchObject({ statusCode: 404, code: 'ResourceNotFound' });
    // A NIC being deleted refuses writes with Network's AnotherOperationInProgress.
    await run(network.networkInterfaces.beginCreateOrUpdateAndWait(RG, 'gone-nic', { location: 'eastus2', ipConfigurations: [{ name: 'ipconfig1', subnet: { id: SUBNET } }] }));
    const del = await call('DELETE', `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/networkInterfaces/gone-nic?api-version=${NET}`);
    expect(del.status).toBe(202);
    const busy = await call('PUT', `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/networkInterfaces/gone-nic?api-version=${NET}`, JSON.stringify({ location: 'eastus2', properties: { ipConfigurations: [{ name: 'ipconfig1', properties: { subnet: { id: SUBNET } } }] } }));
    expect([busy.status, busy.json.error?.code, busy.json.error?.message]).toEqual([409, 'AnotherOperationInProgress', 'Another operation on this or dependent resource is in progress.']);
    const group = await call('PUT', `/subscriptions/${SUB}/resourcegroups/${RG}?api-version=2024-11-01`, JSON.stringify({ location: 'westus' }));
    expect([group.status, group.json.error?.code]).toEqual([409, 'InvalidResourceGroupLocation']);
    expect((await call('PUT', `/subscriptions/${SUB}/resourcegroups/${RG}?api-version=2024-11-01`, JSON.stringify({ location: 'East US 2' }))).status).toBe(200);
  });
});

describe('ARM face: the VM model round-trips', () => {
  it('GET shows the computerName and OS disk storage type the PUT set, on the VM and its disk (customData never)', async () => {
    const { compute, run, startVm, network } = await serve();
    await run(network.networkInterfaces.beginCreateOrUpdateAndWait(RG, 'r-nic', { location: 'eastus2', ipConfigurations: [{ name: 'ipconfig1', subnet: { id: SUBNET } }] }));
    const params = vmParams('r', D2);
    params.osProfile = { ...params.osProfile, computerName: 'host-r', customData: 'c2VjcmV0' };
    params.storageProfile = { ...params.storageProfile, osDisk: { createOption: 'FromImage', deleteOption: 'Delete', managedDisk: { storageAccountType: 'StandardSSD_LRS' } } };
    const vm = await run(compute.virtualMachines.beginCreateOrUpdateAndWait(RG, 'r', params));
    expect([vm.osProfile?.computerName, vm.storageProfile?.osDisk?.managedDisk?.storageAccountType, vm.osProfile?.customData]).toEqual(['host-r', 'StandardSSD_LRS', undefined]);
    expect((await run(compute.virtualMachines.instanceView(RG, 'r'))).computerName).toBe('host-r');
    expect((await run(compute.disks.get(RG, 'r_OsDisk_1'))).sku).toEqual({ name: 'StandardSSD_LRS', tier: 'Standard' });
    // computerName is fixed at creation, like the other osProfile properties.
    const renamed = { ...params, osProfile: { ...params.osProfile, computerName: 'other' } };
    await expect(run(compute.virtualMachines.beginCreateOrUpdate(RG, 'r', renamed))).rejects.toMatchObject({ statusCode: 409, code: 'PropertyChangeNotAllowed', message: "Changing property 'osProfile.computerName' is not allowed." });
    // Without them, ARM's defaults: the VM's name and Premium_LRS here.
    await startVm('d');
    const plain = await run(compute.virtualMachines.get(RG, 'd'));
    expect(plain.storageProfile?.osDisk?.managedDisk?.storageAccountType).toBe('Premium_LRS');
  });
});

describe('ARM face: subnets', () => {
  it('subnets.get shows the configured prefix and the NIC IP configurations holding its addresses', async () => {
    const { network, run, call } = await serve();
    for (const n of ['s1', 's2']) await run(network.networkInterfaces.beginCreateOrUpdateAndWait(RG, n, { location: 'eastus2', ipConfigurations: [{ name: 'ipconfig1', subnet: { id: SUBNET } }] }));
    const subnet = await run(network.subnets.get(RG, 'vnet', 'nodes'));
    expect([subnet.id, subnet.addressPrefix, subnet.provisioningState]).toEqual([SUBNET, '10.1.0.0/24', 'Succeeded']);
    expect(subnet.ipConfigurations?.map((c) => c.id)).toEqual([nicId('s1'), nicId('s2')].map((id) => `${id}/ipConfigurations/ipconfig1`));
    const missing = await call('GET', `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nope?api-version=${NET}`);
    expect([missing.status, missing.json.error?.code]).toEqual([404, 'NotFound']);
  });
});

describe('ARM face: names and ids are case-insensitive', () => {
  it('a VM references its NIC by an id in another case; gets, lists and deletes in any case reach the same resources, which keep the case they were created with', async () => {
    const { compute, network, run, advance } = await serve();
    await run(network.networkInterfaces.beginCreateOrUpdateAndWait(RG, 'Nic-Mixed', { location: 'eastus2', ipConfigurations: [{ name: 'ipconfig1', subnet: { id: SUBNET } }] }));
    const params = vmParams('Vm-Mixed', D2);
    params.networkProfile = { networkInterfaces: [{ id: nicId('Nic-Mixed').toUpperCase().replace('/SUBSCRIPTIONS/', '/subscriptions/'), primary: true, deleteOption: 'Delete' }] };
    await run(compute.virtualMachines.beginCreateOrUpdate(RG.toUpperCase(), 'VM-MIXED', params));
    await advance(61);
    const vm = await run(compute.virtualMachines.get(RG.toLowerCase(), 'vm-mixed'));
    expect([vm.name, vm.provisioningState]).toEqual(['VM-MIXED', 'Succeeded']);
    const nic = await run(network.networkInterfaces.get(RG.toUpperCase(), 'NIC-MIXED'));
    expect([nic.name, nic.virtualMachine?.id?.toLowerCase()]).toEqual(['Nic-Mixed', vm.id?.toLowerCase()]);
    expect((await run(all(compute.virtualMachines.list(RG.toUpperCase())))).map((v) => v.name)).toEqual(['VM-MIXED']);
    await run(compute.virtualMachines.beginDeleteAndWait(RG, 'vm-MIXED'));
    await expect(run(compute.virtualMachines.get(RG, 'VM-MIXED'))).rejects.toMatchObject({ statusCode: 404 });
    // The VM went within the NIC's 180 s reservation, so its cascade left the NIC; it can go once the reservation is over.
    await advance(181);
    await run(network.networkInterfaces.beginDeleteAndWait(RG, 'nic-mixed'));
    await expect(run(network.networkInterfaces.get(RG, 'Nic-Mixed'))).rejects.toMatchObject({ statusCode: 404 });
  });
});

describe('ARM face: what ARM refuses, and what the simulator does not model', () => {
  it('HEAD existence checks, unknown namespaces and types, malformed bodies, and 501 for real paths the simulator does not serve', async () => {
    const { call, compute, run, startVm } = await serve();
    expect((await call('HEAD', `/subscriptions/${SUB}/resourcegroups/${RG}?api-version=2024-11-01`)).status).toBe(204);
    const absent = await call('HEAD', `/subscriptions/${SUB}/resourcegroups/nope?api-version=2024-11-01`);
    expect([absent.status, absent.text]).toEqual([404, '']);
    // Compute and Network do not serve HEAD on their resources: 405 without a body.
    const vmHead = await call('HEAD', `${vmPath('a')}?api-version=${CMP}`);
    expect([vmHead.status, vmHead.text]).toEqual([405, '']);
    const ns = await call('GET', `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Nope/things/x?api-version=${CMP}`);
    expect([ns.status, ns.json.error]).toEqual([404, { code: 'InvalidResourceNamespace', message: "The resource namespace 'Microsoft.Nope' is invalid." }]);
    const type = await call('GET', `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Compute/fooBars/x?api-version=${CMP}`);
    expect([type.status, type.json.error?.code, type.json.error?.message]).toEqual([
      404,
      'InvalidResourceType',
      `The resource type 'fooBars' could not be found in the namespace 'Microsoft.Compute' for api version '${CMP}'.`,
    ]);
    const noAuth = await call('GET', `${vmPath('a')}?api-version=${CMP}`, undefined, { authorization: '' });
    expect([noAuth.status, noAuth.json.error]).toEqual([401, { code: 'AuthenticationFailed', message: "Authentication failed. The 'Authorization' header is missing." }]);
    const basic = await call('GET', `${vmPath('a')}?api-version=${CMP}`, undefined, { authorization: 'Basic eDp5' });
    expect([basic.status, basic.json.error?.code]).toEqual([401, 'AuthenticationFailedInvalidHeader']);
    // Real ARM routes the fake does not serve: 501, never a 404 or 405 a client could take at its word.
    for (const [method, path] of [
      ['GET', `/subscriptions/${SUB}/resourcegroups?api-version=2024-11-01`],
      ['DELETE', `/subscriptions/${SUB}/resourcegroups/${RG}?api-version=2024-11-01`],
      ['GET', `/subscriptions/${SUB}/providers/Microsoft.Compute?api-version=2024-11-01`],
      ['PUT', `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Compute/disks/d?api-version=${CMP}`],
      ['GET', `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/virtualNetworks/vnet?api-version=${NET}`],
      ['GET', `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets?api-version=${CMP}`],
    ] as const) {
      const r = await call(method, path, method === 'PUT' ? '{"location":"eastus2"}' : undefined);
      expect([method, path, r.status, r.json.error?.code]).toEqual([method, path, 501, 'NotImplemented']);
    }
    // ARM takes JSON only (curl's -d sends a form content type).
    const nicUrl = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/networkInterfaces/x?api-version=${NET}`;
    const form = await call('PUT', nicUrl, '{"location":"eastus2"}', { 'content-type': 'application/x-www-form-urlencoded' });
    expect([form.status, form.json.error]).toEqual([415, { code: 'UnsupportedMediaType', message: "The content media type 'application/x-www-form-urlencoded' is not supported. Only 'application/json' is supported." }]);
    const untyped = await call('PUT', nicUrl, '{"location":"eastus2"}', { 'content-type': '' });
    expect([untyped.status, untyped.json.error?.message]).toEqual([415, "The content media type '<null>' is not supported. Only 'application/json' is supported."]);
    const junk = await call('PUT', `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/networkInterfaces/x?api-version=${NET}`, '{"location":');
    expect([junk.status, junk.json.error?.code]).toEqual([400, 'InvalidRequestContent']);
    await startVm('a');
    // A real ARM action the simulator does not model is never a 404 a client could read as "gone".
    await expect(run(compute.virtualMachines.beginRedeploy(RG, 'a'))).rejects.toMatchObject({ statusCode: 501, code: 'NotImplemented' });
    await expect(run(compute.virtualMachines.beginUpdate(RG, 'a', { hardwareProfile: { vmSize: 'Standard_D4s_v5' } }))).rejects.toMatchObject({ statusCode: 501, code: 'NotImplemented' });
    const subResource = await call('GET', `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/networkInterfaces/a-nic/effectiveRouteTable?api-version=${NET}`);
    expect(subResource.status).toBe(501);
  });
});
