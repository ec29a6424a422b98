import { afterAll, describe, expect, it } from 'vitest';
import { AzureError, type NicSpec, type ResourceRef, type VmSpec } from '../../src/ports/azure.js';
import { FakeArm, type FakeArmConfig } from '../../src/sim/arm/fake-arm.js';
import { createArmRestHandler } from '../../src/sim/arm/rest.js';
import { createArmHttpClient } from '../../src/sim/arm/sdk-http-client.js';
import { SeededRandom, VirtualClock } from '../../src/sim/virtual-clock.js';
import { SdkAzure } from '../../src/azure/sdk-adapter.js';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import { classifyAzureError } from '../../src/azure/errors.js';
import { resourceSkuFetcher } from '../../src/azure/resource-skus.js';
import { LiveInstanceTypeCatalog } from '../../src/catalog/live.js';
import { armId, legacyNamesFor, ownershipTags } from '../../src/azure/naming.js';
import { fakeCredential, runOnClock } from './helpers/canned-arm.js';
import { ROUTES, type Sim, type SimRoute } from './helpers/sim-routes.js';

/**
 * The production adapter, through the real SDK pipeline (bearer token, serialisation,
 * core-lro polling, error deserialisation), against the simulator's ARM REST dialect:
 * in-process through `httpClient`, and over HTTPS with the simulator's self-signed CA.
 */
const SUB = '00000000-0000-4000-8000-0000000000aa';
const RG = 'azflex-eastus2';
const SUBNET = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`;
const SMALL_SUBNET = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/tiny`;
const H200 = 'Standard_ND96isr_H200_v5';
const H200_FAMILY = 'standardNDSH200v5Family';

function config(): FakeArmConfig {
  return {
    regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: { [H200_FAMILY]: 192 }, regionalQuotaCores: 1000 }],
    subnets: [
      { id: SUBNET, addressPrefix: '10.1.0.0/24' },
      { id: SMALL_SUBNET, addressPrefix: '10.2.0.0/29' },
    ],
    reservationSeconds: 180,
    // This file is about the adapter; list-cache lag has its own tests (test/sim/arm/fake-arm.fidelity.test.ts).
    listLagSeconds: { appearSeconds: 0, disappearSeconds: 0 },
  };
}

const ref = (name: string): ResourceRef => ({ subscriptionId: SUB, resourceGroup: RG, name });

function nicSpec(claim: string, subnetId = SUBNET): NicSpec {
  return { ref: ref(legacyNamesFor(claim).nic), location: 'eastus2', subnetId, tags: ownershipTags('c1', 'h200', claim, 'h200-eastus2', Date.UTC(2026, 0, 1)) };
}

function vmSpec(claim: string, vmSize = H200): VmSpec {
  return {
    ref: ref(legacyNamesFor(claim).vm),
    location: 'eastus2',
    vmSize,
    nicId: armId(ref(legacyNamesFor(claim).nic), 'Microsoft.Network/networkInterfaces'),
    osDiskName: legacyNamesFor(claim).osDisk,
    osDiskSizeGB: 256,
    image: { reference: { publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' } },
    adminUsername: 'azureuser',
    sshPublicKeys: ['ssh-ed25519 AAAAC3 azflex'],
    customData: 'H4sIAAAAAAAAA2NgGAWjYBSMglEwCkbBUAEAAP//AwB8Yv7CAAEAAA==',
    priority: 'Regular',
    tags: ownershipTags('c1', 'h200', claim, 'h200-eastus2', Date.UTC(2026, 0, 1)),
  };
}

const opened: Sim[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

async function sim(route: SimRoute, cfg: FakeArmConfig = config(), readRetries = 3): Promise<Sim> {
  const s = await route.open({ config: cfg, seed: 42, credential: fakeCredential, readRetry: { maxRetries: readRetries } });
  opened.push(s);
  return s;
}

for (const route of ROUTES) {
  describe(`SdkAzure × simulated ARM (${route.name})`, () => {
    it('listUsages: Total Regional and per-family vCPUs as the fake holds them; unreadable usages reject (the reader fails open)', async () => {
      const s = await sim(route);
      await s.run(s.azure.createNic(nicSpec('u')));
      await s.run(s.azure.createVm(vmSpec('u')));
      const usages = await s.run(s.azure.listUsages(SUB, 'eastus2'));
      expect(usages.regional).toEqual({ used: 96, limit: 1000 });
      expect(usages.families.get(H200_FAMILY)).toEqual({ used: 96, limit: 192 });
      expect(usages.lowPriority).toBeDefined();
      const locked = await sim(route, { ...config(), usages: { readable: false } });
      await expect(locked.run(locked.azure.listUsages(SUB, 'eastus2'))).rejects.toMatchObject({ statusCode: 403 });
    });

    it('getCapacityReservationGroup: each reservation\'s size, zone, quantity and allocated VMs; a VM created into the group takes a slot; absent: undefined', async () => {
      const cfg = config();
      cfg.regions[0]!.capacityReservationGroups = [{ resourceGroup: RG, name: 'gpu', zones: ['1'], reservations: [{ name: 'h200', sku: H200, zone: '1', quantity: 2 }] }];
      const s = await sim(route, cfg);
      const groupRef = ref('gpu');
      const groupId = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Compute/capacityReservationGroups/gpu`;
      await s.run(s.azure.createNic(nicSpec('r')));
      const vm = await s.run(s.azure.createVm({ ...vmSpec('r'), zone: '1', capacityReservationGroupId: groupId }));
      expect(vm.provisioningState).toBe('Succeeded');
      const group = await s.run(s.azure.getCapacityReservationGroup(groupRef));
      expect(group).toEqual({
        id: groupId, name: 'gpu', location: 'eastus2',
        reservations: [{ id: `${groupId}/capacityReservations/h200`, name: 'h200', vmSize: H200, zone: '1', capacity: 2, allocatedVmIds: [vm.id] }],
      });
      // The reservation's slot holds its cores: the family's 192 are the reservation's 2 x 96, not one more.
      expect((await s.run(s.azure.listUsages(SUB, 'eastus2'))).families.get(H200_FAMILY)).toEqual({ used: 192, limit: 192 });
      expect(await s.run(s.azure.getCapacityReservationGroup(ref('none')))).toBeUndefined();
    });

    it('whole lifecycle: NIC, quota refusal, reservation wait, NIC reaped, VM create and cascading delete', async () => {
      const s = await sim(route);
      const t0 = s.clock.now();
      // 1. NIC.
      const nic = await s.run(s.azure.createNic(nicSpec('a')));
      expect(nic).toMatchObject({ name: legacyNamesFor('a').nic, subnetId: SUBNET, provisioningState: 'Succeeded' });
      expect(nic.privateIpAddress).toMatch(/^10\.1\.0\.\d+$/);
      expect(nic.tags['karpenter.sh_nodeclaim']).toBe('a');
      // Idempotent: a second create finds it (GET before PUT).
      expect((await s.run(s.azure.createNic(nicSpec('a')))).id).toBe(nic.id);

      // 2. VM refused for quota (the family has no cores left).
      s.arm.injectFault({ kind: 'quota', location: 'eastus2', family: H200_FAMILY, cores: 0 });
      const refused = await s.run(s.azure.createVm(vmSpec('a'))).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(AzureError);
      expect(classifyAzureError(refused)).toMatchObject({ kind: 'insufficientCapacity', reason: 'quota', quota: { scope: 'family', family: H200_FAMILY, currentLimit: 0 } });
      const refusedAt = s.clock.now();

      // 3. The refused PUT reserved the NIC: deletes are refused for 180 s.
      const reserved = await s.run(s.azure.deleteNic(nicSpec('a').ref)).catch((e: unknown) => e);
      expect(reserved).toMatchObject({ code: 'NicReservedForAnotherVm', statusCode: 400 });
      expect(classifyAzureError(reserved).kind).toBe('reserved');
      await s.advance(170);
      await expect(s.run(s.azure.deleteNic(nicSpec('a').ref))).rejects.toMatchObject({ code: 'NicReservedForAnotherVm' });
      await s.advance(Math.max(0, 181 - (s.clock.now() - refusedAt) / 1000));

      // 4. After the reservation the NIC goes; a second delete is a no-op (404 is success).
      await s.run(s.azure.deleteNic(nicSpec('a').ref));
      expect(await s.run(s.azure.getNic(nicSpec('a').ref))).toBeUndefined();
      await s.run(s.azure.deleteNic(nicSpec('a').ref));
      expect(s.arm.snapshot().nics).toEqual([]);

      // 5. Quota back: a VM is created (LRO polled on the virtual clock) ...
      s.arm.injectFault({ kind: 'quota', location: 'eastus2', family: H200_FAMILY, cores: 192 });
      await s.run(s.azure.createNic(nicSpec('b')));
      const before = s.clock.now();
      const vm = await s.run(s.azure.createVm(vmSpec('b')));
      expect(vm).toMatchObject({ name: legacyNamesFor('b').vm, vmSize: H200, provisioningState: 'Succeeded', osDiskName: legacyNamesFor('b').osDisk });
      expect(vm.nicIds.map((id) => id.toLowerCase())).toEqual([vmSpec('b').nicId.toLowerCase()]);
      expect(s.clock.now() - before).toBeGreaterThanOrEqual(60_000);
      const attached = await s.run(s.azure.getNic(nicSpec('b').ref));
      expect(attached?.virtualMachineId?.toLowerCase()).toBe(vm.id.toLowerCase());
      // NicInUse while the VM holds it.
      await expect(s.run(s.azure.deleteNic(nicSpec('b').ref))).rejects.toMatchObject({ code: 'NicInUse' });
      const disks = await s.run(s.azure.listDisks({ subscriptionId: SUB, resourceGroup: RG }));
      expect(disks.map((d) => [d.name, d.managedBy?.toLowerCase()])).toEqual([[legacyNamesFor('b').osDisk, vm.id.toLowerCase()]]);
      expect((await s.run(s.azure.listVms({ subscriptionId: SUB, resourceGroup: RG }))).map((v) => v.name)).toEqual([legacyNamesFor('b').vm]);

      // 6. ... and deleted past the NIC's reservation: accepted at once, gone minutes later (a GPU VM),
      // NIC and OS disk with it (deleteOption: Delete), nothing leaks.
      await s.advance(Math.max(0, 181 - (s.clock.now() - before) / 1000));
      await s.run(s.azure.deleteVm(vmSpec('b').ref));
      // (over HTTPS the served clock runs on while the test waits, so the delete may be over already)
      expect([undefined, 'Deleting']).toContain((await s.run(s.azure.getVm(vmSpec('b').ref)))?.provisioningState);
      await s.run(new Promise<void>((resolve) => s.clock.setTimer(480_000, resolve)));
      expect(await s.run(s.azure.getVm(vmSpec('b').ref))).toBeUndefined();
      expect(await s.run(s.azure.listNics({ subscriptionId: SUB, resourceGroup: RG }))).toEqual([]);
      expect(await s.run(s.azure.listDisks({ subscriptionId: SUB, resourceGroup: RG }))).toEqual([]);
      expect(await s.run(s.azure.getDisk(ref(legacyNamesFor('b').osDisk)))).toBeUndefined();
      expect(s.arm.leaks(new Set())).toEqual({ nics: [], vms: [], disks: [] });
      await s.run(s.azure.deleteVm(vmSpec('b').ref));
      expect(s.clock.now()).toBeGreaterThan(t0);
    });

    it('a VM taken away: getVm shows a deallocated VM\'s power state (the instance view), lists never do; a Spot VM asks for eviction policy Delete and an eviction takes VM, NIC and disk', async () => {
      const s = await sim(route);
      const scope = { subscriptionId: SUB, resourceGroup: RG };
      await s.run(s.azure.createNic(nicSpec('p')));
      const vm = await s.run(s.azure.createVm(vmSpec('p', 'Standard_D8s_v5')));
      expect(vm.powerState).toBeUndefined();
      expect(s.arm.beginPowerAction(vmSpec('p').ref, 'deallocate')).toBeDefined();
      await s.advance(100);
      expect(await s.run(s.azure.getVm(vmSpec('p').ref))).toMatchObject({ provisioningState: 'Succeeded', powerState: 'deallocated' });
      expect((await s.run(s.azure.listVms(scope))).map((v) => [v.name, v.powerState])).toEqual([[legacyNamesFor('p').vm, undefined]]);
      // A Spot VM: the adapter asks ARM to delete it (and per deleteOption its NIC and disk) on eviction.
      await s.run(s.azure.createNic(nicSpec('q')));
      await s.run(s.azure.createVm({ ...vmSpec('q', 'Standard_D8s_v5'), priority: 'Spot' }));
      expect(s.arm.vmGet(vmSpec('q').ref)).toMatchObject({ priority: 'Spot', evictionPolicy: 'Delete' });
      await s.advance(181);
      expect(s.arm.simulateEviction(vmSpec('q').ref)).toBe(true);
      await s.advance(31 + 91);
      expect(await s.run(s.azure.getVm(vmSpec('q').ref))).toBeUndefined();
      expect(await s.run(s.azure.getNic(nicSpec('q').ref))).toBeUndefined();
      expect(await s.run(s.azure.getDisk(ref(legacyNamesFor('q').osDisk)))).toBeUndefined();
    });

    it('taxonomy rows the fake produces, each through the real SDK pipeline', async () => {
      const expectCode = async (work: Promise<unknown>, code: string): Promise<AzureError> => {
        const err = await work.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err, code).toBeInstanceOf(AzureError);
        expect((err as AzureError).code, (err as Error).message).toBe(code);
        return err as AzureError;
      };

      // Regional quota (sync).
      {
        const cfg = config();
        cfg.regions[0]!.regionalQuotaCores = 10;
        const s = await sim(route, cfg);
        await s.run(s.azure.createNic(nicSpec('r')));
        const err = await expectCode(s.run(s.azure.createVm(vmSpec('r'))), 'OperationNotAllowed');
        expect(classifyAzureError(err)).toMatchObject({ quota: { scope: 'regional' }, ttlSeconds: 1800 });
      }
      // SkuNotAvailable (sync), AllocationFailed and ZonalAllocationFailed (async LRO failures).
      {
        const s = await sim(route);
        s.arm.injectFault({ kind: 'skuUnavailable', location: 'eastus2', sku: H200 });
        await s.run(s.azure.createNic(nicSpec('s')));
        await expectCode(s.run(s.azure.createVm(vmSpec('s'))), 'SkuNotAvailable');
        s.arm.injectFault({ kind: 'skuUnavailable', location: 'eastus2', sku: H200, unavailable: false });
        s.arm.injectFault({ kind: 'capacity', location: 'eastus2', allocationFailureRate: 1 });
        await s.run(s.azure.createNic(nicSpec('f')));
        const alloc = await expectCode(s.run(s.azure.createVm(vmSpec('f'))), 'AllocationFailed');
        expect(alloc.message).toContain('sufficient capacity');
        s.arm.injectFault({ kind: 'capacity', location: 'eastus2', allocationFailureRate: 0, zonalAllocationFailureRate: 1 });
        await s.run(s.azure.createNic(nicSpec('z')));
        await expectCode(s.run(s.azure.createVm({ ...vmSpec('z'), zone: '1' })), 'ZonalAllocationFailed');
        // ARM keeps the failed VMs, Failed, holding NIC and OS disk until they are deleted.
        expect(await s.run(s.azure.getVm(vmSpec('f').ref))).toMatchObject({ provisioningState: 'Failed', nicIds: [expect.stringMatching(/azflex-f-nic$/i)] });
        expect(await s.run(s.azure.getDisk(ref(legacyNamesFor('f').osDisk)))).toMatchObject({ managedBy: expect.stringMatching(/azflex-f$/i) });
      }
      // SubnetIsFull: a /29 has 3 usable addresses.
      {
        const s = await sim(route);
        for (const c of ['n1', 'n2', 'n3']) await s.run(s.azure.createNic(nicSpec(c, SMALL_SUBNET)));
        const full = await expectCode(s.run(s.azure.createNic(nicSpec('n4', SMALL_SUBNET))), 'SubnetIsFull');
        expect(classifyAzureError(full).kind).toBe('subnetFull');
      }
      // 429 with Retry-After on a write; reads are retried on the clock and still succeed.
      {
        const s = await sim(route);
        s.arm.injectFault({ kind: 'throttle', enabled: true, drain: true, bucket: 'writes' });
        const throttled = await expectCode(s.run(s.azure.createNic(nicSpec('t'))), 'TooManyRequests');
        expect(throttled.statusCode).toBe(429);
        expect(throttled.retryAfterSeconds).toBeGreaterThan(0);
        expect(classifyAzureError(throttled)).toMatchObject({ kind: 'throttled', retryAfterSeconds: throttled.retryAfterSeconds });
        s.arm.injectFault({ kind: 'throttle', drain: true, bucket: 'reads' });
        expect(await s.run(s.azure.getVm(vmSpec('t').ref))).toBeUndefined();
      }
      // 404: GET → undefined; DELETE of what is not there → success.
      {
        const s = await sim(route);
        expect(await s.run(s.azure.getNic(nicSpec('ghost').ref))).toBeUndefined();
        await s.run(s.azure.deleteVm(vmSpec('ghost').ref));
        await s.run(s.azure.deleteNic(nicSpec('ghost').ref));
        await s.run(s.azure.deleteDisk(ref(legacyNamesFor('ghost').osDisk)));
      }
      // 5xx and timeouts (reads not retried here, so the first answer surfaces).
      {
        const s = await sim(route, config(), 0);
        s.arm.injectFault({ kind: 'transient', transientFaultRate: 1 });
        const e500 = await expectCode(s.run(s.azure.getVm(vmSpec('x').ref)), 'InternalServerError');
        expect(classifyAzureError(e500).kind).toBe('transient');
        s.arm.injectFault({ kind: 'transient', transientFaultRate: 0, timeoutRate: 1 });
        const e408 = await expectCode(s.run(s.azure.getVm(vmSpec('x').ref)), 'RequestTimeout');
        expect(classifyAzureError(e408).kind).toBe('transient');
      }
    });

    it('the live catalog reads the simulator\'s Resource SKUs route through the SDK, restrictions included', async () => {
      const s = await sim(route);
      const catalog = new LiveInstanceTypeCatalog({
        clock: s.clock,
        refreshMs: 1,
        scopes: async () => [{ subscriptionID: SUB, location: 'eastus2' }],
        fetch: resourceSkuFetcher(async (sub) => (await s.azure.computeClient(sub)).resourceSkus, s.clock),
      });
      const types = await s.run(catalog.list());
      const h200 = types.find((t) => t.name === H200);
      expect(h200).toMatchObject({ vcpu: 96, gpuCount: 8, gpuModel: 'H200', locations: ['eastus2'], acceleratedNetworking: true });
      expect(types.map((t) => t.name).sort()).toEqual(
        s.arm.instanceTypes().filter((t) => t.locations.includes('eastus2')).map((t) => t.name).sort(),
      );
      s.arm.injectFault({ kind: 'skuUnavailable', location: 'eastus2', sku: H200 });
      await s.run(s.clock.runUntil(s.clock.now() + 1));
      const after = await s.run(catalog.list());
      expect(after.some((t) => t.name === H200)).toBe(false);
      expect(catalog.restriction(H200, { subscriptionID: SUB, location: 'eastus2' })).toMatchObject({ type: 'Location', reasonCode: 'NotAvailableForSubscription' });
    });
  });
}

describe('HTTPS face: trust', () => {
  it('without the simulator CA the TLS handshake is refused (the HTTPS route really verifies)', async () => {
    const { serveArm } = await import('../../src/sim/arm/https-face.js');
    const { SdkAzure } = await import('../../src/azure/sdk-adapter.js');
    const served = await serveArm({ host: '127.0.0.1', scenarioConfig: config(), seed: 1, clockMode: 'manual' });
    try {
      const azure = new SdkAzure({ clock: served.clock, credential: fakeCredential, endpoint: served.endpoint, readRetry: { maxRetries: 0 } });
      const err = await azure.getVm(ref('x')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AzureError);
      expect((err as Error).message).toMatch(/certificate|self[- ]signed/i);
    } finally {
      await served.close();
    }
  });
});

describe('SdkAzure.createVm is create-only (If-None-Match: *)', () => {
  it("sends If-None-Match: * on a VM's first PUT; a VM of the name made after its GET gets 412 and is read, never written over", async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const arm = new FakeArm({ clock, random: new SeededRandom(3), config: config(), instanceTypes: STATIC_INSTANCE_TYPES });
    const baseUrl = 'https://fake-arm.azflex.invalid';
    const handler = createArmRestHandler(arm, { baseUrl, clock, lroRetryAfterSeconds: 10 });
    const vmPuts: Array<{ name: string; ifNoneMatch: string | undefined; status: number }> = [];
    // Another cluster's VM of the name that 'race' names lands between the adapter's GET and its PUT.
    const foreign = { ...vmSpec('race'), nicId: armId(ref('theirs-nic'), 'Microsoft.Network/networkInterfaces'), tags: ownershipTags('c2', 'h200', 'race', 'h200-eastus2', 0) };
    let raced = false;
    const racing: typeof handler = async (req) => {
      const vmPut = req.method === 'PUT' && /\/virtualMachines\/([^/?]+)\?/.exec(req.url)?.[1];
      if (vmPut === legacyNamesFor('race').vm && !raced) {
        raced = true;
        await arm.createVm(foreign);
      }
      const res = await handler(req);
      if (vmPut) vmPuts.push({ name: vmPut, ifNoneMatch: req.headers['if-none-match'], status: res.status });
      return res;
    };
    const azure = new SdkAzure({ clock, credential: fakeCredential, endpoint: baseUrl, httpClient: createArmHttpClient(racing) });

    await runOnClock(clock, azure.createNic(nicSpec('own')));
    const own = await runOnClock(clock, azure.createVm(vmSpec('own')));
    expect(own.tags['azflex.io_cluster']).toBe('c1');

    await runOnClock(clock, arm.createNic({ ...nicSpec('race'), ref: ref('theirs-nic'), tags: foreign.tags }));
    await runOnClock(clock, azure.createNic(nicSpec('race')));
    const answered = await runOnClock(clock, azure.createVm(vmSpec('race')));
    // ARM's answer is the other cluster's VM, as it is: the lifecycle's ownership check refuses it.
    expect(answered.tags).toEqual(foreign.tags);
    expect(arm.vmGet(ref(legacyNamesFor('race').vm))?.tags).toEqual(foreign.tags);
    expect(vmPuts).toEqual([
      { name: legacyNamesFor('own').vm, ifNoneMatch: '*', status: 201 },
      { name: legacyNamesFor('race').vm, ifNoneMatch: '*', status: 412 },
    ]);
  });
});
