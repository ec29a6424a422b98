import { describe, expect, it } from 'vitest';
import { untilNoProgress } from '../../../src/provisioning/scheduling/queue.js';

describe('untilNoProgress', () => {
  it('retries what failed while something else lands, in queue order', () => {
    // Each item needs the one after it placed first: c, then b, then a.
    const placed = new Set<string>();
    const needs: Record<string, string | undefined> = { a: 'b', b: 'c', c: undefined };
    const tries: string[] = [];
    const left = untilNoProgress(['a', 'b', 'c'], (item) => {
      tries.push(item);
      const need = needs[item];
      if (need !== undefined && !placed.has(need)) return `waits for ${need}`;
      placed.add(item);
      return undefined;
    });
    expect(left).toEqual([]);
    expect(tries).toEqual(['a', 'b', 'c', 'a', 'b', 'a']);
  });

  it('stops once a whole round places nothing, with each item\'s last reason', () => {
    let calls = 0;
    const left = untilNoProgress(['x', 'y'], (item) => {
      calls++;
      return `no room for ${item}`;
    });
    expect(left).toEqual([{ item: 'x', reason: 'no room for x' }, { item: 'y', reason: 'no room for y' }]);
    expect(calls).toBe(2);
  });
});
