import { describe, expect, it } from 'vitest';
import { runSimulation } from '../../src/sim/simulation.js';
import { builtInScenario } from '../../src/sim/scenarios.js';
import { placementByZone, placementOf } from '../../src/sim/placement.js';
import { placementTable } from '../../src/viz/placement-table.js';

describe('placementOf', () => {
  it('names every node with its NodePool, size, capacity type, region and zone, and every pod\'s node or why it is pending', async () => {
    const run = await runSimulation({ scenario: builtInScenario('quota-storm')!, seed: 1, strategy: 'machine', hours: 1, keepEventLog: false });
    const placement = placementOf(run.cluster);
    expect(placement.nodes.length).toBeGreaterThan(0);
    for (const n of placement.nodes) {
      expect(n).toMatchObject({ nodePool: 'h200', instanceType: 'Standard_ND96isr_H200_v5', capacityType: 'on-demand', region: expect.any(String), registered: true });
      expect(n.zone).toMatch(new RegExp(`^${n.region}-[123]$`));
      expect(run.cluster.nodes.get(n.name)?.metadata.labels['karpenter.sh/nodepool']).toBe('h200');
    }
    expect(placement.pods).toHaveLength(run.cluster.pods.size);
    const names = new Set(placement.nodes.map((n) => n.name));
    for (const p of placement.pods) {
      if (p.node !== undefined) expect(names.has(p.node), p.node).toBe(true);
      else expect(p.pending).toMatch(/^Failed to schedule pod, NodePool h200: /);
    }
    expect(placement.pods.filter((p) => p.node).length).toBe(run.result.podsRunning);
    expect(placement.pods.filter((p) => p.pending).length).toBe(run.result.podsPending);

    // Reporting only: the same seed gives the same placement and the same event log.
    const again = await runSimulation({ scenario: builtInScenario('quota-storm')!, seed: 1, strategy: 'machine', hours: 1, keepEventLog: false });
    expect(JSON.stringify(placementOf(again.cluster))).toBe(JSON.stringify(placement));
    expect(again.result.eventLogSha256).toBe(run.result.eventLogSha256);

    const byZone = placementByZone(placement);
    expect(byZone.zones.reduce((n, z) => n + z.nodes, 0)).toBe(placement.nodes.length);
    expect(byZone.zones.reduce((n, z) => n + z.pods, 0) + byZone.pending).toBe(placement.pods.length);
    const html = placementTable(byZone);
    for (const z of byZone.zones) expect(html).toContain(`<td>${z.zone}</td>`);
    expect(html).toContain('Standard_ND96isr_H200_v5');
  });
});
