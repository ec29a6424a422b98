/**
 * Upstream Karpenter's instance selection cases (sigs.k8s.io/karpenter v1.15
 * pkg/controllers/provisioning/scheduling/instance_selection_test.go), ported by their
 * semantics: each case names the upstream test it mirrors.
 */
import { describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES, type InstanceType } from '../../src/catalog/skus.js';
import { LABEL_ARCH, LABEL_INSTANCE_TYPE, LABEL_ZONE } from '../../src/apis/well-known.js';
import type { NodeSelectorRequirement } from '../../src/ports/cluster.js';
import { makeNodePool } from './fixtures.js';
import { TYPES, UpstreamCluster, ZONES, assortedTypes, pod, pods } from './scheduling/harness.js';

const cheapest = (types: readonly InstanceType[]): number => Math.min(...types.map((t) => t.pricePerHour));
const poolWith = (...requirements: NodeSelectorRequirement[]) => makeNodePool('default', { requirements });

describe('upstream instance_selection_test.go', () => {
  it('should schedule on one of the cheapest instances', () => {
    const c = new UpstreamCluster();
    const result = c.provision(pod());
    expect(result.nodeClaims).toHaveLength(1);
    expect(result.nodeClaims[0]!.instanceType.pricePerHour).toBe(cheapest(TYPES));
  });

  it('should schedule on one of the cheapest instances (pod zone = test-zone-2)', () => {
    const c = new UpstreamCluster();
    const p = pod({}, { nodeSelector: { [LABEL_ZONE]: ZONES[1]! } });
    const result = c.provision(p);
    expect(c.nodeOf(p)?.metadata.labels[LABEL_ZONE]).toBe(ZONES[1]);
    expect(result.nodeClaims[0]!.instanceType.pricePerHour).toBe(cheapest(TYPES));
  });

  it('should schedule on one of the cheapest instances (prov zone = test-zone-2)', () => {
    const c = new UpstreamCluster([poolWith({ key: LABEL_ZONE, operator: 'In', values: [ZONES[1]!] })]);
    const p = pod();
    c.provision(p);
    expect(c.nodeOf(p)?.metadata.labels[LABEL_ZONE]).toBe(ZONES[1]);
  });

  it('should not schedule if no instance type matches selector (pod arch = arm)', () => {
    // Upstream removes every arm64 type from the assorted set.
    const c = new UpstreamCluster(undefined, assortedTypes().filter((t) => t.arch === 'amd64'));
    const p = pod({}, { nodeSelector: { [LABEL_ARCH]: 'arm64' } });
    const result = c.provision(p);
    expect(c.nodeOf(p)).toBeUndefined();
    expect(result.nodeClaims).toEqual([]);
    expect(result.unschedulable.map((u) => u.pod)).toEqual([p]);
  });

  it('should not schedule if no instance type matches selector (pod arch = arm zone=test-zone-2)', () => {
    // Upstream removes the arm64 types from test-zone-2.
    const c = new UpstreamCluster(undefined, assortedTypes([ZONES[0]!, ZONES[2]!]));
    const p = pod({}, { nodeSelector: { [LABEL_ARCH]: 'arm64', [LABEL_ZONE]: ZONES[1]! } });
    const result = c.provision(p);
    expect(c.nodeOf(p)).toBeUndefined();
    expect(result.nodeClaims).toEqual([]);
  });

  it('should not schedule if no instance type matches selector (prov arch = arm / pod zone=test-zone-2)', () => {
    const c = new UpstreamCluster([poolWith({ key: LABEL_ARCH, operator: 'In', values: ['arm64'] })], assortedTypes([ZONES[0]!, ZONES[2]!]));
    const p = pod({}, { nodeSelector: { [LABEL_ZONE]: ZONES[1]! } });
    const result = c.provision(p);
    expect(c.nodeOf(p)).toBeUndefined();
    expect(result.nodeClaims).toEqual([]);
  });

  it('should schedule on an instance with enough resources', () => {
    const c = new UpstreamCluster();
    const p = pod({}, {}, { requests: { cpu: '30', memory: '1Gi' } });
    const result = c.provision(p);
    const chosen = result.nodeClaims[0]!.instanceType;
    expect(chosen.vcpu).toBeGreaterThan(30);
    // Every option holds the pod, and the cheapest that does is the one launched.
    expect(chosen.pricePerHour).toBe(cheapest(TYPES.filter((t) => t.vcpu > 30)));
  });
});

describe('upstream instance_selection_test.go: architecture', () => {
  const ASSORTED = assortedTypes();
  /** Upstream's check: the cheapest type overall, and every type the NodeClaim may launch as (its create call) of that arch. */
  const expectCheapestOf = (arch: string, pool = makeNodePool('default'), nodeSelector: Record<string, string> = {}) => {
    const c = new UpstreamCluster([pool], ASSORTED);
    const p = pod({}, { nodeSelector });
    const result = c.provision(p);
    expect(c.nodeOf(p)?.metadata.labels[LABEL_ARCH]).toBe(arch);
    expect(result.nodeClaims[0]!.instanceType.pricePerHour).toBe(cheapest(ASSORTED));
    expect(new Set(result.nodeClaims[0]!.instanceTypeOptions.map((t) => t.arch))).toEqual(new Set([arch]));
  };

  it('should schedule on one of the cheapest instances (pod arch = amd64)', () => expectCheapestOf('amd64', undefined, { [LABEL_ARCH]: 'amd64' }));
  it('should schedule on one of the cheapest instances (pod arch = arm64)', () => expectCheapestOf('arm64', undefined, { [LABEL_ARCH]: 'arm64' }));
  it('should schedule on one of the cheapest instances (prov arch = amd64)', () => expectCheapestOf('amd64', poolWith({ key: LABEL_ARCH, operator: 'In', values: ['amd64'] })));
  it('should schedule on one of the cheapest instances (prov arch = arm64)', () => expectCheapestOf('arm64', poolWith({ key: LABEL_ARCH, operator: 'In', values: ['arm64'] })));

  it('should schedule on one of the cheapest instances (prov = ondemand/test-zone-1/arm64), as (prov ct = ondemand/test-zone-1/arm64/windows) without Windows', () => {
    const pool = poolWith({ key: LABEL_ARCH, operator: 'In', values: ['arm64'] }, { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }, { key: LABEL_ZONE, operator: 'In', values: [ZONES[0]!] });
    const c = new UpstreamCluster([pool], ASSORTED);
    const p = pod();
    const result = c.provision(p);
    expect(c.nodeOf(p)?.metadata.labels).toMatchObject({ [LABEL_ARCH]: 'arm64', [LABEL_ZONE]: ZONES[0] });
    expect(result.nodeClaims[0]!.instanceType.pricePerHour).toBe(cheapest(ASSORTED));
    expect(result.nodeClaims[0]!.instanceTypeOptions.every((t) => t.arch === 'arm64')).toBe(true);
  });

  it('azflex\'s own: against the static catalog\'s CPU sizes, an arm64 pod gets the cheapest arm64 size and an amd64 pod an amd64 one', () => {
    const cpu = STATIC_INSTANCE_TYPES.filter((t) => t.gpuCount === 0).map((t) => ({ ...t, zones: { eastus2: ZONES } }));
    const c = new UpstreamCluster([makeNodePool('default')], cpu);
    const [armPod, amdPod] = [pod({}, { nodeSelector: { [LABEL_ARCH]: 'arm64' } }), pod({}, { nodeSelector: { [LABEL_ARCH]: 'amd64' } })];
    c.provision(armPod, amdPod);
    expect(c.nodeOf(armPod)?.metadata.labels[LABEL_INSTANCE_TYPE]).toBe('Standard_D4ps_v5');
    expect(c.nodeOf(amdPod)?.metadata.labels[LABEL_INSTANCE_TYPE]).toBe('Standard_D8s_v5');
  });
});

describe('upstream instance_selection_test.go: MinValues', () => {
  it('should schedule respecting the minValues from instance-type requirements', () => {
    // Two pods fit together only on the larger of two types; minValues 2 keeps both types on
    // every claim, so the pods go to a claim each.
    const small = TYPES.find((t) => t.vcpu === 2)!;
    const large = TYPES.find((t) => t.vcpu === 4)!;
    const c = new UpstreamCluster([poolWith({ key: LABEL_INSTANCE_TYPE, operator: 'In', values: [small.name, large.name], minValues: 2 })], [small, large]);
    const both = pods(2, {}, {}, { requests: { cpu: '1200m', memory: '1Gi' } });
    const result = c.provision(...both);
    expect(result.unschedulable).toEqual([]);
    expect(c.nodeOf(both[0]!)?.metadata.name).not.toBe(c.nodeOf(both[1]!)?.metadata.name);
    for (const plan of result.nodeClaims) expect(plan.instanceTypeOptions.length).toBeGreaterThanOrEqual(2);
  });

  it('should schedule respecting the minValues from instance-type requirements (A100 and H100, 19-vCPU pods)', () => {
    const names = ['Standard_NC24ads_A100_v4', 'Standard_NC40ads_H100_v5'];
    const gpuTypes = STATIC_INSTANCE_TYPES.filter((t) => names.includes(t.name));
    const c = new UpstreamCluster([poolWith({ key: LABEL_INSTANCE_TYPE, operator: 'In', values: names, minValues: 2 })], gpuTypes);
    const both = pods(2, {}, {}, { requests: { cpu: '19', memory: '16Gi' } });
    const result = c.provision(...both);
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims).toHaveLength(2);
    for (const plan of result.nodeClaims) expect(plan.instanceTypeOptions.map((t) => t.name).sort()).toEqual(names);
  });

  it('schedule should fail if minimum number of InstanceTypes is not met as per the minValues in the requirement', () => {
    const c = new UpstreamCluster([poolWith({ key: LABEL_INSTANCE_TYPE, operator: 'Exists', minValues: TYPES.length + 1 })]);
    const p = pod();
    const result = c.provision(p);
    expect(c.nodeOf(p)).toBeUndefined();
    expect(result.unschedulable[0]!.reason).toMatch(/minValues/);
  });

  it('should schedule and respect multiple requirement keys with minValues', () => {
    const c = new UpstreamCluster([poolWith(
      { key: LABEL_INSTANCE_TYPE, operator: 'Exists', minValues: 3 },
      { key: 'karpenter.azure.com/sku-cpu', operator: 'Gt', values: ['2'], minValues: 2 },
    )]);
    const result = c.provision(...pods(3));
    expect(result.unschedulable).toEqual([]);
    for (const plan of result.nodeClaims) {
      expect(plan.instanceTypeOptions.length).toBeGreaterThanOrEqual(3);
      expect(plan.instanceTypeOptions.every((t) => t.vcpu > 2)).toBe(true);
    }
  });
});
