import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/sim/scenario.js';
import { runSimulation } from '../../src/sim/simulation.js';
import { generatedCase, reproduction } from './generated-scenario.js';

const RUNS = Number(process.env.AZFLEX_PROPERTY_RUNS ?? 500);

describe('machine strategy is leak-free over generated fault schedules and crash points', () => {
  it(`settles with no leaked NIC, VM or disk and no stuck NodeClaim (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(generatedCase, async (c) => {
        const run = await runSimulation({ scenario: parseScenario(c.scenario, 'generated'), seed: c.seed, strategy: 'machine', keepEventLog: true });
        const deletesWhileAttached = run.eventLog.entries.filter((e) => e.kind === 'world' && e.event === 'nic.delete' && e.detail?.includes('NicInUse'));
        const problems = [...run.invariantViolations, ...deletesWhileAttached.map((e) => `NIC delete attempted while attached: ${e.actor}`)];
        if (problems.length > 0) throw new Error(`${problems.slice(0, 5).join('; ')}\n${reproduction(c)}`);
      }),
      { numRuns: RUNS, seed: Number(process.env.AZFLEX_PROPERTY_SEED ?? 20261122), endOnFailure: true },
    );
  });
});

describe('determinism', () => {
  it('the same seed gives a byte-identical event log', async () => {
    await fc.assert(
      fc.asyncProperty(generatedCase, async (c) => {
        const scenario = parseScenario(c.scenario, 'generated');
        const a = await runSimulation({ scenario, seed: c.seed, strategy: 'machine' });
        const b = await runSimulation({ scenario, seed: c.seed, strategy: 'machine' });
        expect(a.eventLog.toJsonLines()).toBe(b.eventLog.toJsonLines());
        expect(a.result.eventLogSha256).toBe(b.result.eventLogSha256);
      }),
      { numRuns: 20, seed: 7 },
    );
  });
});
