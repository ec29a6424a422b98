import { describe, expect, it } from 'vitest';
import { nodeClaimDoNotDisruptReason, nodeDoNotDisruptReason, podDoNotDisruptReason } from '../../src/disruption/do-not-disrupt.js';
import { driftReason } from '../../src/disruption/drift.js';
import { isReschedulable, lastPodEvent, reschedulableSignature } from '../../src/disruption/emptiness.js';
import { expiresAt, isExpired } from '../../src/disruption/expiration.js';
import { nodePoolTemplateHash } from '../../src/provisioning/nodepool-hash.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { T0, makeNodeClaim, makeNodePool, makePod } from '../provisioning/fixtures.js';
import { addClaim, clusterWithNodes, makeNode } from './helpers.js';

describe('expiration', () => {
  it('expires expireAfter after creation, never with Never', () => {
    const claim = makeNodeClaim('a', { nodePool: 'p', expireAfter: '1h' });
    expect(expiresAt(claim)).toBe(T0 + 3_600_000);
    expect(isExpired(claim, T0 + 3_599_999)).toBe(false);
    expect(isExpired(claim, T0 + 3_600_000)).toBe(true);
    expect(isExpired(makeNodeClaim('b', { nodePool: 'p', expireAfter: 'Never' }), T0 + 1e12)).toBe(false);
  });
});

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

describe('emptiness', () => {
  it('ignores DaemonSet, terminal and terminating pods', () => {
    expect(isReschedulable(makePod('ds', { nodeName: 'n', ownerKind: 'DaemonSet' }))).toBe(false);
    expect(isReschedulable(makePod('done', { nodeName: 'n', phase: 'Succeeded' }))).toBe(false);
    expect(isReschedulable(makePod('leaving', { nodeName: 'n', deletionTimestamp: '2026-01-01T00:00:00Z' }))).toBe(false);
    expect(isReschedulable(makePod('web', { nodeName: 'n' }))).toBe(true);
    expect(reschedulableSignature([makePod('done', { nodeName: 'n', phase: 'Failed' })])).toBe('');
  });

  it('keeps the last pod event as upstream writes lastPodEventTime (10 s dedupe)', () => {
    // First look (after a start or restart): what the NodeClaim says, nothing new.
    expect(lastPodEvent(false, undefined, undefined, 100_000)).toBeUndefined();
    expect(lastPodEvent(false, undefined, 50_000, 100_000)).toBe(50_000);
    // A change is an event now, unless the last one was less than 10 s ago.
    expect(lastPodEvent(true, 50_000, 50_000, 100_000)).toBe(100_000);
    expect(lastPodEvent(true, 95_000, 50_000, 100_000)).toBe(95_000);
    expect(lastPodEvent(true, undefined, undefined, 100_000)).toBe(100_000);
    // What this process saw and the stored value: the later one (a write not listed yet, or another writer's).
    expect(lastPodEvent(false, 100_000, 50_000, 200_000)).toBe(100_000);
    expect(lastPodEvent(false, 100_000, 150_000, 200_000)).toBe(150_000);
  });
});

