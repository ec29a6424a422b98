import { describe, expect, it } from 'vitest';
import { RuntimeLiveSource } from '../../src/live/runtime-source.js';
import type { LiveSource } from '../../src/live/source.js';
import { builtInScenario } from '../../src/sim/scenarios.js';
import { runSimulation, type SimulationWorld } from '../../src/sim/simulation.js';
import { MemoryEventLog } from '../../src/runtime/event-log.js';
import type { LogEntry } from '../../src/runtime/event-log.js';

describe('the controller’s live source', () => {
  it('follows the leading runtime: actor states, reservations from the NIC machines, the event stream; read-only', async () => {
    let seen: { states: number; reservations: Array<{ nic: string; until: number }>; source: RuntimeLiveSource } | undefined;
    const streamed: LogEntry[] = [];
    await runSimulation({
      scenario: builtInScenario('quota-blind')!,
      seed: 1,
      strategy: 'machine',
      hours: 0.1,
      onWorld: (w: SimulationWorld) => {
        const log = new MemoryEventLog(false);
        w.eventLog.subscribe((e) => log.record(e));
        const source = new RuntimeLiveSource('test', w.clock, log);
        source.attach(w.runtime);
        source.subscribe((e) => streamed.push(e));
        // 30 s in: one create failed for quota, its NIC waits out the reservation.
        w.clock.setTimer(30_000, () => {
          seen = { states: source.actorStates().nics.size, reservations: source.reservations(), source };
        });
      },
    });
    expect(seen!.states).toBe(3);
    expect(seen!.reservations).toHaveLength(1);
    expect(seen!.reservations[0]!.until).toBeGreaterThan(0);
    expect((seen!.source as LiveSource).clock).toBeUndefined();
    expect(streamed.some((e) => e.kind === 'transition' && e.to === 'reserved-180s' && e.event === 'VM_FAILED')).toBe(true);
    seen!.source.attach(undefined);
    expect(seen!.source.actorStates().nodeClaims.size).toBe(0);
  });
});
