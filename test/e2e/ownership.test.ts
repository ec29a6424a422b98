import { describe, expect, it } from 'vitest';
import { TAG, armId, clusterNamesFor, legacyNamesFor, ownershipTags } from '../../src/azure/naming.js';
import { STATIC_INSTANCE_TYPES, StaticInstanceTypeCatalog } from '../../src/catalog/skus.js';
import type { ResourceRef } from '../../src/ports/azure.js';
import type { AzureFlexNodeClass, NodeClaim } from '../../src/ports/cluster.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { DEFAULT_RUNTIME_CONFIG } from '../../src/runtime/deps.js';
import { MemoryEventLog } from '../../src/runtime/event-log.js';
import { FakeArm } from '../../src/sim/arm/fake-arm.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { renderSimUserData } from '../../src/sim/userdata.js';
import { SeededRandom, VirtualClock } from '../../src/sim/virtual-clock.js';

/**
 * Ownership on every ARM write, through the runtime against the fake ARM: a NIC or VM of the
 * NodeClaim's name that is not its own (another cluster's, or untagged) is never adopted or
 * deleted, the launch fails for good with ResourceNameConflict; and a NodeClaim launched by the
 * first version (names without the cluster) keeps its resources after the upgrade and has them reaped.
 */

const SUB = '00000000-0000-4000-8000-000000000001';
const RG = 'rg-gpu';
const SUBNET = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`;
const CLUSTER = 'aks-a';
const CLAIM = 'cpu-abcde';
const meta = (name: string) => ({ name, uid: name, labels: {}, annotations: {}, finalizers: [] as string[], creationTimestamp: '2026-01-01T00:00:00Z' });
const ref = (name: string): ResourceRef => ({ subscriptionId: SUB, resourceGroup: RG, name });

function world() {
  const clock = new VirtualClock(Date.UTC(2026, 0, 1));
  const arm = new FakeArm({
    clock,
    random: new SeededRandom(1),
    config: {
      regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: { standardDSv5Family: 100 }, regionalQuotaCores: 100 }],
      subnets: [{ id: SUBNET, addressPrefix: '10.1.0.0/24' }],
      resourceGroups: [{ subscriptionId: SUB, name: RG }],
      listLagSeconds: { appearSeconds: 0, disappearSeconds: 0 },
    },
    instanceTypes: STATIC_INSTANCE_TYPES,
  });
  const cluster = new FakeCluster(clock);
  const nodeClass: AzureFlexNodeClass = {
    metadata: meta('cpu'),
    spec: {
      subscriptionID: SUB, location: 'eastus2', resourceGroup: RG, subnetID: SUBNET,
      imageReference: { publisher: 'p', offer: 'o', sku: 's', version: 'latest' }, securityType: 'Standard',
      osDiskSizeGB: 128, sshPublicKeys: [], allocateNodePublicIP: false, maxPodsPerNode: 110, tags: {},
    },
    status: { conditions: [] },
  };
  cluster.putNodeClass(nodeClass);
  const statuses: Array<NodeClaim['status']> = [];
  const update = cluster.updateNodeClaimStatus.bind(cluster);
  cluster.updateNodeClaimStatus = async (name, status) => {
    statuses.push(status);
    return update(name, status);
  };
  const claim = (): Promise<NodeClaim> => cluster.createNodeClaim({
    metadata: { ...meta(CLAIM), labels: { 'karpenter.sh/nodepool': 'cpu' }, finalizers: ['karpenter.sh/termination'] },
    spec: {
      nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'cpu' },
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D8s_v5'] }],
      resources: { requests: { cpu: '1' } }, taints: [], startupTaints: [],
    },
    status: { conditions: [] },
  });
  const runtime = (legacyNames = false): Runtime => new Runtime({
    arm, cluster, clock, random: new SeededRandom(2), catalog: new StaticInstanceTypeCatalog(), userData: renderSimUserData,
    eventLog: new MemoryEventLog(), config: { ...DEFAULT_RUNTIME_CONFIG, clusterName: CLUSTER, ...(legacyNames ? { legacyNames } : {}) },
  });
  const run = async (r: Runtime, minutes: number): Promise<void> => {
    const started = r.start();
    await clock.runUntil(clock.now() + minutes * 60_000);
    await started;
  };
  const writes = (): Record<string, number> => {
    const calls = arm.armCalls();
    const n = (op: string): number => Object.entries(calls[op] ?? {}).filter(([status]) => status !== '404').reduce((a, [, c]) => a + c, 0);
    return { 'nic.put': n('nic.put'), 'vm.put': n('vm.put'), 'nic.delete': n('nic.delete'), 'vm.delete': n('vm.delete'), 'disk.delete': n('disk.delete') };
  };
  /** An ARM call made by hand (another cluster, a person): the virtual clock runs until it is answered. */
  const answered = async <T>(p: Promise<T>): Promise<T> => {
    let done = false;
    void p.finally(() => (done = true)).catch(() => undefined);
    while (!done) {
      await clock.runUntil(clock.peek() ?? clock.now() + 1_000);
      await new Promise((resolve) => setImmediate(resolve));
    }
    return p;
  };
  return { clock, arm, cluster, statuses, claim, runtime, run, writes, answered };
}

const launched = (s: NodeClaim['status']): string | undefined => s.conditions.find((c) => c.type === 'Launched')?.reason;

describe('ownership on every ARM write', () => {
  it("never adopts another cluster's NIC of the NodeClaim's name: the launch fails for good (ResourceNameConflict) and the NIC is left as it was", async () => {
    const w = world();
    const names = clusterNamesFor(CLAIM, CLUSTER);
    const foreign = await w.answered(w.arm.createNic({ ref: ref(names.nic), location: 'eastus2', subnetId: SUBNET, tags: ownershipTags('aks-b', 'cpu', CLAIM, 'cpu', 0) }));
    await w.claim();
    const r = w.runtime();
    await w.run(r, 10);
    r.stop();
    expect(w.cluster.nodeClaims.size).toBe(0);
    expect(w.writes()).toEqual({ 'nic.put': 1, 'vm.put': 0, 'nic.delete': 0, 'vm.delete': 0, 'disk.delete': 0 });
    expect(w.arm.nicGet(ref(names.nic))).toMatchObject({ id: foreign.id, tags: foreign.tags });
    const event = w.cluster.events.find((e) => e.reason === 'ResourceNameConflict');
    expect(event).toMatchObject({ type: 'Warning', involvedObject: { kind: 'NodeClaim', name: CLAIM } });
    expect(event?.message).toContain(foreign.id);
    expect(event?.message).toContain(`${TAG.cluster}=aks-b`);
    expect(w.statuses.map(launched)).toContain('ResourceNameConflict');
  });

  it('never adopts nor deletes an untagged VM of the name: the launch fails, its own NIC is reaped, the VM stays', async () => {
    const w = world();
    const names = clusterNamesFor(CLAIM, CLUSTER);
    const manualNic = await w.answered(w.arm.createNic({ ref: ref('by-hand-nic'), location: 'eastus2', subnetId: SUBNET, tags: {} }));
    const vm = await w.answered(w.arm.createVm({
      ref: ref(names.vm), location: 'eastus2', vmSize: 'Standard_D8s_v5', nicId: manualNic.id, osDiskName: 'by-hand-osdisk', osDiskSizeGB: 64,
      image: { reference: { publisher: 'p', offer: 'o', sku: 's', version: 'latest' } }, adminUsername: 'me', sshPublicKeys: [], customData: '', priority: 'Regular', tags: {},
    }));
    await w.claim();
    const r = w.runtime();
    await w.run(r, 20);
    r.stop();
    expect(w.cluster.nodeClaims.size).toBe(0);
    // The runtime's writes: its NIC created and reaped (the other NIC PUT and the VM PUT were the test's own).
    expect(w.writes()).toEqual({ 'nic.put': 2, 'vm.put': 1, 'nic.delete': 1, 'vm.delete': 0, 'disk.delete': 0 });
    expect(w.arm.nicGet(ref(names.nic))).toBeUndefined();
    expect(w.arm.vmGet(ref(names.vm))).toMatchObject({ id: vm.id, tags: {} });
    expect(w.cluster.events.find((e) => e.reason === 'ResourceNameConflict')?.message).toContain(`VM ${vm.id} already exists and is not this NodeClaim's (no azflex cluster tag`);
    expect(w.statuses.map(launched)).toContain('ResourceNameConflict');
  });

  it("never writes over another cluster's VM of the name that appears between the launch's GET and its PUT (create-only PUT)", async () => {
    const w = world();
    const names = clusterNamesFor(CLAIM, CLUSTER);
    const theirs = ownershipTags('aks-b', 'cpu', CLAIM, 'cpu', 0);
    const theirNic = await w.answered(w.arm.createNic({ ref: ref('theirs-nic'), location: 'eastus2', subnetId: SUBNET, tags: theirs }));
    const getVm = w.arm.getVm.bind(w.arm);
    let raced = false;
    w.arm.getVm = async (r) => {
      const got = await getVm(r);
      if (got || raced || r.name !== names.vm) return got;
      raced = true;
      await w.arm.createVm({
        ref: ref(names.vm), location: 'eastus2', vmSize: 'Standard_D8s_v5', nicId: theirNic.id, osDiskName: 'theirs-osdisk', osDiskSizeGB: 64,
        image: { reference: { publisher: 'p', offer: 'o', sku: 's', version: 'latest' } }, adminUsername: 'them', sshPublicKeys: [], customData: '', priority: 'Regular', tags: theirs,
      });
      return got;
    };
    await w.claim();
    const r = w.runtime();
    await w.run(r, 20);
    r.stop();
    expect(raced).toBe(true);
    expect(w.cluster.nodeClaims.size).toBe(0);
    // The VM PUT was the other cluster's; azflex's own NIC was made and reaped.
    expect(w.writes()).toEqual({ 'nic.put': 2, 'vm.put': 1, 'nic.delete': 1, 'vm.delete': 0, 'disk.delete': 0 });
    expect(w.arm.vmGet(ref(names.vm))?.tags).toEqual(theirs);
    expect(w.cluster.events.find((e) => e.reason === 'ResourceNameConflict')?.message).toContain(`${TAG.cluster}=aks-b`);
  });

  it("keeps a NodeClaim launched under the first version's names after the upgrade, and reaps them when it goes", async () => {
    const w = world();
    const legacy = legacyNamesFor(CLAIM);
    await w.claim();
    const before = w.runtime(true);
    await w.run(before, 10);
    before.stop();
    expect(w.arm.vmGet(ref(legacy.vm))?.provisioningState).toBe('Succeeded');
    expect(w.cluster.nodeClaims.get(CLAIM)?.status.providerID).toContain(`/virtualMachines/${legacy.vm}`);
    const written = w.writes();
    const after = w.runtime();
    await w.run(after, 10);
    // Nothing new under the cluster's names: the NodeClaim carries on with its VM.
    expect(w.writes()).toEqual(written);
    expect(launched(w.cluster.nodeClaims.get(CLAIM)!.status)).toBe('Launched');
    await w.cluster.deleteNodeClaim(CLAIM);
    await w.clock.runUntil(w.clock.now() + 30 * 60_000);
    after.stop();
    expect(w.cluster.nodeClaims.size).toBe(0);
    const left = w.arm.snapshot();
    expect([...left.nics, ...left.vms, ...left.disks]).toEqual([]);
    expect(w.writes()).toMatchObject({ 'vm.delete': 1, 'nic.put': 1, 'vm.put': 1 });
  });

  it("carries on a launch the first version began (its NIC only) under the first version's names", async () => {
    const w = world();
    const legacy = legacyNamesFor(CLAIM);
    await w.answered(w.arm.createNic({ ref: ref(legacy.nic), location: 'eastus2', subnetId: SUBNET, tags: ownershipTags(CLUSTER, 'cpu', CLAIM, 'cpu', w.clock.now()) }));
    await w.claim();
    const r = w.runtime();
    await w.run(r, 10);
    r.stop();
    expect(w.arm.vmGet(ref(legacy.vm))).toMatchObject({ provisioningState: 'Succeeded', nicIds: [armId(ref(legacy.nic), 'Microsoft.Network/networkInterfaces')] });
    expect(w.arm.nicGet(ref(clusterNamesFor(CLAIM, CLUSTER).nic))).toBeUndefined();
    expect(launched(w.cluster.nodeClaims.get(CLAIM)!.status)).toBe('Launched');
  });
});
