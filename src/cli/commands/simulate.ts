import { existsSync, writeFileSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { STRATEGIES, type StrategyName } from '../../runtime/deps.js';
import { loadScenarioFile, ScenarioError, type Scenario } from '../../sim/scenario.js';
import { BUILT_IN_SCENARIOS, builtInScenario } from '../../sim/scenarios.js';
import { ReportRecorder } from '../../sim/report-recorder.js';
import { sdkArmAdapter } from '../../sim/sdk-route.js';
import { renderReportHtml, type SimulationReportInput } from '../../viz/report.js';
import { runSimulation, type SimulationResult } from '../../sim/simulation.js';
import { UsageError } from '../errors.js';
import { simulateWithLiveView } from '../../live/cli.js';
import { formatComparison } from './simulate-format.js';

interface SimulateFlags {
  scenario: string;
  hours?: number;
  seed: number;
  strategy: StrategyName | 'all';
  restarts?: number;
  json?: boolean;
  assertNoLeaks?: boolean;
  offeringsCache: boolean;
  arm: 'direct' | 'sdk';
  ui?: number | true;
  report?: string;
}

export function integer(name: string, min: number) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw) || Number(raw) < min) throw new InvalidArgumentError(`${name} must be a whole number ≥ ${min}, got "${raw}"`);
    return Number(raw);
  };
}

function positiveNumber(raw: string): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`must be a positive number of hours, got "${raw}"`);
  return n;
}

/** A built-in name, or a path to a YAML/JSON scenario file. */
export function resolveScenario(nameOrPath: string): Scenario {
  const builtIn = builtInScenario(nameOrPath);
  if (builtIn) return builtIn;
  if (!existsSync(nameOrPath)) {
    throw new UsageError(`unknown scenario "${nameOrPath}": not a built-in (${BUILT_IN_SCENARIOS.join(', ')}) and no such file`);
  }
  try {
    return loadScenarioFile(nameOrPath);
  } catch (err) {
    if (err instanceof ScenarioError) throw new UsageError(err.message);
    throw err;
  }
}

export function register(program: Command): void {
  program
    .command('simulate')
    .description('run the controller against the deterministic fake Azure and cluster, and count what leaks')
    .option('--scenario <name|file>', `built-in (${BUILT_IN_SCENARIOS.join(', ')}) or a YAML/JSON file`, 'quota-storm')
    .option('--hours <n>', 'simulated hours (default: the scenario’s)', positiveNumber)
    .option('--seed <n>', 'seed of every random choice; the same seed gives the same run', integer('--seed', 0), 1)
    .addOption(new Option('--strategy <name>', 'NIC cleanup strategy to run').choices([...STRATEGIES, 'all']).default('machine'))
    .option('--restarts <n>', 'kill the controller at this many random await points (overrides the scenario)', integer('--restarts', 0))
    .option('--json', 'print exactly one JSON object instead of the report')
    .option('--assert-no-leaks', 'exit 1 if any NIC, VM or disk leaked')
    .option('--no-offerings-cache', 'disable the unavailable-offerings cache (to measure what it saves)')
    .option('--report <file>', 'also write a self-contained HTML report with plots over simulated time (strategies side by side)')
    .option('--ui [port]', 'serve a live view of the actors on 127.0.0.1 (a free port unless given) with pause/step/speed; one strategy', integer('--ui', 0))
    .addOption(new Option('--arm <route>', 'direct: the fake ARM as a port; sdk: the production SDK adapter over its REST face').choices(['direct', 'sdk']).default('direct'))
    .action(async (flags: SimulateFlags) => {
      const scenario = resolveScenario(flags.scenario);
      if (flags.ui !== undefined) return simulateWithLiveView({ ...flags, ui: flags.ui, scenario });
      const strategies: StrategyName[] = flags.strategy === 'all' ? [...STRATEGIES] : [flags.strategy];
      const results: SimulationResult[] = [];
      const reportRuns: SimulationReportInput[] = [];
      const progress = !flags.json && process.stderr.isTTY ? progressBar(strategies.length) : undefined;
      for (const [i, strategy] of strategies.entries()) {
        const recorder = flags.report ? new ReportRecorder() : undefined;
        const run = await runSimulation({
          onWorld: recorder?.onWorld,
          scenario,
          seed: flags.seed,
          strategy,
          hours: flags.hours,
          restarts: flags.restarts,
          offeringsCache: flags.offeringsCache === false ? false : undefined,
          keepEventLog: false,
          armAdapter: flags.arm === 'sdk' ? sdkArmAdapter : undefined,
          onProgress: progress ? (f) => progress(i, f, strategy) : undefined,
        });
        results.push(run.result);
        if (recorder) reportRuns.push(recorder.build(run.result));
      }
      if (flags.report) {
        writeFileSync(flags.report, renderReportHtml(reportRuns, { title: `azflex simulate — ${scenario.name}` }));
        if (!flags.json) process.stderr.write(`report written to ${flags.report}\n`);
      }
      progress?.(strategies.length, 1, '');
      if (flags.json) {
        const out = results.length === 1 ? results[0] : { scenario: scenario.name, seed: flags.seed, strategy: 'all', runs: results };
        process.stdout.write(`${JSON.stringify(out)}\n`);
      } else {
        process.stdout.write(formatComparison(scenario, results));
      }
      if (flags.assertNoLeaks) {
        const leaky = results.filter((r) => r.leakedNics + r.leakedVms + r.leakedDisks > 0);
        if (leaky.length > 0) {
          process.stderr.write(`azflex: leaks found with strategy ${leaky.map((r) => `${r.strategy} (${r.leakedNics} NICs, ${r.leakedVms} VMs, ${r.leakedDisks} disks)`).join(', ')}\n`);
          process.exitCode = 1;
        }
      }
    });
}

function progressBar(runs: number): (run: number, fraction: number, label: string) => void {
  return (run, fraction, label) => {
    const total = (run + fraction) / runs;
    const width = 30;
    const filled = Math.round(total * width);
    process.stderr.write(`\r[${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${Math.round(total * 100)}% ${label.padEnd(8)}`);
    if (total >= 1) process.stderr.write('\r\x1b[K');
  };
}
