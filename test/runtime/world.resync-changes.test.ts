import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TAG } from '../../src/azure/naming.js';
import type { AzurePort, Nic, Vm } from '../../src/ports/azure.js';
import type { ClusterPort, Node, NodeClaim } from '../../src/ports/cluster.js';
import { DirtyActors } from '../../src/runtime/dirty.js';
import { ArmView } from '../../src/runtime/arm-view.js';
import { ClusterObserver } from '../../src/runtime/world.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';

const RG = '/subscriptions/s/resourceGroups/rg/providers';
const tags = { [TAG.cluster]: 'c' };
const nic = (name: string, extra: Partial<Nic> = {}): Nic => ({
  id: `${RG}/Microsoft.Network/networkInterfaces/${name}`, name, location: 'eastus2', subnetId: 'sn', provisioningState: 'Succeeded', tags: { ...tags }, ...extra,
});
const vm = (name: string, nicIds: string[], extra: Partial<Vm> = {}): Vm => ({
  id: `${RG}/Microsoft.Compute/virtualMachines/${name}`, name, location: 'eastus2', vmSize: 'Standard_D8s_v5', nicIds, provisioningState: 'Succeeded', tags: { ...tags }, ...extra,
});
const ref = (name: string) => ({ subscriptionId: 's', resourceGroup: 'rg', name });

/** A port whose GETs answer what the test says ARM shows now (copies, as ARM's answers are). */
function answering(): { port: AzurePort; nics: Map<string, Nic>; vms: Map<string, Vm> } {
  const nics = new Map<string, Nic>();
  const vms = new Map<string, Vm>();
  const copy = <T>(r: T | undefined): T | undefined => (r === undefined ? undefined : structuredClone(r));
  const port = {
    getNic: async (r: { name: string }) => copy(nics.get(r.name)),
    getVm: async (r: { name: string }) => copy(vms.get(r.name)),
    deleteVm: async () => undefined,
  } as unknown as AzurePort;
  return { port, nics, vms };
}

describe('ArmView: what changed since the runtime last looked', () => {
  it('a NIC is "answered gone" only on ARM\'s own word (a GET\'s 404, a finished DELETE), never on a list\'s absence', async () => {
    const view = new ArmView('c');
    view.install({ nics: [], vms: [] }, 0);
    expect(view.answeredGone('nic', 'a')).toBe(false);
    const { port, nics } = answering();
    const arm = view.observing({ ...port, deleteNic: async () => undefined } as AzurePort, { now: () => 1 });
    await arm.getNic(ref('a'));
    expect(view.answeredGone('nic', 'a')).toBe(true);
    // Shown again (a GET, a PUT's answer, a list): no longer gone.
    nics.set('a', nic('a'));
    await arm.getNic(ref('a'));
    expect(view.answeredGone('nic', 'a')).toBe(false);
    await arm.deleteNic(ref('a'));
    expect(view.answeredGone('nic', 'a')).toBe(true);
    // A list long after the answer (lists trail ARM) that still shows it wins, and one without it is only a list.
    view.install({ nics: [nic('a')], vms: [] }, 10 * 60_000);
    expect(view.answeredGone('nic', 'a')).toBe(false);
    view.install({ nics: [], vms: [] }, 20 * 60_000);
    expect(view.answeredGone('nic', 'a')).toBe(false);
  });

  it('an answer or a list that shows an entry as it was changes nothing and keeps its object', async () => {
    const view = new ArmView('c');
    const a = nic('a');
    view.install({ nics: [a], vms: [] }, 0);
    expect(view.takeChanges().all).toBe(true);
    const { port, nics } = answering();
    nics.set('a', a);
    await view.observing(port, { now: () => 1 }).getNic(ref('a'));
    const changes = view.takeChanges();
    expect([changes.all, [...changes.nics], [...changes.vms]]).toEqual([false, [], []]);
    expect(view.nics.get('a')).toBe(a);
    // A list looks at every actor again, but its unchanged entries stay the objects they were.
    view.install({ nics: [structuredClone(a)], vms: [] }, 2);
    expect(view.takeChanges().all).toBe(true);
    expect(view.nics.get('a')).toBe(a);
  });

  it('a VM that starts or stops referencing a NIC changes that NIC (its attachment), whatever the id casing', async () => {
    const view = new ArmView('c');
    const a = nic('a');
    view.install({ nics: [a, nic('b')], vms: [] }, 0);
    view.takeChanges();
    const { port, vms } = answering();
    const arm = view.observing(port, { now: () => 1 });
    vms.set('vm-a', vm('vm-a', [a.id.toUpperCase()]));
    await arm.getVm(ref('vm-a'));
    let changes = view.takeChanges();
    expect([...changes.vms]).toEqual(['vm-a']);
    expect([...changes.nics]).toEqual(['a']);
    expect(view.isAttached(a)).toBe(true);
    expect(view.isAttached(view.nics.get('b')!)).toBe(false);
    // Accepted DELETE: the VM shows Deleting and still holds the NIC.
    await arm.deleteVm(ref('vm-a'));
    expect(view.isAttached(a)).toBe(true);
    vms.delete('vm-a');
    await arm.getVm(ref('vm-a'));
    changes = view.takeChanges();
    expect([...changes.nics]).toEqual(['a']);
    expect(view.isAttached(a)).toBe(false);
  });

  it('a NIC that names a VM as its own is attached while that VM is in the view', async () => {
    const view = new ArmView('c');
    const a = nic('a', { virtualMachineId: `${RG}/Microsoft.Compute/virtualMachines/vm-x` });
    view.install({ nics: [a], vms: [] }, 0);
    view.takeChanges();
    expect(view.isAttached(a)).toBe(false);
    const { port, vms } = answering();
    vms.set('vm-x', vm('vm-x', []));
    await view.observing(port, { now: () => 1 }).getVm(ref('vm-x'));
    expect([...view.takeChanges().nics]).toEqual(['a']);
    expect(view.isAttached(a)).toBe(true);
  });
});

const meta = (name: string) => ({ name, uid: `uid-${name}`, labels: {}, annotations: {}, finalizers: [] as string[], creationTimestamp: '2026-01-01T00:00:00Z' });
const claim = (name: string): NodeClaim => ({
  metadata: meta(name),
  spec: { nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'default' }, requirements: [], resources: { requests: {} }, taints: [], startupTaints: [] },
  status: { conditions: [] },
});
const node = (name: string, providerID: string): Node => ({
  metadata: meta(name), spec: { providerID, taints: [] }, status: { capacity: {}, allocatable: {}, conditions: [] },
});

/** Counts the list calls that reach the port. */
function counting(cluster: ClusterPort): { port: ClusterPort; lists: () => number } {
  let lists = 0;
  const port = Object.create(cluster) as ClusterPort;
  port.listNodeClaims = () => (lists++, cluster.listNodeClaims());
  port.listNodes = () => (lists++, cluster.listNodes());
  port.listNodeClasses = () => (lists++, cluster.listNodeClasses());
  return { port, lists: () => lists };
}

describe('ClusterObserver: what changed in the cluster since the last pass', () => {
  it('lists nothing while the caches show what they showed, then reports exactly the objects that changed', async () => {
    const clock = new VirtualClock(0);
    const cluster = new FakeCluster(clock);
    await cluster.createNodeClaim(claim('one'));
    await cluster.createNodeClaim(claim('two'));
    cluster.putNode(node('n1', 'Azure-Flex:///VM/One'));
    const { port, lists } = counting(cluster);
    const observer = new ClusterObserver(port, clock);
    const first = await observer.observe();
    expect(first.changes.all).toBe(true);
    expect(lists()).toBe(3);
    const quiet = await observer.observe();
    expect(lists()).toBe(3);
    expect(quiet.changes).toEqual({ all: false, nodeClaims: [], nodes: [] });
    expect(quiet.view.nodeClaims).toBe(first.view.nodeClaims);
    await cluster.updateNodeClaimStatus('two', { conditions: [], providerID: 'x' });
    cluster.putNode(node('n1', 'Azure-Flex:///VM/One'));
    await cluster.deleteNodeClaim('one');
    const next = await observer.observe();
    // Which keys changed, in no particular order (the runtime marks them in sets).
    expect({ ...next.changes, nodeClaims: [...next.changes.nodeClaims].sort() }).toEqual({ all: false, nodeClaims: ['one', 'two'], nodes: ['azure-flex:///vm/one'] });
  });

  it('a port that copies what it lists: an unchanged resourceVersion is the object seen before', async () => {
    const clock = new VirtualClock(0);
    const cluster = new FakeCluster(clock);
    await cluster.createNodeClaim(claim('one'));
    await cluster.createNodeClaim(claim('two'));
    // As the informer port does: a copy on every list, and no cacheVersion to compare.
    const copying = Object.create(cluster) as ClusterPort;
    copying.listNodeClaims = async () => structuredClone(await cluster.listNodeClaims());
    copying.cacheVersion = () => undefined;
    const observer = new ClusterObserver(copying, clock);
    const first = await observer.observe();
    await cluster.patchNodeClaimMetadata('one', { labels: { changed: 'yes' } });
    const next = await observer.observe();
    expect(next.changes.nodeClaims).toEqual(['one']);
    expect(next.view.nodeClaims.get('two')).toBe(first.view.nodeClaims.get('two'));
    expect(next.view.nodeClaims.get('one')!.metadata.labels.changed).toBe('yes');
  });
});

describe('DirtyActors', () => {
  it('marks the NodeClaims that last read a changed VM, NIC or Node, and forgets a NodeClaim that left', () => {
    const dirty = new DirtyActors((n) => [`${n}-nic`]);
    dirty.claimReads('one', 'vm-one', 'vm-one-nic', 'pid-1');
    dirty.claimReads('two', 'vm-two', 'vm-two-nic', undefined);
    dirty.vmChanged('vm-two');
    dirty.nodeChanged('pid-1');
    expect([...dirty.claims].sort()).toEqual(['one', 'two']);
    dirty.claims.clear();
    // A NIC's change marks the NIC's actor and the NodeClaim that checks it exists.
    dirty.nicChanged('vm-one-nic');
    expect([...dirty.claims, ...dirty.nics]).toEqual(['one', 'vm-one-nic']);
    dirty.claims.clear();
    // Its Node is now another one: the old one's changes no longer concern it.
    dirty.claimReads('one', 'vm-one', 'vm-one-nic', 'pid-2');
    dirty.nodeChanged('pid-1');
    expect(dirty.claims.size).toBe(0);
    dirty.claimGone('one');
    dirty.claims.clear();
    dirty.nodeChanged('pid-2');
    dirty.vmChanged('vm-one');
    expect(dirty.claims.size).toBe(0);
  });
});

describe('ArmView: NIC order and the NICs ARM is deleting, kept as answers and lists come', () => {
  it('numbers each NIC by its place in the view\'s order and knows which it shows Deleting, as a walk over the view would find', async () => {
    const names = ['a', 'b', 'c', 'd', 'e'];
    const op = fc.record({
      kind: fc.constantFrom('get', 'get', 'delete', 'list'),
      name: fc.constantFrom(...names),
      state: fc.constantFrom('Succeeded', 'Deleting', 'gone'),
      listed: fc.subarray(names),
      at: fc.nat(5 * 60_000),
    });
    await fc.assert(fc.asyncProperty(fc.array(op, { maxLength: 25 }), async (ops) => {
      const view = new ArmView('c');
      view.install({ nics: [], vms: [] }, 0);
      const { port, nics } = answering();
      let now = 1;
      const arm = view.observing({ ...port, deleteNic: async () => undefined } as AzurePort, { now: () => now });
      for (const o of ops) {
        now += o.at;
        if (o.kind === 'list') {
          view.install({ nics: o.listed.map((n) => nic(n, { provisioningState: n === o.name ? 'Deleting' : 'Succeeded' })), vms: [] }, now);
        } else if (o.kind === 'delete') {
          await arm.deleteNic(ref(o.name));
        } else {
          if (o.state === 'gone') nics.delete(o.name);
          else nics.set(o.name, nic(o.name, { provisioningState: o.state }));
          await arm.getNic(ref(o.name));
        }
        const order = [...view.nics.keys()].map((n) => view.nicOrder(n)!);
        for (let i = 1; i < order.length; i++) expect(order[i]).toBeGreaterThan(order[i - 1]!);
        for (const n of names) if (!view.nics.has(n)) expect(view.nicOrder(n)).toBeUndefined();
        expect(new Set(view.nicsDeleting)).toEqual(new Set([...view.nics.values()].filter((x) => x.provisioningState === 'Deleting').map((x) => x.name)));
      }
    }), { numRuns: 300 });
  });
});
