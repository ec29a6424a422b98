import { describe, expect, it } from 'vitest';
import { DEFAULT_INTERVALS } from '../../src/controllers/periodic.js';
import { SKU_NOT_AVAILABLE_SPOT_TTL_SECONDS } from '../../src/azure/errors.js';
import { builtInScenario } from '../../src/sim/scenarios.js';
import { runSimulation } from '../../src/sim/simulation.js';

/**
 * The spot scenarios of `azflex simulate`: a [spot, on-demand] H200 NodePool falls back to
 * on-demand while spot has no capacity and goes back to spot once the mark expires; a spot
 * pool evicted at 30% an hour keeps its pods running.
 */
const capacityType = (labels: Record<string, string>) => labels['karpenter.sh/capacity-type'];

describe('spot-fallback', () => {
  it.each([[1, 0], [2, 5]])('seed %i, %i restarts: on-demand within one provisioning interval of the spot refusal, spot again for the first NodeClaim after the mark expires, nothing leaks', async (seed, restarts) => {
    const scenario = builtInScenario('spot-fallback')!;
    const run = await runSimulation({ scenario: { ...scenario, faults: { ...scenario.faults, restarts } }, seed, strategy: 'machine', keepEventLog: true });
    const r = run.result;
    expect(r.leakedNics + r.leakedVms + r.leakedDisks).toBe(0);
    expect(r.stuckNodeClaims).toBe(0);
    expect(r.podsRunning).toBe(4);
    const start = run.eventLog.entries[0]!.t;
    const puts = run.eventLog.entries.filter((e) => e.event === 'vm.put');
    const refused = puts.find((e) => e.detail?.startsWith('409 SkuNotAvailable'));
    expect(refused).toBeDefined();
    // Every NodeClaim ever made, with its capacity type and when: the ones left and the deleted ones' PUTs.
    const claims = [...run.cluster.nodeClaims.values()].map((c) => ({ type: capacityType(c.metadata.labels), at: Date.parse(c.metadata.creationTimestamp) }));
    const onDemand = claims.filter((c) => c.type === 'on-demand').sort((a, b) => a.at - b.at);
    expect(onDemand).toHaveLength(2);
    expect(onDemand[0]!.at - refused!.t).toBeLessThanOrEqual(DEFAULT_INTERVALS.provisionMs);
    // No spot create succeeds while the mark holds; the first NodeClaim after it is spot.
    const markExpires = refused!.t + SKU_NOT_AVAILABLE_SPOT_TTL_SECONDS * 1000;
    const after = claims.filter((c) => c.at >= markExpires).sort((a, b) => a.at - b.at);
    expect(after.length).toBeGreaterThan(0);
    expect(after[0]!.type).toBe('spot');
    expect(puts.filter((e) => e.detail === '201' && e.t < start + 3600_000 && e.t > refused!.t).length).toBe(2);
  });
});

describe('spot-evictions', () => {
  it('30% of spot VMs evicted an hour: each evicted NodeClaim is replaced (SpotInterrupted), every pod ends Running on a Ready node, nothing leaks', async () => {
    const run = await runSimulation({ scenario: builtInScenario('spot-evictions')!, seed: 1, strategy: 'machine', keepEventLog: true });
    const r = run.result;
    expect(r.leakedNics + r.leakedVms + r.leakedDisks).toBe(0);
    expect(r.stuckNodeClaims).toBe(0);
    expect(run.invariantViolations).toEqual([]);
    const evicted = new Set(run.eventLog.entries.filter((e) => e.event === 'vm.evicted' && e.detail === 'Preempt').map((e) => e.actor));
    expect(evicted.size).toBeGreaterThanOrEqual(3);
    const interrupted = run.cluster.events.filter((e) => e.reason === 'SpotInterrupted' && e.involvedObject.kind === 'NodeClaim');
    expect(interrupted.length).toBe(evicted.size);
    const pods = [...run.cluster.pods.values()];
    expect(pods).toHaveLength(4);
    const nodes = new Map([...run.cluster.nodes.values()].map((n) => [n.metadata.name, n]));
    for (const pod of pods) {
      expect(pod.status.phase).toBe('Running');
      const node = nodes.get(pod.spec.nodeName ?? '');
      expect(node?.status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
    }
    for (const c of run.cluster.nodeClaims.values()) expect(capacityType(c.metadata.labels)).toBe('spot');
  });
});
