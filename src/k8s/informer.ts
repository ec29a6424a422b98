import type { Clock, TimerId } from '../ports/clock.js';
import { KubeApiError, type KubeRest, type WatchEvent } from './rest.js';

/**
 * List+watch cache for one resource type (client-go's reflector + store, minus the
 * parts we do not use). Invariants:
 *  - after the first successful list, `list()` answers from memory;
 *  - a watch that ends normally (server timeout, dropped connection) resumes from the last
 *    seen resourceVersion, so nothing is missed and nothing is re-listed;
 *  - a 410 Gone (history compacted) — either as the HTTP answer or as an ERROR event —
 *    forces a fresh list, and the difference against the cache is emitted as events so
 *    handlers see deletions that happened while we were not watching.
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

interface RawList {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: RawObject[];
}

export type InformerEventType = 'add' | 'update' | 'delete';
export type InformerHandler<T> = (type: InformerEventType, obj: T) => void;

export interface InformerStats {
  lists: number;
  relists: number;
  watches: number;
  events: number;
}

export interface InformerOptions<T> {
  rest: KubeRest;
  clock: Clock;
  /** Collection path, e.g. /apis/karpenter.sh/v1/nodeclaims or /api/v1/pods. */
  path: string;
  convert: (raw: RawObject) => T;
  /** Server-side watch duration; the informer resumes seamlessly after it. */
  watchTimeoutSeconds?: number;
  pageSize?: number;
  /** Where unexpected errors go (a logger in production). */
  onError?: (err: unknown) => void;
}

function keyOf(raw: RawObject): string {
  const m = raw.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ''}` : (m.name ?? '');
}

class Gone extends Error {}

export class Informer<T> {
  private readonly items = new Map<string, { raw: RawObject; value: T }>();
  private readonly handlers: InformerHandler<T>[] = [];
  private resourceVersion: string | undefined;
  private needList = true;
  private running = false;
  private abort: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private synced = false;
  private syncWaiters: Array<() => void> = [];
  private backoffMs = 0;
  private sleepTimer: TimerId | undefined;
  private wakeSleep: (() => void) | undefined;
  readonly stats: InformerStats = { lists: 0, relists: 0, watches: 0, events: 0 };

  constructor(private readonly o: InformerOptions<T>) {}

  onEvent(handler: InformerHandler<T>): void {
    this.handlers.push(handler);
  }

  /** Starts (or resumes from the last resourceVersion after stop()). */
  start(): void {
    if (this.running) return;
    this.running = true;
    // One controller per run, created before anything awaits, so a stop() that lands while
    // the initial list is in flight still prevents the watch that would follow it.
    this.abort = new AbortController();
    this.loop = this.run(this.abort.signal);
  }

  async stop(): Promise<void> {
    this.running = false;
    this.abort?.abort();
    if (this.sleepTimer !== undefined) this.o.clock.clearTimer(this.sleepTimer);
    this.wakeSleep?.();
    await this.loop;
    this.loop = undefined;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  list(): T[] {
    return [...this.items.values()].map((e) => e.value);
  }

  get(name: string, namespace?: string): T | undefined {
    return this.items.get(namespace ? `${namespace}/${name}` : name)?.value;
  }

  lastResourceVersion(): string | undefined {
    return this.resourceVersion;
  }

  /**
   * Write-through after our own successful writes, so a read right after a write sees it.
   * Only accepted when not older than what the watch already delivered (resourceVersions
   * of one etcd are monotonically increasing integers; if they ever are not, we fall back
   * to letting the watch decide).
   */
  upsertFromWrite(raw: RawObject): void {
    const key = keyOf(raw);
    const cur = this.items.get(key);
    const rv = raw.metadata?.resourceVersion;
    if (cur && !isNewer(rv, cur.raw.metadata?.resourceVersion)) return;
    // Not cached although the watch is already past this version: it was deleted since (the
    // DELETED event beat our write's response). Re-adding it would resurrect it for good.
    if (!cur && this.resourceVersion !== undefined && !isNewer(rv, this.resourceVersion)) return;
    // The write that removed the last finalizer of a deleting object deleted it.
    const meta = raw.metadata as { deletionTimestamp?: string; finalizers?: string[] } | undefined;
    if (meta?.deletionTimestamp && (meta.finalizers ?? []).length === 0) {
      if (cur) this.apply('delete', raw);
      return;
    }
    this.apply(cur ? 'update' : 'add', raw);
  }

  private emit(type: InformerEventType, value: T): void {
    for (const h of this.handlers) {
      try {
        h(type, value);
      } catch (e) {
        this.o.onError?.(e);
      }
    }
  }

  private apply(type: InformerEventType, raw: RawObject): void {
    const key = keyOf(raw);
    if (type === 'delete') {
      const cur = this.items.get(key);
      this.items.delete(key);
      this.emit('delete', cur?.value ?? this.o.convert(raw));
      return;
    }
    const value = this.o.convert(raw);
    this.items.set(key, { raw, value });
    this.emit(type, value);
  }

  private async listAll(): Promise<void> {
    const fresh = new Map<string, RawObject>();
    let cont: string | undefined;
    let rv: string | undefined;
    do {
      const page = await this.o.rest.request<RawList>('GET', this.o.path, {
        query: { limit: this.o.pageSize ?? 500, continue: cont },
      });
      for (const item of page.items ?? []) fresh.set(keyOf(item), item);
      cont = page.metadata?.continue || undefined;
      rv = page.metadata?.resourceVersion;
    } while (cont);
    this.stats.lists++;
    // Replace the cache and emit the difference (deletions we missed included).
    for (const [key, entry] of [...this.items]) {
      if (!fresh.has(key)) {
        this.items.delete(key);
        this.emit('delete', entry.value);
      }
    }
    for (const [key, raw] of fresh) {
      const cur = this.items.get(key);
      if (!cur) this.apply('add', raw);
      else if (cur.raw.metadata?.resourceVersion !== raw.metadata?.resourceVersion) this.apply('update', raw);
    }
    this.resourceVersion = rv;
    this.needList = false;
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  private onWatchEvent(ev: WatchEvent): void {
    this.stats.events++;
    const obj = (ev.object ?? {}) as RawObject & { code?: number };
    if (ev.type === 'ERROR') {
      if (obj.code === 410) throw new Gone('watch history compacted (410)');
      throw new KubeApiError('ServerError', `watch error event: ${JSON.stringify(obj).slice(0, 300)}`, obj.code ?? 0);
    }
    const rv = obj.metadata?.resourceVersion;
    if (ev.type === 'DELETED') this.apply('delete', obj);
    else if (ev.type !== 'BOOKMARK') {
      // Our own write-through may already hold exactly this version; do not re-emit it.
      const cur = this.items.get(keyOf(obj));
      if (!cur || cur.raw.metadata?.resourceVersion !== rv) this.apply(cur ? 'update' : 'add', obj);
    }
    if (rv) this.resourceVersion = rv;
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        if (this.needList) {
          const relist = this.stats.lists > 0;
          await this.listAll();
          if (relist) this.stats.relists++;
        }
        if (signal.aborted) break;
        this.stats.watches++;
        await this.o.rest.watch(
          this.o.path,
          {
            resourceVersion: this.resourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds: this.o.watchTimeoutSeconds ?? 300,
          },
          (ev) => this.onWatchEvent(ev),
          signal,
        );
        this.backoffMs = 0;
      } catch (e) {
        if (signal.aborted) break;
        if (e instanceof Gone || (e instanceof KubeApiError && e.code === 410)) {
          this.needList = true;
          continue;
        }
        this.o.onError?.(e);
        // Capped exponential backoff so an API server outage does not become a hot loop.
        this.backoffMs = Math.min(30_000, this.backoffMs === 0 ? 200 : this.backoffMs * 2);
        await this.sleep(this.backoffMs);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wakeSleep = resolve;
      this.sleepTimer = this.o.clock.setTimer(ms, () => {
        this.sleepTimer = undefined;
        this.wakeSleep = undefined;
        resolve();
      });
    });
  }
}

function isNewer(candidate: string | undefined, current: string | undefined): boolean {
  if (candidate === undefined || current === undefined) return true;
  if (!/^\d+$/.test(candidate) || !/^\d+$/.test(current)) return false;
  return BigInt(candidate) >= BigInt(current);
}
