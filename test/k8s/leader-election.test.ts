import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { LeaderElector, NotLeaderError, type LostReason } from '../../src/k8s/leader-election.js';
import { KubeApiError, KubeClient } from '../../src/k8s/client.js';
import { RealClock } from '../../src/platform/real-clock.js';
import { adminKubeConfig, adminRequest, eventually } from './harness.js';
import { ensureNamespace } from './fixtures.js';

const info = inject('k8s');
const ns = 'leader-election-test';

/** A client we can cut off from the API server, as a network partition would (a client-node middleware fault). */
class PartitionableClient extends KubeClient {
  partitioned = false;
  constructor(kc: ConstructorParameters<typeof KubeClient>[0]) {
    super(kc);
    this.use({
      before: (req) => {
        if (this.partitioned) throw new KubeApiError('ServerError', `partitioned: ${req.method} ${req.path}`, 0);
      },
    });
  }
}

interface Replica {
  id: string;
  rest: PartitionableClient;
  elector: LeaderElector;
  lost: LostReason[];
  /** Clock times at which this replica performed a fenced "ARM write". */
  writes: number[];
  refused: number;
}

const clock = new RealClock();
const timings = { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 250 };

// Hand-over must beat a lease expiry by a wide margin even on a loaded CI machine.
const handoverTimings = { leaseDurationMs: 6000, renewDeadlineMs: 4000, retryPeriodMs: 250 };

function replica(id: string, lease: string, t: typeof timings = timings): Replica {
  const rest = new PartitionableClient(adminKubeConfig(info));
  const elector = new LeaderElector({ client: rest, clock, namespace: ns, name: lease, identity: id, ...t });
  const r: Replica = { id, rest, elector, lost: [], writes: [], refused: 0 };
  elector.onLostLeadership((reason) => r.lost.push(reason));
  return r;
}

/** Every replica tries an "ARM write" every 10 ms through the fence; only leaders get through. */
function armWriters(replicas: Replica[]): () => void {
  const timer = setInterval(() => {
    for (const r of replicas) {
      r.elector
        .fence(async () => {
          r.writes.push(clock.now());
        })
        .catch((e: unknown) => {
          if (e instanceof NotLeaderError) r.refused++;
          else throw e;
        });
    }
  }, 10);
  return () => clearInterval(timer);
}

/** Samples isLeader() of all replicas; returns the count of samples where two led at once. */
function overlapSampler(replicas: Replica[]): { stop: () => number } {
  let overlaps = 0;
  const timer = setInterval(() => {
    if (replicas.filter((r) => r.elector.isLeader()).length > 1) overlaps++;
  }, 5);
  return {
    stop: () => {
      clearInterval(timer);
      return overlaps;
    },
  };
}

function noInterleaving(a: Replica, b: Replica): void {
  // Fencing: once B has written, A must never write again (and vice versa) — the write
  // histories are two disjoint time intervals.
  if (a.writes.length === 0 || b.writes.length === 0) return;
  const [first, second] = (a.writes[0] as number) < (b.writes[0] as number) ? [a, b] : [b, a];
  expect(Math.max(...first.writes)).toBeLessThan(Math.min(...second.writes));
}

describe('Lease leader election with fencing', () => {
  const started: Replica[] = [];
  beforeAll(async () => {
    await ensureNamespace(info, ns);
  });
  afterEach(async () => {
    for (const r of started.splice(0)) {
      r.rest.partitioned = false;
      await r.elector.stop();
    }
  });

  it('elects exactly one leader and hands over at once on graceful release', async () => {
    const a = replica('replica-a', 'handover', handoverTimings);
    const b = replica('replica-b', 'handover', handoverTimings);
    started.push(a, b);
    const sampler = overlapSampler([a, b]);
    const stopWriters = armWriters([a, b]);
    a.elector.start();
    await eventually('a leads', async () => a.elector.isLeader());
    b.elector.start();
    await new Promise((r) => setTimeout(r, 800));
    expect(b.elector.isLeader()).toBe(false);
    const lease = (await adminRequest(info, 'GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/handover`)) as { spec: { holderIdentity: string } };
    expect(lease.spec.holderIdentity).toBe('replica-a');

    const releasedAt = clock.now();
    await a.elector.stop();
    expect(a.lost).toEqual(['stopped']);
    expect(a.elector.isLeader()).toBe(false);
    await eventually('b takes over', async () => b.elector.isLeader());
    // Released, not expired: b did not have to wait a lease duration.
    expect(clock.now() - releasedAt).toBeLessThan(handoverTimings.leaseDurationMs / 2);
    // The writers tick every 10 ms: let b's pass its fence before stopping them.
    await eventually('b writes through its fence', async () => b.writes.length > 0, 2000, 5);
    stopWriters();
    expect(sampler.stop()).toBe(0);
    expect(a.writes.length).toBeGreaterThan(0);
    expect(b.writes.length).toBeGreaterThan(0);
    noInterleaving(a, b);
    const after = (await adminRequest(info, 'GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/handover`)) as { spec: { holderIdentity: string; leaseTransitions: number } };
    expect(after.spec.holderIdentity).toBe('replica-b');
  });

  it('fences a partitioned leader before anyone else can take the lease', async () => {
    const a = replica('replica-a', 'partition');
    const b = replica('replica-b', 'partition');
    started.push(a, b);
    a.elector.start();
    await eventually('a leads', async () => a.elector.isLeader());
    b.elector.start();
    const sampler = overlapSampler([a, b]);
    const stopWriters = armWriters([a, b]);
    await new Promise((r) => setTimeout(r, 500));

    const partitionedAt = clock.now();
    a.rest.partitioned = true;
    await eventually('a fences itself', async () => !a.elector.isLeader(), 5000, 5);
    const fencedAt = clock.now();
    // isLeader() turns false by time alone, renewDeadline after the last renew began.
    expect(fencedAt - partitionedAt).toBeLessThanOrEqual(timings.renewDeadlineMs + 1000);
    await eventually('a runs its lost-leadership hook', async () => a.lost.includes('renew-deadline-exceeded'), 5000);
    await eventually('b acquires the expired lease', async () => b.elector.isLeader(), 10_000, 5);
    const acquiredAt = clock.now();
    // b had to watch the record go stale for a full lease duration.
    expect(acquiredAt - partitionedAt).toBeGreaterThanOrEqual(timings.leaseDurationMs - timings.retryPeriodMs);
    expect(acquiredAt).toBeGreaterThan(fencedAt);
    await new Promise((r) => setTimeout(r, 300));
    stopWriters();
    expect(sampler.stop()).toBe(0);
    expect(a.refused).toBeGreaterThan(0);
    noInterleaving(a, b);

    // The partition heals: a sees b's live lease and stays a follower.
    a.rest.partitioned = false;
    await new Promise((r) => setTimeout(r, 1000));
    expect(a.elector.isLeader()).toBe(false);
    expect(b.elector.isLeader()).toBe(true);
  });

  it('rejects timings that would let two leaders overlap', () => {
    const client = new KubeClient(adminKubeConfig(info));
    expect(() => new LeaderElector({ client, clock, namespace: ns, name: 'x', identity: 'i', leaseDurationMs: 1000, renewDeadlineMs: 1000 })).toThrow(/renewDeadline/);
  });
});
