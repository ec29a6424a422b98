import { describe, expect, it } from 'vitest';
import { ComputeManagementClient } from '@azure/arm-compute';
import type { FakeArmConfig } from '../../../src/sim/arm/types.js';
import { CMP, NET, credential, faceServer, type Reply } from './face-client.js';
import { SdkAzure } from '../../../src/azure/sdk-adapter.js';
import { classifyAzureError } from '../../../src/azure/errors.js';
import { AzureError } from '../../../src/ports/azure.js';
import { H200, SUB, SUBNET, RG } from './helpers.js';

/**
 * Each ARM behaviour the controller depends on (docs/fidelity.md), served over HTTPS by
 * `serveArm` and driven twice: by a plain HTTPS client speaking the REST paths (what any
 * non-JS client sees: statuses, {error:{code,message}}, headers, absolute nextLinks, LRO
 * headers), and by the official Azure SDK (through azflex's adapter or the bare client).
 */
function config(over: Partial<FakeArmConfig> = {}): FakeArmConfig {
  return {
    regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: { standardNDSH200v5Family: 960 }, regionalQuotaCores: 1000 }],
    subnets: [{ id: SUBNET, addressPrefix: '10.1.0.0/24' }],
    latencyMs: { vmCreate: { min: 60_000, max: 60_000 }, vmCreateFailure: { min: 30_000, max: 30_000 }, vmDelete: { min: 30_000, max: 30_000 } },
    ...over,
  };
}

const serveFace = faceServer(3);

async function serve(cfg: FakeArmConfig = config()) {
  const face = await serveFace(cfg);
  const { s, ca } = face;
  const azure = new SdkAzure({ clock: s.clock, credential, endpoint: s.endpoint, tlsCa: ca, readRetry: { maxRetries: 0 } });
  const compute = new ComputeManagementClient(credential, SUB, { endpoint: s.endpoint, tlsOptions: { ca }, retryOptions: { maxRetries: 0 } });
  return { ...face, azure, compute };
}

const rg = (group = RG) => `/subscriptions/${SUB}/resourceGroups/${group}`;
const nicPath = (name: string, group = RG) => `${rg(group)}/providers/Microsoft.Network/networkInterfaces/${name}`;
const vmPath = (name: string) => `${rg()}/providers/Microsoft.Compute/virtualMachines/${name}`;
const diskPath = (name: string) => `${rg()}/providers/Microsoft.Compute/disks/${name}`;
const nicId = (name: string) => `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/networkInterfaces/${name}`;
const nicBody = (location = 'eastus2') => ({ location, properties: { ipConfigurations: [{ name: 'ipconfig1', properties: { subnet: { id: SUBNET } } }] } });
function vmBody(nic: string, customData = 'Y2xvdWQtaW5pdA==', vmSize = H200) {
  return {
    location: 'eastus2',
    properties: {
      hardwareProfile: { vmSize },
      storageProfile: {
        imageReference: { publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' },
        osDisk: { name: `${nic}-osdisk`, createOption: 'FromImage', deleteOption: 'Delete' },
      },
      osProfile: { computerName: nic, adminUsername: 'azureuser', customData, linuxConfiguration: { disablePasswordAuthentication: true } },
      networkProfile: { networkInterfaces: [{ id: nicId(nic), properties: { primary: true, deleteOption: 'Delete' } }] },
    },
  };
}
const ref = (name: string) => ({ subscriptionId: SUB, resourceGroup: RG, name });
const rel = (url: string | string[] | undefined) => String(url);

describe('fidelity: async allocation failures leave a Failed VM holding NIC and OS disk', () => {
  it('raw REST: Failed LRO, Failed VM with NIC and disk, NicInUse, VM DELETE cascades the disk, the reserved NIC is deleted after 180 s', async () => {
    const { call, advance, s } = await serve(config({ regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: { standardNDSH200v5Family: 960 }, regionalQuotaCores: 1000, allocationFailureRate: 1 }] }));
    expect((await call('PUT', `${nicPath('a')}?api-version=${NET}`, nicBody())).status).toBe(201);
    const put = await call('PUT', `${vmPath('a')}?api-version=${CMP}`, vmBody('a'));
    expect(put.status).toBe(201);
    expect(put.headers['azure-asyncoperation']).toMatch(new RegExp(`^${s.endpoint}/subscriptions/${SUB}/providers/Microsoft.Compute/locations/eastus2/operations/`));
    await advance(30);
    const op = await call('GET', rel(put.headers['azure-asyncoperation']));
    expect(op.json).toMatchObject({ status: 'Failed', error: { code: 'AllocationFailed' } });
    const vm = await call('GET', `${vmPath('a')}?api-version=${CMP}`);
    expect(vm.json).toMatchObject({
      etag: expect.stringMatching(/^"\d+"$/),
      properties: { provisioningState: 'Failed', networkProfile: { networkInterfaces: [{ id: nicId('a') }] }, storageProfile: { osDisk: { name: 'a-osdisk' } } },
    });
    expect((await call('GET', `${diskPath('a-osdisk')}?api-version=${CMP}`)).json).toMatchObject({ managedBy: expect.stringMatching(/virtualMachines\/a$/) });
    const inUse = await call('DELETE', `${nicPath('a')}?api-version=${NET}`);
    expect(inUse.status).toBe(400);
    expect(inUse.json.error?.code).toBe('NicInUse');

    const del = await call('DELETE', `${vmPath('a')}?api-version=${CMP}`);
    expect(del.status).toBe(202);
    expect(del.headers['location']).toBeDefined();
    await advance(30);
    expect((await call('GET', `${vmPath('a')}?api-version=${CMP}`)).status).toBe(404);
    expect((await call('GET', `${diskPath('a-osdisk')}?api-version=${CMP}`)).status).toBe(404);
    // The NIC survived the cascade, detached: the network RP holds it for 180 s from the VM PUT.
    const nic = await call('GET', `${nicPath('a')}?api-version=${NET}`);
    expect(nic.status).toBe(200);
    expect((nic.json['properties'] as Record<string, unknown>)['virtualMachine']).toBeUndefined();
    const reserved = await call('DELETE', `${nicPath('a')}?api-version=${NET}`);
    expect(reserved.json.error?.code).toBe('NicReservedForAnotherVm');
    await advance(120);
    const accepted = await call('DELETE', `${nicPath('a')}?api-version=${NET}`);
    expect(accepted.status).toBe(202);
    expect(accepted.headers['azure-asyncoperation']).toMatch(/\/providers\/Microsoft\.Network\/locations\/eastus2\/operations\//);
    await advance(10); // the network RP deletes asynchronously
    expect((await call('GET', `${nicPath('a')}?api-version=${NET}`)).status).toBe(404);
    expect(s.arm.leaks(new Set())).toEqual({ nics: [], vms: [], disks: [] });
  });

  it('through the SDK adapter: AllocationFailed, then GET shows the Failed VM and its disk; delete VM, verify, delete NIC = 4 writes', async () => {
    const { azure, run, advance, s } = await serve(config({ regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: { standardNDSH200v5Family: 960 }, regionalQuotaCores: 1000, zonalAllocationFailureRate: 1 }] }));
    await run(azure.createNic({ ref: ref('b'), location: 'eastus2', subnetId: SUBNET, tags: {} }));
    const t0 = s.clock.now();
    const spec = {
      ref: ref('b'), location: 'eastus2', vmSize: H200, nicId: nicId('b'), osDiskName: 'b-osdisk', osDiskSizeGB: 64,
      image: { reference: { publisher: 'p', offer: 'o', sku: 's', version: 'latest' } }, adminUsername: 'azureuser', sshPublicKeys: [], customData: 'eA==', priority: 'Regular' as const, tags: {},
      // Only a zonal VM (the SDK sends zones: ["2"]) can fail for its zone's capacity.
      zone: '2',
    };
    const err = await run(azure.createVm(spec)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ZonalAllocationFailed' });
    expect(classifyAzureError(err).kind).toBe('insufficientCapacity');
    expect(await run(azure.getVm(ref('b')))).toMatchObject({ provisioningState: 'Failed', zone: '2' });
    expect(await run(azure.getDisk(ref('b-osdisk')))).toMatchObject({ managedBy: expect.stringMatching(/virtualMachines\/b$/i) });
    await expect(run(azure.deleteNic(ref('b')))).rejects.toMatchObject({ code: 'NicInUse' });
    await run(azure.deleteVm(ref('b')));
    expect(await run(azure.getDisk(ref('b-osdisk')))).toBeUndefined();
    await advance(Math.max(0, 181 - (s.clock.now() - t0) / 1000));
    await run(azure.deleteNic(ref('b')));
    expect(await run(azure.getNic(ref('b')))).toBeUndefined();
    const calls = s.arm.armCalls();
    const ok = (op: string) => Object.entries(calls[op] ?? {}).filter(([st]) => Number(st) < 300).reduce((n, [, c]) => n + c, 0);
    expect([ok('nic.put'), ok('vm.put'), ok('vm.delete'), ok('nic.delete')]).toEqual([1, 1, 1, 1]);
  });
});

describe('fidelity: the NIC reservation is ARM’s, not a rule the controller may bank on', () => {
  it('starts at the VM PUT and lasts 180 s by default; a later start and jitter move the end (raw REST)', async () => {
    const { call, advance } = await serve(
      config({ regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: {}, regionalQuotaCores: 1000 }], reservation: { startDelaySeconds: 20, jitterSeconds: 10 } }),
    );
    await call('PUT', `${nicPath('c')}?api-version=${NET}`, nicBody());
    const quota = await call('PUT', `${vmPath('c')}?api-version=${CMP}`, vmBody('c'));
    expect(quota.status).toBe(409);
    await advance(181);
    const still = await call('DELETE', `${nicPath('c')}?api-version=${NET}`);
    expect(still.json.error?.code).toBe('NicReservedForAnotherVm');
    await advance(30);
    expect((await call('DELETE', `${nicPath('c')}?api-version=${NET}`)).status).toBe(202);
  });
});

describe('fidelity: lists page with nextLink and trail ARM; GET is current', () => {
  it('raw REST: pages of 2 with absolute nextLinks; a new NIC lists only after the lag; a deleted one lists on', async () => {
    const { call, advance, s, azure, run } = await serve(config({ listPageSize: 2, listLagSeconds: { appearSeconds: 30, disappearSeconds: 20 } }));
    for (const n of ['n1', 'n2', 'n3', 'n4', 'n5']) await call('PUT', `${nicPath(n)}?api-version=${NET}`, nicBody());
    const listUrl = `${rg()}/providers/Microsoft.Network/networkInterfaces?api-version=${NET}`;
    expect((await call('GET', listUrl)).json['value']).toEqual([]);
    expect((await call('GET', `${nicPath('n1')}?api-version=${NET}`)).status).toBe(200);
    await advance(30);
    const names: string[] = [];
    let next: string | undefined = listUrl;
    let pages = 0;
    while (next) {
      const page: Reply = await call('GET', next);
      expect(page.status).toBe(200);
      pages++;
      names.push(...(page.json['value'] as Array<{ name: string }>).map((v) => v.name));
      next = page.json['nextLink'] as string | undefined;
      if (next) {
        expect(next.startsWith(`${s.endpoint}/subscriptions/`)).toBe(true);
        expect(new URL(next).searchParams.get('api-version')).toBe(NET);
      }
    }
    expect(pages).toBe(3);
    expect(names).toEqual(['n1', 'n2', 'n3', 'n4', 'n5']);
    // The SDK's iterator follows every nextLink.
    expect((await run(azure.listNics({ subscriptionId: SUB, resourceGroup: RG }))).map((n) => n.name).sort()).toEqual(names);
    expect((await call('DELETE', `${nicPath('n1')}?api-version=${NET}`)).status).toBe(202);
    await advance(5); // the async delete ends
    expect((await call('GET', `${nicPath('n1')}?api-version=${NET}`)).status).toBe(404);
    const stale = (await run(azure.listNics({ subscriptionId: SUB, resourceGroup: RG }))).map((n) => n.name);
    expect(stale).toContain('n1');
    await advance(20);
    expect((await run(azure.listNics({ subscriptionId: SUB, resourceGroup: RG }))).map((n) => n.name)).not.toContain('n1');
  });
});

describe('fidelity: a VM is never changed by a re-PUT', () => {
  it('409 PropertyChangeNotAllowed for a changed customData (raw REST and the SDK client); an identical PUT is 200', async () => {
    const { call, compute } = await serve();
    await call('PUT', `${nicPath('d')}?api-version=${NET}`, nicBody());
    expect((await call('PUT', `${vmPath('d')}?api-version=${CMP}`, vmBody('d'))).status).toBe(201);
    expect((await call('PUT', `${vmPath('d')}?api-version=${CMP}`, vmBody('d'))).status).toBe(200);
    const changed = await call('PUT', `${vmPath('d')}?api-version=${CMP}`, vmBody('d', 'bmV3LXRva2Vu'));
    expect(changed.status).toBe(409);
    expect(changed.json.error).toMatchObject({ code: 'PropertyChangeNotAllowed', message: expect.stringContaining('customData') });
    const body = vmBody('d');
    const sdkErr = await compute.virtualMachines
      .createOrUpdate(RG, 'd', { location: 'eastus2', hardwareProfile: { vmSize: 'Standard_D8s_v5' }, storageProfile: body.properties.storageProfile as never, osProfile: body.properties.osProfile, networkProfile: { networkInterfaces: [{ id: nicId('d') }] } })
      .catch((e: unknown) => e as { statusCode?: number; code?: string });
    expect(sdkErr).toMatchObject({ statusCode: 409, code: 'PropertyChangeNotAllowed' });
  });
});

describe('fidelity: a new VM never takes over a disk of its OS disk name', () => {
  it('409 ConflictingUserInput (raw REST), ResourceNameConflict through the SDK adapter; the disk keeps its VM', async () => {
    const { call, advance, azure } = await serve();
    await call('PUT', `${nicPath('e')}?api-version=${NET}`, nicBody());
    expect((await call('PUT', `${vmPath('e')}?api-version=${CMP}`, vmBody('e'))).status).toBe(201);
    await advance(61_000);
    expect((await call('GET', `${diskPath('e-osdisk')}?api-version=${CMP}`)).json).toMatchObject({ managedBy: expect.stringContaining('/virtualMachines/e') });
    await call('PUT', `${nicPath('f')}?api-version=${NET}`, nicBody());
    const body = vmBody('f');
    body.properties.storageProfile.osDisk.name = 'e-osdisk';
    const refused = await call('PUT', `${vmPath('f')}?api-version=${CMP}`, body);
    expect(refused.status).toBe(409);
    expect(refused.json.error).toEqual({ code: 'ConflictingUserInput', message: `Disk e-osdisk already exists in resource group ${RG.toUpperCase()}. Only CreateOption.Attach is supported.` });
    const sdkErr = await azure.createVm({
      ref: ref('f'), location: 'eastus2', vmSize: H200, nicId: nicId('f'), osDiskName: 'e-osdisk', osDiskSizeGB: 256,
      image: { reference: { publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' } }, adminUsername: 'azureuser', sshPublicKeys: ['ssh-ed25519 AAAA test'],
      customData: 'Y2xvdWQtaW5pdA==', priority: 'Regular', tags: {},
    }).catch((e: unknown) => e);
    expect(sdkErr).toBeInstanceOf(AzureError);
    expect(classifyAzureError(sdkErr)).toEqual({ kind: 'conflict', code: 'ResourceNameConflict' });
    expect((await call('GET', `${vmPath('f')}?api-version=${CMP}`)).status).toBe(404);
  });
});

describe('fidelity: two throttling dialects', () => {
  it('ARM: 429 SubscriptionRequestsThrottled with x-ms-ratelimit-remaining-subscription-*; every answer carries the counter', async () => {
    const { call, s, azure, run } = await serve(config({ throttling: true }));
    const ok = await call('GET', `${nicPath('zz')}?api-version=${NET}`);
    expect(ok.status).toBe(404);
    expect(ok.headers['x-ms-ratelimit-remaining-subscription-reads']).toBe('249');
    // The subscription's global bucket (15 times one principal's, shared by all) beside it.
    expect(ok.headers['x-ms-ratelimit-remaining-subscription-global-reads']).toBe('3749');
    s.arm.injectFault({ kind: 'throttle', drain: true, bucket: 'writes' });
    const limited = await call('PUT', `${nicPath('t')}?api-version=${NET}`, nicBody());
    expect(limited.status).toBe(429);
    expect(limited.json.error?.code).toBe('SubscriptionRequestsThrottled');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['x-ms-ratelimit-remaining-subscription-writes']).toBe('0');
    // This principal's bucket is empty; the subscription's global one is not.
    expect(limited.headers['x-ms-ratelimit-remaining-subscription-global-writes']).toBe('3000');
    const err = (await run(azure.createNic({ ref: ref('t'), location: 'eastus2', subnetId: SUBNET, tags: {} })).catch((e: unknown) => e)) as AzureError;
    expect(err).toMatchObject({ code: 'TooManyRequests', statusCode: 429, info: { throttledBy: 'arm', armCode: 'SubscriptionRequestsThrottled' } });
    expect(classifyAzureError(err).kind).toBe('throttled');
  });

  it('Compute RP: 429 OperationNotAllowed with x-ms-ratelimit-remaining-resource and a 20-minute Retry-After; the network RP is unaffected', async () => {
    const { call, s, azure, run } = await serve();
    const before = await call('GET', `${vmPath('nope')}?api-version=${CMP}`);
    expect(String(before.headers['x-ms-ratelimit-remaining-resource'])).toMatch(/Microsoft\.Compute\/LowCostGet3Min;\d+,Microsoft\.Compute\/LowCostGet30Min;\d+/);
    s.arm.injectFault({ kind: 'computeThrottle', location: 'eastus2', policy: 'PutVM30Min' });
    expect((await call('PUT', `${nicPath('e')}?api-version=${NET}`, nicBody())).status).toBe(201);
    const limited = await call('PUT', `${vmPath('e')}?api-version=${CMP}`, vmBody('e'));
    expect(limited.status).toBe(429);
    expect(limited.json.error).toMatchObject({ code: 'OperationNotAllowed', details: [{ code: 'TooManyRequests', target: 'PutVM30Min' }] });
    expect(limited.headers['retry-after']).toBe('1200');
    expect(String(limited.headers['x-ms-ratelimit-remaining-resource'])).toContain('Microsoft.Compute/PutVM30Min;0');
    const spec = {
      ref: ref('e'), location: 'eastus2', vmSize: H200, nicId: nicId('e'), osDiskName: 'e-osdisk', osDiskSizeGB: 64,
      image: { reference: { publisher: 'p', offer: 'o', sku: 's', version: 'latest' } }, adminUsername: 'azureuser', sshPublicKeys: [], customData: 'eA==', priority: 'Regular' as const, tags: {},
    };
    const err = (await run(azure.createVm(spec)).catch((e: unknown) => e)) as AzureError;
    expect(err).toMatchObject({ code: 'TooManyRequests', statusCode: 429, retryAfterSeconds: 1200, info: { throttledBy: 'Microsoft.Compute' } });
    // The exceeded policy reaches the port through the SDK: the ARM gate keeps to it.
    expect(err.info.details).toEqual(limited.json.error?.details);
    // Not quota, not a plain transient: throttled, with the whole Retry-After.
    expect(classifyAzureError(err)).toMatchObject({ kind: 'throttled', retryAfterSeconds: 1200 });
  });
});

describe('fidelity: quotas, resource groups, api-versions, locations, etags, request ids', () => {
  it('GPU families have no quota unless granted; Total Regional vCPUs is finite', async () => {
    const { call } = await serve(config({ regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: {} }] }));
    await call('PUT', `${nicPath('g')}?api-version=${NET}`, nicBody());
    const gpu = await call('PUT', `${vmPath('g')}?api-version=${CMP}`, vmBody('g'));
    expect(gpu.status).toBe(409);
    expect(gpu.json.error?.code).toBe('OperationNotAllowed');
    expect(gpu.json.error?.message).toContain('standardNDSH200v5Family Cores quota');
    expect(gpu.json.error?.message).toContain('Current Limit: 0');
    await call('PUT', `${nicPath('h')}?api-version=${NET}`, nicBody());
    const cpu = await call('PUT', `${vmPath('h')}?api-version=${CMP}`, vmBody('h', 'eA==', 'Standard_D8s_v5'));
    expect(cpu.status).toBe(201);
  });

  it('404 ResourceGroupNotFound for a PUT, GET or list in a group that does not exist, until it is created', async () => {
    const { call, azure, run } = await serve();
    const put = await call('PUT', `${nicPath('x', 'rg-missing')}?api-version=${NET}`, nicBody());
    expect(put.status).toBe(404);
    expect(put.json.error?.code).toBe('ResourceGroupNotFound');
    expect((await call('GET', `${rg('rg-missing')}/providers/Microsoft.Compute/virtualMachines?api-version=${CMP}`)).json.error?.code).toBe('ResourceGroupNotFound');
    const sdk = await run(azure.createNic({ ref: { subscriptionId: SUB, resourceGroup: 'rg-missing', name: 'x' }, location: 'eastus2', subnetId: SUBNET, tags: {} })).catch((e: unknown) => e);
    expect(sdk).toMatchObject({ code: 'InvalidParameter', statusCode: 404 });
    expect(await run(azure.listVms({ subscriptionId: SUB, resourceGroup: 'rg-missing' }))).toEqual([]);
    expect((await call('PUT', `${rg('rg-missing')}?api-version=2024-11-01`, { location: 'eastus2' })).status).toBe(201);
    expect((await call('PUT', `${nicPath('x', 'rg-missing')}?api-version=${NET}`, nicBody())).status).toBe(201);
  });

  it('an api-version ARM does not serve: 400 InvalidApiVersionParameter (malformed); a read 404 InvalidResourceType, a write 400 NoRegisteredProviderFound', async () => {
    const { call } = await serve();
    const future = await call('GET', `${nicPath('a')}?api-version=2099-01-01`);
    expect(future.status).toBe(404);
    expect(future.json.error?.code).toBe('InvalidResourceType');
    expect(future.json.error?.message).toMatch(/^The resource type 'networkInterfaces' could not be found in the namespace 'Microsoft.Network' for api version '2099-01-01'. The supported api-versions are '.*2026-01-01'\.$/);
    const write = await call('PUT', `${nicPath('a')}?api-version=2099-01-01`, nicBody('East US 2'));
    expect(write.status).toBe(400);
    expect(write.json.error?.code).toBe('NoRegisteredProviderFound');
    expect(write.json.error?.message).toContain("for location 'eastus2' and API version '2099-01-01' for type 'networkInterfaces'");
    const junk = await call('GET', `${vmPath('a')}?api-version=latest`);
    expect(junk.status).toBe(400);
    expect(junk.json.error?.code).toBe('InvalidApiVersionParameter');
  });

  it('normalises locations, gives VMs an etag that changes with them, and never repeats a request id across restarts', async () => {
    const a = await serve();
    const nic = await a.call('PUT', `${nicPath('l')}?api-version=${NET}`, nicBody('East US 2'));
    expect(nic.json['location']).toBe('eastus2');
    const put = await a.call('PUT', `${vmPath('l')}?api-version=${CMP}`, { ...vmBody('l'), location: 'EASTUS2' });
    expect(put.json['location']).toBe('eastus2');
    const e1 = put.json['etag'];
    await a.advance(60);
    const got = await a.call('GET', `${vmPath('l')}?api-version=${CMP}`);
    expect(got.json['etag']).not.toBe(e1);
    const b = await serve();
    const idsA = [nic.headers['x-ms-request-id'], put.headers['x-ms-request-id'], got.headers['x-ms-request-id']];
    const first = await b.call('GET', `${nicPath('l')}?api-version=${NET}`);
    expect(new Set([...idsA, first.headers['x-ms-request-id']]).size).toBe(4);
  });
});
