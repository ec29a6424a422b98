import { describe, expect, it } from 'vitest';
import { PeriodicLoop } from '../../src/utils/periodic-loop.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';

/** A run that takes `ms` of (virtual) time, recording when it started and ended. */
function slowRun(clock: VirtualClock, ms: () => number, log: Array<[number, number]>): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      const start = clock.now();
      clock.setTimer(ms(), () => {
        log.push([start, clock.now()]);
        resolve();
      });
    });
}

describe('PeriodicLoop', () => {
  it('never overlaps: a tick that comes due during a run waits for it', async () => {
    const clock = new VirtualClock(0);
    const runs: Array<[number, number]> = [];
    let concurrent = 0;
    let maxConcurrent = 0;
    const durations = [25_000, 1_000, 35_000, 1_000, 1_000];
    let i = 0;
    const inner = slowRun(clock, () => durations[i++ % durations.length]!, runs);
    const loop = new PeriodicLoop({
      name: 'provisioner',
      clock,
      intervalMs: 10_000,
      run: async () => {
        maxConcurrent = Math.max(maxConcurrent, ++concurrent);
        await inner();
        concurrent--;
      },
    }).start();
    await clock.runUntil(120_000);
    // stop() waits for the run in flight, which ends on the virtual clock.
    const stopped = loop.stop();
    await clock.runUntil(200_000);
    await stopped;
    expect(concurrent).toBe(0);
    expect(maxConcurrent).toBe(1);
    // Each run starts at or after the previous one ended; runs that overran start at once.
    for (let k = 1; k < runs.length; k++) expect(runs[k]![0]).toBeGreaterThanOrEqual(runs[k - 1]![1]);
    expect(runs.slice(0, 4)).toEqual([
      [10_000, 35_000],
      [35_000, 36_000],
      [45_000, 80_000],
      [80_000, 81_000],
    ]);
  });

  it('keeps its period when runs are fast, and kick() coalesces into one extra run', async () => {
    const clock = new VirtualClock(0);
    const starts: number[] = [];
    const loop = new PeriodicLoop({ name: 'x', clock, intervalMs: 1_000, run: async () => void starts.push(clock.now()) }).start();
    await clock.runUntil(3_500);
    expect(starts).toEqual([1_000, 2_000, 3_000]);
    loop.kick();
    loop.kick();
    await clock.runUntil(3_600);
    expect(starts).toEqual([1_000, 2_000, 3_000, 3_500]);
    await loop.stop();
    await clock.runUntil(10_000);
    expect(starts).toHaveLength(4);
  });

  it('reports a stalled loop: a run that never finishes stops progress', async () => {
    const clock = new VirtualClock(0);
    const loop = new PeriodicLoop({ name: 'stuck', clock, intervalMs: 1_000, run: () => new Promise<void>(() => undefined) }).start();
    await clock.runUntil(1_500);
    expect(loop.stalled(5_000)).toBe(false);
    await clock.runUntil(7_000);
    expect(loop.stalled(5_000)).toBe(true);
    expect(loop.progress()).toMatchObject({ name: 'stuck', running: true, runs: 0 });
  });

  it('reports errors and keeps going', async () => {
    const clock = new VirtualClock(0);
    const errors: unknown[] = [];
    let n = 0;
    const loop = new PeriodicLoop({
      name: 'flaky',
      clock,
      intervalMs: 1_000,
      run: async () => {
        if (n++ === 0) throw new Error('boom');
      },
      onError: (e) => errors.push(e),
    }).start();
    await clock.runUntil(3_000);
    await loop.stop();
    expect(errors).toHaveLength(1);
    expect(loop.progress().runs).toBe(3);
    expect(loop.stalled(0)).toBe(false);
  });
});
