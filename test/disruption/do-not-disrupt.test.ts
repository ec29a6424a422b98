import { describe, expect, it } from 'vitest';
import { nodeClaimDoNotDisruptReason, nodeDoNotDisruptReason, podDoNotDisruptReason } from '../../src/disruption/do-not-disrupt.js';
import { makeNodeClaim, makePod } from '../provisioning/fixtures.js';
import { makeNode } from './helpers.js';

describe('do-not-disrupt', () => {
  it('is honoured on the NodeClaim, the Node and running pods', () => {
    const claim = makeNodeClaim('a', { nodePool: 'p' });
    const guard = { 'karpenter.sh/do-not-disrupt': 'true' };
    expect(nodeClaimDoNotDisruptReason(claim)).toBeUndefined();
    expect(nodeClaimDoNotDisruptReason(makeNodeClaim('b', { nodePool: 'p', annotations: guard }))).toMatch(/NodeClaim b/);
    expect(nodeDoNotDisruptReason(makeNode('n'))).toBeUndefined();
    expect(nodeDoNotDisruptReason(makeNode('n', guard))).toMatch(/Node n/);
    expect(podDoNotDisruptReason([])).toBeUndefined();
    expect(podDoNotDisruptReason([makePod('web', { nodeName: 'n' }), makePod('job', { nodeName: 'n', annotations: guard })])).toMatch(/pod default\/job/);
    expect(podDoNotDisruptReason([makePod('done', { nodeName: 'n', annotations: guard, phase: 'Succeeded' })])).toBeUndefined();
  });
});
