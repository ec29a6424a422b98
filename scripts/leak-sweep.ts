/**
 * The "done when" sweep of issue 9: the built-in scenarios × seeds × controller restarts,
 * machine strategy, strict accounting. Prints one JSON object: per-run failures (anything
 * --assert-no-leaks refuses) and the reap latency after ARM's reservation ends, split into
 * runs without throttling or controller downtime (the p100 ≤ 5 s target) and the rest.
 *
 *   npx tsx scripts/leak-sweep.ts [--seeds 1..25] [--restarts 0,5,25] [--scenarios a,b] [--shard i/n]
 *
 * `--shard i/n` runs every n-th case from the i-th (0-based), so two processes share two cores;
 * merge their outputs with `--merge a.json b.json`.
 */
import { readFileSync } from 'node:fs';
import { BUILT_IN_SCENARIOS, builtInScenario } from '../src/sim/scenarios.js';
import { leakSummary, runSimulation, type Percentiles } from '../src/sim/simulation.js';

interface CaseResult {
  scenario: string;
  seed: number;
  restarts: number;
  problem?: string;
  throttled: boolean;
  reapAfterReservation: number[];
  reapFromFailure: number[];
  wallSeconds: number;
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function range(spec: string): number[] {
  const m = /^(\d+)\.\.(\d+)$/.exec(spec);
  if (m) return Array.from({ length: Number(m[2]) - Number(m[1]) + 1 }, (_, i) => Number(m[1]) + i);
  return spec.split(',').map(Number);
}

function pct(values: number[]): Percentiles {
  if (values.length === 0) return { p50: 0, p99: 0, max: 0, count: 0 };
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
  const r = (x: number) => Math.round(x * 10) / 10;
  return { p50: r(at(0.5)), p99: r(at(0.99)), max: r(s[s.length - 1]!), count: s.length };
}

function summarise(cases: CaseResult[]): unknown {
  const clean = cases.filter((c) => !c.throttled && c.restarts === 0);
  const rest = cases.filter((c) => c.throttled || c.restarts > 0);
  const failures = cases.filter((c) => c.problem !== undefined);
  return {
    runs: cases.length,
    failedRuns: failures.length,
    failures: failures.map((c) => ({ scenario: c.scenario, seed: c.seed, restarts: c.restarts, problem: c.problem })),
    reapAfterReservationEndSeconds: {
      withoutThrottlingOrDowntime: pct(clean.flatMap((c) => c.reapAfterReservation)),
      withThrottlingOrDowntime: pct(rest.flatMap((c) => c.reapAfterReservation)),
      all: pct(cases.flatMap((c) => c.reapAfterReservation)),
    },
    timeToReapFromFailureSeconds: {
      withoutThrottlingOrDowntime: pct(clean.flatMap((c) => c.reapFromFailure)),
      withThrottlingOrDowntime: pct(rest.flatMap((c) => c.reapFromFailure)),
    },
    wallSeconds: Math.round(cases.reduce((n, c) => n + c.wallSeconds, 0)),
  };
}

const merge = process.argv.indexOf('--merge');
if (merge >= 0) {
  const cases = process.argv.slice(merge + 1).flatMap((f) => (JSON.parse(readFileSync(f, 'utf8')) as { cases: CaseResult[] }).cases);
  process.stdout.write(`${JSON.stringify(summarise(cases), null, 2)}\n`);
} else {
  const seeds = range(arg('--seeds') ?? '1..25');
  const restartCounts = range(arg('--restarts') ?? '0,5,25');
  const scenarios = (arg('--scenarios') ?? BUILT_IN_SCENARIOS.join(',')).split(',');
  const [shard, shards] = (arg('--shard') ?? '0/1').split('/').map(Number) as [number, number];
  const cases: CaseResult[] = [];
  let i = 0;
  for (const name of scenarios) {
    const scenario = builtInScenario(name);
    if (!scenario) throw new Error(`unknown scenario ${name}`);
    for (const restarts of restartCounts) {
      for (const seed of seeds) {
        if (i++ % shards !== shard) continue;
        const run = await runSimulation({ scenario, seed, strategy: 'machine', restarts, keepEventLog: false });
        const r = run.result;
        const throttled = Object.values(r.armCalls).some((byStatus) => (byStatus['429'] ?? 0) > 0);
        const c: CaseResult = {
          scenario: name, seed, restarts, throttled,
          reapAfterReservation: run.arm.reapAfterReservationSeconds(),
          reapFromFailure: run.arm.reapTimesSeconds(),
          wallSeconds: r.wallSeconds,
        };
        const problem = leakSummary(r) ?? (run.invariantViolations.length ? run.invariantViolations.slice(0, 3).join('; ') : undefined);
        if (problem !== undefined) c.problem = problem;
        cases.push(c);
        process.stderr.write(`${name} seed=${seed} restarts=${restarts} ${problem ?? 'ok'} (${r.wallSeconds}s)\n`);
      }
    }
  }
  process.stdout.write(`${JSON.stringify({ summary: summarise(cases), cases })}\n`);
}
