/**
 * canaryInFlight reads each NodeClaim's launch options (sizes, zone) once per object and
 * resourceVersion. A claim written in place under a new resourceVersion, or one without any,
 * must be read afresh: the answer is always what the claim says now.
 */
import { describe, expect, it } from 'vitest';
import type { NodeClaim } from '../../src/ports/cluster.js';
import { OfferingMarks, formatMarks } from '../../src/provisioning/offering-marks.js';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import { ANNOTATION_OFFERING_MARKS } from '../../src/apis/well-known.js';
import { T0, makeNodeClaim, makeNodeClass } from './fixtures.js';

const [SKU_A, SKU_B] = STATIC_INSTANCE_TYPES.slice(0, 2).map((t) => t.name) as [string, string];
const ZONE = 'topology.kubernetes.io/zone';

function marksOver(claims: NodeClaim[]): OfferingMarks {
  const mark = { sku: SKU_A, capacityType: 'on-demand' as const, reason: 'AllocationFailed', markedAt: T0, expiresAt: T0 + 1000 };
  const nodeClass = makeNodeClass('eastus2', 'eastus2', { [ANNOTATION_OFFERING_MARKS]: formatMarks([mark])! });
  return OfferingMarks.observe([nodeClass], claims, STATIC_INSTANCE_TYPES, T0 + 3_600_000);
}

function inFlight(name: string, sku: string, rv: string | undefined, zones?: string[]): NodeClaim {
  const claim = makeNodeClaim(name, { nodePool: 'p', instanceTypes: [sku] });
  if (zones) claim.spec.requirements.push({ key: ZONE, operator: 'In', values: zones });
  if (rv !== undefined) claim.metadata.resourceVersion = rv;
  return claim;
}

describe('canaryInFlight', () => {
  it('answers from what each NodeClaim says now, however often it is asked', () => {
    const claim = inFlight('c1', SKU_A, '1', ['eastus2-1']);
    expect(marksOver([claim]).canaryInFlight(SKU_A, 'eastus2')).toBe(true);
    expect(marksOver([claim]).canaryInFlight(SKU_A, 'eastus2', 'eastus2-1')).toBe(true);
    expect(marksOver([claim]).canaryInFlight(SKU_A, 'eastus2', 'eastus2-2')).toBe(false);
    expect(marksOver([claim]).canaryInFlight(SKU_B, 'eastus2')).toBe(false);

    // Written in place with a new resourceVersion: another size, another zone.
    claim.spec.requirements = inFlight('c1', SKU_B, undefined, ['eastus2-2']).spec.requirements;
    claim.metadata.resourceVersion = '2';
    expect(marksOver([claim]).canaryInFlight(SKU_A, 'eastus2')).toBe(false);
    expect(marksOver([claim]).canaryInFlight(SKU_B, 'eastus2', 'eastus2-2')).toBe(true);

    // Launched into a zone: its labels decide.
    claim.metadata.labels = { ...claim.metadata.labels, 'node.kubernetes.io/instance-type': SKU_B, [ZONE]: 'eastus2-3' };
    claim.metadata.resourceVersion = '3';
    expect(marksOver([claim]).canaryInFlight(SKU_B, 'eastus2', 'eastus2-2')).toBe(false);
    expect(marksOver([claim]).canaryInFlight(SKU_B, 'eastus2', 'eastus2-3')).toBe(true);
  });

  it('reads a NodeClaim without a resourceVersion afresh each time', () => {
    const claim = inFlight('c2', SKU_A, undefined);
    expect(marksOver([claim]).canaryInFlight(SKU_A, 'eastus2')).toBe(true);
    claim.spec.requirements = inFlight('c2', SKU_B, undefined).spec.requirements;
    expect(marksOver([claim]).canaryInFlight(SKU_A, 'eastus2')).toBe(false);
  });
});
