/**
 * NodePoolTotals carries each pool's summed NodeClaim capacity from sync to sync; whatever
 * the NodeClaims do in between (launched, registered, replaced, deleted, added, listed in
 * another order), the sum and the node count must be what summing the list afresh gives,
 * down to which resources are named at all.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import { NodePoolTotals, claimCapacity } from '../../src/controllers/nodepool/status.js';
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
    const nodeClass = makeNodeClass();
    const typesByName = new Map(STATIC_INSTANCE_TYPES.map((t) => [t.name, t]));
    fc.assert(
      fc.property(fc.array(fc.array(fc.option(claimArb, { nil: undefined }), { minLength: 6, maxLength: 6 }), { minLength: 1, maxLength: 6 }), fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }), (steps, reverse) => {
        const totals = new NodePoolTotals();
        const kept = new Map<string, { spec: string; claim: NodeClaim }>();
        steps.forEach((step, s) => {
          let claims: NodeClaim[] = [];
          step.forEach((spec, i) => {
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
              nodePool: 'cpu', instanceTypes: spec.types,
              ...(spec.stage !== 'planned' ? { launchedAs: it.name, capacity: size, allocatable: size } : {}),
              ...(spec.stage === 'registered' ? { nodeName: `node-${i}` } : {}),
            });
            kept.set(name, { spec: json, claim });
            claims.push(claim);
          });
          if (reverse[s]) claims = claims.reverse();
          const fresh: Resources = {};
          for (const c of claims) addInto(fresh, claimCapacity(c, typesByName, nodeClass));
          const got = totals.sum('cpu', claims, nodeClass, typesByName, STATIC_INSTANCE_TYPES);
          expect({ ...got.total }).toEqual(fresh);
          expect(Object.keys(got.total).sort()).toEqual(Object.keys(fresh).sort());
          expect(got.nodes).toBe(claims.filter((c) => c.status.nodeName).length);
        });
      }),
      { numRuns: 300 },
    );
  });
});
