import fc from 'fast-check';
import { parseScenario } from '../../src/sim/scenario.js';
import { leakSummary, runSimulation } from '../../src/sim/simulation.js';
import { generatedCase, reproduction } from './generated-scenario.js';

/**
 * The leak-freedom property, run by two test files so the 1,000 generated worlds spread over
 * both cores. AZFLEX_PROPERTY_RUNS scales each half; AZFLEX_PROPERTY_SEED replaces the base
 * seed, and each half mixes its own index into it, so the two halves always explore
 * different worlds.
 */
export async function assertLeakFreedom(defaultRuns: number, defaultSeed: number, half: 0 | 1): Promise<void> {
  const numRuns = Number(process.env.AZFLEX_PROPERTY_RUNS ?? defaultRuns);
  const base = Number(process.env.AZFLEX_PROPERTY_SEED ?? defaultSeed);
  const seed = half === 0 ? base : (Math.imul(base ^ 0x5bd1e995, 0x9e3779b1) >>> 0) | 0;
  await fc.assert(
    fc.asyncProperty(generatedCase, async (c) => {
      const run = await runSimulation({ scenario: parseScenario(c.scenario, 'generated'), seed: c.seed, strategy: 'machine', keepEventLog: true });
      const deletesWhileAttached = run.eventLog.entries.filter((e) => e.kind === 'world' && e.event === 'nic.delete' && e.detail?.includes('NicInUse'));
      const leaks = leakSummary(run.result);
      const problems = [
        ...(leaks ? [`--assert-no-leaks refuses: ${leaks}`] : []),
        ...run.invariantViolations,
        ...deletesWhileAttached.map((e) => `NIC delete attempted while attached: ${e.actor}`),
      ];
      if (problems.length > 0) throw new Error(`${problems.slice(0, 5).join('; ')}\n${reproduction(c)}`);
    }),
    { numRuns, seed, endOnFailure: true },
  );
}
