import { describe, expect, it } from 'vitest';
import { builtInScenario } from '../../src/sim/scenarios.js';
import { parseScenario, type Scenario, type ScenarioInput } from '../../src/sim/scenario.js';
import { runSimulation } from '../../src/sim/simulation.js';

/**
 * The controller against the fake's real-ARM defaults (docs/fidelity.md) and against worlds
 * that differ from the documentation: a reservation that ends later or jitters, lists that
 * lag far behind. Leak-freedom, time-to-reap and writes per failed create must hold in all.
 */
const ASYNC_FAILURES = new Set(['AllocationFailed', 'ZonalAllocationFailed', 'OverconstrainedAllocationRequest']);

function variant(name: string, arm: ScenarioInput['arm']): Scenario {
  const base = builtInScenario(name)!;
  return parseScenario({ ...base, arm: { ...base.arm, ...arm } }, `${name} variant`);
}

describe('the controller in a world that behaves like ARM', () => {
  it('capacity-flap: a Failed VM costs exactly 4 writes (NIC PUT, VM PUT, VM DELETE, NIC DELETE), a refusal 3, a node 2; nothing leaks', async () => {
    const run = await runSimulation({ scenario: builtInScenario('capacity-flap')!, seed: 11, strategy: 'machine', hours: 2, keepEventLog: false });
    const r = run.result;
    const asyncFailures = Object.entries(r.createFailuresByCode).filter(([c]) => ASYNC_FAILURES.has(c)).reduce((n, [, k]) => n + k, 0);
    expect(asyncFailures).toBeGreaterThan(0);
    const syncFailures = r.createFailures - asyncFailures;
    expect(r.armWrites).toBe(4 * asyncFailures + 3 * syncFailures + 2 * r.nodeClaimsLaunched);
    expect(r.leakedNics + r.leakedVms + r.leakedDisks).toBe(0);
    expect(run.invariantViolations).toEqual([]);
    expect(Math.max(...run.arm.reapAfterReservationSeconds())).toBeLessThanOrEqual(5);
  });

  it('a reservation that starts 20 s late and jitters by up to 30 s: NICs still go within 5 s of its real end', async () => {
    for (const name of ['quota-blind', 'capacity-flap']) {
      const scenario = variant(name, { reservation: { seconds: 180, startDelaySeconds: 20, jitterSeconds: 30, from: 'attempt' } });
      const run = await runSimulation({ scenario, seed: 4, strategy: 'machine', hours: 1, keepEventLog: false });
      const after = run.arm.reapAfterReservationSeconds();
      expect(after.length, name).toBeGreaterThan(0);
      expect(Math.max(...after), name).toBeLessThanOrEqual(5);
      expect(Math.min(...after), name).toBeGreaterThanOrEqual(0);
      expect(run.result.leakedNics + run.result.leakedVms + run.result.leakedDisks, name).toBe(0);
      expect(run.invariantViolations, name).toEqual([]);
    }
  });

  it('lists that lag 40 s behind ARM and page by 2: no launch is declared failed for a missing entry, nothing leaks', async () => {
    const scenario = variant('capacity-flap', { listLagSeconds: { appearSeconds: 40, disappearSeconds: 40 }, listPageSize: 2 });
    const run = await runSimulation({ scenario, seed: 8, strategy: 'machine', hours: 1, restarts: 3, keepEventLog: true });
    expect(run.result.leakedNics + run.result.leakedVms + run.result.leakedDisks).toBe(0);
    expect(run.invariantViolations).toEqual([]);
    // A lost attempt is declared only after a GET found no VM.
    const lost = run.eventLog.entries.filter((e) => e.kind === 'effect' && e.event === 'getVmState');
    expect(lost.every((e) => e.detail === 'ok')).toBe(true);
    // Within 5 s of the reservation's end, or of the restart when it ended while the controller was down.
    const starts = run.eventLog.entries.filter((e) => e.kind === 'controller' && e.event === 'start').map((e) => e.t);
    for (const { reservedUntil, removedAt } of run.arm.reapsAfterReservation()) {
      const back = starts.find((t) => t >= reservedUntil);
      const crashed = run.eventLog.entries.some((e) => e.kind === 'controller' && e.event === 'crash' && e.t <= reservedUntil && (back === undefined || back > reservedUntil) &&
        !starts.some((t) => t > e.t && t <= reservedUntil));
      const from = crashed && back !== undefined ? back : reservedUntil;
      expect((removedAt - from) / 1000).toBeLessThanOrEqual(5);
    }
  });
});
