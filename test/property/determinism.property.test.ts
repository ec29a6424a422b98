import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/sim/scenario.js';
import { runSimulation } from '../../src/sim/simulation.js';
import { generatedCase } from './generated-scenario.js';

describe('determinism', () => {
  it('the same seed gives a byte-identical event log, crashes included', async () => {
    await fc.assert(
      fc.asyncProperty(generatedCase, async (c) => {
        const scenario = parseScenario(c.scenario, 'generated');
        const a = await runSimulation({ scenario, seed: c.seed, strategy: 'machine' });
        const b = await runSimulation({ scenario, seed: c.seed, strategy: 'machine' });
        expect(a.eventLog.entries.length).toBeGreaterThan(0);
        expect(a.eventLog.toJsonLines()).toBe(b.eventLog.toJsonLines());
        expect(a.result.eventLogSha256).toBe(b.result.eventLogSha256);
      }),
      { numRuns: 20, seed: 7 },
    );
  }, 300_000);
});
