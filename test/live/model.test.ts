import { describe, expect, it } from 'vitest';
import { inferCause } from '../../src/live/causes.js';
import { ClockCommandError, parseClockCommand } from '../../src/live/controls.js';
import { Pacer } from '../../src/live/pacer.js';
import { Timelines } from '../../src/live/timeline.js';
import { machineGraph } from '../../src/viz/machines.js';

const nic = machineGraph('nic');
const nodeclaim = machineGraph('nodeclaim');

describe('inferCause', () => {
  it('names the delayed transition out of the reservation, with its 180 s', () => {
    expect(inferCause(nic, 'reserved-180s', 'probing-before-delete')).toBe('after 180 s (untilReservationEnds)');
  });

  it('picks the done/error edge of the effect that just finished', () => {
    expect(inferCause(nic, 'deleting', 'reaped', { effect: 'deleteNic', detail: 'ok' })).toBe('deleteNic ok (done: deleteNic)');
    expect(inferCause(nic, 'deleting', 'reserved-180s', { effect: 'deleteNic', detail: 'NicReservedForAnotherVm' })).toBe(
      'deleteNic failed: NicReservedForAnotherVm (error: deleteNic [isReserved] / rememberError, extendReservation)',
    );
  });

  it('follows eventless hops and prefers the shortest story', () => {
    // nic-created → vm-failed → (always) reserved-180s; the detour through `observing` is longer.
    const cause = inferCause(nic, 'nic-created', 'reserved-180s');
    expect(cause).toContain('VM_FAILED');
    expect(cause).not.toContain('observedAbsent');
  });

  it('finds transitions defined on a parent state and entries into nested states', () => {
    // Two edges lead there (NIC_READY, or an observation that shows the NIC); both are named.
    expect(inferCause(nodeclaim, 'launching.creating-nic', 'launching.recording-attempt')).toMatch(/^NIC_READY \| OBSERVED \[observedNicPresent\]/);
    expect(inferCause(nodeclaim, undefined, 'pending')).toMatch(/^started/);
  });
});

describe('Timelines', () => {
  it('files transitions with causes, effects and the ARM calls on the actor’s own resources', () => {
    const t = new Timelines(new Map([['nic', nic], ['nodeclaim', nodeclaim]]));
    t.ingest({ t: 1, actor: 'nic/n1', kind: 'transition', to: 'pending' });
    t.ingest({ t: 2, actor: 'arm/n1', kind: 'world', event: 'nic.put', detail: '201' });
    t.ingest({ t: 2, actor: 'arm/someone-else', kind: 'world', event: 'nic.put', detail: '201' });
    t.ingest({ t: 3, actor: 'nic/n1', kind: 'effect', event: 'deleteNic', detail: 'ok' });
    t.ingest({ t: 3, actor: 'nic/n1', kind: 'transition', from: 'deleting', to: 'reaped' });
    const rows = t.timeline('nic/n1');
    expect(rows.map((r) => r.kind)).toEqual(['transition', 'arm', 'effect', 'transition']);
    expect(rows[3]?.cause).toBe('deleteNic ok (done: deleteNic)');
    expect(t.recentlyFinished()).toEqual(['nic/n1']);
  });

  it('stays bounded and scrubs secret-shaped details', () => {
    const t = new Timelines(new Map([['nic', nic]]), { perActor: 3, maxActors: 2 });
    for (let i = 0; i < 5; i++) t.ingest({ t: i, actor: 'nic/a', kind: 'effect', event: 'putNic', detail: `e${i}` });
    t.ingest({ t: 9, actor: 'nic/b', kind: 'effect', event: 'putNic', detail: 'Bearer abcdefghijklmnop' });
    t.ingest({ t: 9, actor: 'nic/c', kind: 'effect', event: 'putNic', detail: 'x' });
    expect(t.timeline('nic/a')).toEqual([]);
    expect(t.timeline('nic/b')[0]?.detail).toBe('Bearer [REDACTED]');
    expect(t.timeline('nic/c')).toHaveLength(1);
  });
});

describe('Pacer', () => {
  it('holds a paused run, and a step runs exactly that much virtual time', async () => {
    const pacer = new Pacer({ stepMs: 1_000, paused: true });
    const ran: number[] = [];
    const run = (async () => {
      for (let t = 0; t < 10_000; t += 1_000) {
        await pacer.pace.beforeStep(t);
        ran.push(t);
      }
    })();
    await new Promise((r) => setTimeout(r, 30));
    expect(ran).toEqual([]);
    pacer.step(3_000);
    await new Promise((r) => setTimeout(r, 30));
    expect(ran).toEqual([0, 1_000, 2_000]);
    expect(pacer.status().paused).toBe(true);
    pacer.setSpeed('max');
    pacer.resume();
    await run;
    expect(ran).toHaveLength(10);
  });

  it('paces by speed: virtual ms per wall ms', async () => {
    const pacer = new Pacer({ stepMs: 1_000, speed: 50, paused: false });
    const start = performance.now();
    for (let t = 0; t < 5_000; t += 1_000) await pacer.pace.beforeStep(t);
    // 5 s of virtual time at 50× is 100 ms of wall time.
    expect(performance.now() - start).toBeGreaterThanOrEqual(90);
  });
});

describe('parseClockCommand', () => {
  it('accepts the four commands and rejects anything else', () => {
    expect(parseClockCommand('{"action":"step","ms":60000}')).toEqual({ action: 'step', ms: 60_000 });
    expect(parseClockCommand('{"action":"speed","speed":"max"}')).toEqual({ action: 'speed', speed: 'max' });
    for (const bad of ['nope', '{"action":"stop"}', '{"action":"speed","speed":-1}', '{"action":"step","ms":"1"}', '[]']) {
      expect(() => parseClockCommand(bad), bad).toThrow(ClockCommandError);
    }
  });
});
