/**
 * SchedulingMemo keeps each existing NodeClaim's scheduling state across passes; a pass with
 * it must decide exactly what a fresh pass decides on the same inputs. Worlds change between
 * passes the way an API server changes them: an object that changed gets a new
 * resourceVersion, one that did not keeps it (and may come back as a copy, as the k8s
 * adapter's reads are).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES } from '../../../src/catalog/skus.js';
import type { AzureFlexNodeClass, NodeClaim, NodePool, Pod } from '../../../src/ports/cluster.js';
import { SchedulingMemo, schedule, type SchedulingInput } from '../../../src/provisioning/scheduler.js';
import { GPU_TAINT, GPU_TOLERATION, makeNodeClaim, makeNodeClass, makeNodePool, makePod } from '../fixtures.js';

const TYPES = STATIC_INSTANCE_TYPES.map((t) => t.name);

const claimArb = fc.option(
  fc.record({
    pool: fc.constantFrom('cpu', 'gpu'),
    stage: fc.constantFrom<'planned' | 'launched' | 'registered'>('planned', 'launched', 'registered'),
    types: fc.subarray(TYPES, { minLength: 1, maxLength: 3 }),
    deleting: fc.boolean(),
    boundCpu: fc.constantFrom(0, 1, 3),
    /** A second pod bound to the node: none, running, running with required anti-affinity, or finished (which holds nothing). */
    second: fc.constantFrom<'none' | 'Running' | 'Anti' | 'Succeeded'>('none', 'Running', 'Anti', 'Succeeded'),
  }),
  { nil: undefined, freq: 4 },
);

const stepArb = fc.record({
  claims: fc.array(claimArb, { minLength: 6, maxLength: 6 }),
  daemonCpu: fc.constantFrom('0', '100m', '1'),
  cpuLimit: fc.option(fc.constantFrom('24', '64', '200'), { nil: undefined }),
  osDisk: fc.constantFrom(128, 256),
  dropType: fc.option(fc.constantFrom(...TYPES), { nil: undefined, freq: 4 }),
  /** Hand out copies of unchanged objects (the k8s adapter's reads) rather than the same objects. */
  copies: fc.boolean(),
  reverse: fc.boolean(),
  /** An object without a resourceVersion (told apart by identity only). */
  unversioned: fc.boolean(),
  /** Hand the bound pods in a new list even when none changed (a pod cache that moved for other pods). */
  freshBoundList: fc.boolean(),
  /** Pending pods pinned to one instance type (or to one of two): in-flight NodeClaims of other types do not accept them. */
  pin: fc.option(fc.subarray(TYPES, { minLength: 1, maxLength: 2 }), { nil: undefined }),
});
type Step = typeof stepArb extends fc.Arbitrary<infer T> ? T : never;

/** Objects by key: the same spec keeps its object and resourceVersion, a changed one gets a new version. */
class World {
  private rv = 0;
  private readonly objects = new Map<string, { spec: string; obj: { metadata: { resourceVersion?: string } } }>();

  versioned<T extends { metadata: { uid: string; resourceVersion?: string } }>(key: string, spec: unknown, build: () => T, step: Step): T {
    const json = JSON.stringify(spec);
    const kept = this.objects.get(key);
    if (kept && kept.spec === json) return (step.copies ? structuredClone(kept.obj) : kept.obj) as T;
    const obj = build();
    obj.metadata.uid = `uid-${key}`;
    if (!(step.unversioned && key === 'claim-0')) obj.metadata.resourceVersion = String(++this.rv);
    this.objects.set(key, { spec: json, obj });
    return obj;
  }
}

function inputOf(world: World, step: Step, memo: SchedulingMemo | undefined): SchedulingInput {
  const nodeClass = world.versioned<AzureFlexNodeClass>('class', step.osDisk, () => {
    const c = makeNodeClass();
    c.spec.osDiskSizeGB = step.osDisk;
    return c;
  }, step);
  const pools: NodePool[] = [
    world.versioned('pool-cpu', step.cpuLimit ?? null, () => makeNodePool('cpu', { ...(step.cpuLimit ? { limits: { cpu: step.cpuLimit } } : {}) }), step),
    world.versioned('pool-gpu', null, () => makeNodePool('gpu', { taints: [GPU_TAINT], weight: 1 }), step),
  ];
  const claims: NodeClaim[] = [];
  const bound: Pod[] = [];
  step.claims.forEach((spec, i) => {
    if (!spec) return;
    const name = `claim-${i}`;
    const launchedAs = spec.types[0]!;
    const it = STATIC_INSTANCE_TYPES.find((t) => t.name === launchedAs)!;
    const size = { cpu: String(it.vcpu), memory: `${it.memoryMiB}Mi`, pods: '110', ...(it.gpuCount ? { 'nvidia.com/gpu': String(it.gpuCount) } : {}) };
    claims.push(world.versioned(name, { ...spec, boundCpu: 0, second: 'none' }, () => makeNodeClaim(name, {
      nodePool: spec.pool,
      instanceTypes: spec.types,
      ...(spec.stage !== 'planned' ? { launchedAs, capacity: size, allocatable: size } : {}),
      ...(spec.stage === 'registered' ? { nodeName: `node-${i}` } : {}),
      ...(spec.deleting ? { deletionTimestamp: '2026-01-01T00:05:00Z' } : {}),
      ...(spec.pool === 'gpu' ? { taints: [GPU_TAINT] } : {}),
    }), step));
    if (spec.stage === 'registered' && spec.boundCpu > 0) {
      bound.push(world.versioned(`bound-${i}`, spec.boundCpu, () => makePod(`bound-${i}`, { nodeName: `node-${i}`, requests: { cpu: String(spec.boundCpu), memory: '1Gi' } }), step));
    }
    if (spec.stage === 'registered' && spec.second !== 'none') {
      const phase = spec.second === 'Anti' ? 'Running' : spec.second;
      bound.push(world.versioned(`second-${i}`, spec.second, () => {
        const pod = makePod(`second-${i}`, { nodeName: `node-${i}`, phase, requests: { cpu: '2', memory: '3Gi', 'nvidia.com/gpu': '1' } });
        // Keeps pending pods labelled app=web off its node.
        if (spec.second === 'Anti') pod.spec.affinity = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } }] } };
        return pod;
      }, step));
    }
  });
  if (step.reverse) claims.reverse();
  // The same list while no bound pod changed, as the provisioner hands it while its pod cache is unchanged.
  const boundList = step.freshBoundList
    ? { pods: bound }
    : world.versioned('bound', bound.map((p) => p.metadata.resourceVersion), () => ({ metadata: { uid: '' }, pods: bound }), { ...step, copies: false });
  const daemon = world.versioned('daemon', step.daemonCpu, () => makePod('ds-abcde', { ownerKind: 'DaemonSet', requests: { cpu: step.daemonCpu, memory: '64Mi' }, tolerations: [GPU_TOLERATION] }), step);
  const pending = world.versioned('pending', step.pin ?? null, () => ({ metadata: { uid: '' }, pods: [
    ...(step.pin ? Array.from({ length: 3 }, (_, i) => makePod(`pinned-${i}`, {
      requests: { cpu: '1', memory: '1Gi' },
      ...(step.pin!.length === 1
        ? { nodeSelector: { 'node.kubernetes.io/instance-type': step.pin![0]! } }
        : { affinityTerms: [[{ key: 'node.kubernetes.io/instance-type', operator: 'In' as const, values: step.pin! }]] }),
    })) : []),
    ...Array.from({ length: 6 }, (_, i) => {
      const pod = makePod(`web-${i}`, { requests: { cpu: '1', memory: '2Gi' } });
      pod.metadata.labels = { app: 'web' };
      return pod;
    }),
    ...Array.from({ length: 3 }, (_, i) => makePod(`big-${i}`, { requests: { cpu: '6', memory: '8Gi' } })),
    ...Array.from({ length: 2 }, (_, i) => makePod(`train-${i}`, { requests: { cpu: '8', memory: '64Gi', 'nvidia.com/gpu': '1' }, tolerations: [GPU_TOLERATION] })),
  ] }), { ...step, copies: false });
  return {
    pendingPods: pending.pods,
    nodePools: pools,
    nodeClasses: [nodeClass],
    instanceTypes: STATIC_INSTANCE_TYPES.filter((t) => t.name !== step.dropType),
    existingNodeClaims: claims,
    boundPods: boundList.pods,
    daemonSetPods: [daemon],
    isOfferingUnavailable: () => false,
    ...(memo ? { memo } : {}),
  };
}

describe('SchedulingMemo', () => {
  it('a pass with the memo of earlier passes decides exactly what a fresh pass decides', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 2, maxLength: 6 }), (steps) => {
        const world = new World();
        const memo = new SchedulingMemo();
        for (const step of steps) {
          const withMemo = schedule(inputOf(world, step, memo));
          const fresh = schedule(inputOf(world, step, undefined));
          expect(withMemo).toEqual(fresh);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('decides what a fresh pass decides when only NodeClaims and bound pods change (in-flight entries carried over)', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 2, maxLength: 8 }), (steps) => {
        const world = new World();
        const memo = new SchedulingMemo();
        const first = steps[0]!;
        for (const raw of steps) {
          // The pools' side as in the first step, and the same NodeClaim names: the last pass's entries are updated, not rebuilt.
          const step: Step = {
            ...raw, daemonCpu: first.daemonCpu, cpuLimit: first.cpuLimit, osDisk: first.osDisk, dropType: first.dropType,
            claims: first.claims.map((c, i) => (c ? { ...(raw.claims[i] ?? c), pool: c.pool } : undefined)),
          };
          const withMemo = schedule(inputOf(world, step, memo));
          const fresh = schedule(inputOf(world, step, undefined));
          expect(withMemo).toEqual(fresh);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a NodeClaim that stays the same object follows the pods bound to its node', () => {
    const world = new World();
    const memo = new SchedulingMemo();
    const claim = (boundCpu: 0 | 1 | 3, second: 'none' | 'Running' | 'Succeeded'): Step['claims'][number] =>
      ({ pool: 'cpu', stage: 'registered', types: ['Standard_D8s_v5'], deleting: false, boundCpu, second });
    const base: Step = {
      claims: [claim(1, 'none'), undefined, undefined, undefined, undefined, undefined],
      daemonCpu: '100m', cpuLimit: undefined, osDisk: 128, dropType: undefined, copies: false, reverse: false, unversioned: false, freshBoundList: false, pin: undefined,
    };
    const steps = [base, { ...base, claims: [claim(3, 'Running'), ...base.claims.slice(1)] }, { ...base, claims: [claim(3, 'Succeeded'), ...base.claims.slice(1)] }, base];
    const placed: number[] = [];
    for (const step of steps) {
      const withMemo = schedule(inputOf(world, step, memo));
      expect(withMemo).toEqual(schedule(inputOf(world, step, undefined)));
      placed.push(withMemo.existingPlacements.reduce((n, p) => n + p.podKeys.length, 0));
    }
    // Room on the claim shrinks and grows back with what is bound to its node.
    expect(placed[1]).toBeLessThan(placed[0]!);
    expect(placed[2]).toBeGreaterThan(placed[1]!);
    expect(placed[3]).toBe(placed[0]);
  });

  it('rebuilds only the NodeClaims that changed', () => {
    const world = new World();
    const memo = new SchedulingMemo();
    const base: Step = {
      claims: [0, 1, 2, 3, 4, 5].map(() => ({ pool: 'cpu', stage: 'registered' as const, types: ['Standard_D8s_v5'], deleting: false, boundCpu: 1, second: 'none' as const })),
      daemonCpu: '100m', cpuLimit: undefined, osDisk: 128, dropType: undefined, copies: true, reverse: false, unversioned: false, freshBoundList: false, pin: undefined,
    };
    schedule(inputOf(world, base, memo));
    const first = new Map(memo.claims);
    expect(first.size).toBe(6);
    schedule(inputOf(world, { ...base, claims: base.claims.map((c, i) => (i === 2 ? { ...c!, stage: 'launched' as const } : c)) }, memo));
    for (const [name, state] of memo.claims) expect(state === first.get(name)).toBe(name !== 'claim-2');
    // A DaemonSet change touches every NodeClaim's pool: all rebuilt.
    schedule(inputOf(world, { ...base, daemonCpu: '1' }, memo));
    for (const [name, state] of memo.claims) expect(state).not.toBe(first.get(name));
  });
});
