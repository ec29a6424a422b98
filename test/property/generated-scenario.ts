import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { stringify } from 'yaml';
import type { ScenarioInput } from '../../src/sim/scenario.js';

/**
 * Random small worlds for the leak-freedom properties: quota, capacity, throttling, 5xx,
 * timeouts (some after the write took effect), tiny subnets and controller crashes at
 * random await points. Each case is a scenario file plus a seed, so a failure is
 * reproducible with `azflex simulate`.
 */
export interface GeneratedCase {
  scenario: ScenarioInput;
  seed: number;
}

const H200_FAMILY = 'standardNDSH200v5Family';

export const generatedCase: fc.Arbitrary<GeneratedCase> = fc
  .record({
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    minutes: fc.constantFrom(15, 30, 45),
    gpuPods: fc.integer({ min: 0, max: 4 }),
    cpuPods: fc.integer({ min: 0, max: 6 }),
    quotaNodes: fc.integer({ min: 0, max: 3 }),
    allocationFailureRate: fc.double({ min: 0, max: 0.8, noNaN: true }),
    zonalAllocationFailureRate: fc.double({ min: 0, max: 0.2, noNaN: true }),
    transientFaultRate: fc.double({ min: 0, max: 0.15, noNaN: true }),
    timeoutRate: fc.double({ min: 0, max: 0.15, noNaN: true }),
    throttling: fc.boolean(),
    drainWritesAt: fc.option(fc.integer({ min: 0, max: 900 }), { nil: undefined }),
    subnetBits: fc.constantFrom(24, 27, 28),
    restarts: fc.integer({ min: 0, max: 4 }),
    restartDelaySeconds: fc.constantFrom(0, 5, 30, 120),
    lifetimeSeconds: fc.option(fc.integer({ min: 300, max: 1800 }), { nil: undefined }),
  })
  .filter((c) => c.gpuPods + c.cpuPods > 0)
  .map((c): GeneratedCase => ({
    seed: c.seed,
    scenario: {
      name: 'generated',
      hours: c.minutes / 60,
      regions: [
        {
          location: 'eastus2',
          familyQuotaCores: { [H200_FAMILY]: 96 * c.quotaNodes, standardDSv5Family: 64 },
          allocationFailureRate: round(c.allocationFailureRate),
          zonalAllocationFailureRate: round(c.zonalAllocationFailureRate),
        },
      ],
      nodeClasses: [{ name: 'eastus2', location: 'eastus2', subnetPrefix: `10.1.0.0/${c.subnetBits}` }],
      nodePools: [
        { name: 'h200', nodeClass: 'eastus2', instanceTypes: ['Standard_ND96isr_H200_v5'], labels: { gpu: 'h200' }, limits: { 'nvidia.com/gpu': '32' } },
        { name: 'cpu', nodeClass: 'eastus2', instanceTypes: ['Standard_D8s_v5'], labels: { workload: 'cpu' }, limits: { cpu: '64' } },
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
        schedule: c.drainWritesAt === undefined ? [] : [{ at: c.drainWritesAt, fault: { kind: 'throttle' as const, bucket: 'writes' as const, drain: true } }],
      },
      controller: { bootSeconds: [60, 180] as [number, number] },
    },
  }));

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
