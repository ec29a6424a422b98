import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CachedKind } from '../../src/ports/cluster.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { T0, makeNodeClaim, makePod } from '../provisioning/fixtures.js';

/**
 * The fake cluster's cache tokens (ClusterPort.cacheVersion, seenThrough) are what lets a
 * controller skip work when its informers saw nothing new; wrong tokens would skip a change.
 */
type Op =
  | { op: 'putPod'; i: number }
  | { op: 'removePod'; i: number }
  | { op: 'putClaim'; i: number }
  | { op: 'deleteClaim'; i: number }
  | { op: 'advance'; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('putPod' as const), i: fc.nat(4) }),
  fc.record({ op: fc.constant('removePod' as const), i: fc.nat(4) }),
  fc.record({ op: fc.constant('putClaim' as const), i: fc.nat(4) }),
  fc.record({ op: fc.constant('deleteClaim' as const), i: fc.nat(4) }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 8_000 }) }),
);

async function view(cluster: FakeCluster, kind: CachedKind): Promise<string> {
  const objects = kind === 'pods' ? await cluster.listPods() : await cluster.listNodeClaims();
  return JSON.stringify(objects.map((o) => [o.metadata.name, o.metadata.resourceVersion]).sort());
}

describe('FakeCluster cache tokens', () => {
  it('equal cacheVersion of a kind means its lagged view is the same, with or without informer lag', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(0, 5_000), fc.array(opArb, { maxLength: 40 }), async (lag, ops) => {
        const clock = new VirtualClock(T0);
        const cluster = new FakeCluster(clock, { informerLagMs: lag });
        const last = new Map<string, string>();
        const check = async (): Promise<void> => {
          for (const kind of ['pods', 'nodeClaims'] as const) {
            const token = cluster.cacheVersion(kind);
            const seen = await view(cluster, kind);
            const before = last.get(`${kind}@${token}`);
            if (before !== undefined) expect(seen).toBe(before);
            last.set(`${kind}@${token}`, seen);
          }
        };
        await check();
        for (const o of ops) {
          if (o.op === 'putPod') cluster.putPod(makePod(`p${o.i}`));
          else if (o.op === 'removePod') cluster.removePod('default', `p${o.i}`);
          else if (o.op === 'putClaim') cluster.putNodeClaim(makeNodeClaim(`c${o.i}`, { nodePool: 'np' }));
          else if (o.op === 'deleteClaim') await cluster.deleteNodeClaim(`c${o.i}`);
          else await clock.runUntil(clock.now() + o.ms);
          await check();
        }
      }),
      { numRuns: 200 },
    );
  });

  it('a write to one kind leaves the other kinds\' cacheVersion alone; seenThrough covers every visible write', async () => {
    const clock = new VirtualClock(T0);
    const cluster = new FakeCluster(clock, { informerLagMs: 1_000 });
    const pods = cluster.cacheVersion('pods');
    cluster.putNodeClaim(makeNodeClaim('c', { nodePool: 'np' }));
    const rv = cluster.nodeClaims.get('c')!.metadata.resourceVersion!;
    expect(cluster.cacheVersion('pods')).toBe(pods);
    expect(Number(cluster.seenThrough('nodeClaims'))).toBeLessThan(Number(rv));
    await clock.runUntil(clock.now() + 1_000);
    expect(Number(cluster.seenThrough('nodeClaims'))).toBeGreaterThanOrEqual(Number(rv));
    expect(cluster.cacheVersion('pods')).toBe(pods);
  });
});
