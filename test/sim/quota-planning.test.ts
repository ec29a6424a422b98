import { describe, expect, it } from 'vitest';
import { builtInScenarioInput } from '../../src/sim/scenarios.js';
import { parseScenario, type ScenarioInput } from '../../src/sim/scenario.js';
import { runSimulation } from '../../src/sim/simulation.js';

/**
 * Quota-aware planning in the simulator: the controller reads Compute usages and plans no
 * create that quota would refuse. Each world is quota-storm (H200 family quota for 2 nodes,
 * 3 GPU pods) with one thing changed.
 */
const H200_FAMILY = 'standardNDSH200v5Family';

function storm(change: (s: ScenarioInput) => void = () => {}): ScenarioInput {
  const s = builtInScenarioInput('quota-storm')!;
  change(s);
  return s;
}

describe('quota-aware planning', () => {
  it('quota-storm with usages readable: no create is refused for quota, the 2 pods that fit run, and usages are read', async () => {
    const run = await runSimulation({ scenario: parseScenario(storm(), 'quota-storm'), seed: 1, strategy: 'machine', keepEventLog: true });
    const r = run.result;
    expect(r.createsRefusedForQuota).toBe(0);
    expect(r.podsRunning).toBe(2);
    expect(r.leakedNics + r.leakedVms + r.leakedDisks).toBe(0);
    expect(r.armCalls['usage.list']).toBeDefined();
    // The pod that stays pending is told which quota ruled its offering out.
    const quota = run.cluster.events.filter((e) => e.reason === 'InsufficientQuota');
    expect(quota.length).toBeGreaterThan(0);
    expect(quota[0]!.message).toMatch(new RegExp(`${H200_FAMILY} quota in eastus2 .*limit 192, usage 192 .*request 96`));
  });

  it('quota rising mid-run: the new capacity is used within one read interval (5 min)', async () => {
    const raiseAt = 2 * 3600;
    const scenario = parseScenario(storm((s) => {
      s.hours = 3;
      s.faults = { schedule: [{ at: raiseAt, fault: { kind: 'quota', location: 'eastus2', family: H200_FAMILY, cores: 288 } }] };
    }), 'quota-rises');
    const run = await runSimulation({ scenario, seed: 2, strategy: 'machine', keepEventLog: true });
    expect(run.result.createsRefusedForQuota).toBe(0);
    expect(run.result.podsRunning).toBe(3);
    // The third VM's PUT goes out within one read interval (plus a provisioning pass) of the raise.
    const start = run.eventLog.entries[0]!.t;
    const puts = run.eventLog.entries.filter((e) => e.event === 'vm.put' && e.detail === '201');
    const third = puts[2];
    expect(third).toBeDefined();
    expect((third!.t - start) / 1000 - raiseAt).toBeLessThanOrEqual(5 * 60 + 10);
  });

  it('usages unreadable: planning falls back to the reactive path (refusals, marks, one canary) and makes no more doomed creates than without the reader', async () => {
    const unreadable = parseScenario(storm((s) => {
      s.arm = { usages: { readable: false } };
    }), 'usages-unreadable');
    const run = await runSimulation({ scenario: unreadable, seed: 1, strategy: 'machine' });
    expect(run.result.podsRunning).toBe(2);
    expect(run.result.createsRefusedForQuota).toBeGreaterThan(0);
    // Today's figure for quota-storm seed 1 (no usages read): 16 doomed creates in 8 h.
    expect(run.result.createsRefusedForQuota).toBeLessThanOrEqual(16);
    expect(run.result.leakedNics + run.result.leakedVms + run.result.leakedDisks).toBe(0);
  });

  it.each([1, 2, 3])('seed %i: own VMs deleted while a pod waits for quota: usages are read again and its VM is created within 45 s, not at the next 5-min read', async (seed) => {
    // Two pods fill the family quota and end after 30 min; their nodes are consolidated away.
    // A third pod of another NodePool (it cannot use their nodes) waits for the cores they free.
    const scenario = parseScenario(storm((s) => {
      s.hours = 2;
      const pool = s.nodePools[0]!;
      s.nodePools = [pool, { ...pool, name: 'h200-other', labels: { gpu: 'other' } }];
      s.workload = [{ ...s.workload[0]!, count: 2, lifetimeSeconds: 1800 }, { ...s.workload[0]!, count: 1, prefix: 'late', at: 600, nodeSelector: { gpu: 'other' } }];
    }), 'quota-freed');
    const run = await runSimulation({ scenario, seed, strategy: 'machine', keepEventLog: true });
    expect(run.result.createsRefusedForQuota).toBe(0);
    const log = run.eventLog.entries;
    const freed = log.find((e) => /^nodeclaim\/h200-[a-z0-9]{5}$/.test(e.actor) && e.to === 'deleted')!.t;
    const put = log.find((e) => e.actor.includes('h200-other') && e.event === 'vm.put')!.t;
    // The debounce (30 s after the last read) and a provisioning pass (10 s) at most.
    expect(put - freed).toBeGreaterThan(0);
    expect(put - freed).toBeLessThanOrEqual(45_000);
    expect(run.result.podTimeToRunningSeconds.byNodePool['h200-other']?.count).toBe(1);
  });
});
