import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FakeCluster } from '../../src/sim/cluster.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { T0, makePod } from '../provisioning/fixtures.js';

/**
 * The fake cluster indexes its pods (unbound ones, those bound to each node) for the simulated
 * kube-scheduler and node deletion; the index must always say what a scan of every pod says,
 * in the same order, and a node's version must move whenever what is bound to it changes.
 */
type Op =
  | { op: 'put'; pod: number; node: number | undefined }
  | { op: 'remove'; pod: number }
  | { op: 'evict'; pod: number }
  | { op: 'deleteNode'; node: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('put' as const), pod: fc.nat(8), node: fc.option(fc.nat(3), { nil: undefined }) }),
  fc.record({ op: fc.constant('remove' as const), pod: fc.nat(8) }),
  fc.record({ op: fc.constant('evict' as const), pod: fc.nat(8) }),
  fc.record({ op: fc.constant('deleteNode' as const), node: fc.nat(3) }),
);

describe('FakeCluster pod index', () => {
  it('matches a scan of every pod, in map order, and versions each node', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 60 }), async (ops) => {
        const cluster = new FakeCluster(new VirtualClock(T0));
        const nodes = ['n0', 'n1', 'n2', 'n3'];
        const keys = (pods: readonly { metadata: { namespace: string; name: string } }[]) => pods.map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
        for (const op of ops) {
          const scanBefore = new Map(nodes.map((n) => [n, JSON.stringify([...cluster.pods.values()].filter((p) => p.spec.nodeName === n))]));
          const versionsBefore = new Map(nodes.map((n) => [n, cluster.pods.nodeVersion(n)]));
          switch (op.op) {
            case 'put':
              cluster.putPod(makePod(`p${op.pod}`, op.node === undefined ? {} : { nodeName: nodes[op.node]! }));
              break;
            case 'remove':
              cluster.removePod('default', `p${op.pod}`);
              break;
            case 'evict':
              await cluster.evictPod('default', `p${op.pod}`);
              break;
            case 'deleteNode':
              await cluster.deleteNode(nodes[op.node]!);
              break;
          }
          const all = [...cluster.pods.values()];
          expect(keys(cluster.pods.unbound())).toEqual(keys(all.filter((p) => !p.spec.nodeName)));
          expect(cluster.pods.unboundCount).toBe(all.filter((p) => !p.spec.nodeName).length);
          for (const n of nodes) {
            const scan = all.filter((p) => p.spec.nodeName === n);
            expect(keys(cluster.pods.boundTo(n))).toEqual(keys(scan));
            expect(cluster.pods.boundTo(n)).toEqual(scan);
            if (JSON.stringify(scan) !== scanBefore.get(n)) expect(cluster.pods.nodeVersion(n)).not.toBe(versionsBefore.get(n));
          }
          expect([...cluster.pods.nodeNames()].sort()).toEqual([...new Set(all.flatMap((p) => (p.spec.nodeName ? [p.spec.nodeName] : [])))].sort());
        }
      }),
      { numRuns: 200 },
    );
  });
});
