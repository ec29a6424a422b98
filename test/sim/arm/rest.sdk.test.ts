import { afterEach, describe, expect, it } from 'vitest';
import { NetworkManagementClient } from '@azure/arm-network';
import { ComputeManagementClient, type VirtualMachine } from '@azure/arm-compute';
import type { AccessToken, TokenCredential } from '@azure/core-auth';
import { createArmRestHandler } from '../../../src/sim/arm/rest.js';
import { createArmHttpClient } from '../../../src/sim/arm/sdk-http-client.js';
import { baseConfig, H200, harness, RG, SUB, SUBNET, type Harness } from './helpers.js';
import type { FakeArmConfig } from '../../../src/sim/arm/fake-arm.js';

/**
 * The dialect check that matters: the official SDKs, with their own serializers, LRO
 * pollers and error pipeline, drive the fake in-process through `httpClient`.
 */
const ENDPOINT = 'https://fake-arm.test';
const credential: TokenCredential = {
  getToken: async (): Promise<AccessToken> => ({ token: 'fake-token', expiresOnTimestamp: Date.now() + 3_600_000 }),
};

let stopPump: (() => void) | undefined;
afterEach(() => stopPump?.());

function setup(config: FakeArmConfig = baseConfig()): { h: Harness; network: NetworkManagementClient; compute: ComputeManagementClient } {
  const h = harness(config);
  const handler = createArmRestHandler(h.arm, { baseUrl: ENDPOINT, lroRetryAfterSeconds: 0 });
  const httpClient = createArmHttpClient(handler);
  // Virtual time runs ahead of the SDK's real-time polling: 30 virtual s per real ms.
  let running = true;
  stopPump = () => {
    running = false;
  };
  void (async () => {
    while (running) {
      await h.clock.runUntil(h.clock.now() + 30_000);
      await new Promise((r) => setTimeout(r, 1));
    }
  })();
  const opts = { endpoint: ENDPOINT, httpClient, retryOptions: { maxRetries: 0 } };
  return { h, network: new NetworkManagementClient(credential, SUB, opts), compute: new ComputeManagementClient(credential, SUB, opts) };
}

const poll = { updateIntervalInMs: 1 };

function vmParams(nicId: string): VirtualMachine {
  return {
    location: 'eastus2',
    tags: { 'karpenter.sh_nodeclaim': 'a' },
    hardwareProfile: { vmSize: H200 },
    storageProfile: {
      imageReference: { publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' },
      osDisk: { name: 'vm-a-osdisk', createOption: 'FromImage', deleteOption: 'Delete', diskSizeGB: 256 },
    },
    osProfile: { computerName: 'vm-a', adminUsername: 'azureuser', customData: 'c2VjcmV0', linuxConfiguration: { disablePasswordAuthentication: true } },
    networkProfile: { networkInterfaces: [{ id: nicId, primary: true, deleteOption: 'Delete' }] },
    priority: 'Regular',
  };
}

describe('official Azure SDKs against the REST face', () => {
  it('NIC create/get/delete and VM create (LRO) / get / delete (LRO) with cascade', async () => {
    const { h, network, compute } = setup();
    const nic = await network.networkInterfaces.createOrUpdate(RG, 'nic-a', { location: 'eastus2', ipConfigurations: [{ name: 'ipconfig1', subnet: { id: SUBNET } }] }, poll);
    expect(nic.ipConfigurations?.[0]?.privateIPAddress).toBe('10.1.0.4');
    expect(nic.ipConfigurations?.[0]?.subnet?.id).toBe(SUBNET);
    const vm = await compute.virtualMachines.createOrUpdate(RG, 'vm-a', vmParams(nic.id!), poll);
    expect(vm.provisioningState).toBe('Succeeded');
    expect(vm.hardwareProfile?.vmSize).toBe(H200);
    expect(vm.osProfile?.customData).toBeUndefined();
    const attached = await network.networkInterfaces.get(RG, 'nic-a');
    expect(attached.virtualMachine?.id).toBe(vm.id);
    const names: string[] = [];
    for await (const d of compute.disks.listByResourceGroup(RG)) names.push(d.name!);
    expect(names).toEqual(['vm-a-osdisk']);
    await h.advance(180_000); // past the NIC's reservation: the cascade may delete it
    await compute.virtualMachines.delete(RG, 'vm-a', poll);
    expect(h.arm.snapshot()).toMatchObject({ vms: [], nics: [], disks: [] });
    await network.networkInterfaces.delete(RG, 'nic-a', poll); // already gone: 204
    expect(h.arm.armCalls()['nic.delete']).toEqual({ '404': 1 });
  });

  it('sync refusals surface as RestError with Azure code and status; async failures reject the poller', async () => {
    const { h, network, compute } = setup(baseConfig({ regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 100_000, familyQuotaCores: { standardNDSH200v5Family: 0 } }] }));
    const nic = await network.networkInterfaces.createOrUpdate(RG, 'nic-a', { location: 'eastus2', ipConfigurations: [{ name: 'ipconfig1', subnet: { id: SUBNET } }] }, poll);
    const quota = await compute.virtualMachines.createOrUpdate(RG, 'vm-a', vmParams(nic.id!), poll).then(
      () => undefined,
      (e: unknown) => e as { code?: string; statusCode?: number; message: string },
    );
    expect(quota?.statusCode).toBe(409);
    expect(quota?.code).toBe('OperationNotAllowed');
    const reserved = await network.networkInterfaces.delete(RG, 'nic-a', poll).then(
      () => undefined,
      (e: unknown) => e as { code?: string; statusCode?: number },
    );
    expect(reserved?.statusCode).toBe(400);
    expect(reserved?.code).toBe('NicReservedForAnotherVm');

    h.arm.injectFault({ kind: 'quota', location: 'eastus2', family: 'standardNDSH200v5Family', cores: 96 });
    h.arm.injectFault({ kind: 'capacity', location: 'eastus2', allocationFailureRate: 1 });
    const alloc = await compute.virtualMachines.createOrUpdate(RG, 'vm-a', vmParams(nic.id!), poll).then(
      () => undefined,
      (e: unknown) => e as { code?: string; message: string },
    );
    expect(alloc).toBeDefined();
    expect(`${alloc?.code ?? ''} ${alloc?.message ?? ''}`).toContain('AllocationFailed');
  });
});
