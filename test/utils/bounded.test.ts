import { describe, expect, it } from 'vitest';
import { forEachBounded } from '../../src/utils/bounded.js';

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
