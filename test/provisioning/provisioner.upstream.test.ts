/**
 * Upstream Karpenter's provisioning cases (sigs.k8s.io/karpenter v1.15
 * pkg/controllers/provisioning/suite_test.go), ported by their semantics on the scheduler:
 * each case names the upstream test it mirrors.
 */
import { describe, expect, it } from 'vitest';
import { LABEL_HOSTNAME, LABEL_NODEPOOL, LABEL_ZONE } from '../../src/apis/well-known.js';
import type { Taint } from '../../src/ports/cluster.js';
import { makeNodeClaim, makeNodePool } from './fixtures.js';
import { TYPES, UpstreamCluster, antiAffinity, pod, pods, term } from './scheduling/harness.js';

const apart = antiAffinity(term(LABEL_HOSTNAME, { app: 'foo' }));
const preferNoSchedule: Taint = { key: 'foo', value: 'bar', effect: 'PreferNoSchedule' };

describe('upstream provisioning suite_test.go: Resource Limits', () => {
  it('should not schedule when limits are exceeded', () => {
    const c = new UpstreamCluster([makeNodePool('default', { limits: { cpu: '20' } })]);
    c.nodeClaims.push(makeNodeClaim('held', { nodePool: 'default', capacity: { cpu: '100' } }));
    const p = pod();
    c.provision(p);
    expect(c.nodeOf(p)).toBeUndefined();
  });

  it('should schedule if limits would be met', () => {
    const c = new UpstreamCluster([makeNodePool('default', { limits: { cpu: '2' } })]);
    const p = pod({}, {}, { requests: { cpu: '1500m', memory: '128Mi' } });
    c.provision(p);
    expect(c.nodeOf(p)).toBeDefined();
  });

  it('should partially schedule if limits would be exceeded', () => {
    const c = new UpstreamCluster([makeNodePool('default', { limits: { cpu: '3' } })]);
    const both = pods(2, { app: 'foo' }, apart, { requests: { cpu: '1500m', memory: '128Mi' } });
    c.provision(...both);
    expect(both.filter((p) => c.nodeOf(p)).length).toBe(1);
  });

  it('should not schedule if limits would be exceeded', () => {
    const c = new UpstreamCluster([makeNodePool('default', { limits: { cpu: '2' } })]);
    const p = pod({}, {}, { requests: { cpu: '2100m', memory: '128Mi' } });
    c.provision(p);
    expect(c.nodeOf(p)).toBeUndefined();
  });

  it('should not schedule to a nodepool after a scheduling round if limits would be exceeded', () => {
    const c = new UpstreamCluster([makeNodePool('default', { limits: { cpu: '3' } })]);
    const first = pod({}, {}, { requests: { cpu: '1500m', memory: '128Mi' } });
    c.provision(first);
    expect(c.nodeOf(first)).toBeDefined();
    // The 2-vCPU node already counts: a second one would make 4 > 3.
    const second = pod({}, {}, { requests: { cpu: '1750m', memory: '128Mi' } });
    c.provision(second);
    expect(c.nodeOf(second)).toBeUndefined();
  });

  it('should not schedule if limits would be exceeded (node)', () => {
    const c = new UpstreamCluster([makeNodePool('default', { limits: { nodes: '2' } })]);
    const batch = pods(3, { app: 'foo' }, apart, { requests: { cpu: '1500m', memory: '128Mi' } });
    for (const p of batch) c.provision(p);
    expect(batch.map((p) => c.nodeOf(p) !== undefined)).toEqual([true, true, false]);
  });

  it('should not schedule if limits would be exceeded (node), counting NodeClaims planned in the same round', () => {
    const c = new UpstreamCluster([makeNodePool('default', { limits: { nodes: '2' } })]);
    const batch = pods(3, { app: 'foo' }, apart, { requests: { cpu: '1500m', memory: '128Mi' } });
    const result = c.provision(...batch);
    expect(result.nodeClaims).toHaveLength(2);
    expect(result.unschedulable).toHaveLength(1);
    expect(result.unschedulable[0]!.reason).toMatch(/limit nodes=2 reached/);
  });

  it('should not schedule if limits would be exceeded (node), counting in-flight NodeClaims', () => {
    const c = new UpstreamCluster([makeNodePool('default', { limits: { nodes: '2' } })]);
    // Two NodeClaims still launching (no capacity known yet), each too small for the pod.
    for (const name of ['a', 'b']) c.nodeClaims.push(makeNodeClaim(name, { nodePool: 'default', instanceTypes: [TYPES[0]!.name] }));
    const result = c.provision(pod({}, {}, { requests: { cpu: '3', memory: '128Mi' } }));
    expect(result.nodeClaims).toEqual([]);
    expect(result.unschedulable[0]!.reason).toMatch(/limit nodes=2 reached/);
  });
});

describe('upstream provisioning suite_test.go: Taints', () => {
  it('should schedule pods that tolerate taints', () => {
    const taint: Taint = { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' };
    const c = new UpstreamCluster([makeNodePool('default', { taints: [taint] })]);
    const tolerating = [
      pod({}, { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Equal', value: 'true', effect: 'NoSchedule' }] }),
      pod({}, { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] }),
      pod({}, { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }] }),
      pod({}, { tolerations: [{ operator: 'Exists' }] }),
    ];
    const intolerant = pod();
    c.provision(...tolerating, intolerant);
    for (const p of tolerating) expect(c.nodeOf(p)).toBeDefined();
    expect(c.nodeOf(intolerant)).toBeUndefined();
  });

  it('should tolerate PreferNoSchedule taint only after trying to relax Affinity terms', () => {
    const c = new UpstreamCluster([makeNodePool('default', { taints: [preferNoSchedule] })]);
    const preferred = [LABEL_ZONE, 'node.kubernetes.io/instance-type'].map((key) => ({
      weight: 1, preference: { matchExpressions: [{ key, operator: 'In' as const, values: ['invalid'] }] },
    }));
    const p = pod({}, { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred } } });
    c.provision(p);
    expect(c.nodeOf(p)?.spec.taints).toContainEqual(preferNoSchedule);
  });

  it('should tolerate PreferNoSchedule taint as the last relaxation (a pod without preferences)', () => {
    const c = new UpstreamCluster([makeNodePool('default', { taints: [preferNoSchedule] })]);
    const batch = pods(3);
    c.provision(...batch);
    for (const p of batch) expect(c.nodeOf(p)?.spec.taints).toContainEqual(preferNoSchedule);
  });
});

describe('upstream provisioning suite_test.go: Multiple NodePools', () => {
  it('should schedule to an explicitly selected NodePool', () => {
    const c = new UpstreamCluster([makeNodePool('a'), makeNodePool('b')]);
    const p = pod({}, { nodeSelector: { [LABEL_NODEPOOL]: 'b' } });
    c.provision(p);
    expect(c.nodeOf(p)?.metadata.labels[LABEL_NODEPOOL]).toBe('b');
  });

  it('should schedule to a NodePool by labels', () => {
    const c = new UpstreamCluster([makeNodePool('a'), makeNodePool('b', { labels: { foo: 'bar' } })]);
    const p = pod({}, { nodeSelector: { foo: 'bar' } });
    c.provision(p);
    expect(c.nodeOf(p)?.metadata.labels[LABEL_NODEPOOL]).toBe('b');
  });

  it('should not match NodePool with PreferNoSchedule taint when other NodePool match', () => {
    // "a" sorts first by name, so only the taint can send the pod to "b".
    const c = new UpstreamCluster([makeNodePool('a', { taints: [preferNoSchedule] }), makeNodePool('b')]);
    const batch = pods(3);
    c.provision(...batch);
    for (const p of batch) expect(c.nodeOf(p)?.metadata.labels[LABEL_NODEPOOL]).toBe('b');
  });

  it('should schedule to the nodepool with the highest priority always', () => {
    const c = new UpstreamCluster([makeNodePool('a'), makeNodePool('b', { weight: 20 }), makeNodePool('c', { weight: 100 })]);
    const batch = pods(3);
    c.provision(...batch);
    for (const p of batch) expect(c.nodeOf(p)?.metadata.labels[LABEL_NODEPOOL]).toBe('c');
  });

  it('should schedule to explicitly selected nodepool even if other nodePools are higher priority', () => {
    const c = new UpstreamCluster([makeNodePool('a'), makeNodePool('b', { weight: 20 }), makeNodePool('c', { weight: 100 })]);
    const p = pod({}, { nodeSelector: { [LABEL_NODEPOOL]: 'a' } });
    c.provision(p);
    expect(c.nodeOf(p)?.metadata.labels[LABEL_NODEPOOL]).toBe('a');
  });

  it('should ignore NodePools that are deleting', () => {
    const deleting = makeNodePool('default');
    deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    const c = new UpstreamCluster([deleting]);
    const p = pod();
    c.provision(p);
    expect(c.nodeOf(p)).toBeUndefined();
  });
});
