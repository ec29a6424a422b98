import { describe, expect, it } from 'vitest';
import { seedList } from '../../../src/cli/flags.js';
import { compactSeeds, shardSeeds } from '../../../src/sim/sweep/shard.js';

describe('sweep shards', () => {
  it('split a seed list by position: every seed in exactly one shard, in the list order', () => {
    const seeds = seedList('7,1..10,40');
    const shards = [0, 1, 2].map((index) => shardSeeds(seeds, { index, count: 3 }));
    expect(shards).toEqual([[7, 3, 6, 10], [1, 4, 8, 40], [2, 5, 9]]);
    expect(shards.flat().sort((a, b) => a - b)).toEqual([...seeds].sort((a, b) => a - b));
    expect(shardSeeds(seeds, { index: 0, count: 1 })).toEqual(seeds);
  });

  it('compact seed lists parse back to the same seeds in the same order', () => {
    for (const text of ['1..1000', '7,1..3', '5', '1,3,5', '4294967294..4294967295,0', '2..3,9,10..12']) {
      expect(seedList(compactSeeds(seedList(text)))).toEqual(seedList(text));
    }
    expect(compactSeeds(seedList('1..3,4..6,2'))).toBe('1..6');
    expect(compactSeeds(seedList('1..3,7,4..6'))).toBe('1..3,7,4..6');
    expect(compactSeeds([])).toBe('');
  });
});
