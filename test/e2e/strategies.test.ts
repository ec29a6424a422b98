import { describe, expect, it } from 'vitest';
import { builtInScenario } from '../../src/sim/scenarios.js';
import { runSimulation } from '../../src/sim/simulation.js';
import { sdkArmAdapter } from '../../src/sim/sdk-route.js';
import type { StrategyName } from '../../src/runtime/deps.js';

const scenario = builtInScenario('quota-blind')!;
/** The same offerings-cache setting for every strategy (off: many failures to clean up after). */
const run = (strategy: StrategyName, restarts: number) =>
  runSimulation({ scenario, seed: 3, strategy, hours: 2, restarts, keepEventLog: false, offeringsCache: false });

describe('quota-blind (quota-storm, quota learnt from refusals): the three strategies side by side', () => {
  it('without restarts: naive leaks a NIC per failure, delayed and machine leak nothing', async () => {
    const [naive, delayed, machine] = await Promise.all([run('naive', 0), run('delayed', 0), run('machine', 0)]);
    expect(naive.result.leakedNics).toBe(naive.result.createFailures);
    expect(naive.result.leakedNics).toBeGreaterThan(100);
    expect(delayed.result.leakedNics).toBe(0);
    expect(machine.result.leakedNics + machine.result.leakedVms + machine.result.leakedDisks).toBe(0);
    expect(machine.invariantViolations).toEqual([]);
  });

  it('with restarts: the detached timer is lost, the machine strategy still leaks nothing', async () => {
    const [delayed, machine] = await Promise.all([run('delayed', 6), run('machine', 6)]);
    expect(delayed.result.restarts).toBe(6);
    expect(delayed.result.leakedNics).toBeGreaterThan(0);
    expect(machine.result.restarts).toBe(6);
    expect(machine.invariantViolations).toEqual([]);
  });

  it('the machine strategy spends exactly 3 ARM writes per failed create and 2 per node that comes up', async () => {
    const { result } = await run('machine', 0);
    expect(result.armWrites).toBe(3 * result.createFailures + 2 * result.nodeClaimsLaunched);
    expect(result.timeToReapSeconds.max).toBeLessThanOrEqual(185);
  });

  it('the offerings cache keeps create attempts for a SKU without quota under 6 per hour', async () => {
    const [cached, uncached] = await Promise.all([
      runSimulation({ scenario, seed: 3, strategy: 'machine', hours: 4, keepEventLog: false }),
      runSimulation({ scenario, seed: 3, strategy: 'machine', hours: 4, keepEventLog: false, offeringsCache: false }),
    ]);
    expect(cached.result.createFailures / 4).toBeLessThanOrEqual(6);
    expect(uncached.result.createFailures).toBeGreaterThan(10 * cached.result.createFailures);
  });
});

describe('--arm sdk: the production SDK adapter over the simulator’s REST face', () => {
  it('gives the same leak results as the direct fake for every strategy', async () => {
    for (const strategy of ['naive', 'machine'] as const) {
      const [direct, sdk] = await Promise.all([
        runSimulation({ scenario, seed: 5, strategy, hours: 0.5, keepEventLog: false }),
        runSimulation({ scenario, seed: 5, strategy, hours: 0.5, keepEventLog: false, armAdapter: sdkArmAdapter }),
      ]);
      expect(sdk.result.leakedNics === 0).toBe(direct.result.leakedNics === 0);
      expect(sdk.result.nodeClaimsLaunched).toBe(direct.result.nodeClaimsLaunched);
      if (strategy === 'machine') expect(sdk.invariantViolations).toEqual([]);
    }
  });
});
