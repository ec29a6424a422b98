import { describe, expect, it } from 'vitest';
import { drain, drainStep } from '../../../src/lifecycle/nodeclaim/termination.js';
import { FakeCluster } from '../../../src/sim/cluster.js';
import { VirtualClock } from '../../../src/sim/virtual-clock.js';
import { T0, iso, makePod, setPods } from '../../provisioning/fixtures.js';
import { makeNode } from '../../disruption/helpers.js';

function cluster(): FakeCluster {
  const c = new FakeCluster(new VirtualClock(T0));
  c.putNode(makeNode('n1'));
  return c;
}

const on = (name: string, extra: Parameters<typeof makePod>[1] = {}) => makePod(name, { nodeName: 'n1', ...extra });
const open = { now: T0, gracePeriodDeadline: Number.POSITIVE_INFINITY };

describe('drain', () => {
  it('cordons and taints the node, evicts workload pods but not DaemonSet or terminal ones', async () => {
    const c = cluster();
    setPods(c, [on('web'), on('ds', { ownerKind: 'DaemonSet' }), on('done', { phase: 'Succeeded' }), makePod('elsewhere', { nodeName: 'n2' })]);
    const step = await drainStep(c, 'n1', open);
    expect(step).toMatchObject({ drained: false, evicted: ['default/web'], refused: [] });
    expect(c.nodes.get('n1')!.spec.unschedulable).toBe(true);
    expect(c.nodes.get('n1')!.spec.taints).toContainEqual({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' });
    // The evicted pod left the node (its replacement is Pending elsewhere).
    expect(await drain(c, 'n1', open)).toBe(true);
  });

  it('waits for terminating pods without evicting them again', async () => {
    const c = cluster();
    setPods(c, [on('web', { deletionTimestamp: iso(T0) })]);
    expect(await drainStep(c, 'n1', open)).toMatchObject({ drained: false, evicted: [], remaining: ['default/web'] });
    c.removePod('default', 'web');
    expect(await drain(c, 'n1', open)).toBe(true);
  });

  it('retries evictions a PodDisruptionBudget refuses', async () => {
    const c = cluster();
    setPods(c, [on('db-0')]);
    c.setPodDisruptionBudgets([{ name: 'db', namespace: 'default', matchLabels: {}, matchExpressions: [], minAvailable: 1 }]);
    const step = await drainStep(c, 'n1', open);
    expect(step).toMatchObject({ drained: false, refused: ['default/db-0'], evicted: [] });
    c.setPodDisruptionBudgets([]);
    expect((await drainStep(c, 'n1', open)).evicted).toEqual(['default/db-0']);
  });

  it('holds do-not-disrupt pods until the grace period deadline, then evicts them and lets the node go', async () => {
    const c = cluster();
    setPods(c, [on('training', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })]);
    const deadline = T0 + 60_000;
    expect(await drainStep(c, 'n1', { now: T0, gracePeriodDeadline: deadline })).toMatchObject({ drained: false, evicted: [] });
    expect(await drainStep(c, 'n1', { now: deadline, gracePeriodDeadline: deadline })).toMatchObject({ drained: true, evicted: ['default/training'] });
  });

  it('evicts system-critical pods only after the rest have gone', async () => {
    const c = cluster();
    const coredns = on('coredns');
    coredns.spec.priority = 2_000_000_000;
    setPods(c, [on('web'), coredns, on('app')]);
    expect((await drainStep(c, 'n1', open)).evicted.sort()).toEqual(['default/app', 'default/web']);
    expect((await drainStep(c, 'n1', open)).evicted).toEqual(['default/coredns']);
  });

  it('treats a missing node as drained', async () => {
    expect(await drain(new FakeCluster(new VirtualClock(T0)), 'gone', open)).toBe(true);
  });
});
