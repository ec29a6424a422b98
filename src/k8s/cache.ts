import { ListWatch, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import type { Clock, TimerId } from '../ports/clock.js';
import type { AuditedWatch, KubeClient } from './client.js';

/**
 * A list+watch cache of one resource type: client-node's ListWatch (list, watch from the
 * list's resourceVersion, resume after a server-closed or timed-out watch, relist after
 * 410 Gone with the missed deletions emitted), plus what a controller needs on top:
 *  - objects converted once to the port's types as they arrive (list pages and watch events),
 *    and only that kept: ListWatch's own map holds a name/namespace/resourceVersion entry
 *    pointing at the converted value, never the raw object with its managedFields and
 *    annotations (a Pod's raw JSON is several times its converted form);
 *  - read-your-writes: a write's response is overlaid until the watch has passed its
 *    resourceVersion, so a reconcile that reads right after its own write sees it, and a
 *    late response never resurrects an object the watch saw deleted;
 *  - restart after errors: ListWatch stops on any error but 410/timeout and leaves the
 *    restart to its user (documented); we restart with capped backoff on the injected clock;
 *  - progress for /healthz (`lastProgressAt`: lists, events, (re)connects).
 */

export interface RawMeta {
  name?: string;
  namespace?: string;
  resourceVersion?: string;
  [k: string]: unknown;
}

export interface RawObject {
  metadata?: RawMeta;
  [k: string]: unknown;
}

export type CacheEventType = 'add' | 'update' | 'delete';
export type CacheHandler<T> = (type: CacheEventType, obj: T) => void;

export interface CacheStats {
  lists: number;
  relists: number;
  watches: number;
  events: number;
  errors: number;
}

export interface ResourceCacheOptions<T> {
  client: KubeClient;
  clock: Clock;
  /** Collection path (what the watch opens), e.g. /apis/karpenter.sh/v1/nodeclaims. */
  path: string;
  /** One page of the list; `cont` is the continue token. */
  listPage: (cont: string | undefined) => Promise<KubernetesListObject<KubernetesObject>>;
  convert: (raw: RawObject) => T;
  /** Server-side watch duration (timeoutSeconds); the cache resumes seamlessly after it. */
  watchTimeoutSeconds?: number;
  onError?: (err: unknown) => void;
}

/**
 * What ListWatch stores and compares per object: its key and resourceVersion, with the
 * converted value alongside (ListWatch reads only `metadata`).
 */
interface Entry<T> extends KubernetesObject {
  metadata: { name?: string; namespace?: string; resourceVersion?: string };
  value: T;
}

function keyOf(raw: RawObject | KubernetesObject): string {
  const m = (raw.metadata ?? {}) as RawMeta;
  return m.namespace ? `${m.namespace}/${m.name ?? ''}` : (m.name ?? '');
}

/** resourceVersions of one etcd are increasing integers; anything else is never "newer". */
export function rvAtLeast(candidate: string | undefined, current: string | undefined): boolean {
  if (candidate === undefined || current === undefined || !/^\d+$/.test(candidate) || !/^\d+$/.test(current)) return false;
  return BigInt(candidate) >= BigInt(current);
}

export class ResourceCache<T> {
  private readonly lw: ListWatch<Entry<T>>;
  private readonly watch: AuditedWatch;
  /** The entries ListWatch holds, by our key (namespace/name). */
  private readonly values = new Map<string, Entry<T>>();
  /** Our own writes the watch has not delivered yet; `value: undefined` is a deletion. */
  private readonly overlay = new Map<string, { rv: string; value: T | undefined }>();
  /** Writes overlaid so far: with the watch's resourceVersion, it says what list() shows (viewVersion). */
  private overlaid = 0;
  /** The last list() and the view it showed. */
  private listed: { version: string; values: T[] } | undefined;
  private readonly handlers: Array<CacheHandler<T>> = [];
  private running = false;
  private synced = false;
  private syncWaiters: Array<() => void> = [];
  private backoffMs = 0;
  private retryTimer: TimerId | undefined;
  private startPromise: Promise<void> | undefined;
  private progressAt: number;
  readonly stats: CacheStats = { lists: 0, relists: 0, watches: 0, events: 0, errors: 0 };

  constructor(private readonly o: ResourceCacheOptions<T>) {
    this.progressAt = o.clock.now();
    const extra: Record<string, string | number | boolean> = { allowWatchBookmarks: true };
    if (o.watchTimeoutSeconds !== undefined) extra.timeoutSeconds = o.watchTimeoutSeconds;
    this.watch = o.client.newWatch(extra);
    this.watch.onOpen = () => {
      this.stats.watches++;
      this.backoffMs = 0;
      this.progress();
    };
    this.watch.transform = (obj) => this.entry(obj as RawObject);
    this.lw = new ListWatch<Entry<T>>(o.path, this.watch, () => this.listAll(), false);
    this.lw.on('add', (obj) => this.onUpsert('add', obj));
    this.lw.on('update', (obj) => this.onUpsert('update', obj));
    this.lw.on('delete', (obj) => this.onDelete(obj));
    this.lw.on('connect', () => this.progress());
    this.lw.on('error', (err) => this.onListWatchError(err));
  }

  onEvent(handler: CacheHandler<T>): void {
    this.handlers.push(handler);
  }

  /** Starts, or resumes from the last resourceVersion after stop(). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.watch.reopen();
    this.progressAt = this.o.clock.now();
    this.begin();
  }

  async stop(): Promise<void> {
    this.running = false;
    // Before ListWatch.stop(): a list in flight must not be followed by a watch.
    this.watch.close();
    if (this.retryTimer !== undefined) this.o.clock.clearTimer(this.retryTimer);
    this.retryTimer = undefined;
    await this.lw.stop();
    await this.startPromise?.catch(() => undefined);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  /** When the cache last heard from the API server (a list, an event, a watch (re)opened). */
  get lastProgressAt(): number {
    return this.progressAt;
  }

  isRunning(): boolean {
    return this.running;
  }

  lastResourceVersion(): string | undefined {
    return this.lw.latestResourceVersion() || undefined;
  }

  /**
   * A token for what list()/get() show: the watch's resourceVersion (every event, bookmark and
   * LIST moves it; the overlay's pruning follows it) and how many of our writes were overlaid.
   * Equal tokens mean the same view; undefined before the first LIST completes or during a relist.
   */
  viewVersion(): string | undefined {
    const rv = this.lw.latestResourceVersion();
    return this.synced && rv ? `${rv}/${this.overlaid}` : undefined;
  }

  /**
   * Every object as the cache shows it now. The same array while the view is unchanged
   * (viewVersion): shared, so no caller may change it, as with the simulator's lists.
   */
  list(): T[] {
    const version = this.viewVersion();
    if (version !== undefined && this.listed?.version === version) return this.listed.values;
    this.pruneOverlay();
    const out: T[] = [];
    for (const [key, entry] of this.values) {
      const ov = this.overlay.get(key);
      if (!ov) out.push(entry.value);
      else if (ov.value !== undefined) out.push(ov.value);
    }
    for (const [key, ov] of this.overlay) if (!this.values.has(key) && ov.value !== undefined) out.push(ov.value);
    this.listed = version === undefined ? undefined : { version, values: out };
    return out;
  }

  get(name: string, namespace?: string): T | undefined {
    const key = namespace ? `${namespace}/${name}` : name;
    const ov = this.overlay.get(key);
    if (ov && !rvAtLeast(this.lw.latestResourceVersion(), ov.rv)) return ov.value;
    return this.values.get(key)?.value;
  }

  /** Our write's response, readable at once (until the watch catches up with it). */
  noteWrite(raw: RawObject): void {
    const rv = raw.metadata?.resourceVersion;
    if (rv === undefined) return;
    const key = keyOf(raw);
    // The watch already went past this write: its view (maybe a deletion) is the truth.
    if (rvAtLeast(this.lw.latestResourceVersion(), rv)) return;
    if (rvAtLeast(this.values.get(key)?.metadata.resourceVersion, rv)) return;
    const prev = this.overlay.get(key);
    if (prev && rvAtLeast(prev.rv, rv)) return;
    // The write that removed the last finalizer of a deleting object deleted it.
    const meta = raw.metadata as { deletionTimestamp?: unknown; finalizers?: unknown[] };
    const gone = Boolean(meta.deletionTimestamp) && (meta.finalizers ?? []).length === 0;
    this.overlay.set(key, { rv, value: gone ? undefined : this.o.convert(raw) });
    this.overlaid++;
  }

  private pruneOverlay(): void {
    const seen = this.lw.latestResourceVersion();
    for (const [key, ov] of this.overlay) if (rvAtLeast(seen, ov.rv)) this.overlay.delete(key);
  }

  private progress(): void {
    this.progressAt = this.o.clock.now();
  }

  private begin(): void {
    this.startPromise = this.lw.start().then(() => {
      if (!this.running) return;
      if (!this.synced && this.stats.lists > 0) {
        this.synced = true;
        for (const w of this.syncWaiters.splice(0)) w();
      }
    });
  }

  /** The converted value in the slim form ListWatch keeps (the raw object is dropped here). */
  private entry(raw: RawObject): Entry<T> {
    const m = raw.metadata ?? {};
    const metadata: Entry<T>['metadata'] = {};
    if (m.name !== undefined) metadata.name = m.name;
    if (m.namespace !== undefined) metadata.namespace = m.namespace;
    if (m.resourceVersion !== undefined) metadata.resourceVersion = m.resourceVersion;
    return { metadata, value: this.o.convert(raw) };
  }

  private async listAll(): Promise<KubernetesListObject<Entry<T>>> {
    const items: Array<Entry<T>> = [];
    let cont: string | undefined;
    let first: KubernetesListObject<KubernetesObject> | undefined;
    do {
      const page = await this.o.listPage(cont);
      // Only the list's own metadata is kept of the first page, not its items.
      first ??= { ...page, items: [] };
      for (const raw of page.items) items.push(this.entry(raw as RawObject));
      cont = page.metadata?._continue || undefined;
    } while (cont);
    this.stats.lists++;
    if (this.stats.lists > 1) this.stats.relists++;
    this.progress();
    // A relist replaces the cache: overlaid writes older than the list are answered by it.
    return { ...first, items };
  }

  private onUpsert(type: 'add' | 'update', entry: Entry<T>): void {
    this.stats.events++;
    this.progress();
    const key = keyOf(entry);
    const wasOverlaid = this.overlay.get(key);
    // ListWatch moves its resourceVersion only after its handlers ran: drop the memo now.
    this.listed = undefined;
    this.values.set(key, entry);
    if (wasOverlaid && rvAtLeast(entry.metadata.resourceVersion, wasOverlaid.rv)) this.overlay.delete(key);
    this.emit(type, entry.value);
  }

  private onDelete(entry: Entry<T>): void {
    this.stats.events++;
    this.progress();
    const key = keyOf(entry);
    const cur = this.values.get(key);
    this.listed = undefined;
    this.values.delete(key);
    const ov = this.overlay.get(key);
    if (ov && rvAtLeast(entry.metadata.resourceVersion, ov.rv)) this.overlay.delete(key);
    this.emit('delete', cur?.value ?? entry.value);
  }

  private emit(type: CacheEventType, value: T): void {
    for (const h of this.handlers) {
      try {
        h(type, value);
      } catch (e) {
        this.o.onError?.(e);
      }
    }
  }

  private onListWatchError(err: unknown): void {
    // ListWatch reports the abort of its own stop() as an error too.
    if (!this.running) return;
    this.stats.errors++;
    this.o.onError?.(err);
    // Capped exponential backoff so an API server outage does not become a hot loop.
    this.backoffMs = Math.min(30_000, this.backoffMs === 0 ? 200 : this.backoffMs * 2);
    if (this.retryTimer !== undefined) this.o.clock.clearTimer(this.retryTimer);
    this.retryTimer = this.o.clock.setTimer(this.backoffMs, () => {
      this.retryTimer = undefined;
      if (this.running) this.begin();
    });
  }
}
