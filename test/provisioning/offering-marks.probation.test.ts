/**
 * proven() with a ProbationMemo looks only at the NodeClaims written or added since the last
 * pass for a probation mark it found unproven then; whatever the NodeClaims, the NodeClasses'
 * locations and the marks do between passes, it must answer what a pass without it answers.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import type { NodeClaim } from '../../src/ports/cluster.js';
import { OfferingMarks, ProbationMemo, formatMarks, type OfferingMark } from '../../src/provisioning/offering-marks.js';
import { ANNOTATION_OFFERING_MARKS } from '../../src/apis/well-known.js';
import { makeNodeClaim, makeNodeClass } from './fixtures.js';

const SKUS = STATIC_INSTANCE_TYPES.slice(0, 3).map((t) => t.name);
const T0 = Date.parse('2026-01-01T00:00:00Z');

const claimArb = fc.option(fc.record({
  launched: fc.boolean(),
  sku: fc.constantFrom(...SKUS),
  zone: fc.constantFrom('eastus2-1', 'eastus2-2'),
  /** Seconds after T0 it was created. */
  created: fc.constantFrom(0, 30, 60, 120),
  nodeClass: fc.constantFrom('a', 'b'),
}), { nil: undefined, freq: 3 });

const markArb = fc.record({
  sku: fc.constantFrom(...SKUS),
  zone: fc.option(fc.constantFrom('eastus2-1', 'eastus2-2'), { nil: undefined }),
  markedAt: fc.constantFrom(0, 60),
  expired: fc.boolean(),
});

const stepArb = fc.record({
  claims: fc.array(claimArb, { minLength: 6, maxLength: 6 }),
  marksA: fc.array(markArb, { maxLength: 2 }),
  marksB: fc.array(markArb, { maxLength: 2 }),
  /** NodeClass b's location: the same region as a's, or another. */
  bRegion: fc.constantFrom('eastus2', 'westus3'),
  copies: fc.boolean(),
});

describe('ProbationMemo', () => {
  it('proves exactly the marks a pass without it proves', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 2, maxLength: 6 }), (steps) => {
        const memo = new ProbationMemo();
        const kept = new Map<string, { spec: string; claim: NodeClaim }>();
        const now = T0 + 3_600_000;
        for (const step of steps) {
          const claims: NodeClaim[] = [];
          step.claims.forEach((spec, i) => {
            if (!spec) return;
            const name = `claim-${i}`;
            const json = JSON.stringify(spec);
            const was = kept.get(name);
            if (was && was.spec === json) {
              claims.push(step.copies ? structuredClone(was.claim) : was.claim);
              return;
            }
            const claim = makeNodeClaim(name, { nodePool: 'p', launchedAs: spec.sku, labels: { 'topology.kubernetes.io/zone': spec.zone }, creationTimestamp: new Date(T0 + spec.created * 1000).toISOString() });
            claim.spec.nodeClassRef.name = spec.nodeClass;
            if (spec.launched) claim.status.providerID = `azure:///x/${name}`;
            kept.set(name, { spec: json, claim });
            claims.push(claim);
          });
          const marksOf = (list: typeof step.marksA): OfferingMark[] => list.map((m) => ({
            sku: m.sku, ...(m.zone ? { zone: m.zone } : {}), capacityType: 'on-demand', reason: 'AllocationFailed',
            markedAt: T0 + m.markedAt * 1000, expiresAt: m.expired ? now - 1 : now + 1,
          }));
          const nodeClasses = [
            makeNodeClass('a', 'eastus2', { [ANNOTATION_OFFERING_MARKS]: formatMarks(marksOf(step.marksA)) ?? '' }),
            makeNodeClass('b', step.bRegion, { [ANNOTATION_OFFERING_MARKS]: formatMarks(marksOf(step.marksB)) ?? '' }),
          ];
          const withMemo = OfferingMarks.observe(nodeClasses, claims, STATIC_INSTANCE_TYPES, now).proven(memo);
          const fresh = OfferingMarks.observe(nodeClasses, claims, STATIC_INSTANCE_TYPES, now).proven();
          expect(withMemo).toEqual(fresh);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('a NodeClaim that stays the same object proves a mark once its NodeClass moves to the mark\'s region', () => {
    const now = T0 + 3_600_000;
    const mark: OfferingMark = { sku: SKUS[0]!, capacityType: 'on-demand', reason: 'AllocationFailed', markedAt: T0, expiresAt: now - 1 };
    const claim = makeNodeClaim('c', { nodePool: 'p', launchedAs: SKUS[0]!, creationTimestamp: new Date(T0 + 60_000).toISOString() });
    claim.spec.nodeClassRef.name = 'b';
    claim.status.providerID = 'azure:///x/c';
    const classes = (bRegion: string) => [makeNodeClass('a', 'eastus2', { [ANNOTATION_OFFERING_MARKS]: formatMarks([mark])! }), makeNodeClass('b', bRegion)];
    const memo = new ProbationMemo();
    expect(OfferingMarks.observe(classes('westus3'), [claim], STATIC_INSTANCE_TYPES, now).proven(memo).size).toBe(0);
    expect(OfferingMarks.observe(classes('eastus2'), [claim], STATIC_INSTANCE_TYPES, now).proven(memo).get('a')).toEqual([mark]);
  });
});
