import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LAUNCH_REASON_THROTTLED, LivenessController, livenessFailure } from '../../../src/lifecycle/nodeclaim/liveness.js';
import { FakeCluster } from '../../../src/sim/cluster.js';
import { VirtualClock } from '../../../src/sim/virtual-clock.js';
import { T0, iso, makeNodeClaim, makeNodeClass, makeNodePool, silentLog } from '../../provisioning/fixtures.js';

const MINUTE = 60_000;
const launched = (at: number) => [{ type: 'Launched', status: 'True' as const, reason: 'Launched', message: '', lastTransitionTime: iso(at) }];
const registered = (at: number) => [...launched(at), { type: 'Registered', status: 'True' as const, reason: 'Registered', message: '', lastTransitionTime: iso(at) }];

describe('liveness', () => {
  it('times out launch after 5 minutes and registration 15 minutes after launch', () => {
    const pending = makeNodeClaim('a', { nodePool: 'p' });
    expect(livenessFailure(pending, T0 + 5 * MINUTE - 1)).toBeUndefined();
    expect(livenessFailure(pending, T0 + 5 * MINUTE)).toBe('LaunchTimeout');
    const up = makeNodeClaim('b', { nodePool: 'p', conditions: launched(T0 + 3 * MINUTE) });
    expect(livenessFailure(up, T0 + 17 * MINUTE)).toBeUndefined();
    expect(livenessFailure(up, T0 + 18 * MINUTE)).toBe('RegistrationTimeout');
    expect(livenessFailure(makeNodeClaim('c', { nodePool: 'p', conditions: registered(T0) }), T0 + 1e9)).toBeUndefined();
  });

  it('does not time a launch out while ARM makes it wait (Launched Unknown/Throttled), and times it from the first attempt after the wait', () => {
    const cond = (status: 'False' | 'Unknown', reason: string, at: number) => [{ type: 'Launched', status, reason, message: '', lastTransitionTime: iso(at) }];
    const throttled = makeNodeClaim('t', { nodePool: 'p', conditions: cond('Unknown', LAUNCH_REASON_THROTTLED, T0 + MINUTE) });
    expect(livenessFailure(throttled, T0 + 60 * MINUTE)).toBeUndefined();
    const attempted = makeNodeClaim('u', { nodePool: 'p', conditions: cond('False', 'Launching', T0 + 20 * MINUTE) });
    expect(livenessFailure(attempted, T0 + 25 * MINUTE - 1)).toBeUndefined();
    expect(livenessFailure(attempted, T0 + 25 * MINUTE)).toBe('LaunchTimeout');
    // A failing attempt does not restart the clock: Launching stays Launching, timed from its first transition.
    const early = makeNodeClaim('v', { nodePool: 'p', conditions: cond('False', 'Launching', T0 + 10_000) });
    expect(livenessFailure(early, T0 + 5 * MINUTE + 10_000)).toBe('LaunchTimeout');
  });

  it('deletes timed-out NodeClaims, marks the pool unhealthy, and recovers on a later registration', async () => {
    const clock = new VirtualClock(T0 + 14 * MINUTE);
    const cluster = new FakeCluster(clock);
    cluster.putNodeClass(makeNodeClass());
    cluster.putNodePool(makeNodePool('gpu'));
    cluster.putNodeClaim(makeNodeClaim('gpu-aaaaa', { nodePool: 'gpu', conditions: launched(T0) }));
    cluster.putNodeClaim(makeNodeClaim('gpu-bbbbb', { nodePool: 'gpu', creationTimestamp: iso(T0 + 10 * MINUTE) }));
    const liveness = new LivenessController({ cluster, clock, log: silentLog });
    expect(await liveness.reconcile()).toEqual([]);
    await clock.runUntil(T0 + 15 * MINUTE);
    const actions = await liveness.reconcile();
    expect(actions.map((a) => [a.nodeClaim, a.failure]).sort()).toEqual([['gpu-aaaaa', 'RegistrationTimeout'], ['gpu-bbbbb', 'LaunchTimeout']]);
    expect(cluster.nodeClaims.get('gpu-aaaaa')!.metadata.deletionTimestamp).toBeDefined();
    const healthy = () => cluster.nodePools.get('gpu')!.status.conditions.find((c) => c.type === 'NodeRegistrationHealthy');
    expect(healthy()).toMatchObject({ status: 'False' });
    expect(cluster.events.map((e) => e.reason).sort()).toEqual(['LaunchTimeout', 'RegistrationTimeout']);
    // Already deleting: no second delete or event.
    expect(await liveness.reconcile()).toEqual([]);
    cluster.putNodeClaim(makeNodeClaim('gpu-ccccc', { nodePool: 'gpu', conditions: registered(T0 + 20 * MINUTE) }));
    await clock.runUntil(T0 + 21 * MINUTE);
    await liveness.reconcile();
    expect(healthy()).toMatchObject({ status: 'True' });
  });

  it('looks again at a NodeClaim whose delete failed, and at one whose deadline came while nothing else changed', async () => {
    const clock = new VirtualClock(T0);
    const cluster = new FakeCluster(clock);
    cluster.putNodeClass(makeNodeClass());
    cluster.putNodePool(makeNodePool('gpu'));
    cluster.putNodeClaim(makeNodeClaim('gpu-aaaaa', { nodePool: 'gpu', conditions: launched(T0) }));
    let refuse = 1;
    const port = new Proxy(cluster, {
      get(target, prop) {
        if (prop === 'deleteNodeClaim' && refuse > 0) return async () => { refuse--; throw new Error('conflict'); };
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const liveness = new LivenessController({ cluster: port, clock, log: silentLog });
    expect(await liveness.reconcile()).toEqual([]);
    await clock.runUntil(T0 + 10 * MINUTE);
    expect(await liveness.reconcile()).toEqual([]);
    await clock.runUntil(T0 + 15 * MINUTE);
    expect(await liveness.reconcile()).toEqual([]); // the delete failed
    expect((await liveness.reconcile()).map((a) => a.nodeClaim)).toEqual(['gpu-aaaaa']);
    expect(cluster.nodeClaims.get('gpu-aaaaa')!.metadata.deletionTimestamp).toBeDefined();
  });

  it('decides what a controller with no memory decides, pass after pass, however NodeClaims come, change and go', async () => {
    type Op =
      | { op: 'add'; created: number; stage: 'pending' | 'launched' | 'registered'; pool: 'gpu' | 'other' }
      | { op: 'advance'; minutes: number }
      | { op: 'launch' | 'register' | 'remove'; index: number };
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ op: fc.constant('add' as const), created: fc.integer({ min: -20, max: 0 }), stage: fc.constantFrom('pending' as const, 'launched' as const, 'registered' as const), pool: fc.constantFrom('gpu' as const, 'gpu' as const, 'other' as const) }),
      fc.record({ op: fc.constant('advance' as const), minutes: fc.integer({ min: 0, max: 8 }) }),
      fc.record({ op: fc.constantFrom('launch' as const, 'register' as const, 'remove' as const), index: fc.nat(20) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 30 }), async (ops) => {
        const clock = new VirtualClock(T0 + 30 * MINUTE);
        // Two identical clusters: one kept by a long-lived controller, one by a new controller every pass.
        const clusters = [new FakeCluster(clock), new FakeCluster(clock)];
        for (const c of clusters) {
          c.putNodeClass(makeNodeClass());
          c.putNodePool(makeNodePool('gpu'));
        }
        const kept = new LivenessController({ cluster: clusters[0]!, clock, log: silentLog });
        let n = 0;
        for (const op of ops) {
          const now = clock.now();
          for (const c of clusters) {
            const names = [...c.nodeClaims.keys()];
            if (op.op === 'add') {
              const at = now + op.created * MINUTE;
              const conditions = op.stage === 'pending' ? [] : op.stage === 'launched' ? launched(at) : registered(at);
              c.putNodeClaim(makeNodeClaim(`${op.pool}-${n}`, { nodePool: op.pool, creationTimestamp: iso(at), conditions }));
            } else if (op.op !== 'advance' && names.length > 0) {
              const name = names[op.index % names.length]!;
              const claim = c.nodeClaims.get(name)!;
              if (op.op === 'remove') c.nodeClaims.delete(name);
              else c.putNodeClaim({ ...claim, status: { ...claim.status, conditions: op.op === 'launch' ? launched(now) : registered(now) } });
            }
          }
          if (op.op === 'add') n++;
          if (op.op === 'advance') await clock.runUntil(now + op.minutes * MINUTE);
          const got = await kept.reconcile();
          const want = await new LivenessController({ cluster: clusters[1]!, clock, log: silentLog }).reconcile();
          expect(got).toEqual(want);
          expect([...clusters[0]!.nodeClaims.values()].map((c) => [c.metadata.name, c.metadata.deletionTimestamp])).toEqual([...clusters[1]!.nodeClaims.values()].map((c) => [c.metadata.name, c.metadata.deletionTimestamp]));
        }
      }),
      { numRuns: 150 },
    );
  });
});
