/**
 * NodePoolTotals carries each pool's summed NodeClaim capacity from sync to sync; whatever
 * the NodeClaims do in between (launched, registered, replaced, deleted, added, listed in
 * another order, named twice, moved between pools, their pool's NodeClass changed), each
 * pool's sum and node count must be what summing its NodeClaims afresh gives, down to which
 * resources are named at all.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import { NodePoolTotals, claimCapacity } from '../../src/provisioning/nodepool-totals.js';
import type { NodeClaim } from '../../src/ports/cluster.js';
import { addInto, type Resources } from '../../src/provisioning/resources.js';
import { makeNodeClaim, makeNodeClass } from './fixtures.js';

const TYPES = STATIC_INSTANCE_TYPES.map((t) => t.name);

const claimArb = fc.record({
  types: fc.subarray(TYPES, { minLength: 1, maxLength: 3 }),
  stage: fc.constantFrom<'planned' | 'launched' | 'registered'>('planned', 'launched', 'registered'),
  /** A reported capacity that names a resource the catalog's do not. */
  extra: fc.boolean(),
});

describe('NodePoolTotals', () => {
  it('sums what a fresh sum gives, however the NodeClaims changed', () => {
    const classes = [makeNodeClass(), { ...makeNodeClass('small-pods'), spec: { ...makeNodeClass().spec, maxPodsPerNode: 30 } }];
    const typesByName = new Map(STATIC_INSTANCE_TYPES.map((t) => [t.name, t]));
    const pools = ['cpu', 'gpu'];
    const stepArb = fc.record({
      claims: fc.array(fc.option(claimArb, { nil: undefined }), { minLength: 6, maxLength: 6 }),
      reverse: fc.boolean(),
      /** The NodeClass of pool gpu this step. */
      gpuClass: fc.constantFrom(0, 1),
      /** A NodeClaim listed twice. */
      twice: fc.option(fc.nat(5), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 6 }), (steps) => {
        const totals = new NodePoolTotals();
        const kept = new Map<string, { spec: string; claim: NodeClaim }>();
        for (const step of steps) {
          let claims: NodeClaim[] = [];
          step.claims.forEach((spec, i) => {
            if (!spec) return;
            const name = `claim-${i}`;
            const json = JSON.stringify(spec);
            const was = kept.get(name);
            if (was?.spec === json) {
              claims.push(was.claim);
              return;
            }
            const it = STATIC_INSTANCE_TYPES.find((t) => t.name === spec.types[0])!;
            const size = { cpu: String(it.vcpu), memory: `${it.memoryMiB}Mi`, ...(spec.extra ? { 'example.com/fpga': '1' } : {}) };
            const claim = makeNodeClaim(name, {
              nodePool: pools[spec.types.length % 2]!, instanceTypes: spec.types,
              ...(spec.stage !== 'planned' ? { launchedAs: it.name, capacity: size, allocatable: size } : {}),
              ...(spec.stage === 'registered' ? { nodeName: `node-${i}` } : {}),
            });
            kept.set(name, { spec: json, claim });
            claims.push(claim);
          });
          if (step.twice !== undefined && claims.length > 0) claims.push(claims[step.twice % claims.length]!);
          if (step.reverse) claims = claims.reverse();
          const classOf = (pool: string) => (pool === 'gpu' ? classes[step.gpuClass] : classes[0]);
          totals.update(claims, classOf, typesByName, STATIC_INSTANCE_TYPES);
          for (const pool of pools) {
            const mine = claims.filter((c) => c.metadata.labels['karpenter.sh/nodepool'] === pool);
            const fresh: Resources = {};
            for (const c of mine) addInto(fresh, claimCapacity(c, typesByName, classOf(pool)));
            const got = totals.of(pool);
            expect({ ...got.total }).toEqual(fresh);
            expect(Object.keys(got.total).sort()).toEqual(Object.keys(fresh).sort());
            expect(got.nodes).toBe(mine.filter((c) => c.status.nodeName).length);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
