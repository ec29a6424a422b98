import { describe, expect, it } from 'vitest';
import { TAG } from '../../src/azure/naming.js';
import { parseScenario, type ScenarioInput } from '../../src/sim/scenario.js';
import { runSimulation, type SimulationRun } from '../../src/sim/simulation.js';

/**
 * Two clusters share a subscription and resource group, each with its own controller, API
 * server and a copy of the workload; their controllers draw the same NodeClaim names.
 */
const SUB = '00000000-0000-0000-0000-000000000001';

function world(over: Partial<ScenarioInput> = {}): ScenarioInput {
  return {
    name: 'shared-rg',
    description: 'two clusters, one resource group, colliding NodeClaim names',
    hours: 2,
    clusterName: 'aks-a',
    regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 800, familyQuotaCores: { standardDSv5Family: 800 } }],
    nodeClasses: [{ name: 'cpu', location: 'eastus2', subscriptionID: SUB, subnetPrefix: '10.4.0.0/22' }],
    nodePools: [{ name: 'cpu', nodeClass: 'cpu', instanceTypes: ['Standard_D8s_v5'], labels: { workload: 'cpu' }, limits: { cpu: '400' }, consolidateAfter: '5m' }],
    workload: [{ count: 10, prefix: 'svc', requests: { cpu: '3', memory: '8Gi' }, nodeSelector: { workload: 'cpu' } }],
    faults: { nodeNeverJoinsRate: 0 },
    neighbour: { clusterName: 'aks-b' },
    ...over,
  };
}

function nodeClaimNames(run: SimulationRun, which: 'main' | 'neighbour'): string[] {
  return [...(which === 'main' ? run.cluster : run.neighbourCluster!).nodeClaims.keys()].sort();
}

describe('a neighbour cluster sharing the resource group', () => {
  it("both clusters' nodes come up, their NodeClaim names collide, and neither touches the other's resources: nothing leaks", async () => {
    const run = await runSimulation({ scenario: parseScenario(world(), 'shared-rg'), seed: 1, strategy: 'machine', restarts: 0 });
    expect(run.invariantViolations).toEqual([]);
    expect(run.result.leakedNics + run.result.leakedVms + run.result.leakedDisks + run.result.stuckNodeClaims).toBe(0);
    const b = run.neighbourCluster!;
    expect(run.result.podsRunning).toBeGreaterThan(0);
    expect([...b.pods.values()].filter((p) => p.spec.nodeName).length).toBe(run.result.podsRunning);
    // Names shared by both sides, and each cluster's VMs under its own (tags say whose).
    const main = nodeClaimNames(run, 'main');
    expect(nodeClaimNames(run, 'neighbour').filter((n) => main.includes(n)).length).toBeGreaterThan(0);
    const vms = run.arm.snapshot().vms;
    expect(new Set(vms.map((v) => v.tags[TAG.cluster]))).toEqual(new Set(['aks-a', 'aks-b']));
    expect(new Set(vms.map((v) => v.name)).size).toBe(vms.length);
    expect(run.cluster.events.filter((e) => e.reason === 'ResourceNameConflict')).toEqual([]);
  });

  it("beside a cluster not yet upgraded (the first version's names, no cluster in them), neither is touched by the other", async () => {
    const scenario = parseScenario(world({ neighbour: { clusterName: 'aks-b', legacyNames: true } }), 'shared-rg');
    const run = await runSimulation({ scenario, seed: 2, strategy: 'machine', restarts: 3 });
    expect(run.invariantViolations).toEqual([]);
    expect(run.result.leakedNics + run.result.leakedVms + run.result.leakedDisks + run.result.stuckNodeClaims).toBe(0);
    const names = run.arm.snapshot().vms.map((v) => `${v.tags[TAG.cluster]} ${v.name.replace(/^azflex-[0-9a-f]{6}-/, 'azflex-<hash>-')}`);
    expect(names.filter((n) => n.startsWith('aks-b ')).every((n) => !n.includes('<hash>'))).toBe(true);
    expect(names.filter((n) => n.startsWith('aks-a ')).every((n) => n.includes('<hash>'))).toBe(true);
    expect(run.result.podsPending).toBe(0);
  });
});
