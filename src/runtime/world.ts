import { TAG, nameFromArmId, nicNameFor } from '../azure/naming.js';
import type { AzurePort, Disk, Nic, ResourceGroupScope, Vm } from '../ports/azure.js';
import type { AzureFlexNodeClass, ClusterPort, Node, NodeClaim } from '../ports/cluster.js';
import type { RuntimeDeps } from './deps.js';
import { walkAlongside, type ListChanges } from '../utils/list-walk.js';
import { InsertionOrder } from './dirty.js';
import { NODECLASS_GROUP, NODECLASS_KIND } from '../apis/well-known.js';
import type { WorldView } from '../lifecycle/deps.js';

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

/** What changed in the cluster since the previous look (names and providerIDs, added, replaced or gone). */
export interface ClusterChanges {
  /** Every NodeClaim name is to be taken as changed (the first look). */
  all: boolean;
  nodeClaims: string[];
  /** Lowercased providerIDs whose Node changed. */
  nodes: string[];
}

/**
 * Looks at the cluster on every pass and says what changed since the last look, so the
 * runtime's per-actor work follows the changes rather than the cluster's size. A kind whose
 * cache shows what it showed last time (its cacheVersion, or else the same objects listed)
 * keeps its map. An object whose resourceVersion is unchanged is the object seen before
 * (ports that copy what they list, like the API server's informer port, show a new copy on
 * every list).
 */
export class ClusterObserver {
  private view: ClusterView | undefined;
  private readonly seen: { [K in 'nodeClaims' | 'nodes' | 'nodeClasses']?: { version: string | undefined; list: unknown[] } } = {};
  private readonly claimsMap = new KeyedView<NodeClaim>((nc) => (ownsNodeClaim(nc) ? nc.metadata.name : undefined));
  private readonly nodesMap = new KeyedView<Node>(providerIdKey);

  constructor(
    private readonly cluster: ClusterPort,
    private readonly clock: { now(): number },
  ) {}

  async observe(): Promise<{ view: ClusterView; changes: ClusterChanges }> {
    const { cluster } = this;
    const before = this.view;
    const changes: ClusterChanges = { all: before === undefined, nodeClaims: [], nodes: [] };
    const lastClaims = this.seen.nodeClaims?.list as NodeClaim[] | undefined;
    const lastNodes = this.seen.nodes?.list as Node[] | undefined;
    const nodeClaimList = await this.listIfChanged('nodeClaims', () => cluster.listNodeClaims());
    const nodeClassList = await this.listIfChanged('nodeClasses', () => cluster.listNodeClasses());
    const nodeList = await this.listIfChanged('nodes', () => cluster.listNodes());
    let nodeClaims = before?.nodeClaims;
    if (!nodeClaims || nodeClaimList) {
      nodeClaims = this.claimsMap.update(before?.nodeClaims, lastClaims, nodeClaimList ?? [], changes.nodeClaims);
    }
    let nodesByProviderId = before?.nodesByProviderId;
    if (!nodesByProviderId || nodeList) {
      nodesByProviderId = this.nodesMap.update(before?.nodesByProviderId, lastNodes, nodeList ?? [], changes.nodes);
    }
    let nodeClasses = before?.nodeClasses;
    if (!nodeClasses || nodeClassList) nodeClasses = new Map((nodeClassList ?? []).map((nc) => [nc.metadata.name, nc]));
    this.view = { at: this.clock.now(), nodeClaims, nodeClasses, nodesByProviderId };
    return { view: this.view, changes };
  }

  /** Where a NodeClaim stands in the order of the last view's map (larger: later), or undefined when it is not in it. */
  nodeClaimOrder(name: string): number | undefined {
    return this.claimsMap.orderOf(name);
  }

  /** The kind's list, or undefined when the cache shows what it showed at the last look. */
  private async listIfChanged<T>(kind: 'nodeClaims' | 'nodes' | 'nodeClasses', list: () => Promise<T[]>): Promise<T[] | undefined> {
    const last = this.seen[kind];
    const version = this.cluster.cacheVersion?.(kind);
    if (last && version !== undefined && version === last.version) return undefined;
    const listed = await list();
    this.seen[kind] = { version, list: listed };
    return last && sameList(last.list, listed) ? undefined : listed;
  }
}

/**
 * NIC name → the NodeClaim that owns it (the later one in the map's order, should two names
 * map to one NIC), for the observer's NodeClaim maps: brought up to each new map from the names
 * that changed since the last one (`note`, on every look), not rebuilt from every NodeClaim
 * each time one is written. Two NodeClaims naming one NIC make it rebuild while that lasts.
 */
export class NicOwners {
  private built: { of: Map<string, NodeClaim>; byNic: Map<string, NodeClaim>; shared: boolean } | undefined;
  /** The map of the observer's last look (what its next changes are relative to). */
  private last: Map<string, NodeClaim> | undefined;

  /** The owners for `claims` (a map the observer handed out). */
  of(claims: Map<string, NodeClaim>): Map<string, NodeClaim> {
    if (this.built?.of === claims) return this.built.byNic;
    const byNic = new Map<string, NodeClaim>();
    for (const nc of claims.values()) byNic.set(nicNameFor(nc.metadata.name), nc);
    this.built = { of: claims, byNic, shared: byNic.size !== claims.size };
    return byNic;
  }

  /** The observer looked again: `claims` is its map, `changes` what changed since its last one. */
  note(claims: Map<string, NodeClaim>, changes: ClusterChanges): void {
    const built = this.built;
    const before = this.last;
    this.last = claims;
    if (!built || built.of === claims) return;
    if (changes.all || built.shared || built.of !== before) {
      this.built = undefined;
      return;
    }
    const { byNic } = built;
    for (const name of changes.nodeClaims) {
      const nic = nicNameFor(name);
      const holder = byNic.get(nic);
      if (holder !== undefined && holder.metadata.name !== name) {
        this.built = undefined;
        return;
      }
      const nc = claims.get(name);
      if (nc) byNic.set(nic, nc);
      else byNic.delete(nic);
    }
    built.of = claims;
  }
}

/** Deep equality of JSON-like values (ARM answers: records, arrays, strings, numbers). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    n++;
    if (!sameJson(x[k], y[k])) return false;
  }
  for (const k in y) if (y[k] !== undefined) n--;
  return n === 0;
}

function sameList<T>(a: readonly T[] | undefined, b: readonly T[]): boolean {
  if (!a || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The object seen before when the listed one is the same resourceVersion of it. */
function unchanged<T extends { metadata: { resourceVersion?: string; uid?: string } }>(before: T | undefined, listed: T): T {
  if (!before || before === listed) return listed;
  const rv = listed.metadata.resourceVersion;
  return rv !== undefined && rv === before.metadata.resourceVersion && listed.metadata.uid === before.metadata.uid ? before : listed;
}

function providerIdKey(n: Node): string | undefined {
  if (!n.spec.providerID) return undefined;
  let pid = lowerProviderIds.get(n);
  if (pid === undefined) lowerProviderIds.set(n, (pid = n.spec.providerID.toLowerCase()));
  return pid;
}

/**
 * A map of a listed kind by key (a NodeClaim's name, a Node's providerID; undefined: left out),
 * in list order, the later item winning a key two share, as a loop over the list builds it. A
 * list that changed is walked alongside the last one (src/utils/list-walk.ts): the new map is a
 * copy of the last with the items written, added or gone applied (a fleet pass rebuilt and
 * diffed 2,000 NodeClaims to find a handful written). A walk that meets a key shared by two
 * items, an item whose key changed, or too many differences rebuilds instead (and a map built
 * with a shared key keeps rebuilding while that lasts).
 */
export class KeyedView<T extends { metadata: { name: string; resourceVersion?: string; uid?: string } }> {
  private shared = false;
  /** The last map's order. */
  private readonly order = new InsertionOrder();

  /** Where the key stands in the last map's order (larger: later), or undefined when it is not in it. */
  orderOf(key: string): number | undefined {
    return this.order.of(key);
  }

  constructor(private readonly keyOf: (item: T) => string | undefined) {}

  /** The map for `now`; `before` was built from `last`; keys that changed are pushed to `changes` (when there was a before). */
  update(before: Map<string, T> | undefined, last: readonly T[] | undefined, now: readonly T[], changes: string[]): Map<string, T> {
    if (before && last && !this.shared) {
      const walked = this.walk(before, last, now, changes);
      if (walked) return walked;
    }
    const map = new Map<string, T>();
    let keyed = 0;
    for (const item of now) {
      const key = this.keyOf(item);
      if (key === undefined) continue;
      keyed++;
      map.set(key, unchanged(before?.get(key), item));
    }
    this.shared = keyed !== map.size;
    if (before) diffInto(changes, before, map);
    this.order.reset(map.keys());
    return map;
  }

  private walk(before: Map<string, T>, last: readonly T[], now: readonly T[], changes: string[]): Map<string, T> | undefined {
    const w = new MapWalk(this.keyOf, before);
    const done = walkAlongside(last, now, sameName, w, Math.max(64, now.length >> 2));
    if (!done || !w.ok) return undefined;
    for (const [key, appended] of w.moves) {
      if (appended) this.order.appended(key);
      else this.order.removed(key);
    }
    const out = new Set<string>();
    for (const key of w.touched) if (before.get(key) !== w.map.get(key)) out.add(key);
    for (const key of out) changes.push(key);
    return w.map;
  }
}

/**
 * One walk of KeyedView's: a copy of the last map with the walk's differences applied. A class,
 * not an object of closures built per walk: tsx keeps the name of each such closure (a
 * defineProperty, ~0.7 µs), on every pass of the runtime.
 */
class MapWalk<T extends { metadata: { name: string; resourceVersion?: string; uid?: string } }> implements ListChanges<T> {
  readonly map: Map<string, T>;
  readonly touched: string[] = [];
  ok = true;
  /**
   * Keys appended (true) and removed (false) in the walk's order; applied to the order only
   * if the walk is kept (a rebuild numbers every key again).
   */
  readonly moves: Array<[string, boolean]> = [];

  constructor(
    private readonly keyOf: (item: T) => string | undefined,
    private readonly before: Map<string, T>,
  ) {
    this.map = new Map(before);
  }

  replaced(old: T, item: T): void {
    if (!this.ok) return;
    const key = this.keyOf(item);
    if (key !== this.keyOf(old)) this.ok = false;
    else if (key !== undefined) this.put(key, item);
  }

  removed(old: T): void {
    const key = this.keyOf(old);
    if (key === undefined) return;
    if (this.map.delete(key)) this.moves.push([key, false]);
    this.touched.push(key);
  }

  added(item: T): void {
    if (!this.ok) return;
    const key = this.keyOf(item);
    if (key === undefined) return;
    // Removals come before additions in the walk: a key still here is shared by two items.
    if (this.map.has(key)) this.ok = false;
    else this.put(key, item);
  }

  private put(key: string, item: T): void {
    if (!this.map.has(key)) this.moves.push([key, true]);
    this.map.set(key, unchanged(this.before.get(key), item));
    this.touched.push(key);
  }
}

function sameName(a: { metadata: { name: string } }, b: { metadata: { name: string } }): boolean {
  return a.metadata.name === b.metadata.name;
}

/** Keys added, replaced or removed between two maps. */
function diffInto<V>(out: string[], before: Map<string, V>, after: Map<string, V>): void {
  for (const [k, v] of after) if (before.get(k) !== v) out.push(k);
  for (const k of before.keys()) if (!after.has(k)) out.push(k);
}

/**
 * NIC and VM names whose view entry changed (a NIC also when a VM started or stopped
 * referencing it); `all` after a list replaced the view.
 */
export interface ArmChanges {
  all: boolean;
  nics: Set<string>;
  vms: Set<string>;
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
  /** NIC and VM entries added, replaced or removed since the runtime last took them (see takeChanges). */
  private changes: ArmChanges = { all: true, nics: new Set(), vms: new Set() };
  /** Per lowercased NIC id, how many VMs in the view reference it. */
  private readonly vmRefs = new Map<string, number>();
  /** Per lowercased NIC id, the NIC's name in the view. */
  private readonly nicByLowerId = new Map<string, string>();
  /** Per VM name, the NICs in the view that name it as their VM. */
  private readonly nicsNamingVm = new Map<string, Set<string>>();

  /** The order of `nics`. */
  private readonly nicsOrder = new InsertionOrder();
  /** The NICs the view shows ARM deleting. */
  readonly nicsDeleting = new Set<string>();

  constructor(private readonly clusterName: string) {}

  /** Where a NIC stands in the order of `nics` (larger: later), or undefined when it is not in the view. */
  nicOrder(name: string): number | undefined {
    return this.nicsOrder.of(name);
  }

  /** The view's answers as WorldView hands them out, built once (every pass builds a WorldView). */
  readonly isAttachedFn = (nic: Nic): boolean => this.isAttached(nic);
  readonly nicAnsweredGoneFn = (name: string): boolean => this.answeredGone('nic', name);

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

  /** What changed since the last call: the runtime re-observes the actors those entries feed. */
  takeChanges(): ArmChanges {
    const taken = this.changes;
    // Most passes take nothing (twice a pass): the empty record is handed back, not replaced.
    if (!taken.all && taken.nics.size === 0 && taken.vms.size === 0) return taken;
    this.changes = { all: false, nics: new Set(), vms: new Set() };
    return taken;
  }

  /**
   * Whether the last word on the resource was ARM's own answer that it is gone (a GET's 404,
   * a DELETE whose operation finished), with nothing since showing it (no PUT's answer, no
   * list that had it). A list's absence is not enough: lists trail ARM.
   */
  answeredGone(kind: 'nic' | 'vm', name: string): boolean {
    return this.learnedAt.has(`${kind}/${name}`) && !(kind === 'nic' ? this.nics : this.vms).has(name);
  }

  /** Whether a VM in the view uses the NIC: one references it, or the NIC names one as its VM. */
  isAttached(nic: Nic): boolean {
    if ((this.vmRefs.get(lowerIdOf(nic)) ?? 0) > 0) return true;
    return !!nic.virtualMachineId && this.vms.has(nameFromArmId(nic.virtualMachineId));
  }

  private replace<R extends { name: string; tags: Record<string, string> }>(kind: string, map: Map<string, R>, listed: R[], startedAt: number): void {
    // Every actor it feeds is looked at again after a list (cheap: unchanged entries keep
    // their objects, so most find `sameInputs`), as a level-triggered safety net.
    if (kind !== 'disk') this.changes.all = true;
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
    // An entry the list shows as it was stays the same object: only real changes reach the actors.
    for (const [name, r] of fresh) {
      const known = map.get(name);
      if (known !== undefined && known !== r && sameJson(known, r)) fresh.set(name, known);
    }
    const changed: Array<[string, R | undefined, R | undefined]> = [];
    for (const [name, r] of fresh) if (map.get(name) !== r) changed.push([name, map.get(name), r]);
    for (const [name, r] of map) if (!fresh.has(name)) changed.push([name, r, undefined]);
    map.clear();
    for (const [name, r] of fresh) map.set(name, r);
    if (kind === 'nic') {
      this.nicsOrder.reset(map.keys());
    }
    for (const [name, before, after] of changed) this.changed(kind, name, before, after);
  }

  private changed(kind: string, name: string, before: unknown, after: unknown): void {
    if (kind === 'nic') this.nicChanged(name, before as Nic | undefined, after as Nic | undefined);
    else if (kind === 'vm') this.vmChanged(name, before as Vm | undefined, after as Vm | undefined);
  }

  private indexVm(vm: Vm, delta: 1 | -1): void {
    for (const id of lowerNicIdsOf(vm)) {
      const refs = (this.vmRefs.get(id) ?? 0) + delta;
      if (refs > 0) this.vmRefs.set(id, refs);
      else this.vmRefs.delete(id);
    }
  }

  private indexNic(name: string, nic: Nic, add: boolean): void {
    const id = lowerIdOf(nic);
    const vm = nic.virtualMachineId ? nameFromArmId(nic.virtualMachineId) : undefined;
    if (add) {
      this.nicByLowerId.set(id, name);
      if (vm !== undefined) {
        let naming = this.nicsNamingVm.get(vm);
        if (!naming) this.nicsNamingVm.set(vm, (naming = new Set()));
        naming.add(name);
      }
      return;
    }
    if (this.nicByLowerId.get(id) === name) this.nicByLowerId.delete(id);
    const naming = vm === undefined ? undefined : this.nicsNamingVm.get(vm);
    naming?.delete(name);
    if (naming?.size === 0) this.nicsNamingVm.delete(vm!);
  }

  /**
   * A VM entry changed: the NICs it referenced or references now, and those naming it as
   * their VM, may have changed attachment (an input of their actors).
   */
  private vmChanged(name: string, before: Vm | undefined, after: Vm | undefined): void {
    this.changes.vms.add(name);
    const touched = (vm: Vm) => {
      for (const id of lowerNicIdsOf(vm)) {
        const nic = this.nicByLowerId.get(id);
        if (nic !== undefined) this.changes.nics.add(nic);
      }
    };
    if (before) {
      this.indexVm(before, -1);
      touched(before);
    }
    if (after) {
      this.indexVm(after, 1);
      touched(after);
    }
    for (const nic of this.nicsNamingVm.get(name) ?? []) this.changes.nics.add(nic);
  }

  private nicChanged(name: string, before: Nic | undefined, after: Nic | undefined): void {
    this.changes.nics.add(name);
    if (after?.provisioningState === 'Deleting') this.nicsDeleting.add(name);
    else this.nicsDeleting.delete(name);
    if (before) this.indexNic(name, before, false);
    if (after) this.indexNic(name, after, true);
  }

  private note<R extends { tags: Record<string, string> }>(kind: string, map: Map<string, R> | undefined, name: string, value: R | undefined, at: number): void {
    if (!map) return;
    if (value && value.tags[TAG.cluster] !== this.clusterName) return;
    this.learnedAt.set(`${kind}/${name}`, at);
    const had = map.get(name);
    // An answer that shows the entry as it was changes nothing (keeps the object: see replace).
    if (had === value || (had !== undefined && value !== undefined && sameJson(had, value))) return;
    if (value) map.set(name, value);
    else map.delete(name);
    if (kind === 'nic') {
      if (!value) this.nicsOrder.removed(name);
      else if (had === undefined) this.nicsOrder.appended(name);
    }
    this.changed(kind, name, had, value);
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
  return { ...cluster, nics: arm.nics, vms: arm.vms, disks: arm.disks, isAttached: arm.isAttachedFn, nicAnsweredGone: arm.nicAnsweredGoneFn };
}

/** Lowercased ARM ids, once per object (ARM answers are new objects, never changed). */
const lowerIds = new WeakMap<Nic, string>();
const lowerNicIds = new WeakMap<Vm, string[]>();

function lowerIdOf(nic: Nic): string {
  let id = lowerIds.get(nic);
  if (id === undefined) lowerIds.set(nic, (id = nic.id.toLowerCase()));
  return id;
}

function lowerNicIdsOf(vm: Vm): string[] {
  let ids = lowerNicIds.get(vm);
  if (ids === undefined) lowerNicIds.set(vm, (ids = vm.nicIds.map((id) => id.toLowerCase())));
  return ids;
}

export function createdAtTag(tags: Record<string, string>): number | undefined {
  const raw = tags[TAG.createdAt];
  const t = raw ? Date.parse(raw) : NaN;
  return Number.isFinite(t) ? t : undefined;
}
