/**
 * PodsViewTracker walks each pods list alongside the last; whatever the lists do between two
 * passes (pods written, deleted, added, reordered, handed out as copies), its view must be
 * what filtering the whole list gives, and the pending pods it says are gone are exactly those
 * of the last view that this one does not have.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/ports/cluster.js';
import { PodsViewTracker, daemonSetRepresentatives, isProvisionable } from '../../src/provisioning/pods-view.js';
import { makePod } from './fixtures.js';

type Kind = 'pending' | 'scheduled' | 'bound' | 'succeeded' | 'deleting' | 'daemon' | 'daemon-bound';

function podOf(name: string, kind: Kind): Pod {
  switch (kind) {
    case 'pending': return makePod(name);
    case 'scheduled': return makePod(name, { unschedulable: false });
    case 'bound': return makePod(name, { nodeName: 'node-1' });
    case 'succeeded': return makePod(name, { nodeName: 'node-2', phase: 'Succeeded' });
    case 'deleting': return makePod(name, { deletionTimestamp: '2026-01-01T00:00:00Z' });
    case 'daemon': return makePod(`ds-${name.length % 2}-abcde`, { ownerKind: 'DaemonSet' });
    case 'daemon-bound': return makePod(`ds-${name.length % 2}-fghij`, { ownerKind: 'DaemonSet', nodeName: 'node-1' });
  }
}

const kindArb = fc.constantFrom<Kind>('pending', 'scheduled', 'bound', 'succeeded', 'deleting', 'daemon', 'daemon-bound');

const editArb = fc.oneof(
  fc.record({ op: fc.constant('write' as const), at: fc.nat(), kind: kindArb }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('add' as const), at: fc.nat(), kind: kindArb }),
  fc.record({ op: fc.constant('move' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('copy-all' as const) }),
  fc.record({ op: fc.constant('recreate' as const), at: fc.nat(), kind: kindArb }),
);

describe('PodsViewTracker', () => {
  it('gives what filtering the whole list gives, however the list changed', () => {
    fc.assert(
      fc.property(fc.array(kindArb, { maxLength: 30 }), fc.array(fc.tuple(fc.boolean(), fc.array(editArb, { maxLength: 8 })), { minLength: 1, maxLength: 6 }), (initial, steps) => {
        let n = 0;
        let pods = initial.map((kind) => podOf(`p-${n++}`, kind));
        const tracker = new PodsViewTracker();
        let lastPending: Pod[] = [];
        for (const [inPlace, edits] of [[false, []] as const, ...steps]) {
          // A port may hand out the very array it handed out before, changed in place (FakeCluster does).
          if (!inPlace) pods = [...pods];
          for (const edit of edits) {
            const at = pods.length > 0 && 'at' in edit ? edit.at % pods.length : 0;
            if (edit.op === 'write' && pods.length > 0) pods[at] = { ...podOf(pods[at]!.metadata.name, edit.kind), metadata: { ...pods[at]!.metadata } };
            if (edit.op === 'delete' && pods.length > 0) pods.splice(at, 1);
            if (edit.op === 'add') pods.splice(edit.at % (pods.length + 1), 0, podOf(`p-${n++}`, edit.kind));
            if (edit.op === 'move' && pods.length > 1) pods.push(...pods.splice(at, 1));
            // The same name, another pod (deleted and created again between two lists).
            if (edit.op === 'recreate' && pods.length > 0) pods[at] = podOf(pods[at]!.metadata.name, edit.kind);
            if (edit.op === 'copy-all') pods = pods.map((p) => structuredClone(p));
          }
          const view = tracker.update(pods);
          const pending = pods.filter(isProvisionable);
          expect(view.pending).toEqual(pending);
          view.pending.forEach((p, i) => expect(p).toBe(pending[i]));
          expect(view.bound.map((p) => p.metadata.name)).toEqual(pods.filter((p) => p.spec.nodeName !== undefined).map((p) => p.metadata.name));
          expect(view.daemonSets).toEqual(daemonSetRepresentatives(pods));
          const now = new Set(pending.map((p) => p.metadata.uid));
          expect([...view.goneUids].sort()).toEqual([...new Set(lastPending.map((p) => p.metadata.uid))].filter((uid) => !now.has(uid)).sort());
          lastPending = pending;
        }
      }),
      { numRuns: 300 },
    );
  });
});
