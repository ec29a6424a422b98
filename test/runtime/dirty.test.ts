import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { markedInOrder } from '../../src/runtime/dirty.js';

/**
 * A pass over the marked keys must take the same keys in the same order as the walk over every
 * key of the map that checks the marks as it goes, including marks its own steps make (an
 * actor's event marks itself or another actor, ahead of the walk or behind it).
 */
describe('markedInOrder: the marked keys of a map in its order, as a walk over all of them takes them', () => {
  it('takes the keys a full walk takes, in its order, whatever each step marks', () => {
    const size = 40;
    fc.assert(fc.property(
      fc.subarray(Array.from({ length: size + 5 }, (_, i) => `k${i}`), { maxLength: 8 }),
      fc.array(fc.array(fc.nat(size + 4), { maxLength: 3 }), { minLength: size + 5, maxLength: size + 5 }),
      fc.boolean(),
      (initial, marksBy, all) => {
        const keys = Array.from({ length: size }, (_, i) => `k${(i * 7) % size}`);
        const map = new Map(keys.map((k) => [k, true]));
        const order = new Map(keys.map((k, i) => [k, i * 3]));
        const run = (walk: (marked: Set<string>) => Iterable<string>): string[] => {
          const marked = new Set(initial);
          const taken: string[] = [];
          for (const key of walk(marked)) {
            if (!all && !marked.has(key)) continue;
            marked.delete(key);
            taken.push(key);
            for (const m of marksBy[Number(key.slice(1))]!) marked.add(`k${m}`);
          }
          return taken;
        };
        const full = run(() => map.keys());
        const fast = run((marked) => markedInOrder(map, marked, all, (k) => order.get(k)));
        expect(fast).toEqual(full);
      },
    ), { numRuns: 500 });
  });
});
