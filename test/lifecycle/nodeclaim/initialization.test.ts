import { describe, expect, it } from 'vitest';
import { notInitializedReason } from '../../../src/lifecycle/nodeclaim/initialization.js';
import { UNREGISTERED_TAINT_KEY } from '../../../src/apis/well-known.js';
import { claim, node } from './fixtures.js';

describe('initialization as Karpenter', () => {
  it('is initialized only when Ready, startup taints gone and nvidia.com/gpu allocatable', () => {
    const alloc = { cpu: '96', memory: '1800Gi', pods: '110' };
    expect(notInitializedReason(claim, node([], alloc, false))).toBe('node not Ready');
    expect(notInitializedReason(claim, node([{ key: UNREGISTERED_TAINT_KEY, effect: 'NoExecute' }], alloc))).toMatch(/unregistered/);
    expect(notInitializedReason(claim, node([claim.spec.startupTaints[0]!], alloc))).toMatch(/startup taint node.cilium.io/);
    expect(notInitializedReason(claim, node([], alloc))).toBe('requested resource nvidia.com/gpu not allocatable yet');
    expect(notInitializedReason(claim, node([], { ...alloc, 'nvidia.com/gpu': '0' }))).toMatch(/nvidia.com\/gpu/);
    expect(notInitializedReason(claim, node([claim.spec.taints[0]!], { ...alloc, 'nvidia.com/gpu': '8' }))).toBeUndefined();
  });
});
