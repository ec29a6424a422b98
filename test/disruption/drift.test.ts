import { describe, expect, it } from 'vitest';
import { driftReason } from '../../src/disruption/drift.js';
import { nodePoolTemplateHash } from '../../src/provisioning/nodepool-hash.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { T0, makeNodePool } from '../provisioning/fixtures.js';
import { addClaim, clusterWithNodes } from './helpers.js';

describe('drift', () => {
  it('detects NodeClass changes through the stamped hash', () => {
    const cluster = clusterWithNodes(new VirtualClock(T0), 1);
    const claim = cluster.nodeClaims.get('default-n0')!;
    const pool = cluster.nodePools.get('default')!;
    const nodeClass = cluster.nodeClasses.get('eastus2')!;
    expect(driftReason(claim, pool, nodeClass)).toBeUndefined();
    const newImage = { ...nodeClass, spec: { ...nodeClass.spec, imageReference: { publisher: 'p', offer: 'o', sku: 's', version: '2' } } };
    expect(driftReason(claim, pool, newImage)).toBe('NodeClassDrifted');
  });

  it('detects NodePool template changes but not expireAfter changes', () => {
    const cluster = clusterWithNodes(new VirtualClock(T0), 1);
    const claim = cluster.nodeClaims.get('default-n0')!;
    const pool = cluster.nodePools.get('default')!;
    const relabelled = makeNodePool('default', { labels: { team: 'ml' } });
    expect(driftReason(claim, relabelled, cluster.nodeClasses.get('eastus2'))).toBe('NodePoolDrifted');
    const longerExpiry = makeNodePool('default', { expireAfter: '24h' });
    expect(driftReason(claim, longerExpiry, cluster.nodeClasses.get('eastus2'))).toBeUndefined();
    expect(driftReason(claim, pool, cluster.nodeClasses.get('eastus2'))).toBeUndefined();
  });

  it('does not call claims stamped with another hash version drifted', () => {
    const cluster = clusterWithNodes(new VirtualClock(T0), 0);
    const claim = addClaim(cluster, 'old', { annotations: { 'karpenter.sh/nodepool-hash': 'x', 'karpenter.sh/nodepool-hash-version': 'v0' } });
    expect(driftReason(claim, cluster.nodePools.get('default')!, cluster.nodeClasses.get('eastus2'))).toBeUndefined();
  });

  it('detects requirements the claim no longer satisfies', () => {
    const cluster = clusterWithNodes(new VirtualClock(T0), 1);
    const claim = cluster.nodeClaims.get('default-n0')!;
    const gpuOnly = makeNodePool('default', { requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_ND96isr_H200_v5'] }] });
    // Requirements are not part of the template hash, so only the requirements check fires.
    expect(nodePoolTemplateHash(gpuOnly)).toBe(claim.metadata.annotations['karpenter.sh/nodepool-hash']);
    expect(driftReason(claim, gpuOnly, cluster.nodeClasses.get('eastus2'))).toBe('RequirementsDrifted');
  });
});
