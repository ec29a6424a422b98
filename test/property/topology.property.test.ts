/**
 * Property: every planned NodeClaim's pods satisfy their topology against the planned nodes.
 * Workloads are Deployments (label app=<name>) whose spread and affinity select their own
 * replicas, as real Deployments do, so the final placement must honour each rule:
 *   - required anti-affinity: no two replicas share a hostname (or zone);
 *   - topology spread (zone, hostname, region): max − min ≤ maxSkew over the domains the
 *     NodePools can launch, and every replica's node is in one domain of the key;
 *   - required zonal self-affinity: all replicas in one zone;
 * and counting what already runs: existing replicas count towards skew and anti-affinity.
 */
import fc from 'fast-check';
import { coverageApplies, propertyParams } from './params.js';
import { describe, expect, it } from 'vitest';
import type { InstanceType } from '../../src/catalog/skus.js';
import type { NodeClaim, Pod, PodAffinityTerm, TopologySpreadConstraint } from '../../src/ports/cluster.js';
import { Requirements } from '../../src/provisioning/requirements.js';
import { podKey, schedule, type SchedulingInput } from '../../src/provisioning/scheduler.js';
import { makeNodeClaim, makeNodeClass, makeNodePool, makePod } from '../provisioning/fixtures.js';
import { LABEL_HOSTNAME, LABEL_REGION, LABEL_ZONE } from '../../src/apis/well-known.js';

const ZONES: Record<string, string[]> = { eastus2: ['eastus2-1', 'eastus2-2', 'eastus2-3'], westeurope: ['westeurope-1', 'westeurope-2'] };
const TYPES: InstanceType[] = [2, 8, 32].map((vcpu) => ({
  name: `Standard_D${vcpu}s_v5`, family: 'standardDSv5Family', vcpu, memoryMiB: vcpu * 4096, gpuCount: 0, maxPods: 30,
  ephemeralStorageGiB: 128, arch: 'amd64', pricePerHour: 0.05 * vcpu, locations: ['eastus2', 'westeurope', 'uksouth'], zones: ZONES,
}));

type Rule = 'none' | 'anti-host' | 'anti-zone' | 'spread-zone' | 'spread-host' | 'spread-region' | 'affinity-zone';

const deploymentArb = fc.record({
  rule: fc.constantFrom<Rule>('none', 'anti-host', 'anti-zone', 'spread-zone', 'spread-host', 'spread-region', 'affinity-zone'),
  replicas: fc.integer({ min: 1, max: 10 }),
  maxSkew: fc.integer({ min: 1, max: 2 }),
  cpu: fc.constantFrom('250m', '1', '3'),
  running: fc.integer({ min: 0, max: 2 }),
});

const scenarioArb = fc.record({
  deployments: fc.array(deploymentArb, { minLength: 1, maxLength: 5 }),
  regions: fc.subarray(['eastus2', 'westeurope', 'uksouth'], { minLength: 1 }),
});

function rules(app: string, rule: Rule, maxSkew: number): Partial<Pod['spec']> {
  const selector = { matchLabels: { app } };
  const term = (key: string): PodAffinityTerm => ({ labelSelector: selector, topologyKey: key });
  const spread = (key: string): TopologySpreadConstraint => ({ maxSkew, topologyKey: key, whenUnsatisfiable: 'DoNotSchedule', labelSelector: selector });
  switch (rule) {
    case 'none': return {};
    case 'anti-host': return { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(LABEL_HOSTNAME)] } } };
    case 'anti-zone': return { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(LABEL_ZONE)] } } };
    case 'spread-zone': return { topologySpreadConstraints: [spread(LABEL_ZONE)] };
    case 'spread-host': return { topologySpreadConstraints: [spread(LABEL_HOSTNAME)] };
    case 'spread-region': return { topologySpreadConstraints: [spread(LABEL_REGION)] };
    case 'affinity-zone': return { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(LABEL_ZONE)] } } };
  }
}

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

function build(scenario: Scenario): SchedulingInput {
  const pendingPods: Pod[] = [];
  const boundPods: Pod[] = [];
  const nodeClaims: NodeClaim[] = [];
  scenario.deployments.forEach((d, i) => {
    const app = `app${i}`;
    const spec = rules(app, d.rule, d.maxSkew);
    const make = (name: string, nodeName?: string): Pod => {
      const pod = makePod(name, { requests: { cpu: d.cpu, memory: '1Gi' }, ...(nodeName ? { nodeName } : {}) });
      return { ...pod, metadata: { ...pod.metadata, labels: { app } }, spec: { ...pod.spec, ...spec } };
    };
    for (let r = 0; r < d.replicas; r++) pendingPods.push(make(`${app}-${r}`));
    for (let r = 0; r < d.running; r++) {
      // Existing replicas on nodes of the first region, one zone each (they honoured their rules).
      const region = scenario.regions[0]!;
      const node = `node-${i}-${r}`;
      const zone = ZONES[region]?.[r % ZONES[region]!.length];
      nodeClaims.push(makeNodeClaim(`claim-${i}-${r}`, {
        nodePool: region, launchedAs: 'Standard_D2s_v5', nodeName: node,
        labels: { [LABEL_REGION]: region, ...(zone ? { [LABEL_ZONE]: zone } : {}) },
        allocatable: { cpu: '0', memory: '0', pods: '0' },
      }));
      boundPods.push({ ...make(`${app}-running-${r}`, node), status: { phase: 'Running', conditions: [] } });
    }
  });
  return {
    pendingPods, boundPods, existingNodeClaims: nodeClaims,
    nodePools: scenario.regions.map((r) => makeNodePool(r, { nodeClassName: r })),
    nodeClasses: scenario.regions.map((r) => makeNodeClass(r, r)),
    instanceTypes: TYPES, daemonSetPods: [], isOfferingUnavailable: () => false,
  };
}

describe('topology properties', () => {
  it('every NodeClaim\'s pods satisfy their spread, affinity and anti-affinity against the planned nodes', () => {
    // A pinned seed keeps the coverage check below stable; AZFLEX_PROPERTY_SEED explores others.
    const DEFAULTS = { numRuns: 300, seed: 20261123 };
    const params = propertyParams(DEFAULTS);
    const seen = { antiHost: 0, spreadZone: 0, refused: 0, affinity: 0 };
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const input = build(scenario);
        const result = schedule(input);
        const pods = new Map(input.pendingPods.map((p) => [podKey(p), p]));
        expect([...result.nodeClaims.flatMap((c) => c.podKeys), ...result.existingPlacements.flatMap((p) => p.podKeys), ...result.unschedulable.map((u) => podKey(u.pod))].sort())
          .toEqual([...pods.keys()].sort());
        for (const u of result.unschedulable) expect(u.reason.length).toBeGreaterThan(0);
        if (result.unschedulable.length > 0) seen.refused++;
        // Domains of every placed pod: planned claims by index, existing ones by their labels.
        const domains = new Map<string, Record<string, string | undefined>>();
        result.nodeClaims.forEach((plan, i) => {
          const req = Requirements.fromSelectors(plan.requirements);
          const one = (key: string): string | undefined => {
            const r = req.get(key);
            return r && !r.complement && r.values.size === 1 ? [...r.values][0] : undefined;
          };
          for (const key of plan.podKeys) domains.set(key, { [LABEL_HOSTNAME]: `planned-${i}`, [LABEL_ZONE]: one(LABEL_ZONE), [LABEL_REGION]: one(LABEL_REGION) });
        });
        for (const pod of input.boundPods ?? []) {
          const claim = input.existingNodeClaims.find((c) => c.status.nodeName === pod.spec.nodeName)!;
          domains.set(podKey(pod), { [LABEL_HOSTNAME]: pod.spec.nodeName, [LABEL_ZONE]: claim.metadata.labels[LABEL_ZONE], [LABEL_REGION]: claim.metadata.labels[LABEL_REGION] });
        }
        scenario.deployments.forEach((d, i) => {
          const app = `app${i}`;
          // New replicas first, then the running ones.
          const placed = [...domains.entries()].filter(([key]) => key.startsWith(`default/${app}-`))
            .sort(([a], [b]) => Number(a.includes('-running-')) - Number(b.includes('-running-'))).map(([, v]) => v);
          const count = (key: string): Map<string, number> => {
            const counts = new Map<string, number>();
            placed.forEach((p, n) => {
              const v = p[key];
              // A node without the key is no domain: new replicas must not land there.
              if (n < pendingPlaced) expect(v, `${app} ${d.rule}: every new replica has a ${key}`).toBeDefined();
              if (v !== undefined) counts.set(v, (counts.get(v) ?? 0) + 1);
            });
            return counts;
          };
          const pendingPlaced = placed.length - d.running;
          switch (d.rule) {
            case 'anti-host':
            case 'anti-zone': {
              const key = d.rule === 'anti-host' ? LABEL_HOSTNAME : LABEL_ZONE;
              const values = placed.map((p) => p[key]).filter((v) => v !== undefined);
              const newOnes = placed.slice(0, pendingPlaced).map((p) => p[key]).filter((v) => v !== undefined);
              for (const v of newOnes) expect(values.filter((x) => x === v).length, `${app} ${d.rule} ${v}`).toBe(1);
              if (d.rule === 'anti-host' && pendingPlaced > 1) seen.antiHost++;
              break;
            }
            case 'spread-zone':
            case 'spread-region':
            case 'spread-host': {
              const key = d.rule === 'spread-zone' ? LABEL_ZONE : d.rule === 'spread-region' ? LABEL_REGION : LABEL_HOSTNAME;
              const counts = count(key);
              if (key === LABEL_HOSTNAME) {
                for (const p of placed.slice(0, pendingPlaced)) expect(counts.get(p[key]!)!, `${app} hostname spread`).toBeLessThanOrEqual(d.maxSkew);
              } else {
                const universe = key === LABEL_ZONE ? scenario.regions.flatMap((r) => ZONES[r] ?? []) : scenario.regions;
                const values = universe.map((u) => counts.get(u) ?? 0);
                for (const v of counts.keys()) expect(universe, `${app} spread domain`).toContain(v);
                // Each domain that received a new replica is within maxSkew of the final minimum
                // (a skew running replicas already had is not the scheduler's to undo).
                const min = Math.min(...values);
                for (const p of placed.slice(0, pendingPlaced)) {
                  expect(counts.get(p[key]!)! - min, `${app} ${key} skew ${JSON.stringify([...counts])}`).toBeLessThanOrEqual(d.maxSkew);
                }
                if (key === LABEL_ZONE && pendingPlaced > 2) seen.spreadZone++;
              }
              break;
            }
            case 'affinity-zone':
              // With replicas running, new ones join their zones; without, they all share the first one's.
              if (d.running === 0 && placed.length > 0) expect(count(LABEL_ZONE).size, `${app} zonal affinity`).toBe(1);
              if (d.running > 0) {
                const running = new Set(placed.slice(pendingPlaced).map((p) => p[LABEL_ZONE]));
                for (const p of placed.slice(0, pendingPlaced)) expect(running, `${app} joins a running replica's zone`).toContain(p[LABEL_ZONE]);
              }
              if (pendingPlaced > 1) seen.affinity++;
              break;
            case 'none':
              break;
          }
        });
      }),
      params,
    );
    if (coverageApplies(params, DEFAULTS)) expect(Object.values(seen).every((n) => n > 0), JSON.stringify(seen)).toBe(true);
  });
});
