import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { stringify } from 'yaml';
import type { ScenarioInput } from '../../src/sim/scenario.js';

/**
 * Random worlds for the leak-freedom properties, built on the simulator's real-ARM defaults
 * (long GPU VM deletes, async NIC deletes, 1-4 min creates) plus what a generated schedule
 * adds: one or two regions in one or two subscriptions, quota and capacity failures, quota
 * and SKU flaps over the run, ARM throttling with drained buckets, 5xx and timeouts (some
 * after the write took effect), tiny subnets, nodes that never join the cluster, runs from
 * 15 minutes to 2.5 hours, and controller crashes at random await points. ARM itself may
 * differ from the documented rule: reservations that start late or jitter, lists that lag
 * by up to a minute and page by 1-3 items, a VM delete that also takes a still-reserved NIC,
 * asynchronous allocation failures that leave no Failed VM, Compute RP throttling windows
 * exhausted mid-run (Retry-After up to 20 min), and the default regional vCPU quota. VMs may be
 * taken away under the controller (deallocated, powered off or deleted by a person). GPU pools
 * may allow spot (or only spot), with a low-priority quota, spot evictions at up to one per VM
 * and hour, and spot capacity that goes away for a while. The first region's GPU pool may be
 * static (`replicas`), and a share of nodes may turn unhealthy for good (NotReady, or a GPU
 * condition no repair policy names). Each case is a scenario file plus a
 * seed, so a failure is reproducible with `azflex simulate`.
 */
export interface GeneratedCase {
  scenario: ScenarioInput;
  seed: number;
}

const H200 = 'Standard_ND96isr_H200_v5';
const H200_FAMILY = 'standardNDSH200v5Family';
const SUB_A = '00000000-0000-0000-0000-000000000001';
const SUB_B = '00000000-0000-0000-0000-000000000002';
/** Both offer H200 and D8s_v5 in the catalog. */
const SECOND_REGION = 'swedencentral';

const rate = (max: number) => fc.double({ min: 0, max, noNaN: true }).map(round);

/** A flap: at `at` something is taken away, and given back `for` later (scaled into the run's length). */
const flap = fc.record({
  kind: fc.constantFrom('quota' as const, 'sku' as const, 'capacity' as const),
  region: fc.constantFrom(0, 1),
  at: fc.integer({ min: 0, max: 5400 }),
  for: fc.integer({ min: 60, max: 3600 }),
});

export const generatedCase: fc.Arbitrary<GeneratedCase> = fc
  .record({
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    // Mostly short worlds (CPU time), one in five past an hour.
    minutes: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(15, 30, 45) }, { weight: 1, arbitrary: fc.constantFrom(75, 150) }),
    twoRegions: fc.boolean(),
    secondSubscription: fc.boolean(),
    gpuPods: fc.integer({ min: 0, max: 4 }),
    cpuPods: fc.integer({ min: 0, max: 6 }),
    quotaNodes: fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 })),
    allocationFailureRate: rate(0.8),
    zonalAllocationFailureRate: rate(0.2),
    transientFaultRate: rate(0.15),
    timeoutRate: rate(0.15),
    throttling: fc.boolean(),
    drainAt: fc.option(fc.record({ at: fc.integer({ min: 0, max: 900 }), bucket: fc.constantFrom('writes' as const, 'deletes' as const, 'reads' as const) }), { nil: undefined }),
    flaps: fc.array(flap, { maxLength: 3 }),
    subnetBits: fc.constantFrom(24, 27, 28),
    neverJoinRate: fc.oneof(fc.constant(0), rate(0.5)),
    restarts: fc.integer({ min: 0, max: 4 }),
    restartDelaySeconds: fc.constantFrom(0, 5, 30, 120),
    lifetimeSeconds: fc.option(fc.integer({ min: 300, max: 1800 }), { nil: undefined }),
    overconstrainedRate: fc.oneof(fc.constant(0), rate(0.3)),
    regionalQuota: fc.constantFrom(undefined, 1000),
    arm: fc.record({
      failedVmRecords: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      cascadeDeletesReservedNic: fc.boolean(),
      jitterSeconds: fc.constantFrom(0, 0, 5, 30),
      startDelaySeconds: fc.constantFrom(0, 0, 10, 20),
      reservationFrom: fc.constantFrom('attempt' as const, 'attempt' as const, 'completion' as const),
      listPageSize: fc.constantFrom(1, 2, 3, 100),
      appearSeconds: fc.constantFrom(0, 5, 60),
      disappearSeconds: fc.constantFrom(0, 5, 60),
    }),
    computeThrottleAt: fc.option(fc.integer({ min: 0, max: 5400 }), { nil: undefined }),
    // VMs taken away under the controller: deallocated, powered off or deleted by a person.
    // Static capacity (NodePool spec.replicas) for the first region's GPU pool.
    staticReplicas: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined, freq: 3 }),
    // Nodes that turn unhealthy for good: node repair (with its 20% breaker) replaces them, or not.
    unhealthy: fc.option(
      fc.record({ at: fc.integer({ min: 0, max: 5400 }), fraction: rate(0.5), condition: fc.constantFrom({ type: 'Ready', status: 'False' as const }, { type: 'Ready', status: 'Unknown' as const }, { type: 'GpuXidError', status: 'True' as const }) }),
      { nil: undefined, freq: 3 },
    ),
    takeAway: fc.option(
      fc.record({ at: fc.integer({ min: 0, max: 5400 }), region: fc.constantFrom(0, 1), action: fc.constantFrom('deallocate' as const, 'powerOff' as const, 'delete' as const), fraction: rate(1) }),
      { nil: undefined, freq: 3 },
    ),
    // Spot: GPU pools allow spot (or only spot), with a low-priority quota, evictions at a rate
    // per hour, and spot capacity that goes away for a while.
    spot: fc.option(
      fc.record({
        capacityTypes: fc.constantFrom<Array<'spot' | 'on-demand'>>(['spot', 'on-demand'], ['spot']),
        lowPriorityNodes: fc.integer({ min: 0, max: 4 }),
        evictionsPerHour: fc.oneof(fc.constant(0), rate(1)),
        outage: fc.option(fc.record({ region: fc.constantFrom(0, 1), at: fc.integer({ min: 0, max: 5400 }), for: fc.integer({ min: 60, max: 3600 }) }), { nil: undefined }),
      }),
      { nil: undefined, freq: 3 },
    ),
  })
  .filter((c) => c.gpuPods + c.cpuPods > 0)
  .map((c): GeneratedCase => {
    const regions = [{ sub: SUB_A, location: 'eastus2' }];
    if (c.twoRegions) regions.push({ sub: c.secondSubscription ? SUB_B : SUB_A, location: SECOND_REGION });
    // The second region's class has its own resource group, so its own virtual network: a VNet is in one region.
    const classes = regions.map((r, i) => ({
      name: `class-${i}`,
      location: r.location,
      subscriptionID: r.sub,
      ...(i > 0 ? { resourceGroup: `azflex-nodes-${r.location}` } : {}),
      subnetPrefix: `10.${i + 1}.0.0/${c.subnetBits}`,
    }));
    const schedule: NonNullable<NonNullable<ScenarioInput['faults']>['schedule']> = [];
    if (c.computeThrottleAt !== undefined) schedule.push({ at: c.computeThrottleAt, fault: { kind: 'computeThrottle', location: regions[0]!.location, subscriptionId: regions[0]!.sub } });
    if (c.drainAt) schedule.push({ at: c.drainAt.at, fault: { kind: 'throttle', bucket: c.drainAt.bucket, drain: true } });
    if (c.takeAway) {
      const r = regions[Math.min(c.takeAway.region, regions.length - 1)]!;
      schedule.push({ at: c.takeAway.at, fault: { kind: 'vmAction', location: r.location, subscriptionId: r.sub, action: c.takeAway.action, fraction: c.takeAway.fraction } });
    }
    if (c.spot?.outage) {
      const r = regions[Math.min(c.spot.outage.region, regions.length - 1)]!;
      schedule.push({ at: c.spot.outage.at, fault: { kind: 'spotCapacity', location: r.location, subscriptionId: r.sub, available: false } });
      schedule.push({ at: c.spot.outage.at + c.spot.outage.for, fault: { kind: 'spotCapacity', location: r.location, subscriptionId: r.sub, available: true } });
    }
    for (const f of c.flaps) {
      const r = regions[Math.min(f.region, regions.length - 1)]!;
      const where = { location: r.location, subscriptionId: r.sub };
      const cores = 96 * c.quotaNodes[Math.min(f.region, regions.length - 1)]!;
      if (f.kind === 'quota') {
        schedule.push({ at: f.at, fault: { kind: 'quota', ...where, family: H200_FAMILY, cores: 0 } });
        schedule.push({ at: f.at + f.for, fault: { kind: 'quota', ...where, family: H200_FAMILY, cores } });
      } else if (f.kind === 'sku') {
        schedule.push({ at: f.at, fault: { kind: 'skuUnavailable', ...where, sku: H200, unavailable: true } });
        schedule.push({ at: f.at + f.for, fault: { kind: 'skuUnavailable', ...where, sku: H200, unavailable: false } });
      } else {
        schedule.push({ at: f.at, fault: { kind: 'capacity', ...where, allocationFailureRate: 1 } });
        schedule.push({ at: f.at + f.for, fault: { kind: 'capacity', ...where, allocationFailureRate: round(c.allocationFailureRate) } });
      }
    }
    // Scaled into the run (a fault after the end is refused by the scenario schema).
    const runSeconds = c.minutes * 60;
    const scaled = (at: number) => Math.floor((at / (5400 + 3600 + 1)) * runSeconds);
    for (const e of schedule) e.at = scaled(e.at);
    schedule.sort((a, b) => a.at - b.at);
    return {
      seed: c.seed,
      scenario: {
        name: 'generated',
        hours: c.minutes / 60,
        regions: regions.map((r, i) => ({
          subscriptionId: r.sub,
          location: r.location,
          familyQuotaCores: { [H200_FAMILY]: 96 * c.quotaNodes[i]!, standardDSv5Family: 64 },
          allocationFailureRate: round(c.allocationFailureRate),
          zonalAllocationFailureRate: round(c.zonalAllocationFailureRate),
          overconstrainedAllocationFailureRate: round(c.overconstrainedRate),
          ...(c.regionalQuota !== undefined ? { regionalQuotaCores: c.regionalQuota } : {}),
          ...(c.spot ? { lowPriorityQuotaCores: 96 * c.spot.lowPriorityNodes, spotEvictionRatePerHour: c.spot.evictionsPerHour } : {}),
        })),
        arm: {
          failedVmRecords: c.arm.failedVmRecords,
          cascadeDeletesReservedNic: c.arm.cascadeDeletesReservedNic,
          reservation: { seconds: 180, jitterSeconds: c.arm.jitterSeconds, startDelaySeconds: c.arm.startDelaySeconds, from: c.arm.reservationFrom },
          listPageSize: c.arm.listPageSize,
          listLagSeconds: { appearSeconds: c.arm.appearSeconds, disappearSeconds: c.arm.disappearSeconds },
        },
        nodeClasses: classes,
        nodePools: [
          // One GPU pool per region; the first is preferred (capacity hunting across regions).
          ...classes.map((cls, i) => ({
            name: `h200-${i}`,
            nodeClass: cls.name,
            instanceTypes: [H200],
            labels: { gpu: 'h200' },
            // A static pool takes no weight and only a `nodes` limit (upstream's CRD rules).
            ...(i === 0 && c.staticReplicas !== undefined
              ? { replicas: c.staticReplicas, limits: { nodes: '3' } as Record<string, string> }
              : { limits: { 'nvidia.com/gpu': '32' } as Record<string, string>, weight: 50 - 10 * i }),
            ...(c.spot ? { capacityTypes: c.spot.capacityTypes } : {}),
          })),
          { name: 'cpu', nodeClass: classes[classes.length - 1]!.name, instanceTypes: ['Standard_D8s_v5'], labels: { workload: 'cpu' }, limits: { cpu: '64' } },
        ],
        workload: [
          ...(c.gpuPods ? [{ count: c.gpuPods, prefix: 'train', requests: { cpu: '80', 'nvidia.com/gpu': '8' }, nodeSelector: { gpu: 'h200' }, lifetimeSeconds: c.lifetimeSeconds }] : []),
          ...(c.cpuPods ? [{ count: c.cpuPods, prefix: 'web', at: 60, requests: { cpu: '6', memory: '8Gi' }, nodeSelector: { workload: 'cpu' }, lifetimeSeconds: c.lifetimeSeconds }] : []),
        ],
        faults: {
          throttling: c.throttling,
          transientFaultRate: round(c.transientFaultRate),
          timeoutRate: round(c.timeoutRate),
          restarts: c.restarts,
          restartDelaySeconds: c.restartDelaySeconds,
          nodeNeverJoinsRate: c.neverJoinRate,
          ...(c.unhealthy ? { unhealthyNodes: [{ ...c.unhealthy, at: scaled(c.unhealthy.at) }] } : {}),
          schedule,
        },
        controller: { bootSeconds: [60, 180] as [number, number] },
      },
    };
  });

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** Writes the failing case where a user can replay it, and says how. */
export function reproduction(c: GeneratedCase): string {
  const dir = mkdtempSync(join(tmpdir(), 'azflex-repro-'));
  const file = join(dir, 'scenario.yaml');
  writeFileSync(file, stringify(c.scenario));
  return `reproduce with: npx azflex simulate --scenario ${file} --seed ${c.seed} --strategy machine --assert-no-leaks`;
}
