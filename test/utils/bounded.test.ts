import { describe, expect, it } from 'vitest';
import { BackgroundQueue, forEachBounded } from '../../src/utils/bounded.js';

describe('forEachBounded', () => {
  /** Runs 10 items that each wait for a release, recording the most in flight and the start order. */
  const run = async (limit: number): Promise<{ peak: number; started: number[] }> => {
    let inFlight = 0;
    let peak = 0;
    const started: number[] = [];
    await forEachBounded([...Array(10).keys()], limit, async (i) => {
      started.push(i);
      peak = Math.max(peak, ++inFlight);
      await new Promise((r) => setImmediate(r));
      inFlight--;
    });
    return { peak, started };
  };

  it('keeps at most `limit` in flight and starts them in order', async () => {
    expect(await run(3)).toEqual({ peak: 3, started: [...Array(10).keys()] });
  });

  it('is one after another with a limit of 1', async () => {
    expect(await run(1)).toEqual({ peak: 1, started: [...Array(10).keys()] });
  });

  it('rejects with the first failure', async () => {
    await expect(forEachBounded([1, 2, 3], 2, async (i) => {
      if (i === 2) throw new Error('two');
    })).rejects.toThrow('two');
  });
});

describe('BackgroundQueue', () => {
  it('runs pushed tasks in order, at most `limit` at a time, without the pusher waiting', async () => {
    const queue = new BackgroundQueue(2);
    const started: number[] = [];
    const releases: Array<() => void> = [];
    for (let i = 0; i < 5; i++) queue.push(() => new Promise<void>((r) => { started.push(i); releases.push(r); }));
    expect(started).toEqual([0, 1]);
    releases[0]!();
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2]);
    for (let i = 1; i < 5; i++) {
      releases[i]!();
      await new Promise((r) => setImmediate(r));
    }
    expect(started).toEqual([0, 1, 2, 3, 4]);
  });
});
