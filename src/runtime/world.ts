import type { AzureFlexNodeClass, ClusterPort, Node, NodeClaim } from '../ports/cluster.js';
import { walkAlongside, type ListChanges } from '../utils/list-walk.js';
import { InsertionOrder } from './dirty.js';
import { NODECLASS_GROUP, NODECLASS_KIND } from '../apis/well-known.js';
import type { WorldView } from '../lifecycle/deps.js';
import type { ArmView } from './arm-view.js';

export function ownsNodeClaim(nc: NodeClaim): boolean {
  const ref = nc.spec.nodeClassRef;
  return ref.group === NODECLASS_GROUP && ref.kind === NODECLASS_KIND;
}

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
 * Each NodeClaim maps under every name its NIC may have (the cluster's, the first version's).
 */
export class NicOwners {
  constructor(private readonly nicNames: (nodeClaim: string) => readonly string[]) {}

  private built: { of: Map<string, NodeClaim>; byNic: Map<string, NodeClaim>; shared: boolean } | undefined;
  /** The map of the observer's last look (what its next changes are relative to). */
  private last: Map<string, NodeClaim> | undefined;

  /** The owners for `claims` (a map the observer handed out). */
  of(claims: Map<string, NodeClaim>): Map<string, NodeClaim> {
    if (this.built?.of === claims) return this.built.byNic;
    const byNic = new Map<string, NodeClaim>();
    let names = 0;
    for (const nc of claims.values()) {
      for (const nic of this.nicNames(nc.metadata.name)) {
        byNic.set(nic, nc);
        names++;
      }
    }
    this.built = { of: claims, byNic, shared: byNic.size !== names };
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
      for (const nic of this.nicNames(name)) {
        const holder = byNic.get(nic);
        if (holder !== undefined && holder.metadata.name !== name) {
          this.built = undefined;
          return;
        }
        const nc = claims.get(name);
        if (nc) byNic.set(nic, nc);
        else byNic.delete(nic);
      }
    }
    built.of = claims;
  }
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

/** One pass's world: the cluster as listed now, ARM as the view knows it. */
export function worldOf(cluster: ClusterView, arm: ArmView): WorldView {
  return { ...cluster, nics: arm.nics, vms: arm.vms, disks: arm.disks, isAttached: arm.isAttachedFn, nicAnsweredGone: arm.nicAnsweredGoneFn };
}
