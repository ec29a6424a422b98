import { describe, expect, it } from 'vitest';
import { parseScenario, type ScenarioInput } from '../../src/sim/scenario.js';
import { runSimulation, SIM_EPOCH_MS, type SimulationWorld } from '../../src/sim/simulation.js';

const D8 = 'Standard_D8s_v5';
const BREAK = 1800;

/** Static pools of 10 D8s nodes each (no pods needed to hold them), and nodes turning unhealthy at 30 min. */
function world(pools: string[], unhealthy: NonNullable<ScenarioInput['faults']>['unhealthyNodes']): ScenarioInput {
  return {
    name: 'node-repair',
    hours: 2,
    regions: [{ location: 'eastus2', regionalQuotaCores: 1000, familyQuotaCores: { standardDSv5Family: 1000 } }],
    nodeClasses: [{ name: 'eastus2', location: 'eastus2', subnetPrefix: '10.1.0.0/24' }],
    nodePools: pools.map((name) => ({ name, nodeClass: 'eastus2', instanceTypes: [D8], replicas: 10, labels: { pool: name } })),
    workload: [{ count: 1, prefix: 'web', requests: { cpu: '1', memory: '1Gi' } }],
    faults: { nodeNeverJoinsRate: 0, unhealthyNodes: unhealthy },
  };
}

interface Seen {
  events: SimulationWorld['cluster']['events'];
  /** NodeClaim name → when its deletion started (ms from the start). */
  deleted: Map<string, number>;
  /** Node name → when it first reported Ready=False. */
  notReady: Map<string, { pool: string; at: number; claim: string }>;
  readyAtEnd: Record<string, number>;
}

async function run(scenario: ScenarioInput, restarts = 0): Promise<{ seen: Seen; leaks: number }> {
  const seen: Seen = { events: [], deleted: new Map(), notReady: new Map(), readyAtEnd: {} };
  let world: SimulationWorld | undefined;
  const { result } = await runSimulation({
    scenario: parseScenario(scenario, 'test'), seed: 4, strategy: 'machine', keepEventLog: false, restarts,
    onWorld: (w) => {
      if (world) return;
      world = w;
      const tick = (): void => {
        const at = w.clock.now() - SIM_EPOCH_MS;
        for (const c of w.cluster.nodeClaims.values()) if (c.metadata.deletionTimestamp && !seen.deleted.has(c.metadata.name)) seen.deleted.set(c.metadata.name, at);
        for (const n of w.cluster.nodes.values()) {
          if (seen.notReady.has(n.metadata.name) || !n.status.conditions.some((c) => c.type === 'Ready' && c.status === 'False')) continue;
          const claim = [...w.cluster.nodeClaims.values()].find((c) => c.status.nodeName === n.metadata.name)?.metadata.name ?? '';
          seen.notReady.set(n.metadata.name, { pool: n.metadata.labels['karpenter.sh/nodepool']!, at, claim });
        }
        w.clock.setTimer(5000, tick);
      };
      w.clock.setTimer(5000, tick);
    },
  });
  seen.events = world!.cluster.events;
  for (const n of world!.cluster.nodes.values()) {
    const pool = n.metadata.labels['karpenter.sh/nodepool']!;
    if (n.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True')) seen.readyAtEnd[pool] = (seen.readyAtEnd[pool] ?? 0) + 1;
  }
  return { seen, leaks: result.leakedNics + result.leakedVms + result.leakedDisks };
}

describe('node repair in the simulated world', () => {
  it('replaces the 10% of nodes that turn NotReady once the 10 minute toleration has passed', async () => {
    const { seen, leaks } = await run(world(['a', 'b'], [{ at: BREAK, fraction: 0.1 }]));
    const broken = [...seen.notReady.values()];
    expect(broken).toHaveLength(2);
    for (const b of broken) {
      const deletedAt = seen.deleted.get(b.claim);
      expect(deletedAt).toBeDefined();
      const after = (deletedAt! - b.at) / 1000;
      // The toleration, then at most a disruption interval (30 s) and the 5 s sampling.
      expect(after).toBeGreaterThanOrEqual(600 - 5);
      expect(after).toBeLessThanOrEqual(600 + 30 + 10);
    }
    expect(seen.events.filter((e) => e.reason === 'DisruptionTerminating' && e.message.includes('Unhealthy'))).toHaveLength(2);
    expect(seen.events.some((e) => e.reason === 'NodeRepairBlocked')).toBe(false);
    expect(seen.readyAtEnd).toEqual({ a: 10, b: 10 });
    expect(leaks).toBe(0);
  }, 300_000);

  it('repairs none of a NodePool 30% NotReady, with the breaker in a NodePool Event; the other pool is repaired as usual', async () => {
    const { seen, leaks } = await run(world(['a', 'b'], [{ at: BREAK, nodePool: 'a', fraction: 0.3 }, { at: BREAK, nodePool: 'b', fraction: 0.1 }]), 5);
    const inA = [...seen.notReady.values()].filter((b) => b.pool === 'a');
    const inB = [...seen.notReady.values()].filter((b) => b.pool === 'b');
    expect(inA).toHaveLength(3);
    for (const b of inA) expect(seen.deleted.has(b.claim)).toBe(false);
    expect(inB).toHaveLength(1);
    expect(seen.deleted.has(inB[0]!.claim)).toBe(true);
    const blocked = seen.events.filter((e) => e.reason === 'NodeRepairBlocked');
    expect(blocked.length).toBeGreaterThanOrEqual(1);
    expect(blocked.every((e) => e.involvedObject.kind === 'NodePool' && e.involvedObject.name === 'a')).toBe(true);
    expect(blocked[0]!.message).toContain('(3 of 10)');
    expect(seen.readyAtEnd).toEqual({ a: 7, b: 10 });
    expect(leaks).toBe(0);
  }, 300_000);

  it('repairs a node-problem-detector GPU condition only when a policy names it', async () => {
    const scenario = world(['a'], [{ at: BREAK, fraction: 0.1, condition: { type: 'GpuXidError', status: 'True' } }]);
    const { seen } = await run(scenario);
    // The default policies are the Azure provider's (Ready only): the node is left alone.
    expect([...seen.deleted.keys()]).toEqual([]);
  }, 300_000);
});
