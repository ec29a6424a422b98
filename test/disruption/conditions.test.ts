/**
 * The disruption conditions a NodeClaim shows (src/disruption/conditions.ts), as upstream
 * Karpenter v1.15 writes them: which condition when, written only when it changes, and rebuilt
 * by a restarted controller from what the NodeClaims show.
 */
import { describe, expect, it } from 'vitest';
import { StaticInstanceTypeCatalog } from '../../src/catalog/skus.js';
import { DisruptionController } from '../../src/disruption/controller.js';
import type { Condition, NodeClaimStatusChange } from '../../src/ports/cluster.js';
import type { FakeCluster } from '../../src/sim/cluster.js';
import { SeededRandom, VirtualClock } from '../../src/sim/virtual-clock.js';
import { T0, iso, makePod, setPods, silentLog } from '../provisioning/fixtures.js';
import { addClaim, changeImage, clusterWithNodes, makeNode, readyConditions } from './helpers.js';

const MINUTE = 60_000;
const REPLACEMENT = 'flex.aks.azure.com/consolidation-replacement';

/** The controller, and the status changes it sends (every one is a write: it sends none that change nothing). */
function controllerFor(cluster: FakeCluster, clock: VirtualClock, random?: SeededRandom): { controller: DisruptionController; writes: Array<[string, NodeClaimStatusChange]> } {
  const writes: Array<[string, NodeClaimStatusChange]> = [];
  const patch = cluster.patchNodeClaimStatus.bind(cluster);
  cluster.patchNodeClaimStatus = async (name, change) => {
    writes.push([name, change]);
    return patch(name, change);
  };
  return { controller: new DisruptionController({ cluster, catalog: new StaticInstanceTypeCatalog(), clock, log: silentLog, ...(random ? { random } : {}) }), writes };
}

const condition = (cluster: FakeCluster, claim: string, type: string): Condition | undefined =>
  cluster.nodeClaims.get(claim)?.status.conditions.find((c) => c.type === type);

const podOn = (name: string, claim: string, requests = { cpu: '2', memory: '4Gi' }) => makePod(name, { nodeName: `node-${claim}`, requests });

describe('NodeClaim disruption conditions', () => {
  it('Drifted: True with the drift reason while the claim has drifted, removed when it no longer has', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 2, { consolidateAfter: 'Never', budgets: [{ nodes: '0' }] });
    // do-not-disrupt blocks the replacement, not the condition (upstream marks every launched claim).
    await cluster.patchNodeClaimMetadata('default-n1', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
    const { controller } = controllerFor(cluster, clock);
    await controller.reconcile();
    expect(condition(cluster, 'default-n0', 'Drifted')).toBeUndefined();

    const original = cluster.nodeClasses.get('eastus2')!;
    changeImage(cluster, '2.0.0');
    await clock.runUntil(T0 + MINUTE);
    // A budget of 0 holds the replacement back; the condition says why it will come.
    expect(await controller.reconcile()).toEqual([]);
    for (const name of ['default-n0', 'default-n1']) {
      expect(condition(cluster, name, 'Drifted')).toEqual({
        type: 'Drifted', status: 'True', reason: 'NodeClassDrifted', message: 'NodeClassDrifted', lastTransitionTime: iso(T0 + MINUTE),
      });
    }
    // Ready's dependents are Launched, Registered and Initialized only.
    expect(condition(cluster, 'default-n0', 'Ready')?.status).toBe('True');

    cluster.putNodeClass(original);
    await clock.runUntil(T0 + 2 * MINUTE);
    await controller.reconcile();
    expect(condition(cluster, 'default-n0', 'Drifted')).toBeUndefined();
  });

  it('Drifted only once launched: a claim still launching shows none', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 1, { consolidateAfter: 'Never' });
    const claim = cluster.nodeClaims.get('default-n0')!;
    const launching: Condition[] = [{ type: 'Launched', status: 'Unknown', reason: 'Launching', message: '', lastTransitionTime: iso(T0) }];
    await cluster.updateNodeClaimStatus('default-n0', { ...claim.status, conditions: launching });
    changeImage(cluster, '2.0.0');
    const { controller, writes } = controllerFor(cluster, clock);
    await controller.reconcile();
    expect(condition(cluster, 'default-n0', 'Drifted')).toBeUndefined();
    expect(writes).toEqual([]);
  });

  it('Consolidatable: consolidateAfter after initialization, cleared by a pod event (lastPodEventTime) until it has passed again', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 1, { consolidateAfter: '5m', consolidationPolicy: 'WhenEmpty' });
    setPods(cluster, [podOn('web', 'default-n0')]);
    const { controller, writes } = controllerFor(cluster, clock);
    await controller.reconcile();
    expect(condition(cluster, 'default-n0', 'Consolidatable')).toBeUndefined();
    // Seen with its pods from the first look: no pod event (none was observed), nothing written.
    expect(writes).toEqual([]);

    await clock.runUntil(T0 + 5 * MINUTE);
    await controller.reconcile();
    // Busy, under WhenEmpty: not consolidated, but Consolidatable as upstream marks it.
    expect(cluster.nodeClaims.get('default-n0')!.metadata.deletionTimestamp).toBeUndefined();
    expect(condition(cluster, 'default-n0', 'Consolidatable')).toEqual({
      type: 'Consolidatable', status: 'True', reason: 'Consolidatable', message: '', lastTransitionTime: iso(T0 + 5 * MINUTE),
    });

    // The pod leaves: a pod event, written with the condition's removal in one status write.
    await clock.runUntil(T0 + 6 * MINUTE);
    setPods(cluster, []);
    writes.length = 0;
    await controller.reconcile();
    expect(writes).toEqual([['default-n0', { set: [], remove: ['Consolidatable'], lastPodEventTime: iso(T0 + 6 * MINUTE) }]]);
    expect(cluster.nodeClaims.get('default-n0')!.status.lastPodEventTime).toBe(iso(T0 + 6 * MINUTE));
    expect(condition(cluster, 'default-n0', 'Consolidatable')).toBeUndefined();

    // Passes that change nothing write nothing.
    writes.length = 0;
    await clock.runUntil(T0 + 10 * MINUTE);
    expect(await controller.reconcile()).toEqual([]);
    expect(await controller.reconcile()).toEqual([]);
    expect(writes).toEqual([]);

    // consolidateAfter after the pod event: Consolidatable, and (empty) DisruptionReason Empty before the delete.
    await clock.runUntil(T0 + 11 * MINUTE);
    expect((await controller.reconcile()).map((d) => d.kind)).toEqual(['Empty']);
    const claim = cluster.nodeClaims.get('default-n0')!;
    expect(claim.metadata.deletionTimestamp).toBeDefined();
    expect(condition(cluster, 'default-n0', 'Consolidatable')?.status).toBe('True');
    expect(condition(cluster, 'default-n0', 'DisruptionReason')).toEqual({
      type: 'DisruptionReason', status: 'True', reason: 'Empty', message: 'Empty', lastTransitionTime: iso(T0 + 11 * MINUTE),
    });
    expect(writes).toHaveLength(1);
  });

  it('Consolidatable never with consolidateAfter: Never, and removed when a pool turns consolidation off', async () => {
    const clock = new VirtualClock(T0 + 60 * MINUTE);
    const cluster = clusterWithNodes(clock, 1, { consolidateAfter: '0s' });
    setPods(cluster, [podOn('web', 'default-n0')]);
    const { controller } = controllerFor(cluster, clock);
    await controller.reconcile();
    expect(condition(cluster, 'default-n0', 'Consolidatable')?.status).toBe('True');
    const pool = cluster.nodePools.get('default')!;
    cluster.putNodePool({ ...pool, spec: { ...pool.spec, disruption: { ...pool.spec.disruption, consolidateAfter: 'Never' } } });
    await controller.reconcile();
    expect(condition(cluster, 'default-n0', 'Consolidatable')).toBeUndefined();
  });

  it('a restarted controller counts consolidateAfter from lastPodEventTime and rewrites nothing', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 2, { consolidateAfter: '5m' });
    const api = podOn('api', 'default-n1');
    setPods(cluster, [podOn('web', 'default-n0'), api]);
    const first = controllerFor(cluster, clock);
    await first.controller.reconcile();
    await clock.runUntil(T0 + 4 * MINUTE);
    setPods(cluster, [podOn('web2', 'default-n0'), api]);
    await first.controller.reconcile();
    expect(cluster.nodeClaims.get('default-n0')!.status.lastPodEventTime).toBe(iso(T0 + 4 * MINUTE));
    await clock.runUntil(T0 + 6 * MINUTE);
    await first.controller.reconcile();
    expect(condition(cluster, 'default-n1', 'Consolidatable')?.status).toBe('True');
    expect(condition(cluster, 'default-n0', 'Consolidatable')).toBeUndefined();

    // A new process: the same conditions from what the NodeClaims show, no write for them.
    const second = controllerFor(cluster, clock);
    await second.controller.reconcile();
    expect(second.writes).toEqual([]);
    // n0's clock is its lastPodEventTime (T0+4m), not the restart.
    await clock.runUntil(T0 + 9 * MINUTE);
    await second.controller.reconcile();
    expect(second.writes.map(([name, change]) => [name, change.set?.map((c) => c.type)])).toEqual([['default-n0', ['Consolidatable']]]);
  });

  it('DisruptionReason: Drifted before a drifted claim is deleted; none for expiration', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 1, { consolidateAfter: 'Never', budgets: [{ nodes: '100%' }] });
    addClaim(cluster, 'old', { expireAfter: '1h' });
    const { controller } = controllerFor(cluster, clock);
    changeImage(cluster, '2.0.0');
    await clock.runUntil(T0 + 61 * MINUTE);
    const decisions = await controller.reconcile();
    expect(decisions.map((d) => [d.nodeClaim, d.kind]).sort()).toEqual([['default-n0', 'Drifted'], ['old', 'Expired']]);
    expect(condition(cluster, 'default-n0', 'DisruptionReason')).toMatchObject({ status: 'True', reason: 'Drifted', message: 'Drifted' });
    expect(condition(cluster, 'old', 'DisruptionReason')).toBeUndefined();
    // Both being deleted: what they show stays (upstream stops reconciling them).
    expect(condition(cluster, 'old', 'Drifted')?.reason).toBe('NodeClassDrifted');
  });

  it('DisruptionReason Underutilized while a candidate waits for its replacement; removed when it is abandoned', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 0, { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '1m', budgets: [{ nodes: '100%' }] });
    addClaim(cluster, 'big', { launchedAs: 'Standard_NC40ads_H100_v5' });
    setPods(cluster, [podOn('web', 'big', { cpu: '1', memory: '1Gi' })]);
    const { controller } = controllerFor(cluster, clock, new SeededRandom(5));
    await controller.reconcile();
    await clock.runUntil(T0 + 2 * MINUTE);
    await controller.reconcile();
    const replacement = cluster.nodeClaims.get('big')!.metadata.annotations[REPLACEMENT]!;
    expect(replacement).toBeDefined();
    expect(condition(cluster, 'big', 'DisruptionReason')).toMatchObject({ status: 'True', reason: 'Underutilized', message: 'Underutilized' });
    // Alongside the karpenter.sh/disrupted taint, so nothing new lands on it meanwhile (it is not cordoned).
    expect(cluster.nodes.get('node-big')!.spec.taints).toEqual([{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }]);
    expect(cluster.nodes.get('node-big')!.spec.unschedulable).toBeFalsy();
    // The replacement is still launching: it shows no disruption condition of its own.
    expect(cluster.nodeClaims.get(replacement)!.status.conditions.map((c) => c.type)).not.toContain('DisruptionReason');

    // A do-not-disrupt pod arrives: the replacement is abandoned, and the mark and the condition go.
    setPods(cluster, [podOn('web', 'big', { cpu: '1', memory: '1Gi' }), makePod('batch', { nodeName: 'node-big', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })]);
    await clock.runUntil(T0 + 3 * MINUTE);
    await controller.reconcile();
    expect(cluster.nodeClaims.get('big')!.metadata.annotations[REPLACEMENT]).toBeUndefined();
    expect(condition(cluster, 'big', 'DisruptionReason')).toBeUndefined();
    expect(cluster.nodes.get('node-big')!.spec.taints).toEqual([]);
  });

  it('a restarted controller clears a DisruptionReason and a disrupted taint no disruption holds, and keeps a marked one', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 2, { consolidateAfter: 'Never' });
    // What a controller killed between marking and deleting, or after abandoning, leaves behind.
    const stale: Condition = { type: 'DisruptionReason', status: 'True', reason: 'Empty', message: 'Empty', lastTransitionTime: iso(T0) };
    for (const name of ['default-n0', 'default-n1']) {
      const claim = cluster.nodeClaims.get(name)!;
      cluster.putNodeClaim({ ...claim, status: { ...claim.status, conditions: [...claim.status.conditions, stale] } });
      const node = cluster.nodes.get(`node-${name}`)!;
      cluster.putNode({ ...node, spec: { ...node.spec, taints: [{ key: 'other', effect: 'NoSchedule' }, { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] } });
    }
    // n1 waits for a replacement that is still launching.
    const r = addClaim(cluster, 'default-r', {});
    cluster.putNodeClaim({ ...r, status: { ...r.status, conditions: [{ type: 'Launched', status: 'Unknown', reason: 'Launching', message: '', lastTransitionTime: iso(T0) }] } });
    await cluster.patchNodeClaimMetadata('default-n1', { annotations: { [REPLACEMENT]: 'default-r' } });
    const { controller } = controllerFor(cluster, clock);
    await controller.reconcile();
    expect(condition(cluster, 'default-n0', 'DisruptionReason')).toBeUndefined();
    expect(cluster.nodes.get('node-default-n0')!.spec.taints).toEqual([{ key: 'other', effect: 'NoSchedule' }]);
    expect(condition(cluster, 'default-n1', 'DisruptionReason')).toMatchObject({ reason: 'Underutilized' });
    expect(cluster.nodes.get('node-default-n1')!.spec.taints).toHaveLength(2);
    expect(cluster.nodeClaims.get('default-n1')!.metadata.deletionTimestamp).toBeUndefined();
  });

  it('leaves claims of other providers and of deleted NodePools alone', async () => {
    const clock = new VirtualClock(T0 + 60 * MINUTE);
    const cluster = clusterWithNodes(clock, 1, { consolidateAfter: '0s', kind: 'AKSNodeClass' });
    const { controller, writes } = controllerFor(cluster, clock);
    await controller.reconcile();
    expect(writes).toEqual([]);
    const claim = cluster.nodeClaims.get('default-n0')!;
    cluster.putNodeClaim({ ...claim, metadata: { ...claim.metadata, labels: { ...claim.metadata.labels, 'karpenter.sh/nodepool': 'gone' } }, status: { ...claim.status, conditions: readyConditions(T0) } });
    cluster.putNode(makeNode('node-default-n0'));
    await controller.reconcile();
    expect(writes).toEqual([]);
  });
});
