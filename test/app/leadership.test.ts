import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Leadership, type LeaderRuntime, type LeaderRuntimeContext } from '../../src/app/leadership.js';
import { createAzflexMetrics, createKarpenterMetrics } from '../../src/metrics/karpenter.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';

/** A replica's leadership over a fake cluster, a fake leader runtime and one counting controller. */
function harness() {
  const clock = new VirtualClock(0);
  const registry = new Registry();
  const azflexMetrics = createAzflexMetrics(registry);
  const cluster = Object.assign(new FakeCluster(clock), { waitForSync: async (): Promise<void> => undefined });
  const state = { leader: true, reconciles: 0, events: [] as string[], stalled: [] as string[], contexts: [] as LeaderRuntimeContext[], kicked: [] as string[] };
  const runtime: LeaderRuntime = {
    start: async () => void state.events.push('runtime start'),
    stop: () => void state.events.push('runtime stop'),
    stalledLoops: () => state.stalled,
    kick: (loop) => void state.kicked.push(loop),
  };
  const leadership = new Leadership({
    cluster,
    clock,
    identity: 'replica-a',
    isLeader: () => state.leader,
    controllers: [{ name: 'nodeclass.status', intervalMs: 60_000, reconcile: async () => void (state.reconciles += 1) }],
    runtimeFactory: (ctx) => {
      state.contexts.push(ctx);
      return runtime;
    },
    context: { registry, karpenterMetrics: createKarpenterMetrics(registry), azflexMetrics },
    azflexMetrics,
    log: (level, msg) => void state.events.push(`${level}: ${msg}`),
  });
  const leaderGauge = async (): Promise<number | undefined> => (await azflexMetrics.isLeader.get()).values[0]?.value;
  return { clock, cluster, leadership, state, leaderGauge };
}

describe('Leadership', () => {
  it('starts the controllers and the runtime on a won Lease, and stops both on a lost one', async () => {
    const { clock, cluster, leadership, state, leaderGauge } = harness();
    leadership.won();
    await clock.runUntil(0);
    expect(state.events).toEqual(['runtime start', 'info: replica-a is leading']);
    expect(state.reconciles).toBe(1);
    expect(state.contexts[0]?.cluster).toBe(cluster);
    expect(state.contexts[0]?.isLeader()).toBe(true);
    expect(await leaderGauge()).toBe(1);

    leadership.lost();
    await clock.runUntil(0);
    expect(state.events.at(-1)).toBe('runtime stop');
    expect(await leaderGauge()).toBe(0);
    // Stopped loops tick no more.
    await clock.runUntil(10 * 60_000);
    expect(state.reconciles).toBe(1);
  });

  it('fences: a loop whose replica no longer leads does not reconcile', async () => {
    const { clock, leadership, state } = harness();
    leadership.leadAlone();
    await clock.runUntil(0);
    expect(state.reconciles).toBe(1);
    state.leader = false;
    leadership.kick();
    await clock.runUntil(60_000);
    expect(state.reconciles).toBe(1);
  });

  it('passes a kick for one of its loops to the leader\'s runtime, and to nothing as a standby', async () => {
    const { clock, leadership, state } = harness();
    leadership.kickRuntime('provisioner');
    expect(state.kicked).toEqual([]);
    leadership.leadAlone();
    await clock.runUntil(0);
    leadership.kickRuntime('provisioner');
    expect(state.kicked).toEqual(['provisioner']);
    leadership.lost();
    await clock.runUntil(0);
    leadership.kickRuntime('provisioner');
    expect(state.kicked).toEqual(['provisioner']);
  });

  it('starts nothing once stopped for good, even on a Lease won afterwards', async () => {
    const { clock, leadership, state } = harness();
    await leadership.stopForGood();
    leadership.won();
    await clock.runUntil(60_000);
    expect(state.events).toEqual([]);
    expect(state.reconciles).toBe(0);
  });

  it('reports stalled while the runtime names a stalled loop, never as a standby', async () => {
    const { clock, leadership, state } = harness();
    state.stalled = ['provisioner'];
    expect(leadership.stalled(1_000)).toBe(false);
    leadership.won();
    await clock.runUntil(0);
    expect(leadership.stalled(1_000)).toBe(true);
    state.stalled = [];
    expect(leadership.stalled(1_000)).toBe(false);
  });
});
