import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { walkAlongside } from '../../src/utils/list-walk.js';

interface Item {
  key: string;
  v: number;
}

/** A last list and the next one: some items kept (same object), some written again, some gone, some new, in any order. */
const lists = fc
  .uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 25 })
  .chain((keys) =>
    fc.tuple(
      fc.constant(keys.map((k) => ({ key: `k${k}`, v: 0 }))),
      fc.array(fc.constantFrom('keep', 'write', 'drop'), { minLength: keys.length, maxLength: keys.length }),
      fc.uniqueArray(fc.integer({ min: 41, max: 80 }), { maxLength: 8 }),
      fc.boolean(),
    ),
  )
  .map(([last, fate, fresh, shuffle]) => {
    const now: Item[] = [];
    last.forEach((item, i) => {
      if (fate[i] === 'keep') now.push(item);
      else if (fate[i] === 'write') now.push({ key: item.key, v: 1 });
    });
    for (const k of fresh) now.splice((k * 7) % (now.length + 1), 0, { key: `k${k}`, v: 0 });
    return { last, now: shuffle ? [...now].reverse() : now };
  });

/** Applies the reported changes to a keyed copy of `last`; it must end up as `now`. */
function replay(last: Item[], now: Item[], withIndex: boolean, limit?: number): { ok: boolean; state: Map<string, Item>; reported: number } {
  const state = new Map(last.map((i) => [i.key, i]));
  const lastKeys = new Set(last.map((i) => i.key));
  let reported = 0;
  const ok = walkAlongside(
    last,
    now,
    (a, b) => a.key === b.key,
    {
      ...(withIndex ? { isNew: (item: Item) => !lastKeys.has(item.key) } : {}),
      unchanged: (li, ni, count) => {
        expect(count).toBeGreaterThan(0);
        for (let k = 0; k < count; k++) expect(last[li + k]).toBe(now[ni + k]);
      },
      replaced: (old, item) => {
        reported++;
        expect(state.get(old.key)).toBe(old);
        state.set(item.key, item);
      },
      removed: (old) => {
        reported++;
        if (state.get(old.key) === old) state.delete(old.key);
      },
      added: (item) => {
        reported++;
        state.set(item.key, item);
      },
    },
    limit,
  );
  return { ok, state, reported };
}

describe('walkAlongside', () => {
  it('reports changes that turn the last list into the new one, with or without an index of new items', () => {
    fc.assert(
      fc.property(lists, fc.boolean(), ({ last, now }, withIndex) => {
        const { ok, state } = replay(last, now, withIndex);
        expect(ok).toBe(true);
        expect([...state.values()].sort((a, b) => a.key.localeCompare(b.key))).toEqual([...now].sort((a, b) => a.key.localeCompare(b.key)));
        for (const item of now) expect(state.get(item.key)).toBe(item);
      }),
    );
  });

  it('an unchanged list reports nothing; appended and dropped items cost only themselves', () => {
    const a = { key: 'a', v: 0 };
    const b = { key: 'b', v: 0 };
    const c = { key: 'c', v: 0 };
    expect(replay([a, b, c], [a, b, c], false).reported).toBe(0);
    expect(replay([a, b], [a, b, c], false).reported).toBe(1);
    expect(replay([a, b, c], [a, c], false).reported).toBe(1);
    // An insertion in the middle: one addition with the index, removals and re-additions without.
    expect(replay([a, c], [a, b, c], true).reported).toBe(1);
    expect(replay([a, c], [a, b, c], false).reported).toBe(3);
  });

  it('walks unchanged items without an unchanged callback', () => {
    const items = [{ key: 'a', v: 0 }, { key: 'b', v: 0 }];
    const seen: string[] = [];
    const on = { replaced: () => seen.push('replaced'), removed: () => seen.push('removed'), added: () => seen.push('added') };
    expect(walkAlongside(items, items, (x, y) => x.key === y.key, on)).toBe(true);
    expect(seen).toEqual([]);
  });

  it('stops with false past the limit', () => {
    const last = Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, v: 0 }));
    const now = last.map((i) => ({ ...i, v: 1 }));
    expect(replay(last, now, false, 3).ok).toBe(false);
    expect(replay(last, now, false, 10).ok).toBe(true);
    expect(replay(last, [], false, 3).ok).toBe(false);
  });
});
