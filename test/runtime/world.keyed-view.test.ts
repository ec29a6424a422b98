import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nicNameCandidates } from '../../src/lifecycle/ownership.js';
import type { NodeClaim } from '../../src/ports/cluster.js';
import { KeyedView, NicOwners } from '../../src/runtime/world.js';

interface Item { metadata: { name: string; resourceVersion?: string; uid?: string }; key: string | undefined }

/** What a loop over the list builds: the later item wins a shared key. */
function fresh(list: readonly Item[]): Map<string, Item> {
  const map = new Map<string, Item>();
  for (const item of list) if (item.key !== undefined) map.set(item.key, item);
  return map;
}

describe('KeyedView: a map of a listed kind kept by walking the list alongside the last', () => {
  it('equals a map built from the list (keys, order, objects) and reports exactly the keys whose object changed, and each key\'s place in the map\'s order', () => {
    // Each step: the next list, made of the last one's objects (unchanged), rewritten ones, new names, with moves and shared keys.
    const step = fc.array(fc.record({
      op: fc.constantFrom('keep', 'keep', 'keep', 'rewrite', 'rekey', 'drop', 'add', 'move'),
      at: fc.nat(),
      key: fc.option(fc.constantFrom('k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7'), { nil: undefined }),
    }), { maxLength: 6 });
    fc.assert(fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), fc.nat(20), (steps, size) => {
      let n = 0;
      const item = (name: string, key: string | undefined): Item => ({ metadata: { name, resourceVersion: String(n++), uid: name }, key });
      let list: Item[] = Array.from({ length: size }, (_, i) => item(`i${i}`, `p${i}`));
      const view = new KeyedView<Item>((i) => i.key);
      let map = view.update(undefined, undefined, list, []);
      for (const ops of steps) {
        const next = list.slice();
        for (const { op, at, key } of ops) {
          const i = next.length === 0 ? 0 : at % next.length;
          const cur = next[i];
          if (op === 'add') next.splice(i, 0, item(`n${n}`, key));
          else if (!cur) continue;
          else if (op === 'rewrite') next[i] = { ...cur, metadata: { ...cur.metadata, resourceVersion: String(n++) } };
          else if (op === 'rekey') next[i] = { ...cur, key, metadata: { ...cur.metadata, resourceVersion: String(n++) } };
          else if (op === 'drop') next.splice(i, 1);
          else if (op === 'move') { next.splice(i, 1); next.push(cur); }
        }
        const changes: string[] = [];
        const got = view.update(map, list, next, changes);
        const want = fresh(next);
        expect([...got.entries()]).toEqual([...want.entries()]);
        for (const [k, v] of got) expect(v).toBe(want.get(k));
        const order = [...got.keys()].map((k) => view.orderOf(k)!);
        for (let i = 1; i < order.length; i++) expect(order[i]).toBeGreaterThan(order[i - 1]!);
        for (const k of map.keys()) if (!got.has(k)) expect(view.orderOf(k)).toBeUndefined();
        const changed = new Set([...got.keys(), ...map.keys()].filter((k) => got.get(k) !== map.get(k)));
        expect(new Set(changes)).toEqual(changed);
        map = got;
        list = next;
      }
    }), { numRuns: 400 });
  });
});

describe('NicOwners: NIC name → owning NodeClaim, kept from the observer\'s changes', () => {
  it('equals the owners built from the map (under the cluster\'s and the first version\'s NIC names), whichever looks ask for them, with NodeClaim names that share a NIC', () => {
    const names = ['a', 'A', 'b', 'c', 'd-1', 'D_1'];
    const look = fc.record({ present: fc.subarray(names), rewrite: fc.subarray(names), ask: fc.boolean(), all: fc.boolean() });
    fc.assert(fc.property(fc.array(look, { minLength: 1, maxLength: 15 }), (looks) => {
      const nicNames = (n: string): readonly string[] => nicNameCandidates({ clusterName: 'aks-a' }, n);
      const owners = new NicOwners(nicNames);
      let rv = 0;
      let map = new Map<string, NodeClaim>();
      for (const { present, rewrite, ask, all } of looks) {
        const next = new Map<string, NodeClaim>();
        for (const name of present) {
          const had = map.get(name);
          next.set(name, had && !rewrite.includes(name) ? had : ({ metadata: { name, resourceVersion: String(rv++) } } as NodeClaim));
        }
        const changed = [...new Set([...next.keys(), ...map.keys()])].filter((k) => next.get(k) !== map.get(k));
        owners.note(next, { all: all && rv % 3 === 0, nodeClaims: changed, nodes: [] });
        map = next;
        if (!ask) continue;
        const want = new Map<string, NodeClaim>();
        for (const nc of map.values()) for (const nic of nicNames(nc.metadata.name)) want.set(nic, nc);
        const got = owners.of(map);
        expect(new Map([...got].sort())).toEqual(new Map([...want].sort()));
        for (const [k, v] of want) expect(got.get(k)).toBe(v);
      }
    }), { numRuns: 500 });
  });
});
