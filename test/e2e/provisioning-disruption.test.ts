import { describe, expect, it } from 'vitest';
import { nodeClassHash } from '../../src/apis/nodeclass-hash.js';
import { parseScenario } from '../../src/sim/scenario.js';
import { runSimulation, SIM_EPOCH_MS, type SimulationWorld } from '../../src/sim/simulation.js';
import { ANNOTATION_NODECLASS_HASH } from '../../src/apis/well-known.js';

const MIN = 60_000;
const GPU = { cpu: '80', memory: '1000Gi', 'nvidia.com/gpu': '8' };

const scenario = parseScenario(
  {
    name: 'burst-drift-drain',
    hours: 1.5,
    regions: [{ location: 'eastus2', regionalQuotaCores: 1000, familyQuotaCores: { standardNDSH200v5Family: 96 * 8, standardDSv5Family: 400 } }],
    nodeClasses: [{ name: 'eastus2', location: 'eastus2' }],
    nodePools: [
      { name: 'h200', nodeClass: 'eastus2', instanceTypes: ['Standard_ND96isr_H200_v5'], labels: { gpu: 'h200' }, limits: { 'nvidia.com/gpu': '16' }, consolidateAfter: '1m', budgets: [{ nodes: '1' }] },
      { name: 'cpu', nodeClass: 'eastus2', instanceTypes: ['Standard_D8s_v5'], labels: { workload: 'cpu' }, limits: { cpu: '32' }, consolidateAfter: '1m', budgets: [{ nodes: '1' }] },
    ],
    workload: [
      { count: 3, prefix: 'train', requests: GPU, nodeSelector: { gpu: 'h200' } },
      { count: 8, prefix: 'web', requests: { cpu: '6', memory: '8Gi' }, nodeSelector: { workload: 'cpu' } },
    ],
    faults: { restarts: 3, restartDelaySeconds: 20 },
  },
  'test',
);

describe('provisioning and disruption through the lifecycle machines, with controller restarts', () => {
  it('a burst gets nodes within limits, a NodeClass image change drifts them one at a time, deleting the pods removes them, nothing leaks', async () => {
    let world: SimulationWorld | undefined;
    const hashesBeforeDrain: string[] = [];
    const samples: Array<{ t: number; gpuClaims: number; cpuClaims: number; deletingPerPool: Record<string, number> }> = [];
    const run = await runSimulation({
      scenario,
      seed: 11,
      strategy: 'machine',
      keepEventLog: false,
      onWorld: (w) => {
        if (world) return;
        world = w;
        const { clock, cluster } = w;
        const sample = (): void => {
          const claims = [...cluster.nodeClaims.values()];
          const live = (pool: string) => claims.filter((c) => c.metadata.labels['karpenter.sh/nodepool'] === pool && !c.metadata.deletionTimestamp).length;
          const deletingPerPool: Record<string, number> = {};
          for (const c of claims) {
            if (!c.metadata.deletionTimestamp || !c.status.providerID) continue;
            const pool = c.metadata.labels['karpenter.sh/nodepool']!;
            deletingPerPool[pool] = (deletingPerPool[pool] ?? 0) + 1;
          }
          samples.push({ t: clock.now() - SIM_EPOCH_MS, gpuClaims: live('h200'), cpuClaims: live('cpu'), deletingPerPool });
          clock.setTimer(15_000, sample);
        };
        clock.setTimer(15_000, sample);
        // 25 min: a new image: every node drifts.
        clock.setTimer(25 * MIN, () => {
          const cls = cluster.nodeClasses.get('eastus2')!;
          cluster.putNodeClass({ ...cls, spec: { ...cls.spec, imageReference: { ...cls.spec.imageReference!, version: '2026.02.01' } } });
        });
        // 59 min: which NodeClass hash do the live claims carry?
        clock.setTimer(59 * MIN, () => {
          for (const c of cluster.nodeClaims.values()) if (!c.metadata.deletionTimestamp) hashesBeforeDrain.push(c.metadata.annotations[ANNOTATION_NODECLASS_HASH] ?? '');
        });
        // 60 min: the researchers are done.
        clock.setTimer(60 * MIN, () => {
          for (const pod of [...cluster.pods.values()]) cluster.removePod(pod.metadata.namespace, pod.metadata.name);
        });
      },
    });
    const w = world!;
    // Limits: never more than 2 H200 nodes (16 GPUs) or 4 D8s (32 cores), counting claims in flight.
    const beforeDrift = samples.filter((s) => s.t < 25 * MIN);
    expect(Math.max(...beforeDrift.map((s) => s.gpuClaims))).toBe(2);
    expect(Math.max(...beforeDrift.map((s) => s.cpuClaims))).toBe(4);
    // Budget nodes: "1": never two launched nodes of one pool being disrupted at once.
    for (const s of samples) for (const n of Object.values(s.deletingPerPool)) expect(n).toBeLessThanOrEqual(1);
    // Drift replaced the nodes: just before the pods went away, every claim carried the new hash.
    const newHash = nodeClassHash(w.cluster.nodeClasses.get('eastus2')!);
    expect(hashesBeforeDrain.length).toBe(6);
    expect(new Set(hashesBeforeDrain)).toEqual(new Set([newHash]));
    expect(run.result.nodeClaimsLaunched).toBeGreaterThanOrEqual(12);
    // After the pods are gone: every node removed, nothing leaked, restarts happened.
    expect(w.cluster.nodeClaims.size).toBe(0);
    expect(run.result.restarts).toBe(3);
    expect(run.invariantViolations).toEqual([]);
  });
});
