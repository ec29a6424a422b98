import { describe, expect, it } from 'vitest';
import { builtInScenario } from '../../src/sim/scenarios.js';
import { runSimulation } from '../../src/sim/simulation.js';

/**
 * The reserved-h200 scenario of `azflex simulate`: three regions for H200 (the first without
 * quota, the second with a capacity reservation group of 2, the third with on-demand quota).
 * Five GPU pods get the 2 reserved nodes, and the 3 others on-demand nodes in the third
 * region, with no create refused for quota.
 */
const labelsOf = (o: { metadata: { labels: Record<string, string> } }) => o.metadata.labels;

describe('reserved-h200', () => {
  it.each([[1, 0], [2, 5]])('seed %i, %i restarts: 2 reserved nodes in westus3 (in the group), 3 on-demand in swedencentral, 0 creates refused for quota', async (seed, restarts) => {
    const scenario = builtInScenario('reserved-h200')!;
    const run = await runSimulation({ scenario: { ...scenario, faults: { ...scenario.faults, restarts } }, seed, strategy: 'machine', keepEventLog: true });
    const r = run.result;
    expect(r.createsRefusedForQuota).toBe(0);
    expect(r.podsRunning).toBe(5);
    expect(r.leakedNics + r.leakedVms + r.leakedDisks).toBe(0);
    expect(r.stuckNodeClaims).toBe(0);
    expect(run.invariantViolations).toEqual([]);
    const claims = [...run.cluster.nodeClaims.values()].map(labelsOf);
    const reserved = claims.filter((l) => l['karpenter.sh/capacity-type'] === 'reserved');
    expect(reserved).toHaveLength(2);
    for (const l of reserved) {
      expect(l['topology.kubernetes.io/region']).toBe('westus3');
      expect(l['karpenter.azure.com/capacity-reservation-id']).toBe('h200-crg.h200');
    }
    const onDemand = claims.filter((l) => l['karpenter.sh/capacity-type'] === 'on-demand');
    expect(onDemand.map((l) => l['topology.kubernetes.io/region'])).toEqual(['swedencentral', 'swedencentral', 'swedencentral']);
    expect(claims.filter((l) => l['karpenter.sh/capacity-type'] === 'reserved' || l['karpenter.sh/capacity-type'] === 'on-demand')).toHaveLength(5);
    // The Nodes carry the same labels, and ARM holds both VMs in the reservation.
    const nodes = [...run.cluster.nodes.values()].map(labelsOf).filter((l) => l['karpenter.sh/capacity-type'] === 'reserved');
    expect(nodes.map((l) => l['karpenter.azure.com/capacity-reservation-id'])).toEqual(['h200-crg.h200', 'h200-crg.h200']);
    const group = run.arm.capacityReservationGroupGet({ subscriptionId: scenario.regions[1]!.subscriptionId, resourceGroup: 'azflex-reservations', name: 'h200-crg' });
    expect(group?.reservations[0]?.allocatedVmIds).toHaveLength(2);
  });
});
