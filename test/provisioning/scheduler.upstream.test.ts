/**
 * Upstream Karpenter's scheduling cases (sigs.k8s.io/karpenter v1.15
 * pkg/controllers/provisioning/scheduling/suite_test.go), ported by their semantics: each case
 * names the upstream test it mirrors.
 */
import { describe, expect, it } from 'vitest';
import { LABEL_ARCH, LABEL_HOSTNAME, LABEL_INSTANCE_TYPE, LABEL_OS, LABEL_ZONE } from '../../src/apis/well-known.js';
import type { NodeSelectorRequirement, Pod } from '../../src/ports/cluster.js';
import { makeNodeClaim, makeNodePool } from './fixtures.js';
import { TYPES, UpstreamCluster, ZONES, assortedTypes, pod, pods, spread } from './scheduling/harness.js';

const required = (...terms: NodeSelectorRequirement[][]): Partial<Pod['spec']> => ({
  affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms.map((matchExpressions) => ({ matchExpressions })) } } },
});
const preferred = (...terms: Array<[number, NodeSelectorRequirement]>): Partial<Pod['spec']> => ({
  affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: terms.map(([weight, r]) => ({ weight, preference: { matchExpressions: [r] } })) } },
});
const zoneIn = (...values: string[]): NodeSelectorRequirement => ({ key: LABEL_ZONE, operator: 'In', values });
/** Required and preferred node affinity together. */
const requiredAndPreferred = (terms: NodeSelectorRequirement[][], preferences: Array<[number, NodeSelectorRequirement]>): Partial<Pod['spec']> => ({
  affinity: { nodeAffinity: { ...required(...terms).affinity!.nodeAffinity, ...preferred(...preferences).affinity!.nodeAffinity } },
});

function scheduled(c: UpstreamCluster, p: Pod): boolean {
  c.provision(p);
  return c.nodeOf(p) !== undefined;
}

describe('upstream suite_test.go: Custom Constraints', () => {
  const labelled = () => new UpstreamCluster([makeNodePool('default', { labels: { 'test-key': 'test-value' } })]);

  it('should schedule unconstrained pods that don\'t have matching node selectors', () => {
    expect(scheduled(labelled(), pod())).toBe(true);
  });

  it('should not schedule pods that have conflicting node selectors', () => {
    expect(scheduled(labelled(), pod({}, { nodeSelector: { 'test-key': 'different-value' } }))).toBe(false);
  });

  it('should not schedule pods that have node selectors with undefined key', () => {
    expect(scheduled(labelled(), pod({}, { nodeSelector: { 'undefined-key': 'value' } }))).toBe(false);
  });

  it('should schedule pods that have matching requirements', () => {
    expect(scheduled(labelled(), pod({}, required([{ key: 'test-key', operator: 'In', values: ['test-value', 'another-value'] }])))).toBe(true);
  });

  it('should not schedule pods that have conflicting requirements', () => {
    expect(scheduled(labelled(), pod({}, required([{ key: 'test-key', operator: 'In', values: ['another-value'] }])))).toBe(false);
  });
});

describe('upstream suite_test.go: Well Known Labels', () => {
  it('should use NodePool constraints', () => {
    const c = new UpstreamCluster([makeNodePool('default', { requirements: [zoneIn(ZONES[1]!)] })]);
    const p = pod();
    c.provision(p);
    expect(c.nodeOf(p)?.metadata.labels[LABEL_ZONE]).toBe(ZONES[1]);
  });

  it('should use node selectors', () => {
    const c = new UpstreamCluster([makeNodePool('default', { requirements: [zoneIn(ZONES[0]!, ZONES[1]!)] })]);
    const p = pod({}, { nodeSelector: { [LABEL_ZONE]: ZONES[1]! } });
    c.provision(p);
    expect(c.nodeOf(p)?.metadata.labels[LABEL_ZONE]).toBe(ZONES[1]);
  });

  it('should not schedule nodes with a hostname selector', () => {
    expect(scheduled(new UpstreamCluster(), pod({}, { nodeSelector: { [LABEL_HOSTNAME]: 'red-node' } }))).toBe(false);
  });

  it('should not schedule the pod if nodeselector unknown', () => {
    expect(scheduled(new UpstreamCluster(), pod({}, { nodeSelector: { [LABEL_ZONE]: 'unknown' } }))).toBe(false);
  });

  it('should not schedule if node selector outside of NodePool constraints', () => {
    const c = new UpstreamCluster([makeNodePool('default', { requirements: [zoneIn(ZONES[0]!, ZONES[1]!)] })]);
    expect(scheduled(c, pod({}, { nodeSelector: { [LABEL_ZONE]: ZONES[2]! } }))).toBe(false);
  });

  it('should schedule pods that have node selectors with label in wellknown label list (capacity type spot aside: azflex launches on-demand)', () => {
    const types = assortedTypes();
    const c = new UpstreamCluster(undefined, types);
    const schedulable = [
      pod({}, { nodeSelector: { [LABEL_ZONE]: ZONES[0]! } }),
      pod({}, { nodeSelector: { [LABEL_INSTANCE_TYPE]: types[0]!.name } }),
      pod({}, { nodeSelector: { [LABEL_ARCH]: 'arm64' } }),
      pod({}, { nodeSelector: { [LABEL_OS]: 'linux' } }),
    ];
    c.provision(...schedulable);
    for (const p of schedulable) expect(c.nodeOf(p), p.metadata.name).toBeDefined();
    expect(c.nodeOf(schedulable[2]!)?.metadata.labels[LABEL_ARCH]).toBe('arm64');
  });

  it('should schedule compatible requirements with Operator=In', () => {
    const c = new UpstreamCluster();
    const p = pod({}, required([zoneIn(ZONES[2]!)]));
    c.provision(p);
    expect(c.nodeOf(p)?.metadata.labels[LABEL_ZONE]).toBe(ZONES[2]);
  });

  it('should schedule compatible requirements with Operator=Gt', () => {
    const c = new UpstreamCluster();
    const p = pod({}, required([{ key: 'karpenter.azure.com/sku-cpu', operator: 'Gt', values: ['8'] }]));
    const result = c.provision(p);
    expect(result.nodeClaims[0]!.instanceTypeOptions.every((t) => t.vcpu > 8)).toBe(true);
  });

  it('should schedule compatible requirements with Operator=Lt', () => {
    const c = new UpstreamCluster();
    const p = pod({}, required([{ key: 'karpenter.azure.com/sku-cpu', operator: 'Lt', values: ['8'] }]));
    const result = c.provision(p);
    expect(result.nodeClaims[0]!.instanceTypeOptions.every((t) => t.vcpu < 8)).toBe(true);
  });

  it('should schedule compatible requirements with Operator=NotIn', () => {
    const c = new UpstreamCluster();
    const p = pod({}, required([{ key: LABEL_ZONE, operator: 'NotIn', values: [ZONES[0]!, ZONES[1]!, 'unknown'] }]));
    c.provision(p);
    expect(c.nodeOf(p)?.metadata.labels[LABEL_ZONE]).toBe(ZONES[2]);
  });

  it('should not schedule incompatible preferences and requirements with Operator=In', () => {
    expect(scheduled(new UpstreamCluster(), pod({}, required([zoneIn('unknown')])))).toBe(false);
  });

  it('should schedule incompatible preferences and requirements with Operator=In', () => {
    const c = new UpstreamCluster();
    const p = pod({}, requiredAndPreferred([[zoneIn(ZONES[0]!, ZONES[1]!)]], [[1, zoneIn(ZONES[2]!)]]));
    c.provision(p);
    expect([ZONES[0], ZONES[1]]).toContain(c.nodeOf(p)?.metadata.labels[LABEL_ZONE]);
  });

  it('should schedule compatible node selectors, preferences and requirements', () => {
    const c = new UpstreamCluster();
    const p = pod({}, { nodeSelector: { [LABEL_ZONE]: ZONES[2]! }, ...requiredAndPreferred([[zoneIn(ZONES[1]!, ZONES[2]!)]], [[1, zoneIn(ZONES[2]!)]]) });
    c.provision(p);
    expect(c.nodeOf(p)?.metadata.labels[LABEL_ZONE]).toBe(ZONES[2]);
  });
});

describe('upstream suite_test.go: Scheduling Logic', () => {
  const c = () => new UpstreamCluster([makeNodePool('default', { labels: { 'test-key': 'test-value' } })]);
  const cases: Array<[string, NodeSelectorRequirement, boolean]> = [
    ['should not schedule pods that have node selectors with In operator and undefined key', { key: 'undefined-key', operator: 'In', values: ['x'] }, false],
    ['should schedule pods that have node selectors with NotIn operator and undefined key', { key: 'undefined-key', operator: 'NotIn', values: ['x'] }, true],
    ['should not schedule pods that have node selectors with Exists operator and undefined key', { key: 'undefined-key', operator: 'Exists' }, false],
    ['should schedule pods that with DoesNotExists operator and undefined key', { key: 'undefined-key', operator: 'DoesNotExist' }, true],
    ['should schedule pods that have node selectors with matching value and In operator', { key: 'test-key', operator: 'In', values: ['test-value'] }, true],
    ['should not schedule pods that have node selectors with matching value and NotIn operator', { key: 'test-key', operator: 'NotIn', values: ['test-value'] }, false],
    ['should schedule the pod with Exists operator and defined key', { key: 'test-key', operator: 'Exists' }, true],
    ['should not schedule the pod with DoesNotExists operator and defined key', { key: 'test-key', operator: 'DoesNotExist' }, false],
    ['should not schedule pods that have node selectors with different value and In operator', { key: 'test-key', operator: 'In', values: ['other'] }, false],
    ['should schedule pods that have node selectors with different value and NotIn operator', { key: 'test-key', operator: 'NotIn', values: ['other'] }, true],
  ];
  for (const [name, requirement, expected] of cases) {
    it(name, () => expect(scheduled(c(), pod({}, required([requirement])))).toBe(expected));
  }

  it('should schedule compatible pods to the same node', () => {
    const cluster = c();
    const both = [pod({}, required([{ key: 'test-key', operator: 'In', values: ['test-value', 'other'] }])), pod({}, required([{ key: 'test-key', operator: 'Exists' }]))];
    cluster.provision(...both);
    expect(cluster.nodeOf(both[0]!)?.metadata.name).toBe(cluster.nodeOf(both[1]!)?.metadata.name);
  });

  it('should schedule incompatible pods to the different node', () => {
    const cluster = new UpstreamCluster();
    const both = [pod({}, required([zoneIn(ZONES[0]!)])), pod({}, required([zoneIn(ZONES[1]!)]))];
    cluster.provision(...both);
    expect(cluster.nodeOf(both[0]!)?.metadata.name).not.toBe(cluster.nodeOf(both[1]!)?.metadata.name);
  });
});

describe('upstream suite_test.go: Preferential Fallback', () => {
  it('should not relax the final term', () => {
    const c = new UpstreamCluster([makeNodePool('default', { requirements: [zoneIn(ZONES[0]!)] })]);
    expect(scheduled(c, pod({}, required([zoneIn('invalid')])))).toBe(false);
  });

  it('should relax multiple terms', () => {
    const c = new UpstreamCluster();
    const p = pod({}, required([zoneIn('invalid')], [zoneIn('invalid')], [zoneIn(ZONES[0]!)], [zoneIn(ZONES[1]!)]));
    c.provision(p);
    expect(c.nodeOf(p)?.metadata.labels[LABEL_ZONE]).toBe(ZONES[0]);
  });

  it('should relax all terms', () => {
    const p = pod({}, preferred([1, zoneIn('invalid')], [1, { key: LABEL_INSTANCE_TYPE, operator: 'In', values: ['invalid'] }]));
    expect(scheduled(new UpstreamCluster(), p)).toBe(true);
  });

  it('should relax to use lighter weights', () => {
    const c = new UpstreamCluster([makeNodePool('default', { requirements: [zoneIn(ZONES[0]!, ZONES[1]!)] })]);
    const p = pod({}, preferred([100, { key: LABEL_INSTANCE_TYPE, operator: 'In', values: [ZONES[2]!] }], [50, zoneIn(ZONES[1]!)], [1, zoneIn(ZONES[0]!)]));
    c.provision(p);
    expect(c.nodeOf(p)?.metadata.labels[LABEL_ZONE]).toBe(ZONES[1]);
  });

  it('should schedule even if preference is conflicting with requirement', () => {
    const c = new UpstreamCluster();
    const p = pod({}, requiredAndPreferred([[zoneIn(ZONES[2]!)]], [[1, { key: LABEL_ZONE, operator: 'NotIn', values: [ZONES[2]!] }]]));
    c.provision(p);
    expect(c.nodeOf(p)?.metadata.labels[LABEL_ZONE]).toBe(ZONES[2]);
  });
});

describe('upstream suite_test.go: Instance Type Compatibility', () => {
  it('should not schedule if requesting more resources than any instance type has', () => {
    const c = new UpstreamCluster();
    const p = pod({}, {}, { requests: { cpu: '512', memory: '1Gi' } });
    const result = c.provision(p);
    expect(c.nodeOf(p)).toBeUndefined();
    expect(result.unschedulable[0]!.reason).toMatch(/no SKU in catalog offers/);
  });

  it('should launch pods with different zone selectors on different instances', () => {
    const c = new UpstreamCluster();
    const both = [pod({}, { nodeSelector: { [LABEL_ZONE]: ZONES[0]! } }), pod({}, { nodeSelector: { [LABEL_ZONE]: ZONES[1]! } })];
    const result = c.provision(...both);
    expect(result.nodeClaims).toHaveLength(2);
  });

  it('should launch pods with different instance type node selectors on different instances', () => {
    const c = new UpstreamCluster();
    const both = [pod({}, { nodeSelector: { [LABEL_INSTANCE_TYPE]: TYPES[0]!.name } }), pod({}, { nodeSelector: { [LABEL_INSTANCE_TYPE]: TYPES[1]!.name } })];
    const result = c.provision(...both);
    expect(result.nodeClaims.map((p) => p.instanceType.name).sort()).toEqual([TYPES[0]!.name, TYPES[1]!.name].sort());
  });

  it('should launch pods with resources that aren\'t on any single instance type on different instances', () => {
    const c = new UpstreamCluster();
    const large = pods(2, {}, {}, { requests: { cpu: '40', memory: '1Gi' } });
    const result = c.provision(...large);
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims).toHaveLength(2);
  });
});

describe('upstream suite_test.go: Binpacking', () => {
  it('should schedule a small pod on the smallest instance', () => {
    const result = new UpstreamCluster().provision(pod());
    expect(result.nodeClaims[0]!.instanceType.vcpu).toBe(Math.min(...TYPES.map((t) => t.vcpu)));
  });

  it('should create new nodes when a node is at capacity', () => {
    const c = new UpstreamCluster([makeNodePool('default', { requirements: [{ key: LABEL_INSTANCE_TYPE, operator: 'In', values: [TYPES[0]!.name] }] })]);
    const result = c.provision(...pods(40, {}, {}, { requests: { cpu: '100m', memory: '1Gi' } }));
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims.length).toBeGreaterThan(1);
  });

  it('should pack nodes tightly', () => {
    const c = new UpstreamCluster();
    const result = c.provision(pod({}, {}, { requests: { cpu: '4500m', memory: '1Gi' } }), pod({}, {}, { requests: { cpu: '1', memory: '1Gi' } }));
    expect(result.unschedulable).toEqual([]);
    // The large pod opens the claim first; the small one fits beside it.
    expect(result.nodeClaims).toHaveLength(1);
  });

  it('should not schedule pods that exceed every instance type\'s capacity', () => {
    expect(scheduled(new UpstreamCluster(), pod({}, {}, { requests: { cpu: '1', memory: '2Ti' } }))).toBe(false);
  });

  it('should take into account initContainer resource requests when binpacking', () => {
    const c = new UpstreamCluster();
    const p = pod({}, {}, { requests: { cpu: '1', memory: '1Gi' }, initContainers: [{ cpu: '6', memory: '1Gi' }] });
    const result = c.provision(p);
    expect(result.nodeClaims[0]!.instanceType.vcpu).toBeGreaterThanOrEqual(8);
  });

  it('should not schedule pods when initContainer resource requests are greater than available instance types', () => {
    const p = pod({}, {}, { requests: { cpu: '1', memory: '1Gi' }, initContainers: [{ cpu: '100', memory: '1Gi' }] });
    expect(scheduled(new UpstreamCluster(), p)).toBe(false);
  });
});

describe('upstream suite_test.go: In-Flight Nodes', () => {
  it('should not launch a second node if there is an in-flight node that can support the pod', () => {
    const c = new UpstreamCluster();
    c.provision(pod({}, {}, { requests: { cpu: '100m', memory: '128Mi' } }));
    const result = c.provision(pod({}, {}, { requests: { cpu: '100m', memory: '128Mi' } }));
    expect(result.nodeClaims).toEqual([]);
    expect(result.existingPlacements).toHaveLength(1);
  });

  it('should launch a second node if a pod won\'t fit on the existingNodes node', () => {
    const c = new UpstreamCluster();
    c.provision(pod({}, {}, { requests: { cpu: '1500m', memory: '128Mi' } }));
    const result = c.provision(pod({}, {}, { requests: { cpu: '1500m', memory: '128Mi' } }));
    expect(result.nodeClaims).toHaveLength(1);
  });

  it('should launch a second node if a pod isn\'t compatible with the existingNodes node (node selector)', () => {
    const c = new UpstreamCluster();
    c.provision(pod({}, { nodeSelector: { [LABEL_ZONE]: ZONES[0]! } }));
    const result = c.provision(pod({}, { nodeSelector: { [LABEL_ZONE]: ZONES[1]! } }));
    expect(result.nodeClaims).toHaveLength(1);
  });

  it('should launch a second node if an in-flight node is terminating', () => {
    const c = new UpstreamCluster();
    c.nodeClaims.push(makeNodeClaim('going', { nodePool: 'default', launchedAs: TYPES[5]!.name, deletionTimestamp: '2026-01-01T00:00:00Z' }));
    const result = c.provision(pod());
    expect(result.existingPlacements).toEqual([]);
    expect(result.nodeClaims).toHaveLength(1);
  });

  it('should balance pods across zones with in-flight nodes', () => {
    const c = new UpstreamCluster();
    const labels = { test: 'test' };
    const constraint = spread(LABEL_ZONE, labels);
    c.provision(...pods(4, labels, { topologySpreadConstraints: [constraint] }));
    expect(c.skew(LABEL_ZONE, (p) => p.metadata.labels.test === 'test')).toEqual([1, 1, 2]);
    c.provision(...pods(5, labels, { topologySpreadConstraints: [constraint] }));
    expect(c.skew(LABEL_ZONE, (p) => p.metadata.labels.test === 'test')).toEqual([3, 3, 3]);
  });

  it('should balance pods across hostnames with in-flight nodes', () => {
    const c = new UpstreamCluster();
    const labels = { test: 'test' };
    const constraint = spread(LABEL_HOSTNAME, labels);
    c.provision(...pods(4, labels, { topologySpreadConstraints: [constraint] }));
    expect(c.skew(LABEL_HOSTNAME, (p) => p.metadata.labels.test === 'test')).toEqual([1, 1, 1, 1]);
    // New nodes keep the spread even though the existing ones have room.
    c.provision(...pods(5, labels, { topologySpreadConstraints: [constraint] }));
    expect(c.skew(LABEL_HOSTNAME, (p) => p.metadata.labels.test === 'test')).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1]);
  });
});
