import { describe, expect, it } from 'vitest';
import { SeededRandom, VirtualClock } from '../../src/sim/virtual-clock.js';

/**
 * A timer's work (promise chains of any depth, timers they set at the same instant) finishes
 * before the next timer fires, with either drain: the same trace, step for step.
 */
async function trace(drain: 'macrotask' | 'microtasks'): Promise<string[]> {
  const clock = new VirtualClock(0, { drain });
  const out: string[] = [];
  const deep = async (label: string, depth: number): Promise<void> => {
    for (let i = 0; i < depth; i++) await Promise.resolve();
    out.push(`${label}@${clock.now()}`);
  };
  for (let k = 0; k < 600; k++) {
    // Two timers at the same instant: the first one's chain (20 awaits deep, then a new
    // timer at the same instant) must be done before the second fires.
    clock.setTimer(k * 10, () => {
      void deep(`a${k}`, 20).then(() => clock.setTimer(0, () => out.push(`c${k}@${clock.now()}`)));
    });
    clock.setTimer(k * 10, () => void deep(`b${k}`, 1));
  }
  const fired = await clock.runUntil(6_000);
  out.push(`fired ${fired}`);
  return out;
}

describe('VirtualClock', () => {
  it("drains a timer's promise chains before the next timer, the same with either drain", async () => {
    const macro = await trace('macrotask');
    const micro = await trace('microtasks');
    expect(macro.slice(0, 3)).toEqual(['a0@0', 'b0@0', 'c0@0']);
    expect(macro.at(-1)).toBe('fired 1800');
    expect(micro).toEqual(macro);
  });

  it('fires timers in (time, insertion) order, cancelled ones never, whatever the order they were set in', async () => {
    const random = new SeededRandom(7);
    const clock = new VirtualClock(0, { drain: 'microtasks' });
    const fired: number[] = [];
    const expected: Array<{ at: number; k: number }> = [];
    for (let k = 0; k < 3_000; k++) {
      const at = Math.floor(random.next() * 500);
      const id = clock.setTimer(at, () => fired.push(k));
      if (random.next() < 0.2) clock.clearTimer(id);
      else expected.push({ at, k });
    }
    await clock.runUntil(1_000);
    expect(fired).toEqual(expected.sort((a, b) => a.at - b.at || a.k - b.k).map((e) => e.k));
  });
});
