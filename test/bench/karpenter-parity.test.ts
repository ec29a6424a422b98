import { describe, expect, it } from 'vitest';
import { COMPARED, compare, makeDiversePods, makeGenericPods, type Measurement } from '../../bench/karpenter-parity.js';

const [GENERIC] = COMPARED;

function ours(podsPerSecond: number, nodes: number, unschedulable = 0): Measurement[] {
  return [{ pods: GENERIC.pods, medianMs: 1, medianCpuMs: 50, podsPerSecond, nodes, unschedulable }];
}

function upstream(podsPerSecond: number, nodes: number, cpuMsPerSolve: number | null = 10_000) {
  return {
    version: 'v1.15.0', gomaxprocs: 2, buildMs: 0,
    results: [{ benchmark: GENERIC.upstreamBenchmark, samples: 3, podsPerSecond, nodes, pods: GENERIC.pods, msPerSolve: 1, cpuMsPerSolve }],
  };
}

describe('compare', () => {
  it('meets the target with the ratio at its minimum and no more nodes than Karpenter', () => {
    const point = compare(GENERIC, ours(100 * 1_000, 24), upstream(1_000, 24));
    expect(point).toMatchObject({ karpenter: { podsPerSecond: 1_000, nodes: 24 }, ratio: 100, met: true });
  });

  it('gives the CPU ratio beside the wall one when both sides report CPU per Solve, and null when Karpenter\'s does not', () => {
    expect(compare(GENERIC, ours(100_000, 24), upstream(1_000, 24)).cpuRatio).toBe(200);
    expect(compare(GENERIC, ours(100_000, 24), upstream(1_000, 24, null)).cpuRatio).toBeNull();
  });

  it('misses it on the ratio, on one node more than Karpenter, or on a pod left pending', () => {
    expect(compare(GENERIC, ours(99_000, 24), upstream(1_000, 24)).met).toBe(false);
    expect(compare(GENERIC, ours(500_000, 25), upstream(1_000, 24)).met).toBe(false);
    expect(compare(GENERIC, ours(500_000, 24, 1), upstream(1_000, 24)).met).toBe(false);
  });

  it('leaves Karpenter\'s side, the ratio and the verdict null when the Go side failed, never a recorded figure', () => {
    const point = compare(GENERIC, ours(100_000, 24), { version: 'v1.15.0', error: 'go: not found' });
    expect(point).toMatchObject({ karpenter: null, ratio: null, cpuRatio: null, met: null, azflex: { podsPerSecond: 100_000 } });
  });
});

describe('workloads', () => {
  it('diverse pods are upstream makeDiversePods\' five kinds, count/5 each, the remainder generic', () => {
    const pods = makeDiversePods(1_003, 1);
    expect(pods).toHaveLength(1_003);
    const spreads = pods.filter((p) => p.spec.topologySpreadConstraints?.length);
    const affine = pods.filter((p) => p.spec.affinity?.podAffinity);
    const anti = pods.filter((p) => p.spec.affinity?.podAntiAffinity);
    expect([spreads.length, affine.length, anti.length]).toEqual([400, 200, 200]);
    expect(pods.length - spreads.length - affine.length - anti.length).toBe(203);
  });

  it('generic pods draw requests from upstream\'s value sets', () => {
    for (const pod of makeGenericPods(200, 1)) {
      const { cpu, memory } = pod.spec.containers[0]!.resources.requests!;
      expect(['100m', '250m', '500m', '1000m', '1500m']).toContain(cpu);
      expect(['100Mi', '256Mi', '512Mi', '1024Mi', '2048Mi', '4096Mi']).toContain(memory);
    }
  });
});
