/**
 * Upstream Karpenter's topology cases (sigs.k8s.io/karpenter v1.15
 * pkg/controllers/provisioning/scheduling/topology_test.go), ported by their semantics: each
 * case names the upstream test it mirrors. Upstream's test-zone-1..3 are eastus2-1..3 here.
 */
import { describe, expect, it } from 'vitest';
import { LABEL_HOSTNAME, LABEL_ZONE } from '../../../src/apis/well-known.js';
import { makeNodePool } from '../fixtures.js';
import { UpstreamCluster, ZONES, affinity, antiAffinity, pod, pods, spread, term } from './harness.js';

const labels = { test: 'test' };
const zonePool = (zones: string[]) => makeNodePool('default', { requirements: [{ key: LABEL_ZONE, operator: 'In', values: zones }] });
const big = { requests: { cpu: '1100m', memory: '128Mi' } };
const selects = (p: { metadata: { labels: Record<string, string> } }): boolean => p.metadata.labels.test === 'test';

describe('upstream topology_test.go: Zonal', () => {
  it('should balance pods across zones (match labels)', () => {
    const c = new UpstreamCluster();
    c.provision(...pods(4, labels, { topologySpreadConstraints: [spread(LABEL_ZONE, labels)] }));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([1, 1, 2]);
  });

  it('should balance pods across zones (match expressions)', () => {
    const c = new UpstreamCluster();
    const constraint = { ...spread(LABEL_ZONE, {}), labelSelector: { matchExpressions: [{ key: 'test', operator: 'In' as const, values: ['test'] }] } };
    c.provision(...pods(4, labels, { topologySpreadConstraints: [constraint] }));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([1, 1, 2]);
  });

  it('should respect NodePool zonal constraints', () => {
    const c = new UpstreamCluster([zonePool(ZONES)]);
    c.provision(...pods(4, labels, { topologySpreadConstraints: [spread(LABEL_ZONE, labels)] }));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([1, 1, 2]);
  });

  it('should respect NodePool zonal constraints (subset) with requirements', () => {
    const c = new UpstreamCluster([zonePool(ZONES.slice(0, 2))]);
    c.provision(...pods(4, labels, { topologySpreadConstraints: [spread(LABEL_ZONE, labels)] }));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([2, 2]);
  });

  it('should respect NodePool zonal constraints (subset) with labels', () => {
    const c = new UpstreamCluster([makeNodePool('default', { labels: { [LABEL_ZONE]: ZONES[0]! } })]);
    c.provision(...pods(4, labels, { topologySpreadConstraints: [spread(LABEL_ZONE, labels)] }));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([4]);
  });

  it('should respect NodePool zonal constraints (existing pod)', () => {
    const c = new UpstreamCluster();
    c.provision(pod(labels, { nodeSelector: { [LABEL_ZONE]: ZONES[2]! } }, big));
    c.nodePools = [zonePool(ZONES.slice(0, 2))];
    c.provision(...pods(6, labels, { topologySpreadConstraints: [spread(LABEL_ZONE, labels)] }, big));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([1, 2, 2]);
  });

  it('should schedule to the non-minimum domain if its all that\'s available', () => {
    const c = new UpstreamCluster();
    const constraint = spread(LABEL_ZONE, labels, { maxSkew: 5 });
    for (const zone of ZONES.slice(0, 2)) {
      c.nodePools = [zonePool([zone])];
      c.provision(pod(labels, { topologySpreadConstraints: [constraint] }, big));
    }
    expect(c.skew(LABEL_ZONE, selects)).toEqual([1, 1]);
    c.nodePools = [zonePool([ZONES[2]!])];
    c.provision(...pods(10, labels, { topologySpreadConstraints: [constraint] }, big));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([1, 1, 6]);
  });

  it('should not violate max-skew when unsat = do not schedule', () => {
    const c = new UpstreamCluster([zonePool([ZONES[0]!])]);
    c.provision(pod(labels, { topologySpreadConstraints: [spread(LABEL_ZONE, labels)] }, big));
    c.nodePools = [zonePool(ZONES.slice(1))];
    c.provision(...pods(10, labels, { topologySpreadConstraints: [spread(LABEL_ZONE, labels)] }, big));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([1, 2, 2]);
  });

  it('should not violate max-skew when unsat = do not schedule (discover domains)', () => {
    const c = new UpstreamCluster([zonePool([ZONES[0]!])]);
    c.provision(pod(labels, {}, big));
    c.nodePools = [zonePool(ZONES.slice(1))];
    c.provision(...pods(10, labels, { topologySpreadConstraints: [spread(LABEL_ZONE, labels)] }, big));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([1, 2, 2]);
  });

  it('should match all pods when labelSelector is not specified', () => {
    const c = new UpstreamCluster();
    const constraint = { maxSkew: 1, topologyKey: LABEL_ZONE, whenUnsatisfiable: 'DoNotSchedule' as const };
    c.provision(pod({}, { topologySpreadConstraints: [constraint] }));
    expect(c.skew(LABEL_ZONE)).toEqual([1]);
  });

  it('should handle interdependent selectors', () => {
    const c = new UpstreamCluster();
    const batch = pods(5, {}, { topologySpreadConstraints: [spread(LABEL_HOSTNAME, labels)] });
    c.provision(...batch);
    expect(new Set(batch.map((p) => c.nodeOf(p)?.metadata.name)).size).toBe(1);
  });

  it('should respect minDomains constraints', () => {
    const c = new UpstreamCluster([zonePool(ZONES.slice(0, 2))]);
    c.provision(...pods(3, labels, { topologySpreadConstraints: [spread(LABEL_ZONE, labels, { minDomains: 3 })] }));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([1, 1]);
  });

  it('satisfied minDomains constraints (equal) should allow expected pod scheduling', () => {
    const c = new UpstreamCluster([zonePool(ZONES)]);
    c.provision(...pods(11, labels, { topologySpreadConstraints: [spread(LABEL_ZONE, labels, { minDomains: 3 })] }));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([3, 4, 4]);
  });

  it('satisfied minDomains constraints (greater than minimum) should allow expected pod scheduling', () => {
    const c = new UpstreamCluster([zonePool(ZONES)]);
    c.provision(...pods(11, labels, { topologySpreadConstraints: [spread(LABEL_ZONE, labels, { minDomains: 2 })] }));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([3, 4, 4]);
  });
});

describe('upstream topology_test.go: Hostname', () => {
  it('should balance pods across nodes', () => {
    const c = new UpstreamCluster();
    c.provision(...pods(4, labels, { topologySpreadConstraints: [spread(LABEL_HOSTNAME, labels)] }));
    expect(c.skew(LABEL_HOSTNAME, selects)).toEqual([1, 1, 1, 1]);
  });

  it('should balance pods on the same hostname up to maxskew', () => {
    const c = new UpstreamCluster();
    c.provision(...pods(4, labels, { topologySpreadConstraints: [spread(LABEL_HOSTNAME, labels, { maxSkew: 4 })] }));
    expect(c.skew(LABEL_HOSTNAME, selects)).toEqual([4]);
  });
});

describe('upstream topology_test.go: MatchLabelKeys', () => {
  it('should support matchLabelKeys', () => {
    const c = new UpstreamCluster();
    const constraint = spread(LABEL_HOSTNAME, labels, { matchLabelKeys: ['test-label'] });
    c.provision(
      ...pods(2, { ...labels, 'test-label': 'value-a' }, { topologySpreadConstraints: [constraint] }),
      ...pods(2, { ...labels, 'test-label': 'value-b' }, { topologySpreadConstraints: [constraint] }),
    );
    // Each "deployment" spreads on its own: two nodes with one pod of each.
    expect(c.skew(LABEL_HOSTNAME, selects)).toEqual([2, 2]);
  });

  it('should ignore unknown labels specified in matchLabelKeys', () => {
    const c = new UpstreamCluster();
    c.provision(...pods(4, labels, { topologySpreadConstraints: [spread(LABEL_HOSTNAME, labels, { matchLabelKeys: ['test-label'] })] }));
    expect(c.skew(LABEL_HOSTNAME, selects)).toEqual([1, 1, 1, 1]);
  });
});

describe('upstream topology_test.go: Combined Hostname and Zonal Topology', () => {
  it('should spread pods while respecting both constraints (hostname and zonal)', () => {
    const c = new UpstreamCluster();
    const constraints = [spread(LABEL_ZONE, labels), spread(LABEL_HOSTNAME, labels, { maxSkew: 3 })];
    c.provision(...pods(2, labels, { topologySpreadConstraints: constraints }));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([1, 1]);
    expect(Math.max(...c.skew(LABEL_HOSTNAME, selects))).toBeLessThanOrEqual(3);
    c.provision(...pods(3, labels, { topologySpreadConstraints: constraints }));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([1, 2, 2]);
    c.provision(...pods(5, labels, { topologySpreadConstraints: constraints }));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([3, 3, 4]);
  });
});

describe('upstream topology_test.go: Combined Zonal Topology and Node Affinity', () => {
  it('should limit spread options by nodeSelector', () => {
    const c = new UpstreamCluster();
    const constraint = spread(LABEL_ZONE, labels);
    c.provision(...pods(5, labels, { topologySpreadConstraints: [constraint], nodeSelector: { [LABEL_ZONE]: ZONES[0]! } }));
    c.provision(...pods(10, labels, { topologySpreadConstraints: [constraint], nodeSelector: { [LABEL_ZONE]: ZONES[1]! } }));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([5, 10]);
  });

  it('should not limit spread options by preferred node affinity', () => {
    const c = new UpstreamCluster();
    const preferred = { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, preference: { matchExpressions: [{ key: LABEL_ZONE, operator: 'In' as const, values: [ZONES[0]!] }] } }] };
    c.provision(...pods(6, labels, { topologySpreadConstraints: [spread(LABEL_ZONE, labels)], affinity: { nodeAffinity: preferred } }));
    expect(c.skew(LABEL_ZONE, selects)).toEqual([2, 2, 2]);
  });
});

describe('upstream topology_test.go: Pod Affinity/Anti-Affinity', () => {
  it('should schedule a pod with empty pod affinity and anti-affinity', () => {
    const c = new UpstreamCluster();
    const p = pod({}, { affinity: { podAffinity: {}, podAntiAffinity: {} } });
    c.provision(p);
    expect(c.nodeOf(p)).toBeDefined();
  });

  it('should respect pod affinity (hostname)', () => {
    const c = new UpstreamCluster();
    const sec = { security: 's2' };
    const first = pod(sec);
    const second = pod({}, affinity(term(LABEL_HOSTNAME, sec)));
    c.provision(...pods(10, labels, { topologySpreadConstraints: [spread(LABEL_HOSTNAME, labels)] }), first, second);
    expect(c.nodeOf(second)?.metadata.name).toBe(c.nodeOf(first)?.metadata.name);
  });

  it('should respect self pod affinity (hostname)', () => {
    const c = new UpstreamCluster();
    const sec = { security: 's2' };
    const batch = pods(3, sec, affinity(term(LABEL_HOSTNAME, sec)));
    c.provision(...batch);
    expect(new Set(batch.map((p) => c.nodeOf(p)?.metadata.name)).size).toBe(1);
  });

  it('should respect self pod affinity (zone)', () => {
    const c = new UpstreamCluster();
    const sec = { security: 's2' };
    const batch = pods(3, sec, affinity(term(LABEL_ZONE, sec)));
    c.provision(...batch);
    expect(new Set(batch.map((p) => c.nodeOf(p)?.metadata.labels[LABEL_ZONE])).size).toBe(1);
  });

  it('should respect self pod affinity (zone w/ constraint)', () => {
    const c = new UpstreamCluster();
    const sec = { security: 's2' };
    const batch = pods(3, sec, { ...affinity(term(LABEL_ZONE, sec)), nodeSelector: { [LABEL_ZONE]: ZONES[2]! } });
    c.provision(...batch);
    for (const p of batch) expect(c.nodeOf(p)?.metadata.labels[LABEL_ZONE]).toBe(ZONES[2]);
  });

  it('should allow violation of preferred pod affinity', () => {
    const c = new UpstreamCluster();
    const prefers = pod({}, { affinity: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, podAffinityTerm: term(LABEL_HOSTNAME, { security: 's2' }) }] } } });
    c.provision(...pods(10, labels, { topologySpreadConstraints: [spread(LABEL_HOSTNAME, labels)] }), prefers);
    expect(c.nodeOf(prefers)).toBeDefined();
  });

  it('should allow violation of preferred pod anti-affinity', () => {
    const c = new UpstreamCluster();
    const avoiders = pods(10, {}, { affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, podAffinityTerm: term(LABEL_ZONE, labels) }] } } });
    c.provision(...pods(3, labels, { topologySpreadConstraints: [spread(LABEL_ZONE, labels)] }), ...avoiders);
    for (const p of avoiders) expect(c.nodeOf(p)).toBeDefined();
  });

  it('should violate preferred pod anti-affinity on zone (inverse)', () => {
    const c = new UpstreamCluster();
    const sec = { security: 's2' };
    const preferAway = { affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, podAffinityTerm: term(LABEL_ZONE, sec) }] } } };
    const owners = ZONES.map((zone) => pod({}, { ...preferAway, nodeSelector: { [LABEL_ZONE]: zone } }, { requests: { cpu: '2', memory: '128Mi' } }));
    const target = pod(sec);
    c.provision(...owners, target);
    for (const p of [...owners, target]) expect(c.nodeOf(p)).toBeDefined();
  });

  it('should separate nodes using simple pod anti-affinity on hostname', () => {
    const c = new UpstreamCluster();
    const sec = { security: 's2' };
    const first = pod(sec);
    const second = pod({}, antiAffinity(term(LABEL_HOSTNAME, sec)));
    c.provision(first, second);
    expect(c.nodeOf(first)).toBeDefined();
    expect(c.nodeOf(second)?.metadata.name).not.toBe(c.nodeOf(first)?.metadata.name);
  });

  it('should not violate pod anti-affinity on zone', () => {
    const c = new UpstreamCluster();
    const sec = { security: 's2' };
    const zonal = ZONES.map((zone) => pod(sec, { nodeSelector: { [LABEL_ZONE]: zone } }, big));
    const avoider = pod({}, antiAffinity(term(LABEL_ZONE, sec)));
    c.provision(...zonal, avoider);
    for (const p of zonal) expect(c.nodeOf(p)).toBeDefined();
    expect(c.nodeOf(avoider)).toBeUndefined();
  });

  it('should not violate pod anti-affinity on zone (inverse)', () => {
    const c = new UpstreamCluster();
    const sec = { security: 's2' };
    const owners = ZONES.map((zone) => pod({}, { ...antiAffinity(term(LABEL_ZONE, sec)), nodeSelector: { [LABEL_ZONE]: zone } }, big));
    const target = pod(sec);
    c.provision(...owners, target);
    for (const p of owners) expect(c.nodeOf(p)).toBeDefined();
    expect(c.nodeOf(target)).toBeUndefined();
  });

  it('should not violate pod anti-affinity on zone (inverse w/existing nodes)', () => {
    const c = new UpstreamCluster();
    const sec = { security: 's2' };
    const owners = ZONES.map((zone) => pod({}, { ...antiAffinity(term(LABEL_ZONE, sec)), nodeSelector: { [LABEL_ZONE]: zone } }, big));
    c.provision(...owners);
    const target = pod(sec);
    c.provision(target);
    expect(c.nodeOf(target)).toBeUndefined();
  });

  it('should not schedule pods with affinity to a non-existent pod', () => {
    const c = new UpstreamCluster();
    const p = pod({}, affinity(term(LABEL_ZONE, { security: 's2' })));
    c.provision(p);
    expect(c.nodeOf(p)).toBeUndefined();
  });

  it('should support pod affinity with zone topology (unconstrained target)', () => {
    const c = new UpstreamCluster();
    const sec = { security: 's2' };
    const target = pod(sec);
    c.provision(target);
    const followers = pods(5, {}, affinity(term(LABEL_ZONE, sec)));
    c.provision(...followers);
    for (const p of followers) expect(c.nodeOf(p)?.metadata.labels[LABEL_ZONE]).toBe(c.nodeOf(target)?.metadata.labels[LABEL_ZONE]);
  });

  it('should support pod affinity with zone topology (constrained target)', () => {
    const c = new UpstreamCluster();
    const sec = { security: 's2' };
    const target = pod(sec, { nodeSelector: { [LABEL_ZONE]: ZONES[0]! } });
    c.provision(target);
    const followers = pods(5, {}, affinity(term(LABEL_ZONE, sec)));
    c.provision(...followers);
    for (const p of followers) expect(c.nodeOf(p)?.metadata.labels[LABEL_ZONE]).toBe(ZONES[0]);
  });

  it('should handle multiple dependent affinities', () => {
    const kinds = ['db', 'web', 'cache', 'ui'];
    const labelsOf = (kind: string) => ({ type: kind, spread: 'spread' });
    // Each pod wants to share a host with the one before it: db ← web ← cache ← ui.
    const chain = kinds.map((kind, i) => pod(labelsOf(kind), i === 0 ? {} : affinity(term(LABEL_HOSTNAME, labelsOf(kinds[i - 1]!)))));
    const c = new UpstreamCluster();
    // Upstream places all four in one scheduling round, whatever order they come in.
    c.provision(...[...chain].reverse());
    for (const p of chain) expect(c.nodeOf(p), p.metadata.labels.type).toBeDefined();
    expect(new Set(chain.map((p) => c.nodeOf(p)?.metadata.name)).size).toBe(1);
  });

  it('should fail to schedule pods with unsatisfiable dependencies', () => {
    const c = new UpstreamCluster();
    const p = pod({ type: 'db' }, affinity(term(LABEL_HOSTNAME, { type: 'web' })));
    c.provision(p);
    expect(c.nodeOf(p)).toBeUndefined();
  });
});
