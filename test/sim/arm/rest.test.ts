import { describe, expect, it } from 'vitest';
import { createArmRestHandler, type ArmHttpResponse, type ArmRestOptions } from '../../../src/sim/arm/rest.js';
import { ZERO_LATENCY_MS } from '../../../src/sim/arm/defaults.js';
import type { FakeArmConfig } from '../../../src/sim/arm/fake-arm.js';
import { baseConfig, H200, harness, RG, SUB, SUBNET, type Harness } from './helpers.js';

const BASE = 'https://fake-arm.test';
const NET_API = '2026-01-01';
const CMP_API = '2024-07-01';
const nicPath = (name: string) => `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/networkInterfaces/${name}`;
const vmPath = (name: string) => `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachines/${name}`;
const diskPath = (name: string) => `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Compute/disks/${name}`;

type Body = Record<string, unknown> & { error?: { code: string; message: string } };

interface Rest {
  h: Harness;
  call(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<ArmHttpResponse & { json: Body }>;
}

function rest(config: FakeArmConfig = baseConfig(), extra: Partial<ArmRestOptions> = {}): Rest {
  const h = harness(config);
  const handler = createArmRestHandler(h.arm, { baseUrl: BASE, clock: h.clock, lroRetryAfterSeconds: 10, ...extra });
  return {
    h,
    async call(method, url, body, headers = { Authorization: 'Bearer test-token' }) {
      const withType = body === undefined ? headers : { 'Content-Type': 'application/json', ...headers };
      const res = await handler({ method, url, headers: withType, body: body === undefined ? undefined : JSON.stringify(body) });
      return { ...res, json: res.body ? (JSON.parse(res.body) as Body) : {} };
    },
  };
}

/** Follows an absolute URL the face handed out. */
const rel = (abs: string): string => abs.slice(BASE.length);

function nicBody(location = 'eastus2') {
  return {
    location,
    tags: { 'karpenter.sh_nodeclaim': 'a' },
    properties: { ipConfigurations: [{ name: 'ipconfig1', properties: { subnet: { id: SUBNET }, privateIPAllocationMethod: 'Dynamic' } }] },
  };
}

function vmBody(nicName: string, over: Record<string, unknown> = {}) {
  return {
    location: 'eastus2',
    tags: { 'karpenter.sh_nodeclaim': 'a' },
    properties: {
      hardwareProfile: { vmSize: H200 },
      storageProfile: {
        imageReference: { publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' },
        osDisk: { name: 'vm-a-osdisk', createOption: 'FromImage', deleteOption: 'Delete', diskSizeGB: 256, managedDisk: { storageAccountType: 'Premium_LRS' } },
      },
      osProfile: {
        computerName: 'vm-a',
        adminUsername: 'azureuser',
        customData: 'c2VjcmV0LWJvb3RzdHJhcC10b2tlbg==',
        linuxConfiguration: { disablePasswordAuthentication: true, ssh: { publicKeys: [{ path: '/home/azureuser/.ssh/authorized_keys', keyData: 'ssh-ed25519 AAAA' }] } },
      },
      networkProfile: { networkInterfaces: [{ id: `${nicPath(nicName)}`, properties: { primary: true, deleteOption: 'Delete' } }] },
      priority: 'Regular',
      ...over,
    },
  };
}

describe('ARM REST face: request validation', () => {
  it('requires api-version (400 MissingApiVersionParameter) and a bearer token (401)', async () => {
    const { call } = rest();
    const noApi = await call('GET', nicPath('x'));
    expect(noApi.status).toBe(400);
    expect(noApi.json.error?.code).toBe('MissingApiVersionParameter');
    const noAuth = await call('GET', `${nicPath('x')}?api-version=${NET_API}`, undefined, {});
    expect(noAuth.status).toBe(401);
    expect(noAuth.json.error?.code).toBe('AuthenticationFailed');
    const unknown = await call('GET', `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Storage/storageAccounts/x?api-version=1`);
    expect(unknown.status).toBe(404);
    const otherSub = await call('GET', `/subscriptions/11111111-1111-1111-1111-111111111111/providers/Microsoft.Compute/virtualMachines?api-version=${CMP_API}`);
    expect(otherSub.status).toBe(404);
    expect(otherSub.json.error?.code).toBe('SubscriptionNotFound');
    const bad = await call('PUT', `${nicPath('x')}?api-version=${NET_API}`, { location: 'eastus2' });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.code).toBe('InvalidParameter');
    expect(bad.headers['x-ms-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('ARM REST face: network interfaces', () => {
  it('PUT 201 then 200, ARM JSON shape, Azure-AsyncOperation that reports Succeeded; GET and 404', async () => {
    const { call } = rest();
    const put = await call('PUT', `${nicPath('nic-a')}?api-version=${NET_API}`, nicBody());
    expect(put.status).toBe(201);
    expect(put.headers['content-type']).toContain('application/json');
    const props = put.json['properties'] as Record<string, unknown>;
    expect(props['provisioningState']).toBe('Succeeded');
    expect(put.json).toMatchObject({
      id: nicPath('nic-a'),
      name: 'nic-a',
      type: 'Microsoft.Network/networkInterfaces',
      location: 'eastus2',
      tags: { 'karpenter.sh_nodeclaim': 'a' },
      properties: { ipConfigurations: [{ name: 'ipconfig1', properties: { privateIPAddress: '10.1.0.4', subnet: { id: SUBNET } } }] },
    });
    const op = put.headers['azure-asyncoperation']!;
    expect(op).toMatch(new RegExp(`^${BASE}/subscriptions/${SUB}/providers/Microsoft.Network/locations/eastus2/operations/op-\\d+\\?api-version=${NET_API}$`));
    const status = await call('GET', rel(op));
    expect(status.status).toBe(200);
    expect(status.json).toMatchObject({ status: 'Succeeded' });

    const again = await call('PUT', `${nicPath('nic-a')}?api-version=${NET_API}`, nicBody());
    expect(again.status).toBe(200);
    const got = await call('GET', `${nicPath('NIC-A')}?api-version=${NET_API}`); // ARM ids are case-insensitive
    expect(got.status).toBe(200);
    expect(got.json['id']).toBe(nicPath('nic-a'));
    const missing = await call('GET', `${nicPath('nope')}?api-version=${NET_API}`);
    expect(missing.status).toBe(404);
    expect(missing.json.error).toEqual({
      code: 'ResourceNotFound',
      message: `The Resource 'Microsoft.Network/networkInterfaces/nope' under resource group '${RG}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
    });
    const list = await call('GET', `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/networkInterfaces?api-version=${NET_API}`);
    expect((list.json['value'] as unknown[]).length).toBe(1);
    const subList = await call('GET', `/subscriptions/${SUB}/providers/Microsoft.Network/networkInterfaces?api-version=${NET_API}`);
    expect((subList.json['value'] as unknown[]).length).toBe(1);
  });

  it('DELETE: 202 with Azure-AsyncOperation and Location; 204 when already gone; 400 SubnetIsFull body', async () => {
    const { call, h } = rest(baseConfig({ subnets: [{ id: SUBNET, addressPrefix: '10.1.0.0/29' }] }));
    for (const n of ['a', 'b', 'c']) expect((await call('PUT', `${nicPath(n)}?api-version=${NET_API}`, nicBody())).status).toBe(201);
    const full = await call('PUT', `${nicPath('d')}?api-version=${NET_API}`, nicBody());
    expect(full.status).toBe(400);
    expect(full.json.error?.code).toBe('SubnetIsFull');
    expect(full.json.error?.message).toBe('Subnet nodes with address prefix 10.1.0.0/29 does not have enough capacity for 1 IP addresses.');
    const del = await call('DELETE', `${nicPath('a')}?api-version=${NET_API}`);
    expect(del.status).toBe(202);
    expect(del.headers['azure-asyncoperation']).toContain('/providers/Microsoft.Network/locations/eastus2/operations/');
    expect(del.headers['location']).toContain('/providers/Microsoft.Network/locations/eastus2/operationResults/');
    // Microsoft.Network deletes asynchronously: in progress, then done a few seconds later
    expect((await call('GET', rel(del.headers['location']!))).status).toBe(202);
    expect((await call('GET', `${nicPath('a')}?api-version=${NET_API}`)).json).toMatchObject({ properties: { provisioningState: 'Deleting' } });
    await h.advance(2_500);
    expect((await call('GET', rel(del.headers['location']!))).status).toBe(204);
    const gone = await call('DELETE', `${nicPath('a')}?api-version=${NET_API}`);
    expect(gone.status).toBe(204);
  });
});

describe('ARM REST face: virtual machines', () => {
  it('PUT 201 Creating + LRO headers; never echoes customData; polls InProgress then Succeeded; NIC shows virtualMachine.id', async () => {
    const r = rest();
    const { call, h } = r;
    await call('PUT', `${nicPath('nic-a')}?api-version=${NET_API}`, nicBody());
    const put = await call('PUT', `${vmPath('vm-a')}?api-version=${CMP_API}`, vmBody('nic-a'));
    expect(put.status).toBe(201);
    expect(put.body).not.toContain('c2VjcmV0');
    expect(put.json).toMatchObject({
      id: vmPath('vm-a'),
      type: 'Microsoft.Compute/virtualMachines',
      properties: {
        provisioningState: 'Creating',
        hardwareProfile: { vmSize: H200 },
        networkProfile: { networkInterfaces: [{ id: nicPath('nic-a'), properties: { deleteOption: 'Delete' } }] },
        storageProfile: { osDisk: { name: 'vm-a-osdisk', deleteOption: 'Delete' } },
      },
    });
    expect(put.headers['retry-after']).toBe('10');
    const op = put.headers['azure-asyncoperation']!;
    expect(op).toContain(`/subscriptions/${SUB}/providers/Microsoft.Compute/locations/eastus2/operations/`);
    const running = await call('GET', rel(op));
    expect(running.json['status']).toBe('InProgress');
    expect(running.headers['retry-after']).toBe('10');
    const nic = await call('GET', `${nicPath('nic-a')}?api-version=${NET_API}`);
    expect(nic.json).toMatchObject({ properties: { virtualMachine: { id: vmPath('vm-a') } } });

    await h.advance(240_000);
    const done = await call('GET', rel(op));
    expect(done.json).toMatchObject({ status: 'Succeeded' });
    expect(typeof done.json['endTime']).toBe('string');
    const vm = await call('GET', `${vmPath('vm-a')}?api-version=${CMP_API}`);
    expect(vm.json).toMatchObject({ properties: { provisioningState: 'Succeeded', storageProfile: { osDisk: { managedDisk: { id: diskPath('vm-a-osdisk') } } } } });
    expect(vm.body).not.toContain('customData');
    const disk = await call('GET', `${diskPath('vm-a-osdisk')}?api-version=${CMP_API}`);
    expect(disk.json).toMatchObject({ managedBy: vmPath('vm-a'), properties: { diskState: 'Attached', diskSizeGB: 256 } });
    const again = await call('PUT', `${vmPath('vm-a')}?api-version=${CMP_API}`, vmBody('nic-a'));
    expect(again.status).toBe(200);
    expect(again.headers['azure-asyncoperation']).toBeUndefined();
  });

  it('sync refusals carry Azure codes and messages without a prefix; the NIC is then reserved', async () => {
    const { call } = rest(baseConfig({ regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 100_000, familyQuotaCores: { standardNDSH200v5Family: 0 } }] }));
    await call('PUT', `${nicPath('nic-a')}?api-version=${NET_API}`, nicBody());
    const put = await call('PUT', `${vmPath('vm-a')}?api-version=${CMP_API}`, vmBody('nic-a'));
    expect(put.status).toBe(409);
    expect(put.json.error?.code).toBe('OperationNotAllowed');
    expect(put.json.error?.message).toMatch(/^Operation could not be completed as it results in exceeding approved standardNDSH200v5Family Cores quota\./);
    const del = await call('DELETE', `${nicPath('nic-a')}?api-version=${NET_API}`);
    expect(del.status).toBe(400);
    expect(del.json.error?.code).toBe('NicReservedForAnotherVm');
    expect(del.json.error?.message).toContain(`Reserved VM: ${vmPath('vm-a')}`);
  });

  it('an async AllocationFailed shows as a Failed operation document with the error; the VM stays, Failed', async () => {
    const { call, h } = rest(baseConfig({ regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 100_000, familyQuotaCores: { standardNDSH200v5Family: 96_000 }, allocationFailureRate: 1 }] }));
    await call('PUT', `${nicPath('nic-a')}?api-version=${NET_API}`, nicBody());
    const put = await call('PUT', `${vmPath('vm-a')}?api-version=${CMP_API}`, vmBody('nic-a'));
    expect(put.status).toBe(201);
    await h.advance(60_000);
    const st = await call('GET', rel(put.headers['azure-asyncoperation']!));
    expect(st.status).toBe(200);
    expect(st.json['status']).toBe('Failed');
    expect(st.json.error?.code).toBe('AllocationFailed');
    expect((await call('GET', `${vmPath('vm-a')}?api-version=${CMP_API}`)).json).toMatchObject({ properties: { provisioningState: 'Failed' } });
  });

  it('DELETE 202 with Azure-AsyncOperation + Location (monitor 202 then 204); missing VM 204; cascade', async () => {
    const { call, h } = rest(baseConfig({ latencyMs: { ...ZERO_LATENCY_MS, vmDelete: { min: 30_000, max: 30_000 } } }));
    await call('PUT', `${nicPath('nic-a')}?api-version=${NET_API}`, nicBody());
    await call('PUT', `${vmPath('vm-a')}?api-version=${CMP_API}`, vmBody('nic-a'));
    // Past the NIC's 180 s reservation, so the cascade may delete it.
    await h.advance(180_000);
    const del = await call('DELETE', `${vmPath('vm-a')}?api-version=${CMP_API}`);
    expect(del.status).toBe(202);
    const monitor = rel(del.headers['location']!);
    expect(monitor).toContain('monitor=true');
    expect(del.headers['azure-asyncoperation']).toContain('/providers/Microsoft.Compute/locations/eastus2/operations/');
    const m1 = await call('GET', monitor);
    expect(m1.status).toBe(202);
    expect(m1.headers['retry-after']).toBe('10');
    expect((await call('GET', `${vmPath('vm-a')}?api-version=${CMP_API}`)).json).toMatchObject({ properties: { provisioningState: 'Deleting' } });
    await h.advance(30_000);
    expect((await call('GET', monitor)).status).toBe(204);
    expect((await call('GET', `${nicPath('nic-a')}?api-version=${NET_API}`)).status).toBe(404);
    expect((await call('GET', `${diskPath('vm-a-osdisk')}?api-version=${CMP_API}`)).status).toBe(404);
    expect((await call('DELETE', `${vmPath('vm-a')}?api-version=${CMP_API}`)).status).toBe(204);
    expect(h.arm.armCalls()['vm.delete']).toEqual({ '202': 1, '404': 1 });
  });

  it('Azure default deleteOption (Detach) leaves NIC and disk behind; disk list and DELETE', async () => {
    const { call, h } = rest(baseConfig({ latencyMs: { ...ZERO_LATENCY_MS } }));
    await call('PUT', `${nicPath('nic-a')}?api-version=${NET_API}`, nicBody());
    const body = vmBody('nic-a');
    const props = body.properties as { networkProfile: { networkInterfaces: Array<{ properties?: unknown }> }; storageProfile: { osDisk: { deleteOption?: string } } };
    delete props.networkProfile.networkInterfaces[0]!.properties;
    delete props.storageProfile.osDisk.deleteOption;
    await call('PUT', `${vmPath('vm-a')}?api-version=${CMP_API}`, body);
    await h.advance(0);
    await call('DELETE', `${vmPath('vm-a')}?api-version=${CMP_API}`);
    await h.advance(0);
    const disks = await call('GET', `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Compute/disks?api-version=${CMP_API}`);
    expect(disks.json['value']).toMatchObject([{ name: 'vm-a-osdisk', properties: { diskState: 'Unattached' } }]);
    expect((await call('DELETE', `${diskPath('vm-a-osdisk')}?api-version=${CMP_API}`)).status).toBe(202);
    expect((await call('DELETE', `${diskPath('vm-a-osdisk')}?api-version=${CMP_API}`)).status).toBe(204);
    expect((await call('GET', `${nicPath('nic-a')}?api-version=${NET_API}`)).status).toBe(200);
  });
});

describe('ARM REST face: throttling, SKUs and simulator control', () => {
  it('429 carries Retry-After and x-ms-ratelimit-remaining-subscription-writes; successes carry the remaining count', async () => {
    const { call, h } = rest(baseConfig({ throttling: true }));
    const ok = await call('PUT', `${nicPath('a')}?api-version=${NET_API}`, nicBody());
    expect(ok.headers['x-ms-ratelimit-remaining-subscription-writes']).toBe('199');
    const read = await call('GET', `${nicPath('a')}?api-version=${NET_API}`);
    expect(read.headers['x-ms-ratelimit-remaining-subscription-reads']).toBe('249');
    h.arm.injectFault({ kind: 'throttle', drain: true, bucket: 'writes', location: 'eastus2' });
    const limited = await call('PUT', `${nicPath('b')}?api-version=${NET_API}`, nicBody());
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    expect(limited.headers['x-ms-ratelimit-remaining-subscription-writes']).toBe('0');
    expect(limited.json.error?.code).toBe('SubscriptionRequestsThrottled');
    await h.advance(1_000);
    expect((await call('PUT', `${nicPath('b')}?api-version=${NET_API}`, nicBody())).status).toBe(201);
  });

  it('lists Resource SKUs from the catalog with a restriction for unavailable SKUs and honours $filter', async () => {
    const { call } = rest(baseConfig({ regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 100_000, familyQuotaCores: { standardNDSH200v5Family: 96_000 }, unavailableSkus: [H200] }] }));
    const all = await call('GET', `/subscriptions/${SUB}/providers/Microsoft.Compute/skus?api-version=2021-07-01`);
    expect(all.status).toBe(200);
    const value = all.json['value'] as Array<Record<string, unknown>>;
    expect(value.length).toBeGreaterThan(10);
    const filtered = await call('GET', `/subscriptions/${SUB}/providers/Microsoft.Compute/skus?api-version=2021-07-01&$filter=${encodeURIComponent("location eq 'eastus2'")}`);
    const east = filtered.json['value'] as Array<Record<string, unknown>>;
    expect(east.every((s) => (s['locations'] as string[])[0] === 'eastus2')).toBe(true);
    const h200 = east.find((s) => s['name'] === H200)!;
    expect(h200).toMatchObject({
      resourceType: 'virtualMachines',
      family: 'standardNDSH200v5Family',
      size: 'ND96isr_H200_v5',
      restrictions: [{ type: 'Location', values: ['eastus2'], reasonCode: 'NotAvailableForSubscription' }],
    });
    expect(h200['capabilities']).toContainEqual({ name: 'vCPUs', value: '96' });
    expect(east.find((s) => s['name'] === 'Standard_D8s_v5')!['restrictions']).toEqual([]);
  });

  it('/_sim: faults, clock advance and state', async () => {
    const { call, h } = rest();
    const bad = await call('POST', '/_sim/faults', { kind: 'quota', location: 'eastus2' });
    expect(bad.status).toBe(400);
    const ok = await call('POST', '/_sim/faults', { kind: 'quota', location: 'eastus2', family: 'standardNDSH200v5Family', cores: 0 });
    expect(ok.status).toBe(200);
    await call('PUT', `${nicPath('nic-a')}?api-version=${NET_API}`, nicBody());
    expect((await call('PUT', `${vmPath('vm-a')}?api-version=${CMP_API}`, vmBody('nic-a'))).status).toBe(409);
    const t0 = h.clock.now();
    const adv = await call('POST', '/_sim/clock/advance?seconds=180');
    expect(adv.json['t']).toBe(t0 + 180_000);
    expect((await call('DELETE', `${nicPath('nic-a')}?api-version=${NET_API}`)).status).toBe(202);
    await call('POST', '/_sim/clock/advance?seconds=3');
    const state = await call('GET', '/_sim/state');
    expect(state.json).toMatchObject({ nics: [], vms: [], armCalls: { 'vm.put': { '409': 1 } } });
    // gone once the delete operation ended, 1-2.5 s after ARM accepted it at 180 s
    const [reaped] = state.json['reapTimesSeconds'] as number[];
    expect(reaped).toBeGreaterThanOrEqual(181);
    expect(reaped).toBeLessThanOrEqual(182.5);
    expect(state.json['quota']).toEqual([{ subscriptionId: SUB, location: 'eastus2', family: 'standardNDSH200v5Family', usedCores: 0, limitCores: 0 }]);
  });
});
