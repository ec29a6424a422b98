import { describe, expect, it } from 'vitest';
import { parseScenario, type ScenarioInput } from '../../src/sim/scenario.js';
import { runSimulation, SIM_EPOCH_MS, type SimulationWorld } from '../../src/sim/simulation.js';

const H200 = 'Standard_ND96isr_H200_v5';
const H200_FAMILY = 'standardNDSH200v5Family';
const GPU = { cpu: '80', memory: '1000Gi', 'nvidia.com/gpu': '8' };
const TOLERATE = [{ key: 'nvidia.com/gpu', operator: 'Exists' as const, effect: 'NoSchedule' as const }];

/**
 * Two regions, the first without H200 quota. Usages are unreadable here: these tests are about
 * the reactive path (a refusal marks the offering, the next region is planned, one canary
 * probes), which is what planning falls back to without them.
 */
function twoRegions(extra: Partial<ScenarioInput> = {}): ScenarioInput {
  return {
    name: 'two-regions',
    hours: 0.5,
    arm: { usages: { readable: false } },
    regions: [
      { location: 'eastus2', familyQuotaCores: { [H200_FAMILY]: 0 } },
      { location: 'eastus2euap', familyQuotaCores: { [H200_FAMILY]: 96 * 4 } },
    ],
    nodeClasses: [
      { name: 'eastus2', location: 'eastus2', subnetPrefix: '10.1.0.0/24' },
      { name: 'eastus2euap', location: 'eastus2euap', resourceGroup: 'azflex-nodes-euap', subnet: 'euap', subnetPrefix: '10.2.0.0/24' },
    ],
    nodePools: [
      { name: 'h200-eastus2', nodeClass: 'eastus2', instanceTypes: [H200], weight: 10, taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] },
      { name: 'h200-euap', nodeClass: 'eastus2euap', instanceTypes: [H200], weight: 5, taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] },
    ],
    workload: [{ count: 1, prefix: 'train', requests: GPU, tolerations: TOLERATE }],
    ...extra,
  };
}

/** Watches NodeClaims every simulated second: when each pool's first claim appeared and was deleted. */
function watchClaims(w: SimulationWorld, seen: Map<string, { pool: string; created: number; deleted?: number }>): void {
  const tick = (): void => {
    for (const c of w.cluster.nodeClaims.values()) {
      const entry = seen.get(c.metadata.name) ?? { pool: c.metadata.labels['karpenter.sh/nodepool']!, created: Date.parse(c.metadata.creationTimestamp) - SIM_EPOCH_MS };
      if (c.metadata.deletionTimestamp && entry.deleted === undefined) entry.deleted = Date.parse(c.metadata.deletionTimestamp) - SIM_EPOCH_MS;
      seen.set(c.metadata.name, entry);
    }
    w.clock.setTimer(1000, tick);
  };
  w.clock.setTimer(1000, tick);
}

describe('capacity hunting', () => {
  it('plans the pod in the second region within one provisioning interval of the first refusal', async () => {
    const claims = new Map<string, { pool: string; created: number; deleted?: number }>();
    let watched = false;
    const { result } = await runSimulation({
      scenario: parseScenario(twoRegions(), 'test'), seed: 3, strategy: 'machine', keepEventLog: false,
      onWorld: (w) => {
        if (watched) return;
        watched = true;
        watchClaims(w, claims);
      },
    });
    const refused = [...claims.values()].filter((c) => c.pool === 'h200-eastus2' && c.deleted !== undefined).sort((a, b) => a.deleted! - b.deleted!);
    const second = [...claims.values()].filter((c) => c.pool === 'h200-euap').sort((a, b) => a.created - b.created);
    expect(refused.length).toBeGreaterThan(0);
    expect(second.length).toBeGreaterThan(0);
    const hop = (second[0]!.created - refused[0]!.deleted!) / 1000;
    expect(hop).toBeGreaterThanOrEqual(0);
    expect(hop).toBeLessThanOrEqual(10); // provisionIntervalSeconds
    expect(result.podsRunning).toBe(1);
    expect(result.podTimeToRunningSeconds.byNodePool['h200-euap']?.count).toBe(1);
    expect(result.leakedNics + result.leakedVms + result.leakedDisks).toBe(0);
  });

  it('with usages readable, no NodeClaim is planned into the region without quota: the pod goes to the second region at once', async () => {
    const claims = new Map<string, { pool: string; created: number; deleted?: number }>();
    let watched = false;
    const { result } = await runSimulation({
      scenario: parseScenario({ ...twoRegions(), arm: {} }, 'test'), seed: 3, strategy: 'machine', keepEventLog: false,
      onWorld: (w) => {
        if (watched) return;
        watched = true;
        watchClaims(w, claims);
      },
    });
    expect([...claims.values()].filter((c) => c.pool === 'h200-eastus2')).toEqual([]);
    expect(result.createFailures).toBe(0);
    expect(result.podsRunning).toBe(1);
  });

  it('after a mark expires, probes with one canary per offering, across restarts', async () => {
    // One region with no H200 quota, 12 pods pending for 4 hours, the controller killed 12 times.
    const scenario = parseScenario({
      ...twoRegions(),
      name: 'zero-quota-burst',
      hours: 4,
      regions: [{ location: 'eastus2', familyQuotaCores: { [H200_FAMILY]: 0 } }],
      nodeClasses: [{ name: 'eastus2', location: 'eastus2' }],
      nodePools: [{ name: 'h200-eastus2', nodeClass: 'eastus2', instanceTypes: [H200], taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] }],
      workload: [{ count: 12, prefix: 'train', requests: GPU, tolerations: TOLERATE }],
      faults: { restarts: 12, restartDelaySeconds: 20 },
    }, 'test');
    const claims = new Map<string, { pool: string; created: number; deleted?: number }>();
    let watched = false;
    const { result } = await runSimulation({
      scenario, seed: 5, strategy: 'machine', keepEventLog: false,
      onWorld: (w) => {
        if (watched) return;
        watched = true;
        watchClaims(w, claims);
      },
    });
    expect(result.restarts).toBeGreaterThan(0);
    // The first pass knows nothing and tries every pod; afterwards at most one attempt per
    // hour-long mark (zero family quota: 1 h), however often the controller restarts.
    const firstHour = [...claims.values()].filter((c) => c.created < 3600_000).length;
    const later = [...claims.values()].filter((c) => c.created >= 3600_000);
    expect(firstHour).toBeGreaterThan(1);
    expect(later.length).toBeLessThanOrEqual(4);
    // Never two doomed creates in flight at once after the first burst.
    for (const c of later) {
      const overlapping = later.filter((o) => o !== c && o.created <= c.created && (o.deleted ?? Infinity) > c.created);
      expect(overlapping).toEqual([]);
    }
    expect(result.leakedNics + result.leakedVms + result.leakedDisks).toBe(0);
  });

  it('re-checks a SkuNotAvailable mark against the SKU restrictions instead of holding it 23 h', async () => {
    const scenario = parseScenario({
      ...twoRegions(),
      name: 'sku-comes-back',
      hours: 1,
      regions: [{ location: 'eastus2', familyQuotaCores: { [H200_FAMILY]: 96 * 2 }, unavailableSkus: [H200] }],
      nodeClasses: [{ name: 'eastus2', location: 'eastus2' }],
      nodePools: [{ name: 'h200-eastus2', nodeClass: 'eastus2', instanceTypes: [H200], taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] }],
      faults: { schedule: [{ at: 1200, fault: { kind: 'skuUnavailable', location: 'eastus2', sku: H200, unavailable: false } }] },
    }, 'test');
    const { result } = await runSimulation({ scenario, seed: 9, strategy: 'machine', keepEventLog: false });
    expect(result.createFailuresByCode.SkuNotAvailable ?? 0).toBeGreaterThan(0);
    expect(result.podsRunning).toBe(1);
    // Created at 0 s, the pod runs once the SKU is back at 20 min plus a VM boot (≤ 5 min), not 23 h later.
    expect(result.podTimeToRunningSeconds.max).toBeLessThan(1200 + 600);
  });
});
