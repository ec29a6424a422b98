import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createAzflexMetrics, createKarpenterMetrics } from '../../src/metrics/karpenter.js';
import { runtimeMetricsListener } from '../../src/metrics/runtime.js';
import { builtInScenario } from '../../src/sim/scenarios.js';
import { runSimulation } from '../../src/sim/simulation.js';

/**
 * Upstream labels karpenter_nodeclaims_terminated_total and karpenter_nodes_{created,terminated}_total
 * with the NodeClaim's topology.kubernetes.io/zone. The quota storm's H200 pool is in eastus2,
 * a zoned region: every NodeClaim gets a zone before its VM PUT, so no series may say zone="".
 * quota-blind (usages unreadable): creates are refused for quota and NodeClaims terminate
 * (with usages read, quota-aware planning makes none).
 */
describe('lifecycle metrics carry the NodeClaim zone', () => {
  it('labels nodes created, NodeClaims and nodes terminated with eastus2-<n>', async () => {
    const registry = new Registry();
    const karpenter = createKarpenterMetrics(registry);
    let hooked = false;
    await runSimulation({
      scenario: builtInScenario('quota-blind')!, seed: 3, strategy: 'machine', hours: 2, keepEventLog: false,
      onWorld: ({ eventLog, cluster }) => {
        if (hooked) return;
        hooked = true;
        eventLog.subscribe(runtimeMetricsListener(createAzflexMetrics(registry), karpenter, (name) => cluster.cachedNodeClaim(name)?.metadata.labels));
      },
    });
    const series = async (name: string) => (await registry.getSingleMetric(name)!.get()).values.filter((v) => v.value > 0);
    const created = await series('karpenter_nodes_created_total');
    const terminated = await series('karpenter_nodeclaims_terminated_total');
    expect(created.length).toBeGreaterThan(0);
    expect(terminated.length).toBeGreaterThan(0);
    for (const v of [...created, ...terminated, ...(await series('karpenter_nodes_terminated_total'))]) {
      expect(v.labels.zone).toMatch(/^eastus2-[123]$/);
    }
    for (const v of terminated) expect(v.labels.capacity_type).toBe('on-demand');
  });
});
