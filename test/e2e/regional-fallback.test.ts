import { describe, expect, it } from 'vitest';
import { parseScenario, type ScenarioInput } from '../../src/sim/scenario.js';
import { runSimulation, SIM_EPOCH_MS, type SimulationWorld } from '../../src/sim/simulation.js';
import { LABEL_PLACEMENT_SCOPE, LABEL_ZONE, PLACEMENT_SCOPE_REGIONAL } from '../../src/apis/well-known.js';

const H200 = 'Standard_ND96isr_H200_v5';
const H200_FAMILY = 'standardNDSH200v5Family';
const GPU = { cpu: '80', memory: '1000Gi', 'nvidia.com/gpu': '8' };
const TOLERATE = [{ key: 'nvidia.com/gpu', operator: 'Exists' as const, effect: 'NoSchedule' as const }];
const TAINTS = [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' as const }];

/**
 * Zonal→regional fallback: eastus2 fails every zonal H200 allocation (each zone is marked in
 * turn), while the region still has capacity for a VM without a zone; a second region
 * (preferred less) has quota. A zone-agnostic pod gets a regional VM in eastus2 before any
 * create goes to the second region.
 */
function world(workload: ScenarioInput['workload']): ScenarioInput {
  return {
    name: 'zonal-failure-everywhere',
    hours: 1,
    regions: [
      { location: 'eastus2', familyQuotaCores: { [H200_FAMILY]: 96 * 4 }, regionalQuotaCores: 4000, zonalAllocationFailureRate: 1 },
      { location: 'eastus2euap', familyQuotaCores: { [H200_FAMILY]: 96 * 4 }, regionalQuotaCores: 4000 },
    ],
    nodeClasses: [
      { name: 'eastus2', location: 'eastus2', subnetPrefix: '10.1.0.0/24' },
      { name: 'eastus2euap', location: 'eastus2euap', resourceGroup: 'azflex-nodes-euap', subnet: 'euap', subnetPrefix: '10.2.0.0/24' },
    ],
    nodePools: [
      { name: 'h200-eastus2', nodeClass: 'eastus2', instanceTypes: [H200], weight: 10, taints: TAINTS },
      { name: 'h200-euap', nodeClass: 'eastus2euap', instanceTypes: [H200], weight: 5, taints: TAINTS },
    ],
    workload,
  };
}

interface SeenVm { name: string; location: string; zone?: string; at: number; state: string }

/** Every VM the fake ARM ever held, with its first-seen time and its last state. */
function watchVms(w: SimulationWorld, seen: Map<string, SeenVm>): void {
  const tick = (): void => {
    for (const vm of w.arm.currentVms()) {
      const prior = seen.get(vm.name);
      seen.set(vm.name, { name: vm.name, location: vm.location, ...(vm.zone ? { zone: vm.zone } : {}), at: prior?.at ?? w.clock.now() - SIM_EPOCH_MS, state: vm.provisioningState });
    }
    w.clock.setTimer(1000, tick);
  };
  w.clock.setTimer(1000, tick);
}

async function run(workload: ScenarioInput['workload']) {
  const vms = new Map<string, SeenVm>();
  let nodes: Array<Record<string, string>> = [];
  let watched = false;
  const { result } = await runSimulation({
    scenario: parseScenario(world(workload), 'test'), seed: 4, strategy: 'machine', keepEventLog: false,
    onWorld: (w) => {
      if (!watched) watchVms(w, vms);
      watched = true;
      w.clock.setTimer(50 * 60_000, () => {
        nodes = [...w.cluster.nodes.values()].map((n) => n.metadata.labels);
      });
    },
  });
  return { result, vms: [...vms.values()].sort((a, b) => a.at - b.at), nodes };
}

describe('zonal→regional fallback', () => {
  it('a zone-agnostic GPU pod gets a regional VM in the first region once every zone failed, before any create goes to the next region', async () => {
    const { result, vms, nodes } = await run([{ count: 1, prefix: 'train', requests: GPU, tolerations: TOLERATE }]);
    const zonal = vms.filter((v) => v.location === 'eastus2' && v.zone !== undefined);
    const regional = vms.filter((v) => v.location === 'eastus2' && v.zone === undefined);
    expect(new Set(zonal.map((v) => v.zone))).toEqual(new Set(['1', '2', '3']));
    expect(regional.length).toBe(1);
    expect(vms.filter((v) => v.location === 'eastus2euap')).toEqual([]);
    expect(regional[0]!.at).toBeGreaterThanOrEqual(Math.max(...zonal.map((v) => v.at)));
    expect(result.podsRunning).toBe(1);
    const node = nodes.find((l) => l['karpenter.sh/nodepool'] === 'h200-eastus2');
    expect([node?.[LABEL_PLACEMENT_SCOPE], node?.[LABEL_ZONE]]).toEqual([PLACEMENT_SCOPE_REGIONAL, undefined]);
    expect(result.leakedNics + result.leakedVms + result.leakedDisks).toBe(0);
  });

  it('a pod that requires a zone is not placed regionally: it goes to the next region', async () => {
    const { result, vms } = await run([{ count: 1, prefix: 'train', requests: GPU, tolerations: TOLERATE, nodeSelector: { [LABEL_ZONE]: 'eastus2-1' } }]);
    expect(vms.filter((v) => v.location === 'eastus2' && v.zone === undefined)).toEqual([]);
    expect(result.podsRunning).toBe(0);
  });
});
