import { describe, expect, it } from 'vitest';
import { StaticInstanceTypeCatalog } from '../../src/catalog/skus.js';
import { DisruptionController } from '../../src/disruption/controller.js';
import type { FakeCluster } from '../../src/sim/cluster.js';
import { SeededRandom, VirtualClock } from '../../src/sim/virtual-clock.js';
import { T0, iso, makePod, silentLog, setPods } from '../provisioning/fixtures.js';
import { addClaim, changeImage, clusterWithNodes, finishTermination, makeNode, readyConditions } from './helpers.js';

const MINUTE = 60_000;

function controllerFor(cluster: FakeCluster, clock: VirtualClock): DisruptionController {
  return new DisruptionController({ cluster, catalog: new StaticInstanceTypeCatalog(), clock, log: silentLog });
}

const deleting = (cluster: FakeCluster): string[] =>
  [...cluster.nodeClaims.values()].filter((c) => c.metadata.deletionTimestamp).map((c) => c.metadata.name).sort();

const podOn = (name: string, claim: string, extra: Parameters<typeof makePod>[1] = {}) =>
  makePod(name, { nodeName: `node-${claim}`, requests: { cpu: '2', memory: '4Gi' }, ...extra });

describe('DisruptionController', () => {
  it('removes empty nodes only after consolidateAfter (from initialization), within the budget', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 3, { consolidateAfter: '5m', budgets: [{ nodes: '1' }] });
    const controller = controllerFor(cluster, clock);
    expect(await controller.reconcile()).toEqual([]);
    await clock.runUntil(T0 + 4 * MINUTE);
    expect(await controller.reconcile()).toEqual([]);
    await clock.runUntil(T0 + 5 * MINUTE);
    const decisions = await controller.reconcile();
    expect(decisions.map((d) => [d.nodeClaim, d.kind])).toEqual([['default-n0', 'Empty']]);
    expect(deleting(cluster)).toEqual(['default-n0']);
    // The deleting claim still uses the budget of 1.
    expect(await controller.reconcile()).toEqual([]);
    await finishTermination(cluster, 'default-n0');
    await clock.runUntil(T0 + 6 * MINUTE);
    expect((await controller.reconcile()).map((d) => d.nodeClaim)).toEqual(['default-n1']);
    expect(cluster.events.some((e) => e.reason === 'DisruptionTerminating' && e.involvedObject.name === 'default-n0')).toBe(true);
  });

  it('counts NotReady nodes against the budget, like nodes being deleted', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 3, { consolidateAfter: '0s', budgets: [{ nodes: '1' }] });
    const ready = makeNode('node-default-n2');
    cluster.putNode({ ...ready, status: { ...ready.status, conditions: [] } });
    const controller = controllerFor(cluster, clock);
    expect(await controller.reconcile()).toEqual([]);
    cluster.putNode(ready);
    expect((await controller.reconcile()).map((d) => d.nodeClaim)).toEqual(['default-n0']);
  });

  it('restarts the consolidateAfter clock when pods come and go', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 1, { consolidateAfter: '5m' });
    const controller = controllerFor(cluster, clock);
    setPods(cluster, [podOn('web', 'default-n0')]);
    await controller.reconcile();
    await clock.runUntil(T0 + 4 * MINUTE);
    setPods(cluster, []);
    await controller.reconcile();
    await clock.runUntil(T0 + 8 * MINUTE);
    expect(await controller.reconcile()).toEqual([]);
    await clock.runUntil(T0 + 9 * MINUTE);
    expect((await controller.reconcile()).map((d) => d.kind)).toEqual(['Empty']);
  });

  it('replaces drifted nodes oldest first, one budget slot at a time', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 4, { budgets: [{ nodes: '25%' }], consolidateAfter: 'Never' });
    const controller = controllerFor(cluster, clock);
    for (const claim of [...cluster.nodeClaims.values()]) cluster.putPod(podOn(`w-${claim.metadata.name}`, claim.metadata.name));
    expect(await controller.reconcile()).toEqual([]);
    changeImage(cluster, '2');
    const first = await controller.reconcile();
    expect(first.map((d) => [d.nodeClaim, d.kind, d.detail])).toEqual([['default-n0', 'Drifted', 'NodeClassDrifted']]);
    expect(await controller.reconcile()).toEqual([]);
    await finishTermination(cluster, 'default-n0');
    expect((await controller.reconcile()).map((d) => d.nodeClaim)).toEqual(['default-n1']);
  });

  it('leaves do-not-disrupt nodes alone, except when they expire', async () => {
    const clock = new VirtualClock(T0 + 2 * 3_600_000);
    const cluster = clusterWithNodes(clock, 0, { consolidateAfter: '0s', budgets: [{ nodes: '100%' }] });
    addClaim(cluster, 'guarded', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
    addClaim(cluster, 'job-node');
    addClaim(cluster, 'old', { expireAfter: '1h', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
    setPods(cluster, [podOn('training', 'job-node', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })]);
    const decisions = await controllerFor(cluster, clock).reconcile();
    expect(decisions.map((d) => [d.nodeClaim, d.kind])).toEqual([['old', 'Expired']]);
  });

  it('expires nodes regardless of budgets', async () => {
    const clock = new VirtualClock(T0 + 721 * 3_600_000);
    const cluster = clusterWithNodes(clock, 0, { budgets: [{ nodes: '0' }], consolidateAfter: 'Never' });
    addClaim(cluster, 'a', { expireAfter: '720h' });
    addClaim(cluster, 'b', { expireAfter: '720h' });
    expect((await controllerFor(cluster, clock).reconcile()).map((d) => d.kind)).toEqual(['Expired', 'Expired']);
  });

  it('consolidates an underutilized node whose pods fit elsewhere, only under WhenEmptyOrUnderutilized', async () => {
    for (const policy of ['WhenEmpty', 'WhenEmptyOrUnderutilized'] as const) {
      const clock = new VirtualClock(T0);
      const cluster = clusterWithNodes(clock, 2, { consolidationPolicy: policy, consolidateAfter: '1m', budgets: [{ nodes: '100%' }] });
      setPods(cluster, [podOn('a', 'default-n0'), podOn('b', 'default-n1')]);
      const controller = controllerFor(cluster, clock);
      await controller.reconcile();
      await clock.runUntil(T0 + 2 * MINUTE);
      const decisions = await controller.reconcile();
      if (policy === 'WhenEmpty') expect(decisions).toEqual([]);
      else expect(decisions.map((d) => d.kind)).toEqual(['Underutilized']);
    }
  });

  it('moves a pod only where its zonal disk can follow: the node whose pod is pinned to its zone stays', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 2, { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '1m', budgets: [{ nodes: '100%' }] });
    ['eastus2-1', 'eastus2-2'].forEach((zone, i) => {
      const claim = cluster.nodeClaims.get(`default-n${i}`)!;
      cluster.putNodeClaim({ ...claim, metadata: { ...claim.metadata, labels: { ...claim.metadata.labels, 'topology.kubernetes.io/zone': zone } } });
    });
    const meta = (name: string) => ({ name, uid: `uid-${name}`, labels: {}, annotations: {}, finalizers: [], creationTimestamp: iso(T0) });
    cluster.putStorage({ kind: 'PersistentVolume', value: { metadata: meta('disk'), spec: { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.disk.csi.azure.com/zone', operator: 'In', values: ['eastus2-1'] }] }] } } } } });
    cluster.putStorage({ kind: 'PersistentVolumeClaim', value: { metadata: { ...meta('data'), namespace: 'default' }, spec: { volumeName: 'disk' }, status: { phase: 'Bound' } } });
    const pinned = podOn('a', 'default-n0');
    pinned.spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }];
    setPods(cluster, [pinned, podOn('b', 'default-n1')]);
    const controller = controllerFor(cluster, clock);
    await controller.reconcile();
    await clock.runUntil(T0 + 2 * MINUTE);
    // n0 comes first (same pods, price, then name) but its pod's disk is in eastus2-1 and n1 is in eastus2-2.
    expect((await controller.reconcile()).map((d) => [d.kind, d.nodeClaim])).toEqual([['Underutilized', 'default-n1']]);
  });

  it('does not consolidate when the pods would not fit elsewhere, or while pods are pending', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 2, { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '1m', budgets: [{ nodes: '100%' }] });
    setPods(cluster, [podOn('a', 'default-n0', { requests: { cpu: '5' } }), podOn('b', 'default-n1', { requests: { cpu: '5' } })]);
    const controller = controllerFor(cluster, clock);
    await controller.reconcile();
    await clock.runUntil(T0 + 2 * MINUTE);
    expect(await controller.reconcile()).toEqual([]);
    const small = clusterWithNodes(clock, 2, { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '1m', budgets: [{ nodes: '100%' }] });
    setPods(small, [podOn('a', 'default-n0'), podOn('b', 'default-n1'), makePod('pending')]);
    const smallController = controllerFor(small, clock);
    await smallController.reconcile();
    await clock.runUntil(T0 + 4 * MINUTE);
    expect(await smallController.reconcile()).toEqual([]);
  });

  it('replaces an underutilized node with a cheaper one, deleting it only once the replacement is initialized', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 0, { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '1m', budgets: [{ nodes: '100%' }] });
    addClaim(cluster, 'big', { launchedAs: 'Standard_NC40ads_H100_v5' });
    setPods(cluster, [podOn('web', 'big', { requests: { cpu: '1', memory: '1Gi' } })]);
    const controller = new DisruptionController({ cluster, catalog: new StaticInstanceTypeCatalog(), clock, log: silentLog, random: new SeededRandom(5) });
    await controller.reconcile();
    await clock.runUntil(T0 + 2 * MINUTE);
    expect(await controller.reconcile()).toEqual([]);
    const replacementName = cluster.nodeClaims.get('big')!.metadata.annotations['flex.aks.azure.com/consolidation-replacement']!;
    const replacement = cluster.nodeClaims.get(replacementName)!;
    // Only options cheaper than the NC40ads_H100 ($6.98/h) it replaces; the pool does not pin
    // the architecture, so the arm64 sizes are options too, as upstream's would be.
    const options = replacement.spec.requirements.find((r) => r.key === 'node.kubernetes.io/instance-type')!.values;
    expect(options).toEqual(['Standard_D4ps_v5', 'Standard_D8s_v5', 'Standard_E8ps_v5', 'Standard_NC24ads_A100_v4']);
    expect(replacement.metadata.finalizers).toEqual(['karpenter.sh/termination']);
    // Not initialized yet: the candidate stays, and no second replacement is launched.
    expect(await controller.reconcile()).toEqual([]);
    expect(cluster.nodeClaims.size).toBe(2);
    await cluster.updateNodeClaimStatus(replacementName, { ...replacement.status, conditions: readyConditions(clock.now()), nodeName: `node-${replacementName}` });
    cluster.putNode(makeNode(`node-${replacementName}`));
    await clock.runUntil(T0 + 10 * MINUTE);
    // The empty, initialized replacement is not itself consolidated while 'big' exists.
    expect((await controller.reconcile()).map((d) => [d.nodeClaim, d.kind])).toEqual([['big', 'Underutilized']]);
    expect(await controller.reconcile()).toEqual([]);
  });

  it('abandons a replacement whose NodeClaim disappeared', async () => {
    const clock = new VirtualClock(T0);
    const cluster = clusterWithNodes(clock, 0, { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: 'Never' });
    addClaim(cluster, 'big', { launchedAs: 'Standard_NC40ads_H100_v5', annotations: { 'flex.aks.azure.com/consolidation-replacement': 'default-gone' } });
    setPods(cluster, [podOn('web', 'big')]);
    expect(await controllerFor(cluster, clock).reconcile()).toEqual([]);
    expect(cluster.nodeClaims.get('big')!.metadata.annotations['flex.aks.azure.com/consolidation-replacement']).toBeUndefined();
  });
});
