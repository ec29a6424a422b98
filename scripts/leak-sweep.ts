/**
 * The "done when" sweep of issue 9: every built-in scenario × seeds × controller restarts,
 * machine strategy, strict accounting, on the simulator's sweep pool (src/sim/sweep). Prints
 * one JSON object: the failing runs (anything `--assert-no-leaks` refuses, or an invariant
 * a settled world breaks) with replay commands, and the time from the end of ARM's
 * reservation on a failed attempt's NIC to the NIC gone, pooled over all runs, split into
 * runs without throttling or controller downtime (target: p100 ≤ 5 s) and the rest.
 *
 *   npx tsx scripts/leak-sweep.ts [--seeds 1..25] [--restarts 0,5,25] [--scenarios a,b] [--workers 2]
 */
import { BUILT_IN_SCENARIOS, builtInScenario } from '../src/sim/scenarios.js';
import { percentiles } from '../src/sim/result.js';
import { runSweep, type SweepJob, type SweepOutcome } from '../src/sim/sweep/sweep.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function list(spec: string): number[] {
  const m = /^(\d+)\.\.(\d+)$/.exec(spec);
  if (m) return Array.from({ length: Number(m[2]) - Number(m[1]) + 1 }, (_, i) => Number(m[1]) + i);
  return spec.split(',').map(Number);
}

const seeds = list(arg('--seeds') ?? '1..25');
const restartCounts = list(arg('--restarts') ?? '0,5,25');
/** The five scenarios of issue 9's "done when" (the fleet world is a benchmark, not part of it). */
const DEFAULT_SCENARIOS = ['quota-storm', 'capacity-flap', 'throttle', 'crash-restart', 'churn'].filter((n) => BUILT_IN_SCENARIOS.includes(n));
const scenarios = (arg('--scenarios') ?? DEFAULT_SCENARIOS.join(',')).split(',');
const workers = Number(arg('--workers') ?? 2);

const jobs: Array<SweepJob & { name: string }> = [];
for (const name of scenarios) {
  const scenario = builtInScenario(name);
  if (!scenario) throw new Error(`unknown scenario ${name}`);
  for (const restarts of restartCounts) {
    for (const seed of seeds) {
      jobs.push({
        name, scenario, seed, restarts, strategy: 'machine',
        reproduce: `npx azflex simulate --scenario ${name} --seed ${seed} --restarts ${restarts} --assert-no-leaks`,
      });
    }
  }
}

const started = process.hrtime.bigint();
const outcomes = await runSweep(jobs, {
  workers,
  onOutcome: (o, done, total) => process.stderr.write(`[${done}/${total}] ${o.reproduce}: ${o.error ? 'ERROR' : o.problems.length ? o.problems.slice(0, 2).join('; ') : 'ok'}\n`),
});
const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;

const throttledOrDown = (o: SweepOutcome): boolean =>
  (o.result?.restarts ?? 0) > 0 || Object.values(o.result?.armCalls ?? {}).some((byStatus) => (byStatus['429'] ?? 0) > 0);
const pooled = (of: SweepOutcome[]) => percentiles(of.flatMap((o) => o.reapAfterReservationSeconds ?? []));
const failing = outcomes.filter((o) => o.error !== undefined || o.problems.length > 0);
const total = (k: 'leakedNics' | 'leakedVms' | 'leakedDisks' | 'stuckNodeClaims' | 'failedVmsLeft') => outcomes.reduce((n, o) => n + (o.result?.[k] ?? 0), 0);

process.stdout.write(`${JSON.stringify({
  scenarios, seeds: `${seeds[0]}..${seeds[seeds.length - 1]}`, restarts: restartCounts,
  runs: outcomes.length,
  failedRuns: failing.length,
  leakedNics: total('leakedNics'), leakedVms: total('leakedVms'), leakedDisks: total('leakedDisks'),
  stuckNodeClaims: total('stuckNodeClaims'), failedVmsLeft: total('failedVmsLeft'),
  failures: failing.map((o) => ({ problems: o.problems.slice(0, 5), error: o.error?.split('\n')[0], reproduce: o.reproduce })),
  reapAfterReservationEndSeconds: {
    withoutThrottlingOrDowntime: pooled(outcomes.filter((o) => !throttledOrDown(o))),
    withThrottlingOrDowntime: pooled(outcomes.filter(throttledOrDown)),
  },
  runsWithoutThrottlingOrDowntime: outcomes.filter((o) => !throttledOrDown(o)).length,
  maxSettleSeconds: Math.max(...outcomes.map((o) => o.result?.settleSeconds ?? 0)),
  workers,
  wallSeconds: Math.round(wallSeconds),
}, null, 2)}\n`);
