import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StaticInstanceTypeCatalog } from '../../src/catalog/skus.js';
import { DisruptionController } from '../../src/disruption/controller.js';
import type { ClusterPort, Pod } from '../../src/ports/cluster.js';
import type { FakeCluster } from '../../src/sim/cluster.js';
import { SeededRandom, VirtualClock } from '../../src/sim/virtual-clock.js';
import { T0, makePod, silentLog } from '../provisioning/fixtures.js';
import { addClaim, changeImage, clusterWithNodes, finishTermination, makeNode } from './helpers.js';

/**
 * The controller caches per-object facts by resourceVersion and skips passes in which nothing
 * it reads changed and no deadline passed. It must decide exactly what a controller deciding
 * from scratch decides: here a reference controller reads the same cluster through a port with
 * no cache tokens and no resourceVersions (so it can neither cache nor skip) and writes nothing.
 */
type Op =
  | { op: 'advance'; minutes: number }
  | { op: 'pod'; claim: number; guarded: boolean }
  | { op: 'unpod'; index: number }
  | { op: 'pending'; on: boolean }
  | { op: 'finish' }
  | { op: 'claim'; expire: boolean }
  | { op: 'guardNode'; claim: number }
  | { op: 'notReady'; claim: number }
  | { op: 'image' }
  | { op: 'poolStatus' }
  | { op: 'policy' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('advance' as const), minutes: fc.integer({ min: 0, max: 12 }) }), weight: 4 },
  { arbitrary: fc.record({ op: fc.constant('pod' as const), claim: fc.nat(7), guarded: fc.integer({ min: 0, max: 4 }).map((n) => n === 0) }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('unpod' as const), index: fc.nat(20) }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('pending' as const), on: fc.boolean() }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('finish' as const) }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('claim' as const), expire: fc.boolean() }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('guardNode' as const), claim: fc.nat(7) }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('notReady' as const), claim: fc.nat(7) }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('image' as const) }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('poolStatus' as const) }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('policy' as const) }), weight: 1 },
);

/** What a controller without informer caches would see: copies, no resourceVersions, no tokens; writes go nowhere. */
function fromScratch(cluster: FakeCluster): ClusterPort {
  const strip = <T extends { metadata: { resourceVersion?: string } }>(objects: T[]): T[] =>
    objects.map((o) => {
      const copy = structuredClone(o);
      delete copy.metadata.resourceVersion;
      return copy;
    });
  const dry = new Set(['createNodeClaim', 'patchNodeClaimMetadata', 'deleteNodeClaim', 'recordEvent', 'updateNodePoolStatus']);
  return new Proxy(cluster, {
    get(target, prop) {
      if (prop === 'cacheVersion' || prop === 'seenThrough') return undefined;
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      if (dry.has(String(prop))) return async () => (prop === 'patchNodeClaimMetadata' || prop === 'createNodeClaim' ? {} : undefined);
      if (String(prop).startsWith('list')) return async () => strip(await (value as () => Promise<Array<{ metadata: { resourceVersion?: string } }>>).call(target));
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

async function apply(cluster: FakeCluster, clock: VirtualClock, op: Op, counter: { n: number }): Promise<void> {
  const claims = [...cluster.nodeClaims.values()].filter((c) => !c.metadata.deletionTimestamp);
  const claimAt = (i: number) => (claims.length > 0 ? claims[i % claims.length]! : undefined);
  switch (op.op) {
    case 'advance':
      await clock.runUntil(clock.now() + op.minutes * 60_000);
      return;
    case 'pod': {
      const claim = claimAt(op.claim);
      if (!claim) return;
      const name = `p${counter.n++}`;
      const pod = makePod(name, { nodeName: claim.status.nodeName!, requests: { cpu: '1', memory: '2Gi' }, ...(op.guarded ? { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } } : {}) });
      cluster.putPod({ ...pod, metadata: { ...pod.metadata, uid: `uid-${name}` } });
      return;
    }
    case 'unpod': {
      const pods = [...cluster.pods.values()].filter((p) => p.spec.nodeName);
      const pod = pods[op.index % Math.max(1, pods.length)];
      if (pod) cluster.removePod(pod.metadata.namespace, pod.metadata.name);
      return;
    }
    case 'pending':
      if (op.on) {
        const pending: Pod = makePod('waiting', { requests: { cpu: '1' } });
        cluster.putPod({ ...pending, metadata: { ...pending.metadata, uid: 'uid-waiting' } });
      } else cluster.removePod('default', 'waiting');
      return;
    case 'finish':
      for (const claim of [...cluster.nodeClaims.values()]) {
        if (!claim.metadata.deletionTimestamp) continue;
        for (const pod of [...cluster.pods.values()]) if (pod.spec.nodeName === claim.status.nodeName) cluster.removePod(pod.metadata.namespace, pod.metadata.name);
        await cluster.deleteNode(claim.status.nodeName!);
        await finishTermination(cluster, claim.metadata.name);
      }
      return;
    case 'claim':
      addClaim(cluster, `c${counter.n++}`, { createdAt: clock.now(), ...(op.expire ? { expireAfter: '40m' } : {}) });
      return;
    case 'guardNode': {
      const node = cluster.nodes.get(claimAt(op.claim)?.status.nodeName ?? '');
      if (!node) return;
      const guarded = node.metadata.annotations['karpenter.sh/do-not-disrupt'] === 'true';
      await cluster.patchNode(node.metadata.name, { metadata: { annotations: { 'karpenter.sh/do-not-disrupt': guarded ? null : 'true' } } });
      return;
    }
    case 'notReady': {
      const node = cluster.nodes.get(claimAt(op.claim)?.status.nodeName ?? '');
      if (!node) return;
      const ready = node.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True');
      cluster.putNode({ ...node, status: { ...node.status, conditions: ready ? [] : makeNode(node.metadata.name).status.conditions } });
      return;
    }
    case 'image':
      changeImage(cluster, String(counter.n++));
      return;
    case 'poolStatus': {
      const pool = cluster.nodePools.get('default')!;
      await cluster.updateNodePoolStatus('default', { ...pool.status, nodes: counter.n++ });
      return;
    }
    case 'policy': {
      const pool = cluster.nodePools.get('default')!;
      const policy = pool.spec.disruption.consolidationPolicy === 'WhenEmpty' ? 'WhenEmptyOrUnderutilized' : 'WhenEmpty';
      cluster.putNodePool({ ...pool, spec: { ...pool.spec, disruption: { ...pool.spec.disruption, consolidationPolicy: policy } } });
      return;
    }
  }
}

describe('DisruptionController caching and quiet passes', () => {
  it('decides what a controller deciding every pass from scratch decides', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 60 }), fc.boolean(), fc.boolean(), async (ops, scheduled, underutilized) => {
        const clock = new VirtualClock(T0);
        const cluster = clusterWithNodes(clock, 5, {
          consolidateAfter: '5m',
          consolidationPolicy: underutilized ? 'WhenEmptyOrUnderutilized' : 'WhenEmpty',
          // A scheduled budget that blocks disruption 7 minutes of every 20.
          budgets: scheduled ? [{ nodes: '50%' }, { nodes: '0', schedule: '*/20 * * * *', duration: '7m' }] : [{ nodes: '50%' }],
        });
        const options = { catalog: new StaticInstanceTypeCatalog(), clock, log: silentLog };
        const controller = new DisruptionController({ ...options, cluster, random: new SeededRandom(3) });
        const reference = new DisruptionController({ ...options, cluster: fromScratch(cluster), random: new SeededRandom(3) });
        const counter = { n: 0 };
        const summary = (ds: Awaited<ReturnType<DisruptionController['reconcile']>>) => ds.map((d) => [d.nodeClaim, d.kind, d.detail]);
        for (const op of ops) {
          await apply(cluster, clock, op, counter);
          const expected = summary(await reference.reconcile());
          expect(summary(await controller.reconcile())).toEqual(expected);
        }
      }),
      { numRuns: 80 },
    );
  });
});
