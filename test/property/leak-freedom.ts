import fc from 'fast-check';
import { coverageApplies, propertyParams } from './params.js';
import { parseScenario } from '../../src/sim/scenario.js';
import { runSweepJob, type SweepJob } from '../../src/sim/sweep/job.js';
import { isOk, runSweep, type SweepOutcome } from '../../src/sim/sweep/sweep.js';
import { defaultWorkers } from '../../src/sim/sweep/pool-size.js';
import { generatedCase, reproduction, type GeneratedCase } from './generated-scenario.js';

/**
 * The leak-freedom property, run through the seed sweep on every core. vitest runs one test
 * file at a time on CI's 2 cores (its default is cores - 1 workers), so a property that
 * simulated inside the test process left a core idle for most of the suite's longest file;
 * the sweep's worker threads use both and take the next world as each finishes.
 *
 * fast-check still draws the worlds (`fc.sample` gives exactly the values `fc.assert` would
 * test with that seed, in the same order), and still shrinks: the sweep itself cannot shrink,
 * so for the first failing world fast-check replays it by its path in this thread and
 * shrinks it for up to SHRINK_BUDGET_MS. The failure message names every failing world's
 * seed and the command that replays it, then the shrunk world's.
 *
 * AZFLEX_PROPERTY_RUNS sets the number of worlds; AZFLEX_PROPERTY_SEED the fast-check seed
 * (test/fast-check-setup.ts).
 */
export async function assertLeakFreedom(defaultWorlds: number, defaultSeed: number, worldsOf: fc.Arbitrary<GeneratedCase> = generatedCase, named = 'generatedCase'): Promise<void> {
  const { numRuns: worlds, seed } = propertyParams({ numRuns: defaultWorlds, seed: defaultSeed });
  const cases = fc.sample(worldsOf, { numRuns: worlds, seed });
  assertDrawn(cases, coverageApplies({ numRuns: worlds }, { numRuns: defaultWorlds }));
  const outcomes = await runSweep(cases.map((c, i) => jobOf(c, `world ${i} of fc.sample(${named}, { seed: ${seed} })`)), { workers: defaultWorkers() });
  const failing = outcomes.flatMap((o, i) => (isOk(o) ? [] : [{ i, o }]));
  if (failing.length === 0) return;
  const lines = [`${failing.length} of ${worlds} generated worlds failed (fast-check seed ${seed}):`];
  for (const { i, o } of failing.slice(0, 10)) lines.push(`- world ${i}, seed ${o.seed}: ${whatFailed(o)}`, `  ${reproduction(cases[i]!)}`);
  lines.push(...(await shrink(seed, failing[0]!.i, worldsOf)));
  throw new Error(lines.join('\n'));
}

/** The worlds include what the property is meant to reach: static pools and unhealthy nodes among them. */
function assertDrawn(cases: GeneratedCase[], applies: boolean): void {
  const drawn = {
    staticPools: cases.filter((c) => c.scenario.nodePools?.some((p) => p.replicas !== undefined)).length,
    unhealthyNodes: cases.filter((c) => (c.scenario.faults?.unhealthyNodes?.length ?? 0) > 0).length,
  };
  if (applies && Object.values(drawn).some((n) => n === 0)) throw new Error(`generated worlds miss a feature: ${JSON.stringify(drawn)}`);
}

/** One sweep job per generated world (the sweep's own check: leaks, stuck NodeClaims, invariants, deletes of attached NICs). */
function jobOf(c: GeneratedCase, reproduce: string): SweepJob {
  return { scenario: parseScenario(c.scenario, 'generated'), seed: c.seed, strategy: 'machine', reproduce };
}

function whatFailed(o: SweepOutcome): string {
  return o.error !== undefined ? `threw: ${o.error.split('\n')[0]}` : o.problems.slice(0, 5).join('; ');
}

/** Each shrink step is a whole simulation: bounded, so a red run still ends in minutes. */
const SHRINK_BUDGET_MS = 90_000;

async function shrink(seed: number, index: number, worldsOf: fc.Arbitrary<GeneratedCase>): Promise<string[]> {
  const details = await fc.check(
    fc.asyncProperty(worldsOf, async (c) => {
      const o = await runSweepJob(jobOf(c, `shrinking world ${index}`));
      if (!isOk(o)) throw new Error(whatFailed(o));
    }),
    { seed, path: String(index), interruptAfterTimeLimit: SHRINK_BUDGET_MS },
  );
  if (!details.failed || !details.counterexample) return [`world ${index} passed when replayed in this thread: it failed only in a sweep worker (see its error above)`];
  const [shrunk] = details.counterexample;
  return [
    `shrunk by fast-check (${details.numShrinks} steps${details.interrupted ? `, stopped after ${SHRINK_BUDGET_MS / 1000} s` : ''}; path ${details.counterexamplePath}): seed ${shrunk.seed}: ${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}`,
    `  ${reproduction(shrunk)}`,
  ];
}
