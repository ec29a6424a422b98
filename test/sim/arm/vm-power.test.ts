import { describe, expect, it } from 'vitest';
import { ComputeManagementClient, type VirtualMachine } from '@azure/arm-compute';
import { NetworkManagementClient } from '@azure/arm-network';
import type { FakeArmConfig } from '../../../src/sim/arm/types.js';
import { CMP, credential, faceServer } from './face-client.js';
import { RG, SUB, SUBNET } from './helpers.js';

/**
 * VMs that ARM or a person takes away, through the official SDK over the HTTPS face: power
 * actions (deallocate, powerOff, start, restart) as Compute answers them, and Spot evictions
 * (a region's rate, simulateEviction, the spotEviction fault) per the VM's eviction policy.
 */
const D2 = 'Standard_D2s_v5';
const serveFace = faceServer(17);

function config(over: Partial<FakeArmConfig['regions'][number]> = {}): FakeArmConfig {
  return {
    regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: { standardDSv5Family: 16 }, regionalQuotaCores: 16, lowPriorityQuotaCores: 16, ...over }],
    subnets: [{ id: SUBNET, addressPrefix: '10.1.0.0/24' }],
    listLagSeconds: { appearSeconds: 0, disappearSeconds: 0 },
    latencyMs: { vmCreate: { min: 60_000, max: 60_000 }, vmDelete: { min: 30_000, max: 30_000 }, gpuVmDelete: { min: 30_000, max: 30_000 } },
  };
}

async function serve(cfg: FakeArmConfig) {
  const { s, ca, call, run, advance } = await serveFace(cfg);
  const opts = { endpoint: s.endpoint, tlsOptions: { ca }, retryOptions: { maxRetries: 0 } };
  const compute = new ComputeManagementClient(credential, SUB, opts);
  const network = new NetworkManagementClient(credential, SUB, opts);
  /** A NIC and a VM on it (NIC and OS disk deleteOption Delete), provisioned. */
  const createVm = async (name: string, spot?: 'Delete' | 'Deallocate') => {
    await run(network.networkInterfaces.beginCreateOrUpdateAndWait(RG, `${name}-nic`, { location: 'eastus2', ipConfigurations: [{ name: 'ipconfig1', subnet: { id: SUBNET } }] }));
    const params: VirtualMachine = { ...vmParams(name), ...(spot ? { priority: 'Spot', evictionPolicy: spot, billingProfile: { maxPrice: -1 } } : {}) };
    const poller = await run(compute.virtualMachines.beginCreateOrUpdate(RG, name, params));
    await advance(61);
    return run(poller.pollUntilDone());
  };
  // Reads go without `run`: it would fire the fake's pending timers (a power transition, an eviction) while the call is in flight.
  const power = async (name: string) => (await compute.virtualMachines.instanceView(RG, name)).statuses?.map((st) => st.code).find((c) => c?.startsWith('PowerState/'));
  const usage = async (counter: string) => {
    for await (const u of compute.usage.list('eastus2')) if (u.name.value === counter) return u.currentValue;
    return undefined;
  };
  const exists = async (kind: 'nic' | 'vm' | 'disk', name: string) => {
    const get = kind === 'nic' ? network.networkInterfaces.get(RG, `${name}-nic`) : kind === 'vm' ? compute.virtualMachines.get(RG, name) : compute.disks.get(RG, `${name}-osdisk`);
    return get.then(() => true, (e: { statusCode?: number }) => (e.statusCode === 404 ? false : Promise.reject(e)));
  };
  return { s, call, compute, run, advance, createVm, power, usage, exists };
}

function vmParams(name: string): VirtualMachine {
  return {
    location: 'eastus2',
    hardwareProfile: { vmSize: D2 },
    storageProfile: {
      imageReference: { publisher: 'Canonical', offer: 'ubuntu-24_04-lts', sku: 'server', version: 'latest' },
      osDisk: { name: `${name}-osdisk`, createOption: 'FromImage', deleteOption: 'Delete' },
    },
    osProfile: { computerName: name, adminUsername: 'azureuser', linuxConfiguration: { disablePasswordAuthentication: true, ssh: { publicKeys: [{ path: '/home/azureuser/.ssh/authorized_keys', keyData: 'ssh-ed25519 AAAA u' }] } } },
    networkProfile: { networkInterfaces: [{ id: `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/networkInterfaces/${name}-nic`, primary: true, deleteOption: 'Delete' }] },
  };
}

const vmPath = (name: string, action: string) => `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachines/${name}/${action}?api-version=${CMP}`;

describe('ARM face: VM power actions', () => {
  it('deallocate, start, powerOff and restart answer 202 with an operation; the instance view moves through the power states; a deallocated VM keeps its cores', async () => {
    const { compute, call, run, advance, createVm, power, usage } = await serve(config());
    await createVm('a');
    expect(await power('a')).toBe('PowerState/running');
    expect(await usage('cores')).toBe(2);

    // The raw answer: 202, Azure-AsyncOperation and Location, as Compute sends them.
    const accepted = await call('POST', vmPath('a', 'deallocate'));
    expect(accepted.status).toBe(202);
    expect(accepted.headers['azure-asyncoperation']).toMatch(/\/providers\/Microsoft\.Compute\/locations\/eastus2\/operations\//);
    expect(accepted.headers['location']).toBeDefined();
    expect(await power('a')).toBe('PowerState/deallocating');
    await advance(31);
    expect(await power('a')).toBe('PowerState/deallocated');
    // Quota counts allocated and deallocated VMs alike.
    expect(await usage('cores')).toBe(2);
    // A GET with the instance view shows the same (what the controller reads); the provisioning state stays Succeeded.
    const got = await compute.virtualMachines.get(RG, 'a', { expand: 'instanceView' });
    expect(got.provisioningState).toBe('Succeeded');
    expect(got.instanceView?.statuses?.map((st) => st.code)).toContain('PowerState/deallocated');

    // Through the SDK's pollers: start, powerOff, and a restart a stopped VM refuses.
    const start = await compute.virtualMachines.beginStart(RG, 'a');
    expect(await power('a')).toBe('PowerState/starting');
    await advance(61);
    await run(start.pollUntilDone());
    expect(await power('a')).toBe('PowerState/running');
    const off = await compute.virtualMachines.beginPowerOff(RG, 'a');
    await advance(31);
    await run(off.pollUntilDone());
    expect(await power('a')).toBe('PowerState/stopped');
    const refused = await compute.virtualMachines.beginRestart(RG, 'a').then(() => undefined, (e: unknown) => e);
    expect(refused).toMatchObject({ statusCode: 409, code: 'OperationNotAllowed' });
    // Deallocating a deallocated VM, or starting a running one, just succeeds.
    await compute.virtualMachines.beginDeallocate(RG, 'a');
    await advance(31);
    expect(await power('a')).toBe('PowerState/deallocated');
    const again = await call('POST', vmPath('a', 'deallocate'));
    expect(again.status).toBe(202);
    const op = await call('GET', String(again.headers['azure-asyncoperation']));
    expect(op.json['status']).toBe('Succeeded');

    // Actions the fake does not model still answer 501; a GET of an action path is 405; a missing VM is 404.
    expect((await call('POST', vmPath('a', 'redeploy'))).status).toBe(501);
    expect((await call('POST', `${vmPath('a', 'deallocate')}&hibernate=true`)).status).toBe(501);
    expect((await call('GET', vmPath('a', 'start'))).status).toBe(405);
    expect((await call('POST', vmPath('nope', 'start'))).json.error?.code).toBe('ResourceNotFound');
  });

  it('a VM being created or deleted refuses power actions (409 OperationNotAllowed)', async () => {
    const { call, compute, advance, createVm } = await serve(config());
    await createVm('a');
    await compute.virtualMachines.beginDelete(RG, 'a');
    const r = await call('POST', vmPath('a', 'deallocate'));
    expect([r.status, r.json.error?.code]).toEqual([409, 'OperationNotAllowed']);
    expect(r.json.error?.message).toMatch(/marked for deletion/);
    await advance(31);
  });
});

describe('ARM face: Spot evictions', () => {
  it('at the region rate, after the Preempt notice: policy Delete takes the VM, its NIC and OS disk; Deallocate leaves it deallocated holding its Spot cores; regular VMs stay', async () => {
    const { createVm, advance, exists, power, usage } = await serve(config({ spotEvictionRatePerHour: 30 }));
    await createVm('del', 'Delete');
    await createVm('keep', 'Deallocate');
    await createVm('reg');
    // 30 an hour: a mean of 2 minutes; after 2 hours every Spot VM has been evicted (p = 1 - e^-60).
    for (let i = 0; i < 120; i++) await advance(60);
    expect(await exists('vm', 'del')).toBe(false);
    expect(await exists('nic', 'del')).toBe(false);
    expect(await exists('disk', 'del')).toBe(false);
    expect(await power('keep')).toBe('PowerState/deallocated');
    expect(await exists('nic', 'keep')).toBe(true);
    expect(await usage('lowPriorityCores')).toBe(2);
    expect(await power('reg')).toBe('PowerState/running');
  });

  it('simulateEviction (204) and the spotEviction fault evict after 30 s of notice; a regular VM refuses simulateEviction', async () => {
    const { s, compute, call, advance, createVm, exists, power } = await serve(config());
    await createVm('a', 'Delete');
    await createVm('b', 'Deallocate');
    await createVm('r');
    await compute.virtualMachines.simulateEviction(RG, 'a');
    await advance(29);
    expect((await compute.virtualMachines.get(RG, 'a')).provisioningState).toBe('Succeeded');
    await advance(2);
    expect((await compute.virtualMachines.get(RG, 'a')).provisioningState).toBe('Deleting');
    await advance(31);
    expect(await exists('vm', 'a')).toBe(false);
    expect(await exists('nic', 'a')).toBe(false);
    const regular = await call('POST', vmPath('r', 'simulateEviction'));
    expect([regular.status, regular.json.error?.code]).toEqual([409, 'OperationNotAllowed']);
    // A capacity reclaim of every Spot VM of the region, injected as a fault.
    const injected = await call('POST', '/_sim/faults', { kind: 'spotEviction', location: 'eastus2', evictFraction: 1 });
    expect(injected.status).toBe(200);
    await advance(31);
    expect(await power('b')).toBe('PowerState/deallocating');
    await advance(31);
    expect(await power('b')).toBe('PowerState/deallocated');
    expect(await power('r')).toBe('PowerState/running');
    expect(s.arm.snapshot().vms.map((v) => v.name).sort()).toEqual(['b', 'r']);
  });
});
