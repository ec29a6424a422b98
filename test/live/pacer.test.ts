import { describe, expect, it } from 'vitest';
import { Pacer } from '../../src/live/pacer.js';

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
