import { describe, expect, it } from 'vitest';
import { drain, drainStep } from '../../src/disruption/termination.js';
import { FakeCluster } from '../provisioning/fake-cluster.js';
import { T0, makePod } from '../provisioning/fixtures.js';
import { makeNode } from './helpers.js';

function cluster(): FakeCluster {
  const c = new FakeCluster();
  c.nodes.set('n1', makeNode('n1'));
  return c;
}

const on = (name: string, extra: Parameters<typeof makePod>[1] = {}) => makePod(name, { nodeName: 'n1', ...extra });
const open = { now: T0, gracePeriodDeadline: Number.POSITIVE_INFINITY };

describe('drain', () => {
  it('cordons and taints the node, evicts workload pods but not DaemonSet or terminal ones', async () => {
    const c = cluster();
    c.pods = [on('web'), on('ds', { ownerKind: 'DaemonSet' }), on('done', { phase: 'Succeeded' }), makePod('elsewhere', { nodeName: 'n2' })];
    expect(await drain(c, 'n1', open)).toBe(false);
    expect(c.nodes.get('n1')!.spec.unschedulable).toBe(true);
    expect(c.nodes.get('n1')!.spec.taints).toContainEqual({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' });
    expect(c.evictions).toEqual(['default/web']);
    // The evicted pod is terminating: not evicted again, still waited for.
    expect(await drain(c, 'n1', open)).toBe(false);
    expect(c.evictions).toEqual(['default/web']);
    c.pods = c.pods.filter((p) => p.metadata.name !== 'web');
    expect(await drain(c, 'n1', open)).toBe(true);
  });

  it('retries evictions a PodDisruptionBudget refuses', async () => {
    const c = cluster();
    c.pods = [on('db-0')];
    c.pdbBlocked.add('default/db-0');
    const step = await drainStep(c, 'n1', open);
    expect(step).toMatchObject({ drained: false, refused: ['default/db-0'], evicted: [] });
    c.pdbBlocked.clear();
    expect((await drainStep(c, 'n1', open)).evicted).toEqual(['default/db-0']);
  });

  it('holds do-not-disrupt pods until the grace period deadline, then evicts them and lets the node go', async () => {
    const c = cluster();
    c.pods = [on('training', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })];
    const deadline = T0 + 60_000;
    expect(await drain(c, 'n1', { now: T0, gracePeriodDeadline: deadline })).toBe(false);
    expect(c.evictions).toEqual([]);
    expect(await drain(c, 'n1', { now: deadline, gracePeriodDeadline: deadline })).toBe(true);
    expect(c.evictions).toEqual(['default/training']);
  });

  it('evicts system-critical pods only after the rest have gone', async () => {
    const c = cluster();
    c.pods = [on('web'), on('coredns', { }), on('app')];
    c.pods[1]!.spec.priority = 2_000_000_000;
    await drain(c, 'n1', open);
    expect(c.evictions.sort()).toEqual(['default/app', 'default/web']);
    c.pods = c.pods.filter((p) => p.metadata.name === 'coredns');
    await drain(c, 'n1', open);
    expect(c.evictions).toContain('default/coredns');
  });

  it('treats a missing node as drained', async () => {
    expect(await drain(new FakeCluster(), 'gone', open)).toBe(true);
  });
});
