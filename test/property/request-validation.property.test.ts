import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/sim/scenario.js';
import { runSweep } from '../../src/sim/sweep/sweep.js';
import { defaultWorkers } from '../../src/sim/sweep/pool-size.js';
import { generatedCase, reproduction } from './generated-scenario.js';
import { propertyParams } from './params.js';

describe("the controller's own ARM requests pass the fake ARM's request validation", () => {
  it('over generated worlds run through the SDK adapter and the REST face, no NIC or VM PUT body is refused as invalid (40 worlds, on every core)', async () => {
    const { numRuns, seed } = propertyParams({ numRuns: 40, seed: 20261128 });
    const cases = fc.sample(generatedCase, { numRuns, seed });
    const outcomes = await runSweep(
      cases.map((c, i) => ({ scenario: parseScenario(c.scenario, 'generated'), seed: c.seed, strategy: 'machine' as const, arm: 'sdk' as const, reproduce: `world ${i}: ${reproduction(c)} --arm sdk` })),
      { workers: defaultWorkers() },
    );
    const refused = outcomes.flatMap((o) => [...(o.error !== undefined ? [`${o.reproduce}: threw ${o.error.split('\n')[0]}`] : []), ...o.problems.filter((p) => p.startsWith('ARM refused a request body')).map((p) => `${o.reproduce}: ${p}`)]);
    expect(refused).toEqual([]);
  }, 1_800_000);
});
