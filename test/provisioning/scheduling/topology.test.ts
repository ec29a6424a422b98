import { describe, expect, it } from 'vitest';
import type { InstanceType } from '../../../src/catalog/skus.js';
import type { Pod, PodAffinityTerm, TopologySpreadConstraint } from '../../../src/ports/cluster.js';
import { Requirements } from '../../../src/provisioning/requirements.js';
import { schedule, type SchedulingInput, type SchedulingResult } from '../../../src/provisioning/scheduler.js';
import { makeNodeClaim, makeNodeClass, makeNodePool, makePod } from '../fixtures.js';
import { LABEL_HOSTNAME, LABEL_ZONE } from '../../../src/apis/well-known.js';

const ZONES = ['eastus2-1', 'eastus2-2', 'eastus2-3'];
const TYPES: InstanceType[] = [4, 16, 64].map((vcpu) => ({
  name: `Standard_D${vcpu}s_v5`, family: 'standardDSv5Family', vcpu, memoryMiB: vcpu * 4096, gpuCount: 0, maxPods: 110,
  ephemeralStorageGiB: 128, arch: 'amd64', pricePerHour: 0.048 * vcpu, locations: ['eastus2', 'westeurope'],
  zones: { eastus2: ZONES },
}));

const input = (over: Partial<SchedulingInput>): SchedulingInput => ({
  pendingPods: [], nodePools: [makeNodePool('default')], nodeClasses: [makeNodeClass()], instanceTypes: TYPES,
  existingNodeClaims: [], daemonSetPods: [], isOfferingUnavailable: () => false, ...over,
});

function withLabels(pod: Pod, labels: Record<string, string>, spec: Partial<Pod['spec']> = {}): Pod {
  return { ...pod, metadata: { ...pod.metadata, labels }, spec: { ...pod.spec, ...spec } };
}

const replicas = (n: number, app: string, spec: Partial<Pod['spec']>, requests = { cpu: '500m', memory: '512Mi' }): Pod[] =>
  Array.from({ length: n }, (_, i) => withLabels(makePod(`${app}-${i}`, { requests }), { app }, spec));

const zoneOf = (result: SchedulingResult, podKey: string): string | undefined => {
  const plan = result.nodeClaims.find((p) => p.podKeys.includes(podKey));
  const zone = plan && Requirements.fromSelectors(plan.requirements).get(LABEL_ZONE);
  return zone && !zone.complement && zone.values.size === 1 ? [...zone.values][0] : undefined;
};

const antiAffinity = (app: string, key = LABEL_HOSTNAME): PodAffinityTerm => ({ labelSelector: { matchLabels: { app } }, topologyKey: key });
const zoneSpread = (app: string, maxSkew = 1, extra: Partial<TopologySpreadConstraint> = {}): TopologySpreadConstraint => ({
  maxSkew, topologyKey: LABEL_ZONE, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app } }, ...extra,
});

describe('topology', () => {
  it('gives each replica with hostname anti-affinity a node of its own', () => {
    const pods = replicas(5, 'trainer', { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [antiAffinity('trainer')] } } });
    const result = schedule(input({ pendingPods: pods }));
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims).toHaveLength(5);
    for (const plan of result.nodeClaims) expect(plan.podKeys).toHaveLength(1);
  });

  it('keeps other pods away from an anti-affinity owner (symmetry) but lets unrelated pods share', () => {
    const owner = replicas(1, 'db', { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [antiAffinity('web')] } } });
    const web = replicas(2, 'web', {});
    const other = replicas(2, 'cache', {});
    const result = schedule(input({ pendingPods: [...owner, ...web, ...other] }));
    expect(result.unschedulable).toEqual([]);
    const ownerPlan = result.nodeClaims.find((p) => p.podKeys.includes('default/db-0'))!;
    expect(ownerPlan.podKeys.some((k) => k.startsWith('default/web-'))).toBe(false);
  });

  it('spreads a zone-spread Deployment within maxSkew and pins each NodeClaim to its zone', () => {
    const pods = replicas(7, 'api', { topologySpreadConstraints: [zoneSpread('api')] });
    const result = schedule(input({ pendingPods: pods }));
    expect(result.unschedulable).toEqual([]);
    const counts = new Map<string, number>();
    for (const pod of pods) {
      const zone = zoneOf(result, `default/${pod.metadata.name}`);
      expect(zone).toBeDefined();
      counts.set(zone!, (counts.get(zone!) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(ZONES);
    expect(Math.max(...counts.values()) - Math.min(...counts.values())).toBeLessThanOrEqual(1);
  });

  it('counts pods already running in a zone', () => {
    const running = replicas(2, 'api', { nodeName: 'node-a' }).map((p) => ({ ...p, status: { ...p.status, phase: 'Running' as const } }));
    const claim = makeNodeClaim('existing', { nodePool: 'default', launchedAs: 'Standard_D4s_v5', nodeName: 'node-a', labels: { [LABEL_ZONE]: 'eastus2-1' } });
    const pods = replicas(2, 'api', { topologySpreadConstraints: [zoneSpread('api')] }).map((p, i) => ({ ...p, metadata: { ...p.metadata, name: `new-${i}` } }));
    const result = schedule(input({ pendingPods: pods, boundPods: running, existingNodeClaims: [claim] }));
    expect(result.unschedulable).toEqual([]);
    expect(zoneOf(result, 'default/new-0')).not.toBe('eastus2-1');
    expect(zoneOf(result, 'default/new-1')).not.toBe('eastus2-1');
  });

  it('refuses a spread it cannot satisfy on regional SKUs, and relaxes ScheduleAnyway', () => {
    const pool = makeNodePool('we', { nodeClassName: 'we' });
    const cls = makeNodeClass('we', 'westeurope');
    const hard = replicas(1, 'hard', { topologySpreadConstraints: [zoneSpread('hard')] });
    const soft = replicas(1, 'soft', { topologySpreadConstraints: [zoneSpread('soft', 1, { whenUnsatisfiable: 'ScheduleAnyway' })] });
    const result = schedule(input({ pendingPods: [...hard, ...soft], nodePools: [pool], nodeClasses: [cls] }));
    expect(result.unschedulable.map((u) => u.pod.metadata.name)).toEqual(['hard-0']);
    expect(result.unschedulable[0]!.reason).toMatch(/topology spread on topology.kubernetes.io\/zone/);
    expect(result.nodeClaims.flatMap((p) => p.podKeys)).toEqual(['default/soft-0']);
  });

  it('co-locates pods with required zonal pod affinity', () => {
    const term: PodAffinityTerm = { labelSelector: { matchLabels: { app: 'etl' } }, topologyKey: LABEL_ZONE };
    const pods = replicas(4, 'etl', { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } } }, { cpu: '30', memory: '8Gi' });
    const result = schedule(input({ pendingPods: pods }));
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims.length).toBeGreaterThan(1);
    expect(new Set(pods.map((p) => zoneOf(result, `default/${p.metadata.name}`))).size).toBe(1);
  });

  it('honours preferred node affinity when it can and drops it when it cannot', () => {
    const prefer = (zone: string): Partial<Pod['spec']> => ({
      affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, preference: { matchExpressions: [{ key: LABEL_ZONE, operator: 'In', values: [zone] }] } }] } },
    });
    const [ok] = replicas(1, 'ok', prefer('eastus2-2'));
    const [impossible] = replicas(1, 'nope', prefer('mars-1'));
    const result = schedule(input({ pendingPods: [ok!, impossible!] }));
    expect(result.unschedulable).toEqual([]);
    expect(zoneOf(result, 'default/ok-0')).toBe('eastus2-2');
  });

  it('relaxes preferred anti-affinity rather than leaving a pod pending', () => {
    const pool = makeNodePool('small', { limits: { cpu: '8' } });
    const pods = replicas(3, 'w', { affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: antiAffinity('w') }] } } });
    const result = schedule(input({ pendingPods: pods, nodePools: [pool] }));
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims.length).toBeLessThan(3);
  });

  it('matchLabelKeys scopes a spread to the pod\'s own revision', () => {
    const spread = zoneSpread('api', 1, { matchLabelKeys: ['rev'] });
    const v1 = replicas(3, 'api', { topologySpreadConstraints: [spread] }).map((p) => withLabels(p, { app: 'api', rev: '1' }));
    const v2 = replicas(3, 'api', { topologySpreadConstraints: [spread] }).map((p, i) => ({ ...withLabels(p, { app: 'api', rev: '2' }), metadata: { ...p.metadata, labels: { app: 'api', rev: '2' }, name: `v2-${i}` } }));
    const result = schedule(input({ pendingPods: [...v1, ...v2] }));
    expect(result.unschedulable).toEqual([]);
    expect(new Set(v2.map((p) => zoneOf(result, `default/${p.metadata.name}`))).size).toBe(3);
  });

  it('gives one precise reason for a namespaceSelector it cannot evaluate', () => {
    const term: PodAffinityTerm = { ...antiAffinity('x'), namespaceSelector: { matchLabels: { team: 'a' } } };
    const pods = replicas(1, 'x', { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } } });
    const result = schedule(input({ pendingPods: pods }));
    expect(result.unschedulable[0]!.reason).toMatch(/namespaceSelector with labels is not supported/);
  });
});
