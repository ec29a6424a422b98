import type { Clock } from '../ports/clock.js';
import { PeriodicLoop } from '../utils/periodic-loop.js';
import { ClusterError } from '../ports/cluster.js';
import { microTime } from './cluster.js';
import type { V1Lease } from '@kubernetes/client-node';
import type { KubeClient } from './client.js';

/**
 * Lease-based leader election on coordination.k8s.io/v1 (client-node has none; its typed
 * CoordinationV1Api does the calls), following
 * client-go's algorithm, plus fencing:
 *
 *  - A candidate only takes over a lease whose record it has watched stay unchanged for a
 *    full leaseDuration *on its own clock* (observedTime), so clock skew between replicas
 *    does not matter — only clock rates do.
 *  - A leader's authority is time-bounded: isLeader() is true only while less than
 *    renewDeadline has passed since the start of the last successful renew. renewDeadline
 *    < leaseDuration, so a leader stops acting (fences itself) before any other replica can
 *    possibly acquire the lease, even if its renew loop is stuck or the API server is gone.
 *  - Call assertLeader() (or fence()) immediately before each ARM write; a deposed leader
 *    then throws NotLeaderError instead of writing.
 */

export interface LeaderElectionOptions {
  client: KubeClient;
  clock: Clock;
  namespace: string;
  /** Lease name, e.g. "azflex-controller". */
  name: string;
  /** Unique per replica: the pod name. */
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onError?: (err: unknown) => void;
}

export class NotLeaderError extends Error {
  override readonly name = 'NotLeaderError';
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

export type LostReason = 'renew-deadline-exceeded' | 'lease-taken' | 'stopped';

export class LeaderElector {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  private leading = false;
  private lastRenewStartedAt = 0;
  private observedKey = '';
  private observedAt = 0;
  private loop: PeriodicLoop | undefined;
  private running = false;
  private readonly started: Array<() => void> = [];
  private readonly lost: Array<(reason: LostReason) => void> = [];
  /** Lease transitions this replica has caused (for tests and metrics). */
  acquisitions = 0;

  constructor(private readonly o: LeaderElectionOptions) {
    this.leaseDurationMs = o.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = o.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = o.retryPeriodMs ?? 2_000;
    if (!(this.renewDeadlineMs < this.leaseDurationMs)) throw new Error('renewDeadline must be shorter than leaseDuration');
    if (!(this.retryPeriodMs < this.renewDeadlineMs)) throw new Error('retryPeriod must be shorter than renewDeadline');
  }

  get identity(): string {
    return this.o.identity;
  }

  /** True only while this replica holds a lease renewed less than renewDeadline ago. */
  isLeader(): boolean {
    return this.leading && this.o.clock.now() - this.lastRenewStartedAt < this.renewDeadlineMs;
  }

  assertLeader(): void {
    if (!this.isLeader()) throw new NotLeaderError(`${this.o.identity} is not the leader of lease ${this.o.namespace}/${this.o.name}`);
  }

  /** Runs an ARM write only if this replica is leading at the moment it starts. */
  async fence<T>(write: () => Promise<T>): Promise<T> {
    this.assertLeader();
    return write();
  }

  onStartedLeading(cb: () => void): () => void {
    this.started.push(cb);
    return () => remove(this.started, cb);
  }

  onLostLeadership(cb: (reason: LostReason) => void): () => void {
    this.lost.push(cb);
    return () => remove(this.lost, cb);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = new PeriodicLoop({
      name: 'leader-election',
      clock: this.o.clock,
      intervalMs: this.retryPeriodMs,
      initialDelayMs: 0,
      run: () => this.tick(),
    }).start();
  }

  /** Stops campaigning; when leading, fences first and then releases the lease so a peer takes over at once. */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    this.running = false;
    await this.loop?.stop();
    this.loop = undefined;
    const wasLeading = this.leading;
    if (wasLeading) this.loseLeadership('stopped');
    if (wasLeading && opts.release !== false) {
      try {
        await this.release();
      } catch (e) {
        this.o.onError?.(e);
      }
    }
  }

  private readLease(): Promise<Lease> {
    const { client, namespace, name } = this.o;
    return client.call(`get lease ${namespace}/${name}`, (opts) => client.coordination.readNamespacedLease({ namespace, name }, opts)) as Promise<unknown> as Promise<Lease>;
  }

  private async createLease(body: Lease): Promise<void> {
    const { client, namespace, name } = this.o;
    await client.call(`create lease ${namespace}/${name}`, (opts) => client.coordination.createNamespacedLease({ namespace, body: body as unknown as V1Lease }, opts));
  }

  /** PUT with the read resourceVersion: of two racing writers one gets 409. */
  private async replaceLease(body: Lease): Promise<void> {
    const { client, namespace, name } = this.o;
    await client.call(`update lease ${namespace}/${name}`, (opts) =>
      client.coordination.replaceNamespacedLease({ namespace, name, body: body as unknown as V1Lease }, opts),
    );
  }

  private loseLeadership(reason: LostReason): void {
    if (!this.leading) return;
    this.leading = false;
    for (const cb of [...this.lost]) {
      try {
        cb(reason);
      } catch (e) {
        this.o.onError?.(e);
      }
    }
  }

  private async tick(): Promise<void> {
    const attemptStart = this.o.clock.now();
    let ok = false;
    try {
      ok = await this.tryAcquireOrRenew(attemptStart);
    } catch (e) {
      this.o.onError?.(e);
    }
    if (ok) {
      this.lastRenewStartedAt = attemptStart;
      if (!this.leading) {
        this.leading = true;
        this.acquisitions++;
        for (const cb of [...this.started]) {
          try {
            cb();
          } catch (e) {
            this.o.onError?.(e);
          }
        }
      }
    } else if (this.leading && this.o.clock.now() - this.lastRenewStartedAt >= this.renewDeadlineMs) {
      this.loseLeadership('renew-deadline-exceeded');
    }
  }

  private spec(now: number, prev: LeaseSpec | undefined): LeaseSpec {
    const holderChanged = prev?.holderIdentity !== this.o.identity;
    return {
      holderIdentity: this.o.identity,
      leaseDurationSeconds: Math.max(1, Math.ceil(this.leaseDurationMs / 1000)),
      acquireTime: holderChanged ? microTime(now) : (prev?.acquireTime ?? microTime(now)),
      renewTime: microTime(now),
      leaseTransitions: (prev?.leaseTransitions ?? 0) + (holderChanged && prev?.holderIdentity ? 1 : 0),
    };
  }

  private async tryAcquireOrRenew(now: number): Promise<boolean> {
    let lease: Lease | undefined;
    try {
      lease = await this.readLease();
    } catch (e) {
      if (!(e instanceof ClusterError && e.reason === 'NotFound')) throw e;
    }
    if (!lease) {
      const body: Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: this.o.name, namespace: this.o.namespace },
        spec: this.spec(now, undefined),
      };
      try {
        await this.createLease(body);
        this.observe(body.spec, now);
        return true;
      } catch (e) {
        if (e instanceof ClusterError && (e.reason === 'AlreadyExists' || e.reason === 'Conflict')) return false;
        throw e;
      }
    }
    const spec = lease.spec ?? {};
    this.observe(spec, now);
    const holder = spec.holderIdentity ?? '';
    if (holder && holder !== this.o.identity) {
      const durationMs = (spec.leaseDurationSeconds ?? Math.ceil(this.leaseDurationMs / 1000)) * 1000;
      if (this.observedAt + durationMs > now) {
        // Someone else holds a live lease: if we thought we led, we have been deposed.
        this.loseLeadership('lease-taken');
        return false;
      }
    }
    const next: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { ...lease.metadata },
      spec: this.spec(now, spec),
    };
    try {
      // PUT with the resourceVersion we read: two candidates racing for an expired lease
      // cannot both win; the loser gets 409 and stays a follower.
      await this.replaceLease(next);
      this.observe(next.spec, now);
      return true;
    } catch (e) {
      if (e instanceof ClusterError && e.reason === 'Conflict') return false;
      throw e;
    }
  }

  private observe(spec: LeaseSpec | undefined, now: number): void {
    const key = `${spec?.holderIdentity ?? ''}|${spec?.renewTime ?? ''}|${spec?.leaseTransitions ?? 0}`;
    if (key !== this.observedKey) {
      this.observedKey = key;
      this.observedAt = now;
    }
  }

  private async release(): Promise<void> {
    const lease = await this.readLease();
    if (lease.spec?.holderIdentity !== this.o.identity) return;
    const now = this.o.clock.now();
    await this.replaceLease({
      ...lease,
      spec: {
        ...lease.spec,
        holderIdentity: null,
        leaseDurationSeconds: 1,
        renewTime: microTime(now),
        acquireTime: microTime(now),
      },
    });
  }
}

function remove<T>(list: T[], item: T): void {
  const i = list.indexOf(item);
  if (i >= 0) list.splice(i, 1);
}
