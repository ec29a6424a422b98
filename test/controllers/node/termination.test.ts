import { describe, expect, it } from 'vitest';
import { NodeTerminationController } from '../../../src/controllers/node/termination.js';
import type { Node, NodeClaim } from '../../../src/ports/cluster.js';
import { FakeCluster } from '../../../src/sim/cluster.js';
import { VirtualClock } from '../../../src/sim/virtual-clock.js';
import { makeNodeClaim, makeNodePool } from '../../provisioning/fixtures.js';

const TERMINATION = 'karpenter.sh/termination';

function node(name: string, pool: string, finalizers = [TERMINATION]): Node {
  return {
    metadata: { name, uid: `uid-${name}`, labels: { 'karpenter.sh/nodepool': pool }, annotations: {}, finalizers, creationTimestamp: '2026-11-23T00:00:00Z' },
    spec: { providerID: `azure-flex:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/${name}`, taints: [] },
    status: { capacity: {}, allocatable: {}, conditions: [] },
  };
}

function claimFor(n: Node, pool: string, kind = 'AzureFlexNodeClass'): NodeClaim {
  const c = makeNodeClaim(`claim-${n.metadata.name}`, { nodePool: pool, nodeName: n.metadata.name });
  return { ...c, spec: { ...c.spec, nodeClassRef: { ...c.spec.nodeClassRef, kind } }, status: { ...c.status, providerID: n.spec.providerID!.toUpperCase() } };
}

describe('node termination (kubectl delete node)', () => {
  it('deletes the NodeClaim of a deleting Node of ours; leaves other Karpenters\' Nodes and Nodes not being deleted alone', async () => {
    const cluster = new FakeCluster(new VirtualClock(Date.parse('2026-11-23T00:00:00Z')));
    cluster.putNodePool(makeNodePool('gpu'));
    cluster.putNodePool(makeNodePool('nap', { kind: 'AKSNodeClass' }));
    const ours = node('ours', 'gpu');
    const nap = node('nap', 'nap');
    const live = node('live', 'gpu');
    for (const n of [ours, nap, live]) cluster.putNode(n);
    cluster.putNodeClaim(claimFor(ours, 'gpu'));
    cluster.putNodeClaim(claimFor(nap, 'nap', 'AKSNodeClass'));
    cluster.putNodeClaim(claimFor(live, 'gpu'));
    await cluster.deleteNode('ours');
    await cluster.deleteNode('nap');

    const controller = new NodeTerminationController({ cluster });
    await controller.reconcile();
    await controller.reconcile();

    expect(cluster.nodeClaims.get('claim-ours')?.metadata.deletionTimestamp).toBeDefined();
    expect(cluster.nodeClaims.get('claim-nap')?.metadata.deletionTimestamp).toBeUndefined();
    expect(cluster.nodeClaims.get('claim-live')?.metadata.deletionTimestamp).toBeUndefined();
    // The Node keeps its finalizer until the NodeClaim's machine has removed the VM.
    expect((await cluster.listNodes()).find((n) => n.metadata.name === 'ours')?.metadata.finalizers).toEqual([TERMINATION]);
  });

  it('releases a deleting Node of one of our NodePools whose NodeClaim is gone, never another Karpenter\'s', async () => {
    const cluster = new FakeCluster(new VirtualClock(Date.parse('2026-11-23T00:00:00Z')));
    cluster.putNodePool(makeNodePool('gpu'));
    cluster.putNodePool(makeNodePool('nap', { kind: 'AKSNodeClass' }));
    cluster.putNode(node('orphan', 'gpu', ['example.com/keep', TERMINATION]));
    cluster.putNode(node('nap-orphan', 'nap'));
    await cluster.deleteNode('orphan');
    await cluster.deleteNode('nap-orphan');

    await new NodeTerminationController({ cluster }).reconcile();

    const nodes = new Map((await cluster.listNodes()).map((n) => [n.metadata.name, n]));
    expect(nodes.get('orphan')?.metadata.finalizers).toEqual(['example.com/keep']);
    expect(nodes.get('nap-orphan')?.metadata.finalizers).toEqual([TERMINATION]);
  });
});
