import { describe, expect, it } from 'vitest';
import { builtInScenario } from '../../../src/sim/scenarios.js';
import { runSweep, summarizeSweep, type SweepJob } from '../../../src/sim/sweep/sweep.js';
import { SeededRandom } from '../../../src/sim/virtual-clock.js';
import { MAX_SEED, seedList } from '../../../src/cli/flags.js';

const scenario = builtInScenario('quota-blind')!;
const job = (seed: number, strategy: SweepJob['strategy'] = 'machine'): SweepJob => ({ scenario, seed, strategy, hours: 0.5, reproduce: `repro ${seed} ${strategy}` });

describe('seed sweeps', () => {
  it('worker threads give the same runs as this thread, in job order', async () => {
    const jobs = [job(1), job(2), job(3), job(4, 'naive')];
    const pooled = await runSweep(jobs, { workers: 2 });
    const inline = await runSweep(jobs, { workers: 1 });
    expect(pooled.map((o) => o.seed)).toEqual([1, 2, 3, 4]);
    expect(pooled.map((o) => o.result!.eventLogSha256)).toEqual(inline.map((o) => o.result!.eventLogSha256));
    expect(new Set(pooled.map((o) => o.result!.eventLogSha256)).size).toBe(4);
    const report = summarizeSweep(pooled, { workers: 2, wallSeconds: 1 });
    expect(report.runs).toBe(4);
    // The naive strategy leaks under quota failures: that run fails, with its replay command.
    expect(report.failures.map((f) => [f.seed, f.strategy, f.reproduce])).toEqual([[4, 'naive', 'repro 4 naive']]);
    expect(report.worst.leaks.map((w) => w.seed)).toEqual([4]);
    expect(report.perSeed.filter((s) => s.ok).map((s) => s.seed)).toEqual([1, 2, 3]);
  }, 120_000);

  it('a job that throws is reported with its error, the others still run', async () => {
    // A scenario object with no nodeClasses makes runSimulation throw.
    const broken = { ...job(5), scenario: { ...scenario, nodeClasses: undefined } as unknown as SweepJob['scenario'] };
    const outcomes = await runSweep([broken, job(6)], { workers: 2 });
    expect(outcomes[0]!.error).toBeDefined();
    expect(outcomes[1]!.error).toBeUndefined();
    expect(summarizeSweep(outcomes, { workers: 2, wallSeconds: 1 }).failures.map((f) => f.seed)).toEqual([5]);
  }, 120_000);

  it('--arm sdk reaches the workers: a swept run is the single run through the SDK adapter, not the direct port', async () => {
    const throttle = builtInScenario('throttle')!;
    const sdk = { scenario: throttle, seed: 2, strategy: 'machine' as const, hours: 0.1, reproduce: 'r' };
    const [pooled, direct] = await runSweep([{ ...sdk, arm: 'sdk' }, sdk], { workers: 2 });
    const { runSimulation } = await import('../../../src/sim/simulation.js');
    const { sdkArmAdapter } = await import('../../../src/sim/sdk-route.js');
    const single = await runSimulation({ scenario: throttle, seed: 2, strategy: 'machine', hours: 0.1, keepEventLog: false, armAdapter: sdkArmAdapter });
    expect(pooled!.result!.eventLogSha256).toBe(single.result.eventLogSha256);
    expect(direct!.result!.eventLogSha256).not.toBe(single.result.eventLogSha256);
  }, 120_000);

  it('distinct seeds across the documented range (0..2^32 - 1) give distinct event logs', async () => {
    // Both ends, the 31/32-bit boundary, and mulberry32's increment (that seed's raw stream is
    // seed 0's shifted by one draw; every component forks its own stream, so the runs differ).
    const seeds = [0, 1, 2, 0x6d2b79f5, 2 ** 31 - 1, 2 ** 31, 0x9e3779b9, 2 ** 32 - 2, MAX_SEED];
    const outcomes = await runSweep(seeds.map((seed) => ({ ...job(seed), hours: 0.25 })), { workers: 2 });
    expect(outcomes.map((o) => o.error)).toEqual(seeds.map(() => undefined));
    expect(new Set(outcomes.map((o) => o.result!.eventLogSha256)).size).toBe(seeds.length);
    // Above the range is refused, not wrapped onto a seed inside it.
    expect(() => seedList(String(MAX_SEED + 1))).toThrow(`from 0 to ${MAX_SEED}`);
  }, 120_000);

  it('seed lists: ranges and single seeds, bounded, 32-bit seeds all distinct', () => {
    expect(seedList('1..3,7,2')).toEqual([1, 2, 3, 7]);
    expect(() => seedList('5..1')).toThrow('runs backwards');
    expect(() => seedList('4294967296')).toThrow('from 0 to 4294967295');
    expect(() => seedList('0..200000')).toThrow('at most 100000');
    expect(() => seedList('1.5')).toThrow('whole numbers');
    // Spaces around ranges and commas, as a shell user types them; a single seed is a range of one.
    expect(seedList(' 3 .. 4 , 9 ')).toEqual([3, 4, 9]);
    expect(seedList('5')).toEqual(seedList('5..5'));
    expect(() => seedList('1..2,')).toThrow('"1..2," has an empty entry');
    const first = (seed: number) => new SeededRandom(seed).next();
    expect(first(0)).not.toBe(first(2 ** 32 - 1));
    expect(first(0)).not.toBe(first(0x9e3779b9));
  });
});
