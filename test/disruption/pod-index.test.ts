import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PodIndex } from '../../src/disruption/pod-index.js';
import type { Pod } from '../../src/ports/cluster.js';
import { makePod } from '../provisioning/fixtures.js';

/**
 * The disruption controller's pod index is updated from one list to the next by matching
 * them up; whatever the next list is (writes in place, deletions, additions, a reordering, a
 * copy of every object), it must hold what an index built from that list alone holds, and a
 * node's version must move whenever its pods change.
 */
type Op =
  | { op: 'put'; pod: number; node: number | undefined; pending: boolean; inPlace: boolean }
  | { op: 'remove'; pod: number }
  | { op: 'shuffle'; seed: number }
  | { op: 'copy' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('put' as const), pod: fc.nat(12), node: fc.option(fc.nat(3), { nil: undefined }), pending: fc.boolean(), inPlace: fc.boolean() }), weight: 6 },
  { arbitrary: fc.record({ op: fc.constant('remove' as const), pod: fc.nat(12) }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('shuffle' as const), seed: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('copy' as const) }), weight: 1 },
);

const NODES = ['n0', 'n1', 'n2', 'n3'];

function contents(index: PodIndex): unknown {
  return {
    provisionable: index.anyProvisionable,
    nodes: NODES.map((n) => [...(index.onNode(n)?.pods ?? [])].map((p) => `${p.metadata.name}:${p.metadata.resourceVersion}`).sort()),
  };
}

describe('PodIndex', () => {
  it('holds what an index of the latest list alone holds', () => {
    fc.assert(
      fc.property(fc.array(fc.array(opArb, { maxLength: 4 }), { maxLength: 30 }), (steps) => {
        const index = new PodIndex();
        let list: Pod[] = [];
        let rv = 0;
        for (const step of steps) {
          for (const op of step) {
            if (op.op === 'put') {
              const pod = makePod(`p${op.pod}`, op.node === undefined ? (op.pending ? {} : { unschedulable: false }) : { nodeName: NODES[op.node]! });
              pod.metadata.resourceVersion = String(++rv);
              const at = list.findIndex((p) => p.metadata.name === pod.metadata.name);
              // In place: a port may hand out the very array it handed out before, changed (FakeCluster does).
              if (op.inPlace) {
                if (at >= 0) list[at] = pod;
                else list.push(pod);
              } else list = at >= 0 ? list.map((p, i) => (i === at ? pod : p)) : [...list, pod];
            } else if (op.op === 'remove') list = list.filter((p) => p.metadata.name !== `p${op.pod}`);
            else if (op.op === 'shuffle') list = [...list].sort((a, b) => ((a.metadata.name.length * 31 + op.seed) % 7) - ((b.metadata.name.length * 17 + op.seed) % 5));
            else list = structuredClone(list);
          }
          const before = NODES.map((n) => ({ version: index.onNode(n)?.version, pods: new Set(index.onNode(n)?.pods ?? []) }));
          index.update(list);
          const changed = index.takeChanged();
          const fresh = new PodIndex();
          fresh.update(list);
          expect(contents(index)).toEqual(contents(fresh));
          NODES.forEach((n, i) => {
            const now = index.onNode(n)?.pods ?? new Set<Pod>();
            const same = now.size === before[i]!.pods.size && [...now].every((p) => before[i]!.pods.has(p));
            if (!same) expect(index.onNode(n)?.version).not.toBe(before[i]!.version);
            // What the disruption controller re-reads: every node whose pods changed is named.
            if (!same && changed !== 'all') expect(changed.has(n)).toBe(true);
          });
        }
      }),
      { numRuns: 300 },
    );
  });
});
