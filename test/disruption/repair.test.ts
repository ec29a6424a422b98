import { describe, expect, it } from 'vitest';
import { StaticInstanceTypeCatalog } from '../../src/catalog/skus.js';
import { DisruptionController } from '../../src/disruption/controller.js';
import { AZURE_REPAIR_POLICIES, isTripped, parseRepairPolicies, unhealthyCondition, type RepairPolicy } from '../../src/disruption/repair.js';
import type { FakeCluster } from '../../src/sim/cluster.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { T0, iso, silentLog } from '../provisioning/fixtures.js';
import { clusterWithNodes, makeNode } from './helpers.js';

const MINUTE = 60_000;

function controllerFor(cluster: FakeCluster, clock: VirtualClock, repairPolicies?: readonly RepairPolicy[]): DisruptionController {
  return new DisruptionController({ cluster, catalog: new StaticInstanceTypeCatalog(), clock, log: silentLog, ...(repairPolicies ? { repairPolicies } : {}) });
}

/** The node of claim default-n<i> reports `type`=`status` from `at`. */
function setCondition(cluster: FakeCluster, i: number, type: string, status: 'True' | 'False' | 'Unknown', at: number): void {
  const node = cluster.nodes.get(`node-default-n${i}`) ?? makeNode(`node-default-n${i}`);
  const others = node.status.conditions.filter((c) => c.type !== type);
  cluster.putNode({ ...node, status: { ...node.status, conditions: [...others, { type, status, reason: 'Test', message: '', lastTransitionTime: iso(at) }] } });
}

const deleting = (cluster: FakeCluster): string[] =>
  [...cluster.nodeClaims.values()].filter((c) => c.metadata.deletionTimestamp).map((c) => c.metadata.name).sort();

describe('repair policies', () => {
  it('parses Type=Status:toleration lists and refuses malformed ones', () => {
    expect(parseRepairPolicies('GpuXidError=True:5m, NVLinkDown=True:10m')).toEqual([
      { conditionType: 'GpuXidError', conditionStatus: 'True', tolerationMs: 5 * MINUTE },
      { conditionType: 'NVLinkDown', conditionStatus: 'True', tolerationMs: 10 * MINUTE },
    ]);
    expect(parseRepairPolicies('')).toEqual([]);
    expect(() => parseRepairPolicies('GpuXidError=Maybe:5m')).toThrow(/expected Type=/);
    expect(() => parseRepairPolicies('GpuXidError=True:soon')).toThrow();
  });

  it('matches the condition whose toleration runs out first, from its lastTransitionTime', () => {
    const node = makeNode('n');
    node.status.conditions = [{ type: 'Ready', status: 'Unknown', reason: '', message: '', lastTransitionTime: iso(T0) }];
    expect(unhealthyCondition(node, AZURE_REPAIR_POLICIES)).toEqual({ conditionType: 'Ready', dueAt: T0 + 10 * MINUTE });
    node.status.conditions = [{ type: 'Ready', status: 'True', reason: '', message: '', lastTransitionTime: iso(T0) }];
    expect(unhealthyCondition(node, AZURE_REPAIR_POLICIES)).toBeUndefined();
  });

  // Upstream's breaker cases (pkg/controllers/node/health): 20% of the pool, rounded up, may be unhealthy.
  it('trips above 20% of the pool rounded up, so one unhealthy node never stops a small pool', () => {
    expect(isTripped({ total: 3, unhealthy: 1 })).toBe(false);
    expect(isTripped({ total: 3, unhealthy: 2 })).toBe(true);
    expect(isTripped({ total: 10, unhealthy: 2 })).toBe(false);
    expect(isTripped({ total: 10, unhealthy: 3 })).toBe(true);
    expect(isTripped({ total: 15, unhealthy: 3 })).toBe(false);
    expect(isTripped({ total: 15, unhealthy: 4 })).toBe(true);
  });
});

describe('node repair in the disruption controller', () => {
  it('deletes a NotReady node\'s NodeClaim once the 10 minute toleration has passed, not before', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 10, { consolidateAfter: 'Never' });
    const controller = controllerFor(cluster, clock);
    setCondition(cluster, 4, 'Ready', 'False', T0);
    await clock.runUntil(T0 + 9 * MINUTE);
    expect(await controller.reconcile()).toEqual([]);
    await clock.runUntil(T0 + 10 * MINUTE);
    const decisions = await controller.reconcile();
    expect(decisions.map((d) => [d.nodeClaim, d.kind])).toEqual([['default-n4', 'Unhealthy']]);
    expect(deleting(cluster)).toEqual(['default-n4']);
    expect(cluster.events.find((e) => e.reason === 'DisruptionTerminating' && e.involvedObject.name === 'default-n4')?.message).toMatch(/Unhealthy .*Ready=False/);
  });

  it('ignores budgets and do-not-disrupt, as expiry does', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 5, { consolidateAfter: 'Never', budgets: [{ nodes: '0' }] });
    setCondition(cluster, 0, 'Ready', 'Unknown', T0);
    await clock.runUntil(T0 + 11 * MINUTE);
    expect((await controllerFor(cluster, clock).reconcile()).map((d) => d.kind)).toEqual(['Unhealthy']);
  });

  it('repairs none of a pool over the breaker, and says so in one NodePool Event', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 10, { consolidateAfter: 'Never' });
    const controller = controllerFor(cluster, clock);
    for (const i of [1, 2, 3]) setCondition(cluster, i, 'Ready', 'False', T0);
    await clock.runUntil(T0 + 20 * MINUTE);
    expect(await controller.reconcile()).toEqual([]);
    expect(await controller.reconcile()).toEqual([]);
    const blocked = cluster.events.filter((e) => e.reason === 'NodeRepairBlocked');
    expect(blocked).toHaveLength(1);
    expect(blocked[0]).toMatchObject({ type: 'Warning', involvedObject: { kind: 'NodePool', name: 'default' } });
    expect(blocked[0]!.message).toContain('(3 of 10)');
    // One recovers: 2 of 10 is within the breaker, and both are repaired.
    setCondition(cluster, 3, 'Ready', 'True', T0 + 20 * MINUTE);
    expect((await controller.reconcile()).map((d) => d.nodeClaim).sort()).toEqual(['default-n1', 'default-n2']);
  });

  it('repairs on configured GPU conditions (node-problem-detector), and not at all with no policies', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 10, { consolidateAfter: 'Never' });
    setCondition(cluster, 7, 'GpuXidError', 'True', T0);
    await clock.runUntil(T0 + 6 * MINUTE);
    expect(await controllerFor(cluster, clock, []).reconcile()).toEqual([]);
    expect(await controllerFor(cluster, clock).reconcile()).toEqual([]);
    const policies = [...AZURE_REPAIR_POLICIES, ...parseRepairPolicies('GpuXidError=True:5m')];
    expect((await controllerFor(cluster, clock, policies).reconcile()).map((d) => [d.nodeClaim, d.detail])).toEqual([['default-n7', 'node node-default-n7 GpuXidError=True past its toleration']]);
  });
});
