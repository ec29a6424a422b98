import type { Node, NodeClaim } from '../../../src/ports/cluster.js';

/** A GPU NodeClaim with taints and startup taints, and a Node for it, for the registration and initialization tests. */
export const claim: NodeClaim = {
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

export function node(taints: Node['spec']['taints'], allocatable: Record<string, string>, ready = true): Node {
  return {
    metadata: { name: 'n', uid: 'n', labels: { gpu: 'h200' }, annotations: {}, finalizers: [], creationTimestamp: '' },
    spec: { taints },
    status: { capacity: allocatable, allocatable, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', reason: '', message: '', lastTransitionTime: '' }] },
  };
}
