import { describe, expect, it } from 'vitest';
import { notInitializedReason, registrationPatch } from '../../../src/lifecycle/nodeclaim/registration.js';
import type { Node, NodeClaim } from '../../../src/ports/cluster.js';
import { UNREGISTERED_TAINT_KEY } from '../../../src/apis/well-known.js';

const claim: NodeClaim = {
  metadata: { name: 'h200-abcde', uid: 'u', labels: { 'karpenter.sh/nodepool': 'h200', gpu: 'h200' }, annotations: {}, finalizers: [], creationTimestamp: '' },
  spec: {
    nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'x' },
    requirements: [],
    resources: { requests: { cpu: '8', memory: '64Gi', 'nvidia.com/gpu': '8' } },
    taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }],
    startupTaints: [{ key: 'node.cilium.io/agent-not-ready', effect: 'NoExecute' }],
  },
  status: { conditions: [] },
};

function node(taints: Node['spec']['taints'], allocatable: Record<string, string>, ready = true): Node {
  return {
    metadata: { name: 'n', uid: 'n', labels: { gpu: 'h200' }, annotations: {}, finalizers: [], creationTimestamp: '' },
    spec: { taints },
    status: { capacity: allocatable, allocatable, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', reason: '', message: '', lastTransitionTime: '' }] },
  };
}

describe('registration and initialization as Karpenter', () => {
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
