import { TAG, nameFromArmId } from '../azure/naming.js';
import type { AzurePort, Disk, Nic, ResourceGroupScope, Vm } from '../ports/azure.js';
import type { AzureFlexNodeClass, Node, NodeClaim } from '../ports/cluster.js';
import type { RuntimeDeps } from './deps.js';
import { ANNOTATION_VM_ATTEMPT_AT, NODECLASS_GROUP, NODECLASS_KIND } from '../apis/well-known.js';

/** One consistent-enough look at ARM and the cluster; everything actors decide comes from here. */
export interface WorldView {
  at: number;
  nodeClaims: Map<string, NodeClaim>;
  nodeClasses: Map<string, AzureFlexNodeClass>;
  /** Nodes by providerID. */
  nodesByProviderId: Map<string, Node>;
  nics: Map<string, Nic>;
  vms: Map<string, Vm>;
  disks: Map<string, Disk> | undefined;
  /** Lowercased NIC ids referenced by a VM. */
  attachedNicIds: Set<string>;
}

export function ownsNodeClaim(nc: NodeClaim): boolean {
  const ref = nc.spec.nodeClassRef;
  return ref.group === NODECLASS_GROUP && ref.kind === NODECLASS_KIND;
}

export function scopesOf(nodeClasses: Iterable<AzureFlexNodeClass>): ResourceGroupScope[] {
  const seen = new Map<string, ResourceGroupScope>();
  for (const nc of nodeClasses) {
    const key = `${nc.spec.subscriptionID}/${nc.spec.resourceGroup}`.toLowerCase();
    if (!seen.has(key)) seen.set(key, { subscriptionId: nc.spec.subscriptionID, resourceGroup: nc.spec.resourceGroup });
  }
  return [...seen.values()].sort((a, b) => (a.subscriptionId + a.resourceGroup).localeCompare(b.subscriptionId + b.resourceGroup));
}

/**
 * A resource a GET or PUT answered for this shortly before a list began stays in the view
 * even when the list does not show it yet (lists trail ARM by seconds; generated worlds
 * test up to a minute). Older entries a list leaves out are dropped: the machines confirm
 * any absence by GET before they act on it.
 */
const LIST_LAG_GRACE_MS = 2 * 60_000;

/** The cluster half of a look at the world: cheap (informer caches), so taken on every pass. */
export interface ClusterView {
  at: number;
  nodeClaims: Map<string, NodeClaim>;
  nodeClasses: Map<string, AzureFlexNodeClass>;
  nodesByProviderId: Map<string, Node>;
}

/** Lowercased providerIDs, once per Node object (informers replace objects on change). */
const lowerProviderIds = new WeakMap<Node, string>();

export async function observeCluster(deps: RuntimeDeps): Promise<ClusterView> {
  const { cluster } = deps;
  const nodeClaimList = await cluster.listNodeClaims();
  const nodeClassList = await cluster.listNodeClasses();
  const nodeList = await cluster.listNodes();
  const nodesByProviderId = new Map<string, Node>();
  for (const n of nodeList) {
    if (!n.spec.providerID) continue;
    let pid = lowerProviderIds.get(n);
    if (pid === undefined) lowerProviderIds.set(n, (pid = n.spec.providerID.toLowerCase()));
    nodesByProviderId.set(pid, n);
  }
  const nodeClaims = new Map<string, NodeClaim>();
  for (const nc of nodeClaimList) if (ownsNodeClaim(nc)) nodeClaims.set(nc.metadata.name, nc);
  return {
    at: deps.clock.now(),
    nodeClaims,
    nodeClasses: new Map(nodeClassList.map((nc) => [nc.metadata.name, nc])),
    nodesByProviderId,
  };
}

/**
 * What the runtime knows of ARM: the last full (paged) list, with every answer since written
 * through — each GET (current, unlike a list), each PUT's result, each accepted DELETE. Lists
 * are expensive (a page per 100 resources, every tool in the subscription shares ARM's read
 * refill), so they are taken only now and then; between them the view stays true for what
 * azflex itself does, and the resources with something pending (a VM being created) are
 * looked at by GET. Memory only, and that is safe: a restarted controller starts with a full
 * list, and no machine treats "not in the view" as proof (they GET before they act on absence).
 */
export class ArmView {
  readonly nics = new Map<string, Nic>();
  readonly vms = new Map<string, Vm>();
  disks: Map<string, Disk> | undefined;
  /** When the last full list began (undefined: never, so the next pass must list). */
  listedAt: number | undefined;
  /** When each `nic/…`, `vm/…` or `disk/…` entry was last learned from an answer (present or absent). */
  private readonly learnedAt = new Map<string, number>();

  constructor(private readonly clusterName: string) {}

  /** When each kind was last listed on its own (between full lists, when many of one kind were due). */
  private readonly kindListedAt = new Map<string, number>();

  /** When the entry was last learned (by an answer, or the list it came from). */
  learned(kind: 'nic' | 'vm', name: string): number | undefined {
    const listed = Math.max(this.listedAt ?? 0, this.kindListedAt.get(kind) ?? 0);
    return Math.max(this.learnedAt.get(`${kind}/${name}`) ?? 0, listed) || undefined;
  }

  /**
   * Replaces the view with a list that began at `startedAt`, keeping what answers taught us
   * after that (the list may predate them, and lists trail ARM anyway).
   */
  install(list: { nics?: Nic[]; vms?: Vm[]; disks?: Disk[] }, startedAt: number): void {
    if (list.nics) this.replace('nic', this.nics, list.nics, startedAt);
    if (list.vms) this.replace('vm', this.vms, list.vms, startedAt);
    if (list.nics) this.kindListedAt.set('nic', startedAt);
    if (list.vms) this.kindListedAt.set('vm', startedAt);
    if (list.disks) this.replace('disk', (this.disks ??= new Map()), list.disks, startedAt);
    if (list.nics && list.vms) {
      this.listedAt = startedAt;
      for (const [key, at] of this.learnedAt) if (at < startedAt - LIST_LAG_GRACE_MS) this.learnedAt.delete(key);
    }
  }

  private replace<R extends { name: string; tags: Record<string, string> }>(kind: string, map: Map<string, R>, listed: R[], startedAt: number): void {
    const fresh = new Map<string, R>();
    for (const r of listed) if (r.tags[TAG.cluster] === this.clusterName) fresh.set(r.name, r);
    for (const [key, at] of this.learnedAt) {
      if (at < startedAt - LIST_LAG_GRACE_MS || !key.startsWith(`${kind}/`)) continue;
      const name = key.slice(kind.length + 1);
      const known = map.get(name);
      if (at >= startedAt) {
        // Learned after the list began: newer than anything it shows.
        if (known) fresh.set(name, known);
        else fresh.delete(name);
      } else if (known && !fresh.has(name)) {
        // Lists trail ARM: a resource answered for shortly before may not be listed yet.
        fresh.set(name, known);
      }
    }
    map.clear();
    for (const [name, r] of fresh) map.set(name, r);
  }

  private note<R extends { tags: Record<string, string> }>(kind: string, map: Map<string, R> | undefined, name: string, value: R | undefined, at: number): void {
    if (!map) return;
    if (value && value.tags[TAG.cluster] !== this.clusterName) return;
    this.learnedAt.set(`${kind}/${name}`, at);
    if (value) map.set(name, value);
    else map.delete(name);
  }

  /**
   * The port, writing every answer into the view. Failed calls teach nothing (a timed-out PUT
   * may have landed: the machines find out by GET, and the GET is written through).
   */
  observing(arm: AzurePort, clock: { now(): number }): AzurePort {
    const deleting = <R extends { provisioningState: string }>(r: R | undefined): R | undefined =>
      r ? { ...r, provisioningState: 'Deleting' } : undefined;
    return {
      ...arm,
      getNic: async (ref) => {
        const nic = await arm.getNic(ref);
        this.note('nic', this.nics, ref.name, nic, clock.now());
        return nic;
      },
      createNic: async (spec) => {
        const nic = await arm.createNic(spec);
        this.note('nic', this.nics, nic.name, nic, clock.now());
        return nic;
      },
      // The NIC machine counts an accepted DELETE as reaped; the view agrees.
      deleteNic: async (ref) => {
        await arm.deleteNic(ref);
        this.note('nic', this.nics, ref.name, undefined, clock.now());
      },
      getVm: async (ref) => {
        const vm = await arm.getVm(ref);
        this.note('vm', this.vms, ref.name, vm, clock.now());
        return vm;
      },
      createVm: async (spec) => {
        const vm = await arm.createVm(spec);
        this.note('vm', this.vms, vm.name, vm, clock.now());
        return vm;
      },
      // Accepted: ARM shows the VM Deleting for minutes, then it goes (a GET or a list tells).
      deleteVm: async (ref) => {
        await arm.deleteVm(ref);
        const vm = this.vms.get(ref.name);
        if (vm) this.note('vm', this.vms, ref.name, deleting(vm), clock.now());
      },
      getDisk: async (ref) => {
        const disk = await arm.getDisk(ref);
        this.note('disk', this.disks, ref.name, disk, clock.now());
        return disk;
      },
      deleteDisk: async (ref) => {
        await arm.deleteDisk(ref);
        this.note('disk', this.disks, ref.name, undefined, clock.now());
      },
    };
  }
}

/** Every page of the NIC, VM (and, when asked, disk) lists of the NodeClasses' resource groups. */
export async function listArm(deps: RuntimeDeps, nodeClasses: Iterable<AzureFlexNodeClass>, what: { nics: boolean; vms: boolean; disks: boolean }): Promise<{ nics?: Nic[]; vms?: Vm[]; disks?: Disk[] }> {
  const { arm } = deps;
  const nics: Nic[] = [];
  const vms: Vm[] = [];
  const disks: Disk[] = [];
  for (const scope of scopesOf(nodeClasses)) {
    if (what.nics) nics.push(...(await arm.listNics(scope)));
    if (what.vms) vms.push(...(await arm.listVms(scope)));
    if (what.disks) disks.push(...(await arm.listDisks(scope)));
  }
  return { ...(what.nics ? { nics } : {}), ...(what.vms ? { vms } : {}), ...(what.disks ? { disks } : {}) };
}

/** One pass's world: the cluster as listed now, ARM as the view knows it. */
export function worldOf(cluster: ClusterView, arm: ArmView): WorldView {
  const attachedNicIds = new Set<string>();
  for (const vm of arm.vms.values()) for (const id of vm.nicIds) attachedNicIds.add(id.toLowerCase());
  for (const nic of arm.nics.values()) if (nic.virtualMachineId && arm.vms.has(nameFromArmId(nic.virtualMachineId))) attachedNicIds.add(nic.id.toLowerCase());
  return { ...cluster, nics: arm.nics, vms: arm.vms, disks: arm.disks, attachedNicIds };
}

/** Read on every resync for every NodeClaim and NIC; NodeClaim objects are replaced, never changed, so remembered per object. */
const attemptAtOf = new WeakMap<NodeClaim, number | undefined>();

export function vmAttemptAt(nc: NodeClaim): number | undefined {
  if (attemptAtOf.has(nc)) return attemptAtOf.get(nc);
  const raw = nc.metadata.annotations[ANNOTATION_VM_ATTEMPT_AT];
  const t = raw ? Date.parse(raw) : NaN;
  const at = Number.isFinite(t) ? t : undefined;
  attemptAtOf.set(nc, at);
  return at;
}

export function createdAtTag(tags: Record<string, string>): number | undefined {
  const raw = tags[TAG.createdAt];
  const t = raw ? Date.parse(raw) : NaN;
  return Number.isFinite(t) ? t : undefined;
}
