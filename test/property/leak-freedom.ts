import fc from 'fast-check';
import { parseScenario } from '../../src/sim/scenario.js';
import { runSimulation } from '../../src/sim/simulation.js';
import { generatedCase, reproduction } from './generated-scenario.js';

/**
 * The leak-freedom property, run by two test files with different fast-check seeds so the
 * 1,000 generated worlds spread over both cores. AZFLEX_PROPERTY_RUNS scales each half.
 */
export async function assertLeakFreedom(defaultRuns: number, seed: number): Promise<void> {
  const numRuns = Number(process.env.AZFLEX_PROPERTY_RUNS ?? defaultRuns);
  await fc.assert(
    fc.asyncProperty(generatedCase, async (c) => {
      const run = await runSimulation({ scenario: parseScenario(c.scenario, 'generated'), seed: c.seed, strategy: 'machine' });
      const deletesWhileAttached = run.eventLog.entries.filter((e) => e.kind === 'world' && e.event === 'nic.delete' && e.detail?.includes('NicInUse'));
      const problems = [...run.invariantViolations, ...deletesWhileAttached.map((e) => `NIC delete attempted while attached: ${e.actor}`)];
      if (problems.length > 0) throw new Error(`${problems.slice(0, 5).join('; ')}\n${reproduction(c)}`);
    }),
    { numRuns, seed: Number(process.env.AZFLEX_PROPERTY_SEED ?? seed), endOnFailure: true },
  );
}
