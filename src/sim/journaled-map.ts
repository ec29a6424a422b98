import type { Pod } from '../ports/cluster.js';
import type { Clock } from '../ports/clock.js';

/**
 * A Map that remembers, for `lagMs`, what each write replaced: enough to rebuild the map
 * as it was `lagMs` ago. With no lag it is a plain Map.
 */
export class JournaledMap<V> extends Map<string, V> {
  private journal: Array<{ t: number; key: string; before: V | undefined; rv: number }> = [];
  private clock: Clock | undefined;
  private lagMs = 0;
  /** The cluster's resourceVersion counter after a write (a delete bumps it, as the API server does). */
  private rv: (bump: boolean) => number = () => 0;
  /** resourceVersion of the newest write the lagging view shows. */
  private visibleRv = 0;
  /** Bumped by every write: a simulated component can tell "nothing changed since I looked" without a scan. */
  writes = 0;
  /** The last list handed out with nothing pending in the journal, and the write count it shows. */
  private listed: { writes: number; values: V[] } | undefined;
  /** Position of each key in the map's order (its first insertion since it last went away). */
  private readonly order = new Map<string, number>();
  private inserted = 0;
  private readonly watchers: Array<(key: string) => void> = [];

  configure(clock: Clock, lagMs: number, rv: (bump: boolean) => number): this {
    this.clock = clock;
    this.lagMs = lagMs;
    this.rv = rv;
    return this;
  }

  override set(key: string, value: V): this {
    this.writes++;
    if (this.lagMs > 0) this.journal.push({ t: this.clock!.now(), key, before: super.get(key), rv: this.rv(false) });
    if (!super.has(key)) this.order.set(key, this.inserted++);
    super.set(key, value);
    for (const watcher of this.watchers) watcher(key);
    return this;
  }

  override delete(key: string): boolean {
    if (!super.has(key)) return false;
    this.writes++;
    const rv = this.rv(true);
    if (this.lagMs > 0) this.journal.push({ t: this.clock!.now(), key, before: super.get(key), rv });
    this.order.delete(key);
    super.delete(key);
    for (const watcher of this.watchers) watcher(key);
    return true;
  }

  /** Where `key` is in the map's order (smaller: earlier); undefined when absent. */
  position(key: string): number | undefined {
    return this.order.get(key);
  }

  /** Calls `watcher` with the key of every later write or delete, right after it (a simulated component's change feed). */
  watch(watcher: (key: string) => void): void {
    this.watchers.push(watcher);
  }

  /** resourceVersion through which the lagging view has applied writes. */
  seenThrough(): number {
    return this.prune() ? this.visibleRv : this.rv(false);
  }

  /** How many writes the lagging view shows: equal counts mean the same view (ClusterPort.cacheVersion). */
  visibleWrites(): number {
    this.prune();
    return this.writes - this.journal.length;
  }

  /** The values as the lagging informer shows them. */
  lagged(): V[] {
    if (!this.prune()) {
      // One array per version of the map: a controller listing an unchanged kind again gets the
      // same array back (a 10,000-pod list was copied on every call), and may index it by
      // identity. Shared, so no caller may change it; not frozen, though: V8 runs slice, filter,
      // some, find, every and forEach on a frozen (or sealed) array through a slow path, 7–60×
      // the cost per item (measured on Node 24: slice of 10,000 pods 0.9 ms instead of 0.015),
      // and every pass of every controller reads these lists.
      if (this.listed?.writes !== this.writes) this.listed = { writes: this.writes, values: [...this.values()] };
      return this.listed.values;
    }
    const view = new Map<string, V>(this);
    for (let i = this.journal.length - 1; i >= 0; i--) {
      const { key, before } = this.journal[i]!;
      if (before === undefined) view.delete(key);
      else view.set(key, before);
    }
    return [...view.values()];
  }

  laggedGet(key: string): V | undefined {
    if (!this.prune()) return this.get(key);
    const first = this.journal.find((e) => e.key === key);
    return first ? first.before : this.get(key);
  }

  /** A new informer's first LIST: everything current is visible. */
  relist(): void {
    this.journal = [];
    this.visibleRv = this.rv(false);
  }

  /** Drops writes old enough to be visible; true while some are not yet. */
  private prune(): boolean {
    if (this.lagMs <= 0 || this.journal.length === 0) return false;
    const cutoff = this.clock!.now() - this.lagMs;
    let visible = 0;
    while (visible < this.journal.length && this.journal[visible]!.t <= cutoff) visible++;
    if (visible > 0) {
      this.visibleRv = this.journal[visible - 1]!.rv;
      this.journal.splice(0, visible);
    }
    return this.journal.length > 0;
  }
}

/** Whether a pod has rules the kube-scheduler must place it by (topology spread, pod affinity or anti-affinity). */
export function hasPodTopology(pod: Pod): boolean {
  return Boolean(pod.spec.topologySpreadConstraints?.length || pod.spec.affinity?.podAffinity || pod.spec.affinity?.podAntiAffinity);
}

/**
 * The pods, also indexed the way the simulated world asks (the kube-scheduler: which pods are
 * unbound, what is bound to each node; node deletion: what ran there), so neither walks every
 * pod of a 10,000-pod fleet on each tick. Index order is the map's order (a key's first insertion).
 */
export class PodMap extends JournaledMap<Pod> {
  private readonly unboundKeys = new Set<string>();
  /** Whether unboundKeys' insertion order is still the map's order (true until an older pod is unbound again). */
  private unboundInOrder = true;
  private lastUnbound = -1;
  private readonly keysByNode = new Map<string, Set<string>>();
  /** Per node: bumped by every write of a pod bound to it (before or after the write). */
  private readonly nodeWrites = new Map<string, number>();
  /** Bound pods with topology rules (spread, pod affinity or anti-affinity): the scheduler needs the topology view while any is. */
  private boundWithTopology = 0;

  override set(key: string, pod: Pod): this {
    const before = super.get(key);
    const nodeName = pod.spec.nodeName;
    // A pending pod written again (marked Unschedulable) keeps its place among the unbound.
    const stillUnbound = before !== undefined && !before.spec.nodeName && !nodeName;
    if (before && !stillUnbound) this.unindex(key, before);
    super.set(key, pod);
    if (stillUnbound) return this;
    if (!nodeName) {
      const position = this.position(key)!;
      if (this.unboundKeys.size === 0) this.unboundInOrder = true;
      else if (position < this.lastUnbound) this.unboundInOrder = false;
      this.lastUnbound = position;
      this.unboundKeys.add(key);
    } else {
      let keys = this.keysByNode.get(nodeName);
      if (!keys) this.keysByNode.set(nodeName, (keys = new Set()));
      keys.add(key);
      if (hasPodTopology(pod)) this.boundWithTopology++;
      this.touch(nodeName);
    }
    return this;
  }

  override delete(key: string): boolean {
    const before = super.get(key);
    if (!before) return false;
    this.unindex(key, before);
    return super.delete(key);
  }

  /** Pods not bound to a node, in map order. */
  unbound(): Pod[] {
    if (this.unboundInOrder) return [...this.unboundKeys].map((k) => super.get(k)!);
    return this.inOrder(this.unboundKeys);
  }

  /** Pods bound to `nodeName`, in map order. */
  boundTo(nodeName: string): Pod[] {
    const keys = this.keysByNode.get(nodeName);
    return keys ? this.inOrder(keys) : [];
  }

  /** Names of the nodes pods are bound to (whether or not those nodes exist). */
  nodeNames(): IterableIterator<string> {
    return this.keysByNode.keys();
  }

  /** Equal values mean no pod bound to `nodeName` was written in between. */
  nodeVersion(nodeName: string): number {
    return this.nodeWrites.get(nodeName) ?? 0;
  }

  get unboundCount(): number {
    return this.unboundKeys.size;
  }

  /** Whether some bound pod has topology rules. */
  get anyBoundTopology(): boolean {
    return this.boundWithTopology > 0;
  }

  private unindex(key: string, pod: Pod): void {
    const nodeName = pod.spec.nodeName;
    if (!nodeName) {
      this.unboundKeys.delete(key);
      return;
    }
    const keys = this.keysByNode.get(nodeName);
    if (keys?.delete(key) && hasPodTopology(pod)) this.boundWithTopology--;
    if (keys?.size === 0) this.keysByNode.delete(nodeName);
    this.touch(nodeName);
  }

  private touch(nodeName: string): void {
    this.nodeWrites.set(nodeName, (this.nodeWrites.get(nodeName) ?? 0) + 1);
  }

  private inOrder(keys: ReadonlySet<string>): Pod[] {
    const sorted = [...keys].sort((a, b) => this.position(a)! - this.position(b)!);
    return sorted.map((k) => super.get(k)!);
  }
}
