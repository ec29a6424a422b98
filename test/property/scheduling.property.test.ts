/**
 * Property tests for provisioning decisions, checked against an independent restatement of
 * the rules (built from the primitive helpers, not from the scheduler's internals):
 *   - every planned NodeClaim's requirements are satisfiable by each of its SKUs, and all of
 *     its pods fit on each of them (with kube-reserved and DaemonSet overhead);
 *   - every pending pod is accounted for exactly once;
 *   - NodePool limits are never exceeded, counting in-flight NodeClaims;
 *   - no pod that fits is left without a NodeClaim while limits allow it;
 *   - every unschedulable pod has a reason.
 */
import fc from 'fast-check';
import { coverageApplies, propertyParams } from './params.js';
import { describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES, type InstanceType } from '../../src/catalog/skus.js';
import type { NodeClaim, NodePool, NodeSelectorRequirement, Pod, Taint } from '../../src/ports/cluster.js';
import { defaultKubeReserved, instanceTypeCapacity, maxPodsFor } from '../../src/provisioning/overhead.js';
import { Requirements, firstUntoleratedTaint, instanceTypeRequirements } from '../../src/provisioning/requirements.js';
import { addInto, fitsWithin, podRequests, resourcesFromList, subtractResources, type Resources } from '../../src/provisioning/resources.js';
import {
  nodePoolRequirements, podKey, podRequirementTerms, schedule, type SchedulingInput, type SchedulingResult,
} from '../../src/provisioning/scheduler.js';
import { GPU_TAINT, GPU_TOLERATION, makeNodeClaim, makeNodeClass, makeNodePool, makePod } from '../provisioning/fixtures.js';

const LOCATIONS = ['eastus2', 'westeurope', 'uksouth'] as const;

const podArb = fc.record({
  cpu: fc.constantFrom('100m', '500m', '1', '3', '7', '20', '50', '100'),
  memory: fc.constantFrom('128Mi', '1Gi', '8Gi', '64Gi', '300Gi', '3000Gi'),
  gpu: fc.constantFrom('0', '0', '0', '1', '2', '4', '8', '16'),
  tolerates: fc.boolean(),
  gpuName: fc.option(fc.constantFrom('H200', 'A100', 'H100'), { nil: undefined }),
  arch: fc.option(fc.constantFrom('amd64', 'arm64'), { nil: undefined }),
  team: fc.option(fc.constantFrom('ml', 'web'), { nil: undefined }),
  copies: fc.integer({ min: 1, max: 40 }),
});
type Infer<A> = A extends fc.Arbitrary<infer T> ? T : never;
type PodSpec = Infer<typeof podArb>;

const poolArb = fc.record({
  gpuOnly: fc.constantFrom<'gpu' | 'cpu' | 'any'>('gpu', 'cpu', 'any'),
  tainted: fc.boolean(),
  team: fc.option(fc.constantFrom('ml', 'web'), { nil: undefined }),
  gpuLimit: fc.option(fc.constantFrom('0', '1', '8', '16', '24'), { nil: undefined }),
  cpuLimit: fc.option(fc.constantFrom('10', '100', '300'), { nil: undefined }),
  weight: fc.integer({ min: 0, max: 3 }),
  location: fc.constantFrom(...LOCATIONS),
  inFlight: fc.array(fc.constantFrom(...STATIC_INSTANCE_TYPES.map((t) => t.name)), { maxLength: 2 }),
});
type PoolSpec = Infer<typeof poolArb>;

const scenarioArb = fc.record({
  pods: fc.array(podArb, { minLength: 1, maxLength: 8 }),
  pools: fc.array(poolArb, { minLength: 1, maxLength: 3 }),
  unavailable: fc.subarray(STATIC_INSTANCE_TYPES.map((t) => t.name)),
  daemonCpu: fc.constantFrom('0', '100m', '1'),
});

function buildPods(specs: PodSpec[]): Pod[] {
  const pods: Pod[] = [];
  specs.forEach((spec, s) => {
    for (let c = 0; c < spec.copies; c++) {
      const requests: Record<string, string> = { cpu: spec.cpu, memory: spec.memory };
      if (spec.gpu !== '0') requests['nvidia.com/gpu'] = spec.gpu;
      const affinity: NodeSelectorRequirement[] = [];
      if (spec.gpuName) affinity.push({ key: 'karpenter.azure.com/sku-gpu-name', operator: 'In', values: [spec.gpuName] });
      if (spec.arch) affinity.push({ key: 'kubernetes.io/arch', operator: 'In', values: [spec.arch] });
      pods.push(makePod(`p${s}-${c}`, {
        requests,
        tolerations: spec.tolerates ? [GPU_TOLERATION] : [],
        ...(spec.team ? { nodeSelector: { team: spec.team } } : {}),
        // Two OR'ed terms: the constrained one, or any amd64 A100 node.
        ...(affinity.length > 0 ? { affinityTerms: [affinity, [{ key: 'karpenter.azure.com/sku-gpu-name', operator: 'In', values: ['A100'] }]] } : {}),
      }));
    }
  });
  return pods;
}

function buildInput(scenario: Infer<typeof scenarioArb>): SchedulingInput {
  const nodePools: NodePool[] = [];
  const nodeClaims: NodeClaim[] = [];
  scenario.pools.forEach((spec: PoolSpec, i) => {
    const name = `pool${i}`;
    const requirements: NodeSelectorRequirement[] = [];
    if (spec.gpuOnly === 'gpu') requirements.push({ key: 'karpenter.azure.com/sku-gpu-count', operator: 'Gt', values: ['0'] });
    if (spec.gpuOnly === 'cpu') requirements.push({ key: 'karpenter.azure.com/sku-gpu-count', operator: 'In', values: ['0'] });
    const limits: Record<string, string> = {};
    if (spec.gpuLimit) limits['nvidia.com/gpu'] = spec.gpuLimit;
    if (spec.cpuLimit) limits.cpu = spec.cpuLimit;
    nodePools.push(makeNodePool(name, {
      nodeClassName: spec.location, requirements, limits, weight: spec.weight,
      taints: spec.tainted ? [GPU_TAINT] : [], labels: spec.team ? { team: spec.team } : {},
    }));
    spec.inFlight.forEach((instanceType, j) => {
      nodeClaims.push(makeNodeClaim(`${name}-inflight${j}`, { nodePool: name, launchedAs: instanceType, taints: spec.tainted ? [GPU_TAINT] : [] }));
    });
  });
  return {
    pendingPods: buildPods(scenario.pods),
    nodePools,
    nodeClasses: LOCATIONS.map((l) => makeNodeClass(l, l)),
    instanceTypes: STATIC_INSTANCE_TYPES,
    existingNodeClaims: nodeClaims,
    daemonSetPods: scenario.daemonCpu === '0' ? [] : [makePod('ds', { requests: { cpu: scenario.daemonCpu }, tolerations: [{ operator: 'Exists' }], ownerKind: 'DaemonSet' })],
    isOfferingUnavailable: (sku) => scenario.unavailable.includes(sku),
  };
}

/** The oracle's view of a NodePool: its SKUs, taints, overhead and limit headroom. */
interface PoolModel {
  pool: NodePool;
  requirements: Requirements;
  taints: Taint[];
  location: string;
  daemonOverhead: Resources;
  candidates: Array<{ instanceType: InstanceType; labels: Requirements; capacity: Resources; allocatable: Resources }>;
  limits: Resources;
}

function poolModels(input: SchedulingInput): Map<string, PoolModel> {
  const models = new Map<string, PoolModel>();
  for (const pool of input.nodePools) {
    const nodeClass = input.nodeClasses.find((nc) => nc.metadata.name === pool.spec.template.spec.nodeClassRef.name)!;
    const location = nodeClass.spec.location;
    const requirements = nodePoolRequirements(pool);
    const daemonOverhead: Resources = {};
    for (const ds of input.daemonSetPods) {
      if (!firstUntoleratedTaint(ds.spec.tolerations, pool.spec.template.spec.taints)) addInto(daemonOverhead, podRequests(ds));
    }
    const candidates = input.instanceTypes
      .filter((t) => t.locations.includes(location) && !input.isOfferingUnavailable(t.name, location, 'on-demand'))
      .map((instanceType) => {
        const capacity = instanceTypeCapacity(instanceType, nodeClass.spec);
        return {
          instanceType, labels: instanceTypeRequirements(instanceType, location), capacity,
          allocatable: subtractResources(capacity, defaultKubeReserved(instanceType, maxPodsFor(instanceType, nodeClass.spec))),
        };
      })
      .filter((c) => requirements.intersects(c.labels) === undefined);
    models.set(pool.metadata.name, { pool, requirements, taints: pool.spec.template.spec.taints, location, daemonOverhead, candidates, limits: resourcesFromList(pool.spec.limits) });
  }
  return models;
}

/** Whether the pod could go, alone, on a fresh node of some candidate SKU of the pool. */
function fittingCandidates(pod: Pod, model: PoolModel): PoolModel['candidates'] {
  if (firstUntoleratedTaint(pod.spec.tolerations, model.taints)) return [];
  const need = addInto({ ...podRequests(pod) }, model.daemonOverhead);
  return model.candidates.filter((c) =>
    fitsWithin(need, c.allocatable) &&
    podRequirementTerms(pod).some((term) => model.requirements.compatible(term) === undefined && c.labels.intersects(model.requirements.intersect(term)) === undefined));
}

function limitUsage(input: SchedulingInput, result: SchedulingResult, model: PoolModel): Resources {
  const usage: Resources = {};
  const name = model.pool.metadata.name;
  for (const claim of input.existingNodeClaims) {
    if (claim.metadata.labels['karpenter.sh/nodepool'] !== name) continue;
    const instanceType = model.candidates.find((c) => c.instanceType.name === claim.metadata.labels['node.kubernetes.io/instance-type'])
      ?? input.instanceTypes.map((t) => ({ capacity: instanceTypeCapacity(t, undefined), instanceType: t })).find((c) => c.instanceType.name === claim.metadata.labels['node.kubernetes.io/instance-type']);
    if (instanceType) addInto(usage, instanceType.capacity);
  }
  for (const plan of result.nodeClaims) {
    if (plan.nodePoolName !== name) continue;
    const max: Resources = {};
    for (const option of plan.instanceTypeOptions) {
      const capacity = model.candidates.find((c) => c.instanceType.name === option.name)!.capacity;
      for (const r in capacity) max[r] = Math.max(max[r] ?? 0, capacity[r]!);
    }
    addInto(usage, max);
  }
  return usage;
}

describe('scheduling properties', () => {
  it('plans only satisfiable, fitting, within-limit NodeClaims and leaves out only pods that cannot fit', () => {
    // A pinned seed keeps the coverage check below stable; AZFLEX_PROPERTY_SEED explores others.
    const DEFAULTS = { numRuns: 200, seed: 20261122 };
    const params = propertyParams(DEFAULTS);
    // Guards against a vacuous generator: the interesting outcomes must all occur.
    const seen = { planned: 0, inFlight: 0, limited: 0, neverFits: 0, multiOption: 0 };
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const input = buildInput(scenario);
        const result = schedule(input);
        if (result.nodeClaims.length > 0) seen.planned++;
        if (result.existingPlacements.length > 0) seen.inFlight++;
        if (result.unschedulable.some((u) => u.reason.includes(' limit '))) seen.limited++;
        if (result.unschedulable.some((u) => u.reason.startsWith('no SKU in catalog'))) seen.neverFits++;
        if (result.nodeClaims.some((c) => c.instanceTypeOptions.length > 1)) seen.multiOption++;
        const models = poolModels(input);
        const podsByKey = new Map(input.pendingPods.map((p) => [podKey(p), p]));

        // Every pending pod accounted for exactly once.
        const accounted = [
          ...result.nodeClaims.flatMap((c) => c.podKeys),
          ...result.existingPlacements.flatMap((p) => p.podKeys),
          ...result.unschedulable.map((u) => podKey(u.pod)),
        ];
        expect(accounted.sort()).toEqual([...podsByKey.keys()].sort());

        for (const plan of result.nodeClaims) {
          const model = models.get(plan.nodePoolName)!;
          const requirements = Requirements.fromSelectors(plan.requirements);
          expect(plan.instanceTypeOptions[0]).toBe(plan.instanceType);
          const total = { ...model.daemonOverhead };
          for (const key of plan.podKeys) addInto(total, podRequests(podsByKey.get(key)!));
          for (const option of plan.instanceTypeOptions) {
            const candidate = model.candidates.find((c) => c.instanceType.name === option.name);
            expect(candidate, `${option.name} is offered by ${plan.nodePoolName}`).toBeDefined();
            expect(candidate!.labels.intersects(requirements)).toBeUndefined();
            expect(fitsWithin(total, candidate!.allocatable)).toBe(true);
          }
          expect(model.requirements.compatible(requirements)).toBeUndefined();
          const shapes = new Map(plan.podKeys.map((key) => [JSON.stringify(podsByKey.get(key)!.spec), podsByKey.get(key)!]));
          for (const pod of shapes.values()) {
            expect(firstUntoleratedTaint(pod.spec.tolerations, model.taints)).toBeUndefined();
            expect(podRequirementTerms(pod).some((term) => requirements.compatible(term) === undefined)).toBe(true);
          }
        }

        // Pods counted on an in-flight NodeClaim must be able to run on the SKU it launched as.
        for (const placement of result.existingPlacements) {
          const claim = input.existingNodeClaims.find((c) => c.metadata.name === placement.nodeClaimName)!;
          const model = models.get(claim.metadata.labels['karpenter.sh/nodepool']!)!;
          const instanceType = input.instanceTypes.find((t) => t.name === claim.metadata.labels['node.kubernetes.io/instance-type'])!;
          const labels = Requirements.fromSelectors(claim.spec.requirements).intersect(instanceTypeRequirements(instanceType, model.location));
          for (const key of placement.podKeys) {
            const pod = podsByKey.get(key)!;
            expect(firstUntoleratedTaint(pod.spec.tolerations, claim.spec.taints)).toBeUndefined();
            expect(podRequirementTerms(pod).some((term) => labels.compatible(term) === undefined), `${key} on ${instanceType.name}`).toBe(true);
          }
        }

        for (const model of models.values()) {
          const usage = limitUsage(input, result, model);
          const existingOnly = limitUsage(input, { ...result, nodeClaims: [] }, model);
          const planned = result.nodeClaims.some((c) => c.nodePoolName === model.pool.metadata.name);
          for (const r in model.limits) {
            if (planned) expect(usage[r] ?? 0, `${model.pool.metadata.name} ${r}`).toBeLessThanOrEqual(Math.max(model.limits[r]!, existingOnly[r] ?? 0));
            if ((existingOnly[r] ?? 0) < model.limits[r]! && planned) expect(usage[r] ?? 0).toBeLessThanOrEqual(model.limits[r]!);
          }
        }

        // Pods of one spec are identical: check each shape once per pool (keeps the suite fast).
        const usageByPool = new Map([...models.values()].map((m) => [m, limitUsage(input, result, m)]));
        const checked = new Set<string>();
        for (const { pod, reason } of result.unschedulable) {
          expect(reason.length).toBeGreaterThan(0);
          const shape = JSON.stringify(pod.spec);
          if (checked.has(shape)) continue;
          checked.add(shape);
          for (const model of models.values()) {
            const fitting = fittingCandidates(pod, model);
            const usage = usageByPool.get(model)!;
            const allowed = fitting.filter((c) => Object.keys(model.limits).every((r) => (c.capacity[r] ?? 0) <= model.limits[r]! - (usage[r] ?? 0)));
            expect(allowed.map((c) => c.instanceType.name), `${podKey(pod)} (${reason}) fits ${model.pool.metadata.name}`).toEqual([]);
            if (fitting.length > 0) expect(reason).toContain(`NodePool ${model.pool.metadata.name} limit`);
          }
        }
      }),
      params,
    );
    if (coverageApplies(params, DEFAULTS)) expect(Object.values(seen).every((n) => n > 0), JSON.stringify(seen)).toBe(true);
  });

  it('is deterministic', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const a = schedule(buildInput(scenario));
        const b = schedule(buildInput(scenario));
        expect(a.nodeClaims.map((c) => [c.nodePoolName, c.instanceType.name, c.podKeys])).toEqual(b.nodeClaims.map((c) => [c.nodePoolName, c.instanceType.name, c.podKeys]));
      }),
      propertyParams({ numRuns: 50, seed: 20261122 }),
    );
  });
});
