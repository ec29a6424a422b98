import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveArm, type ServedArm } from '../../../src/sim/arm/https-face.js';
import { defaultFakeArmConfig, DEFAULT_RESOURCE_GROUP, DEFAULT_SUBNET_ID, DEFAULT_SUBSCRIPTION_ID } from '../../../src/sim/arm/defaults.js';
import { check } from '../../../src/sim/arm/request-validation.js';
import { SdkModels } from '../../../src/sim/arm/sdk-models.js';

// The bodies the fake ARM once accepted (and silently repaired) although the published REST
// model refuses them; each goes through serve-arm, the HTTPS face, as a client would send it.

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { error?: { code: string; message: string; target?: string; details?: Array<{ code: string; message: string }> } } & Record<string, unknown>;
}

let served: ServedArm;
let ca: string;

beforeAll(async () => {
  served = await serveArm({ host: '127.0.0.1', scenarioConfig: defaultFakeArmConfig(), seed: 1, clockMode: 'manual' });
  ca = readFileSync(served.caCertPath, 'utf8');
});
afterAll(async () => {
  await served.close();
});

function put(path: string, body: unknown): Promise<Reply> {
  return send('PUT', path, body);
}

function send(method: string, path: string, body: unknown): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(`${served.endpoint}${path}`, { method, ca, headers: { authorization: 'Bearer anything', 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Reply['body'] }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const group = `/subscriptions/${DEFAULT_SUBSCRIPTION_ID}/resourceGroups/${DEFAULT_RESOURCE_GROUP}/providers`;
const nicUrl = (name: string) => `${group}/Microsoft.Network/networkInterfaces/${name}?api-version=2026-01-01`;
const vmUrl = (name: string) => `${group}/Microsoft.Compute/virtualMachines/${name}?api-version=2024-07-01`;
const nicId = (name: string) => `${group}/Microsoft.Network/networkInterfaces/${name}`;

type Doc = Record<string, unknown>;

function nicBody(ipConfig: Doc = {}, properties: Doc = {}): Doc {
  return { location: 'eastus2', properties: { ...properties, ipConfigurations: [{ name: 'ipconfig1', properties: { subnet: { id: DEFAULT_SUBNET_ID }, ...ipConfig } }] } };
}

/** The VM PUT the SDK adapter sends, with `edit` applied to a copy. */
function vmBody(nic: string, edit: (p: Doc & { storageProfile: Doc & { osDisk: Doc }; osProfile: Doc & { linuxConfiguration: Doc } }) => void = () => {}): Doc {
  const properties = {
    hardwareProfile: { vmSize: 'Standard_ND96isr_H200_v5' },
    storageProfile: {
      imageReference: { publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' },
      osDisk: { name: `${nic}-osdisk`, createOption: 'FromImage', deleteOption: 'Delete', caching: 'ReadWrite', diskSizeGB: 256, managedDisk: { storageAccountType: 'Premium_LRS' } },
    },
    osProfile: {
      computerName: nic,
      adminUsername: 'azureuser',
      linuxConfiguration: { disablePasswordAuthentication: true, ssh: { publicKeys: [{ path: '/home/azureuser/.ssh/authorized_keys', keyData: 'ssh-ed25519 AAAA' }] } },
    },
    networkProfile: { networkInterfaces: [{ id: nicId(nic), properties: { primary: true, deleteOption: 'Delete' } }] },
  };
  edit(properties as Parameters<typeof edit>[0]);
  return { location: 'eastus2', zones: ['1'], properties };
}

describe('the fake ARM refuses request bodies the published REST model refuses (through serve-arm)', () => {
  it('a valid NIC and VM PUT are accepted: 201, and the VM create carries Location as well as Azure-AsyncOperation', async () => {
    expect((await put(nicUrl('good'), nicBody())).status).toBe(201);
    const vm = await put(vmUrl('good'), vmBody('good'));
    expect(vm.status).toBe(201);
    expect(vm.headers['azure-asyncoperation']).toBeDefined();
    expect(String(vm.headers['location'])).toMatch(/\/providers\/Microsoft\.Compute\/locations\/eastus2\/operations\//);
  });

  const vmCases: Array<[string, (p: Parameters<NonNullable<Parameters<typeof vmBody>[1]>>[0]) => void, string, RegExp]> = [
    ['osDisk without createOption', (p) => void delete p.storageProfile.osDisk['createOption'], 'InvalidParameter', /Required parameter 'osDisk\.createOption' is missing/],
    ['a data disk without lun', (p) => void (p.storageProfile['dataDisks'] = [{ createOption: 'Empty', diskSizeGB: 64 }]), 'InvalidParameter', /'dataDisks\[0\]\.lun' is missing/],
    ['caching "Fast"', (p) => void (p.storageProfile.osDisk['caching'] = 'Fast'), 'InvalidRequestContent', /"Fast".*Path 'properties\.storageProfile\.osDisk\.caching'/],
    ['diskSizeGB "lots"', (p) => void (p.storageProfile.osDisk['diskSizeGB'] = 'lots'), 'InvalidRequestContent', /"lots".*Path 'properties\.storageProfile\.osDisk\.diskSizeGB'/],
    ['disablePasswordAuthentication "yes"', (p) => void (p.osProfile.linuxConfiguration['disablePasswordAuthentication'] = 'yes'), 'InvalidRequestContent', /"yes".*disablePasswordAuthentication/],
  ];
  for (const [what, edit, code, message] of vmCases) {
    it(`VM PUT with ${what}: 400 ${code}, nothing created, the NIC not reserved`, async () => {
      const nic = `nic-${what.replace(/\W+/g, '-').toLowerCase()}`;
      expect((await put(nicUrl(nic), nicBody())).status).toBe(201);
      const res = await put(vmUrl(nic), vmBody(nic, edit));
      expect(res.status).toBe(400);
      expect(res.body.error?.code).toBe(code);
      expect(res.body.error?.message).toMatch(message);
      const vms = served.arm.snapshot().vms.map((v) => v.name);
      expect(vms).not.toContain(nic);
      expect(served.arm.snapshot().reservations.map((r) => r.nicId.toLowerCase())).not.toContain(nicId(nic).toLowerCase());
    });
  }

  const nicCases: Array<[string, Doc, Doc, RegExp]> = [
    ['enableIPForwarding "yes"', {}, { enableIPForwarding: 'yes' }, /"yes".*Path 'properties\.enableIPForwarding'/],
    ['privateIPAddressPrefixLength 0', { privateIPAddressPrefixLength: 0 }, {}, /0 is outside the range 1 to 128\. Path 'properties\.ipConfigurations\[0\]\.properties\.privateIPAddressPrefixLength'/],
  ];
  for (const [what, ipConfig, properties, detail] of nicCases) {
    it(`NIC PUT with ${what}: 400 InvalidRequestFormat with the path in its details, no NIC created`, async () => {
      const name = `bad-${what.replace(/\W+/g, '-').toLowerCase()}`;
      const res = await put(nicUrl(name), nicBody(ipConfig, properties));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'InvalidRequestFormat', message: 'Cannot parse the request.' });
      expect(res.body.error?.details?.[0]?.message).toMatch(detail);
      expect(served.arm.snapshot().nics.map((n) => n.name)).not.toContain(name);
    });
  }
});

describe('PATCH bodies and other values the fake does not repair', () => {
  it('a tags PATCH with a value that is not a string is refused (Network: InvalidRequestFormat; Compute: InvalidRequestContent), the tags unchanged', async () => {
    expect((await put(nicUrl('patched'), nicBody())).status).toBe(201);
    const nic = await send('PATCH', nicUrl('patched'), { tags: { team: 7 } });
    expect(nic.status).toBe(400);
    expect(nic.body.error).toMatchObject({ code: 'InvalidRequestFormat' });
    expect(nic.body.error?.details?.[0]?.message).toMatch(/Path 'tags\.team'/);
    expect(served.arm.snapshot().nics.find((n) => n.name === 'patched')?.tags).toEqual({});
    expect((await put(vmUrl('patched'), vmBody('patched'))).status).toBe(201);
    const vm = await send('PATCH', vmUrl('patched'), { tags: { team: true } });
    expect(vm.status).toBe(400);
    expect(vm.body.error?.code).toBe('InvalidRequestContent');
  });

  it('a VM priority Compute does not know is refused, not taken for Regular', async () => {
    expect((await put(nicUrl('prio'), nicBody())).status).toBe(201);
    const res = await put(vmUrl('prio'), { ...vmBody('prio'), properties: { ...(vmBody('prio')['properties'] as Doc), priority: 'Cheap' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'InvalidParameter', target: 'priority' });
  });
});

describe('the models come from the SDK packages', () => {
  it('reads required properties, closed enums and flattened properties from @azure/arm-compute and @azure/arm-network', () => {
    const compute = SdkModels.load('@azure/arm-compute');
    const osDisk = compute.model('OSDisk')!;
    expect(osDisk.properties.get('createOption')).toMatchObject({ required: true, type: { kind: 'string' } });
    expect(osDisk.properties.get('caching')).toMatchObject({ required: false, type: { kind: 'enum', values: ['None', 'ReadOnly', 'ReadWrite'] } });
    expect(compute.model('DataDisk')!.properties.get('lun')).toMatchObject({ required: true, type: { kind: 'number' } });
    const network = SdkModels.load('@azure/arm-network');
    expect(network.model('NetworkInterfacePropertiesFormat')!.properties.get('enableIPForwarding')).toMatchObject({ type: { kind: 'boolean' } });
    // Unknown properties pass (ARM ignores them); a flattened model's wire `properties` is checked.
    expect(check(network, 'NetworkInterface', { location: 'x', somethingNew: 1, properties: { enableIPForwarding: false } })).toEqual([]);
    expect(check(network, 'NetworkInterface', { location: 'x', properties: { enableIPForwarding: 1 } })).toHaveLength(1);
  });
});
