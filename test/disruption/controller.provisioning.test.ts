/**
 * Provisioning and disruption together on the fake cluster, with a stand-in for the
 * NodeClaim machine and kubelet (launch = set status + create a Ready node, then bind
 * pending pods): a burst of CPU and GPU pods gets nodes within limits, deleting the pods
 * empties and removes the nodes, and a NodeClass image change replaces nodes within budget.
 */
import { describe, expect, it } from 'vitest';
import { StaticInstanceTypeCatalog, STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import { DisruptionController } from '../../src/disruption/controller.js';
import { Provisioner } from '../../src/provisioning/provisioner.js';
import { instanceTypeCapacity } from '../../src/provisioning/overhead.js';
import { resourcesToList } from '../../src/provisioning/resources.js';
import { Requirements } from '../../src/provisioning/requirements.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { SeededRandom, VirtualClock } from '../../src/sim/virtual-clock.js';
import { GPU_TAINT, GPU_TOLERATION, T0, makeNodeClass, makeNodePool, makePod, silentLog, podsOf, setPods } from '../provisioning/fixtures.js';
import { changeImage, finishTermination, makeNode, readyConditions } from './helpers.js';

const MINUTE = 60_000;

/** Launches every claim without a node and binds pending pods the way the plans said. */
async function launchAndBind(cluster: FakeCluster, provisioner: Provisioner, now: number): Promise<void> {
  for (const claim of [...cluster.nodeClaims.values()]) {
    if (claim.status.nodeName || claim.metadata.deletionTimestamp) continue;
    const name = [...Requirements.fromSelectors(claim.spec.requirements).get('node.kubernetes.io/instance-type')!.values].sort()[0]!;
    const instanceType = STATIC_INSTANCE_TYPES.find((t) => t.name === name)!;
    const capacity = resourcesToList(instanceTypeCapacity(instanceType, cluster.nodeClasses.get('eastus2')!.spec));
    await cluster.patchNodeClaimMetadata(claim.metadata.name, { labels: { 'node.kubernetes.io/instance-type': name } });
    await cluster.updateNodeClaimStatus(claim.metadata.name, { nodeName: `node-${claim.metadata.name}`, capacity, allocatable: capacity, conditions: readyConditions(now) });
    cluster.putNode(makeNode(`node-${claim.metadata.name}`));
  }
  const placements = provisioner.lastSummary?.result;
  const target = new Map<string, string>();
  for (const plan of placements?.existingPlacements ?? []) for (const key of plan.podKeys) target.set(key, plan.nodeClaimName);
  for (const pod of podsOf(cluster)) {
    const claim = target.get(`${pod.metadata.namespace}/${pod.metadata.name}`);
    if (!claim || pod.spec.nodeName) continue;
    cluster.putPod({ ...pod, spec: { ...pod.spec, nodeName: `node-${claim}` }, status: { phase: 'Running', conditions: [] } });
  }
}

describe('provisioning and disruption together', () => {
  it('provisions within limits, removes emptied nodes, and replaces drifted ones within budget', async () => {
    const clock = new VirtualClock(T0);
    const cluster = new FakeCluster(clock);
    cluster.putNodeClass(makeNodeClass());
    for (const pool of [
      makeNodePool('h200', {
        taints: [GPU_TAINT], limits: { 'nvidia.com/gpu': '16' }, consolidateAfter: '1m', budgets: [{ nodes: '1' }],
        requirements: [{ key: 'karpenter.azure.com/sku-gpu-name', operator: 'In', values: ['H200'] }],
      }),
      makeNodePool('cpu', {
        consolidateAfter: '1m', budgets: [{ nodes: '50%' }],
        requirements: [{ key: 'karpenter.azure.com/sku-gpu-count', operator: 'In', values: ['0'] }, { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
      }),
    ]) cluster.putNodePool(pool);
    const gpuPods = Array.from({ length: 3 }, (_, i) => makePod(`train-${i}`, { requests: { cpu: '32', memory: '256Gi', 'nvidia.com/gpu': '8' }, tolerations: [GPU_TOLERATION] }));
    const cpuPods = Array.from({ length: 20 }, (_, i) => makePod(`web-${i}`, { requests: { cpu: '1', memory: '2Gi' } }));
    setPods(cluster, [...gpuPods, ...cpuPods]);
    const provisioner = new Provisioner({
      cluster, catalog: new StaticInstanceTypeCatalog(), clock, random: new SeededRandom(3), isOfferingUnavailable: () => false, clusterName: 't', log: silentLog,
    });
    const disruption = new DisruptionController({ cluster, catalog: new StaticInstanceTypeCatalog(), clock, log: silentLog });

    await provisioner.reconcile();
    await launchAndBind(cluster, provisioner, clock.now());
    await provisioner.reconcile();
    await launchAndBind(cluster, provisioner, clock.now());
    const claimsOf = (pool: string) => [...cluster.nodeClaims.values()].filter((c) => c.metadata.labels['karpenter.sh/nodepool'] === pool);
    expect(claimsOf('h200')).toHaveLength(2);
    expect(claimsOf('cpu').length).toBeGreaterThanOrEqual(3);
    expect(podsOf(cluster).filter((p) => !p.spec.nodeName).map((p) => p.metadata.name)).toEqual(['train-2']);
    expect(cluster.events.filter((e) => e.reason === 'FailedScheduling').map((e) => e.message)).toEqual([
      'Failed to schedule pod, NodePool cpu: no instance type in eastus2 matching the requirements has room for 32 cpu, 256Gi memory, 8 nvidia.com/gpu; NodePool h200 limit nvidia.com/gpu=16 reached',
    ]);

    // Delete the web pods: the cpu nodes empty out and go, within the 50% budget per round.
    setPods(cluster, podsOf(cluster).filter((p) => !p.metadata.name.startsWith('web-')));
    const cpuClaims = claimsOf('cpu').length;
    await disruption.reconcile();
    await clock.runUntil(T0 + 2 * MINUTE);
    const first = await disruption.reconcile();
    expect(first.every((d) => d.kind === 'Empty' && d.nodePool === 'cpu')).toBe(true);
    expect(first.length).toBe(Math.ceil(cpuClaims / 2));
    for (const d of first) await finishTermination(cluster, d.nodeClaim);
    const second = await disruption.reconcile();
    expect(second.length + first.length).toBe(cpuClaims);

    // Edit the NodeClass image: H200 nodes drift and are replaced one at a time (budget 1).
    changeImage(cluster, '2');
    const drift = await disruption.reconcile();
    expect(drift.map((d) => [d.nodePool, d.kind])).toEqual([['h200', 'Drifted']]);
    expect(await disruption.reconcile()).toEqual([]);
  });
});
