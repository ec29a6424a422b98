import { describe, expect, it } from 'vitest';
import { registrationPatch } from '../../../src/lifecycle/nodeclaim/registration.js';
import { UNREGISTERED_TAINT_KEY } from '../../../src/apis/well-known.js';
import { claim, node } from './fixtures.js';

describe('registration as Karpenter', () => {
  it('swaps karpenter.sh/unregistered for the NodeClaim taints and startup taints, and syncs labels', () => {
    const patch = registrationPatch(claim, node([{ key: UNREGISTERED_TAINT_KEY, effect: 'NoExecute' }], {}));
    expect(patch?.taints).toEqual([claim.spec.taints[0], claim.spec.startupTaints[0]]);
    expect(patch?.metadata?.labels).toEqual({ 'karpenter.sh/nodepool': 'h200', 'karpenter.sh/registered': 'true' });
    expect(patch?.metadata?.finalizers).toEqual(['karpenter.sh/termination']);
  });

  it('adds the termination finalizer beside others, and not to a Node already being deleted', () => {
    const other = node([], {});
    other.metadata.finalizers = ['example.com/keep'];
    expect(registrationPatch(claim, other)?.metadata?.finalizers).toEqual(['example.com/keep', 'karpenter.sh/termination']);
    other.metadata.deletionTimestamp = '2026-11-23T00:00:00Z';
    expect(registrationPatch(claim, other)?.metadata?.finalizers).toBeUndefined();
  });

  it('leaves taints alone once registered, and writes nothing when all is in place', () => {
    const registered = node([claim.spec.taints[0]!], {});
    registered.metadata.labels = { ...claim.metadata.labels, 'karpenter.sh/registered': 'true' };
    registered.metadata.finalizers = ['karpenter.sh/termination'];
    expect(registrationPatch(claim, registered)).toBeUndefined();
  });
});
