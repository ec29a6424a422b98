import fc from 'fast-check';
import { propertyParams } from './params.js';
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/sim/scenario.js';
import { runSweep, type SweepJob } from '../../src/sim/sweep/sweep.js';
import { defaultWorkers } from '../../src/sim/sweep/pool-size.js';
import { generatedCase, reproduction } from './generated-scenario.js';

describe('determinism', () => {
  // Through the seed sweep on every core: each world runs twice, half a sweep apart, so the
  // two runs are usually on different worker threads; their event logs must hash the same.
  // A mismatch is no counterexample to shrink (the same input gave two answers), so the
  // message names the world's seed and command instead.
  it('the same seed gives a byte-identical event log, crashes included, on any worker thread', async () => {
    const { numRuns: worlds, seed } = propertyParams({ numRuns: 40, seed: 7 });
    const cases = fc.sample(generatedCase, { numRuns: worlds, seed });
    const jobs: SweepJob[] = cases.map((c, i) => ({ scenario: parseScenario(c.scenario, 'generated'), seed: c.seed, strategy: 'machine', reproduce: `world ${i} of fc.sample(generatedCase, { seed: ${seed} })` }));
    const outcomes = await runSweep([...jobs, ...jobs], { workers: defaultWorkers() });
    const differing = cases.flatMap((c, i) => {
      const [a, b] = [outcomes[i]!, outcomes[worlds + i]!];
      const same = a.result !== undefined && a.result.eventLogSha256 === b.result?.eventLogSha256;
      return same ? [] : [`world ${i}, seed ${c.seed}: ${a.error ?? a.result?.eventLogSha256} vs ${b.error ?? b.result?.eventLogSha256}\n  ${reproduction(c)}`];
    });
    expect(differing).toEqual([]);
    expect(outcomes.every((o) => (o.result?.transitions ?? 0) > 0)).toBe(true);
  }, 600_000);
});
