import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import { refreshClusterGauges, releaseObjectGauges } from '../../src/metrics/cluster-state.js';
import { createAzflexMetrics, createKarpenterMetrics } from '../../src/metrics/karpenter.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { T0, iso, makeNodeClass, makeNodePool, makePod } from '../provisioning/fixtures.js';

describe('releaseObjectGauges', () => {
  it('frees the series per node and per pod after a scrape, and keeps the NodePool and cluster ones', async () => {
    const registry = new Registry();
    const k = createKarpenterMetrics(registry);
    const cluster = new FakeCluster(new VirtualClock(T0), undefined);
    cluster.putNodeClass(makeNodeClass());
    cluster.putNodePool(makeNodePool('gpu', { limits: { cpu: '1000' } }));
    cluster.putNode({
      metadata: { name: 'n1', uid: 'uid-n1', labels: { 'karpenter.sh/nodepool': 'gpu' }, annotations: {}, finalizers: [], creationTimestamp: iso(T0) },
      spec: { taints: [] },
      status: { capacity: { cpu: '8' }, allocatable: { cpu: '7900m' }, conditions: [] },
    });
    cluster.putPod(makePod('web-1', { nodeName: 'n1', containers: [{ cpu: '1' }] }));
    await refreshClusterGauges(cluster, { list: async () => [...STATIC_INSTANCE_TYPES] }, k, createAzflexMetrics(registry), T0);
    const series = async (name: string): Promise<number> => (await registry.getSingleMetric(name)!.get()).values.length;
    for (const name of ['karpenter_nodes_allocatable', 'karpenter_pods_state', 'karpenter_nodepools_limit', 'karpenter_cluster_utilization_percent']) expect(await series(name), name).toBeGreaterThan(0);

    releaseObjectGauges(k);
    for (const name of ['karpenter_nodes_allocatable', 'karpenter_nodes_total_pod_requests', 'karpenter_nodes_current_lifetime_seconds', 'karpenter_pods_state']) expect(await series(name), name).toBe(0);
    expect(await series('karpenter_nodepools_limit')).toBeGreaterThan(0);
    expect(await series('karpenter_cluster_utilization_percent')).toBeGreaterThan(0);
  });
});
