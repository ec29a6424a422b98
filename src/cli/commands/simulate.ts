import { lstatSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { STRATEGIES, type StrategyName } from '../../runtime/deps.js';
import { LIMITS, loadScenarioFile, ScenarioError, type Scenario } from '../../sim/scenario.js';
import { BUILT_IN_SCENARIOS, builtInScenario } from '../../sim/scenarios.js';
import type { SimulationReportInput } from '../../viz/report.js';
import type { SimulationResult } from '../../sim/result.js';
import { UsageError } from '../errors.js';
import { checkOutputPath, writeOutput } from './output-file.js';
import { checkPlacementFlags, placementOfRun } from './simulate-placement.js';
import type { Placement } from '../../sim/placement.js';
import type { ClusterSetup } from '../../sim/cluster-setup.js';
import { BUILT_IN_WORLDS, loadWorld, scenarioOfWorld } from '../../sim/world.js';

const builtInWorldNames = new Set(BUILT_IN_WORLDS);
import { defaultWorkers, MAX_WORKERS } from '../../sim/sweep/pool-size.js';
import type { SweepJob } from '../../sim/sweep/sweep.js';
import { bounded, MAX_SEED, MAX_SWEEP_SEEDS, seedList, shardFlag } from '../flags.js';
import type { Shard } from '../../sim/sweep/shard.js';

interface SimulateFlags {
  scenario?: string;
  manifests?: string[];
  recursive?: boolean;
  world?: string;
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
  outputCluster?: string;
  seeds?: number[];
  workers?: number;
  shard?: Shard;
}

function hoursFlag(raw: string): number {
  const n = Number(raw);
  // Decimal notation only: "0x10" and "1e-300" are numbers to JavaScript, not hours to a user.
  if (!/^\d{1,3}(\.\d{1,6})?$/.test(raw) || n <= 0 || n > LIMITS.hours) throw new InvalidArgumentError(`--hours must be a decimal number of hours above 0 and at most ${LIMITS.hours} (such as 8 or 0.5), got "${raw}"`);
  return n;
}

const DEFAULT_INPUT = 'quota-storm';

/** `--scenario` (both halves in one), or `--manifests` with `--world`. */
async function resolveInputs(flags: SimulateFlags): Promise<{ scenario: Scenario; cluster?: ClusterSetup }> {
  if (!flags.manifests) {
    if (flags.recursive) throw new UsageError('-R goes with --manifests (it reads their directories\' subdirectories too)');
    if (flags.world !== undefined) throw new UsageError('--world goes with --manifests (a --scenario brings its own world)');
    return { scenario: resolveScenario(flags.scenario ?? DEFAULT_INPUT) };
  }
  if (flags.scenario !== undefined) throw new UsageError('--scenario and --manifests do not go together: a scenario brings its own NodePools and workload (use --world for the Azure side)');
  try {
    const worldName = flags.world ?? DEFAULT_INPUT;
    const world = loadWorld(worldName);
    // Loaded here: the CRD validator (ajv) costs a tenth of a second that other inputs need not pay.
    const { loadManifests } = await import('../../sim/manifests.js');
    const cluster = loadManifests(flags.manifests, { recursive: flags.recursive === true });
    return { scenario: scenarioOfWorld(world, cluster, builtInWorldNames.has(worldName) ? `world ${worldName}` : worldName), cluster };
  } catch (err) {
    if (err instanceof ScenarioError) throw new UsageError(err.message);
    throw err;
  }
}

/** Whether anything is at `path`, a broken or looping symlink included (that one gets its own message when read). */
function pathExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** A built-in name, or a path to a YAML/JSON scenario file. */
export function resolveScenario(nameOrPath: string): Scenario {
  const builtIn = builtInScenario(nameOrPath);
  if (builtIn) return builtIn;
  if (!pathExists(nameOrPath)) {
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
    .option('--scenario <name|file>', `world, NodePools and workload in one: built-in (${BUILT_IN_SCENARIOS.join(', ')}) or a YAML/JSON file (default: quota-storm)`)
    .option('--manifests <file|dir...>', 'your Kubernetes YAML (AzureFlexNodeClass, NodePool, Deployment, StatefulSet, Job, Pod, PodDisruptionBudget, PersistentVolumeClaim), or a running cluster from kubectl get nodes,pods,nodeclaims,nodepools,azureflexnodeclasses -A -o yaml; files or directories')
    .option('-R, --recursive', 'with --manifests: read the directories\' subdirectories too, as kubectl apply -R does')
    .option('--world <name|file>', `with --manifests: the Azure side, built-in (${BUILT_IN_WORLDS.join(', ')}) or a YAML/JSON file (default: quota-storm)`)
    .option('--hours <n>', `simulated hours, above 0 and at most ${LIMITS.hours} (default: the scenario’s)`, hoursFlag)
    .option('--seed <n>', `seed of every random choice (0..${MAX_SEED}); the same seed gives the same run`, bounded('--seed', 0, MAX_SEED), 1)
    .option('--seeds <list>', `sweep: run every seed of \`1..1000\` or \`1,5,9\` (at most ${MAX_SWEEP_SEEDS}) and print one JSON object`, seedList)
    .option('--shard <i/n>', 'with --seeds: run only shard i of n (0-based), the seeds at positions i, i+n, …; merge the shards with `simulate merge`', shardFlag)
    .option('--workers <n>', `sweep worker threads (1..${MAX_WORKERS}; default: the core count)`, bounded('--workers', 1, MAX_WORKERS))
    .addOption(new Option('--strategy <name>', 'NIC cleanup strategy to run').choices([...STRATEGIES, 'all']).default('machine'))
    .option('--restarts <n>', `kill the controller at this many random await points, 0..${LIMITS.restarts} (overrides the scenario)`, bounded('--restarts', 0, LIMITS.restarts))
    .option('--json', 'print exactly one JSON object instead of the report')
    .option('--assert-no-leaks', 'exit 1 if any NIC, VM or disk leaked, a NodeClaim is stuck or a Failed VM is left')
    .option('--no-offerings-cache', 'disable the unavailable-offerings cache for every strategy (to measure what it saves)')
    .option('--report <file>', 'also write a self-contained HTML report with plots over simulated time (strategies side by side)')
    .option('--output-cluster <file>', 'also write the final cluster (Nodes, NodeClaims, Pods with spec.nodeName) as a Kubernetes YAML List; one strategy, not with --seeds')
    .option('--ui [port]', 'serve a live view of the actors on 127.0.0.1 (a free port unless given) with pause/step/speed; one strategy', bounded('--ui', 0, 65535))
    .addOption(new Option('--arm <route>', 'direct: the fake ARM as a port; sdk: the production SDK adapter over its REST face').choices(['direct', 'sdk']).default('direct'))
    .action(async (flags: SimulateFlags, command: Command) => {
      checkFlagCombinations(flags, command);
      const { scenario, cluster } = await resolveInputs(flags);
      if (flags.seeds) return sweep(flags, scenario, cluster);
      // Input checked: now load the simulator (a bad flag or file never pays for it).
      if (flags.ui !== undefined) {
        const { simulateWithLiveView } = await import('./simulate-ui.js');
        return simulateWithLiveView({ ...flags, ui: flags.ui, scenario, cluster });
      }
      return simulateEachStrategy(flags, scenario, cluster);
    });
}

/** Flags that do not go together, refused before any input is read. */
function checkFlagCombinations(flags: SimulateFlags, command: Command): void {
  if (flags.seeds && command.getOptionValueSource('seed') === 'cli') throw new UsageError('--seed and --seeds do not go together: a sweep runs every seed of --seeds');
  if (flags.workers !== undefined && !flags.seeds) throw new UsageError('--workers goes with --seeds');
  if (flags.shard !== undefined && !flags.seeds) throw new UsageError('--shard splits a sweep: it goes with --seeds');
  if (flags.seeds && flags.report !== undefined) throw new UsageError('--report draws one run per strategy: it does not go with --seeds');
  if (flags.ui !== undefined && flags.strategy === 'all') throw new UsageError('--ui runs one strategy at a time: pass --strategy <name>');
  checkPlacementFlags(flags);
  checkOutputPath('--report', flags.report);
}

/** One run per strategy (`--strategy all`: each in turn), then the report, the comparison or JSON, and the leak check. */
async function simulateEachStrategy(flags: SimulateFlags, scenario: Scenario, cluster: ClusterSetup | undefined): Promise<void> {
  const [{ runSimulation }, { ReportRecorder }, { sdkArmAdapter }, { renderReportHtml }] = await Promise.all([
    import('../../sim/simulation.js'), import('../../sim/report-recorder.js'), import('../../sim/sdk-route.js'), import('../../viz/report.js'),
  ]);
  const strategies: StrategyName[] = flags.strategy === 'all' ? [...STRATEGIES] : [flags.strategy];
  const results: SimulationResult[] = [];
  const placed: Array<Placement | undefined> = [];
  const reportRuns: SimulationReportInput[] = [];
  const progress = !flags.json && process.stderr.isTTY ? progressBar(strategies.length) : undefined;
  for (const [i, strategy] of strategies.entries()) {
    const recorder = flags.report !== undefined ? new ReportRecorder() : undefined;
    const run = await runSimulation({
      onWorld: recorder?.onWorld,
      scenario,
      cluster,
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
    placed.push(await placementOfRun(flags, run.cluster));
    if (recorder) reportRuns.push(recorder.build(run.result, run.cluster));
  }
  if (flags.report !== undefined && writeOutput('--report', flags.report, renderReportHtml(reportRuns, { title: `azflex simulate — ${scenario.name}` })) && !flags.json) {
    process.stderr.write(`report written to ${flags.report}\n`);
  }
  progress?.(strategies.length, 1, '');
  await printRuns(flags, scenario, results, placed);
}

/** The runs as one JSON object or the side-by-side comparison; with --assert-no-leaks, exit 1 on a leak. */
async function printRuns(flags: SimulateFlags, scenario: Scenario, results: SimulationResult[], placed: Array<Placement | undefined>): Promise<void> {
  const [{ leakSummary }, { formatComparison }] = await Promise.all([import('../../sim/result.js'), import('./simulate-format.js')]);
  if (flags.json) {
    const runs = results.map((r, i) => ({ ...r, placement: placed[i] }));
    const out = runs.length === 1 ? runs[0] : { scenario: scenario.name, seed: flags.seed, strategy: 'all', runs };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } else {
    process.stdout.write(formatComparison(scenario, results));
  }
  if (flags.assertNoLeaks) {
    const leaky = results.filter((r) => leakSummary(r) !== undefined);
    if (leaky.length > 0) {
      process.stderr.write(`azflex: leaks found with strategy ${leaky.map((r) => `${r.strategy} (${leakSummary(r)})`).join(', ')}\n`);
      process.exitCode = 1;
    }
  }
}

/**
 * `--seeds`: one job per seed and strategy on the worker pool; one JSON object with per-seed
 * figures, the worst runs, and each failing run with the command that replays it.
 */
async function sweep(flags: SimulateFlags, scenario: Scenario, cluster: ClusterSetup | undefined): Promise<void> {
  if (flags.ui !== undefined) throw new UsageError('--ui shows one run: it does not go with --seeds');
  const strategies: StrategyName[] = flags.strategy === 'all' ? [...STRATEGIES] : [flags.strategy];
  const { shard } = flags;
  if (shard && shard.count > flags.seeds!.length) throw new UsageError(`--shard ${shard.index}/${shard.count}: more shards than the ${flags.seeds!.length} seeds of --seeds`);
  const [{ runSweep, summarizeSweep }, { compactSeeds, inputSha256, shardSeeds }] = await Promise.all([import('../../sim/sweep/sweep.js'), import('../../sim/sweep/shard.js')]);
  const seeds = shard ? shardSeeds(flags.seeds!, shard) : flags.seeds!;
  const jobs: SweepJob[] = seeds.flatMap((seed) =>
    strategies.map((strategy) => ({
      scenario,
      ...(cluster ? { cluster } : {}),
      seed,
      strategy,
      hours: flags.hours,
      restarts: flags.restarts,
      offeringsCache: flags.offeringsCache === false ? false : undefined,
      arm: flags.arm,
      reproduce: reproduceCommand(flags, seed, strategy),
    })),
  );
  const workers = Math.min(flags.workers ?? defaultWorkers(), jobs.length);
  const started = process.hrtime.bigint();
  const progress = !flags.json && process.stderr.isTTY;
  const outcomes = await runSweep(jobs, {
    workers,
    onOutcome: progress ? (_o, done, total) => process.stderr.write(`\r${done}/${total} runs${done === total ? '\r\x1b[K' : ''}`) : undefined,
  });
  const report = summarizeSweep(outcomes, { workers, wallSeconds: Number(process.hrtime.bigint() - started) / 1e9 });
  const meta = shard && { shard: { ...shard, seeds: compactSeeds(flags.seeds!), sweep: simulateCommand(flags, ['--seeds', compactSeeds(flags.seeds!), '--strategy', flags.strategy]), inputSha256: inputSha256(scenario, cluster) } };
  process.stdout.write(`${JSON.stringify({ scenario: scenario.name, strategy: flags.strategy, ...report, ...meta })}\n`);
  if (report.failed > 0 && (flags.assertNoLeaks || report.failures.some((f) => f.error !== undefined))) {
    process.stderr.write(`azflex: ${report.failed} of ${report.runs} runs failed; first: ${report.failures[0]!.reproduce}\n`);
    process.exitCode = 1;
  }
}

/** The command line that replays one run of a sweep. */
function reproduceCommand(flags: SimulateFlags, seed: number, strategy: StrategyName): string {
  return `${simulateCommand(flags, ['--seed', String(seed), '--strategy', strategy])} --assert-no-leaks`;
}

/** `azflex simulate` with this sweep's inputs and options, `runArgs` (which seeds and strategies) among them. */
function simulateCommand(flags: SimulateFlags, runArgs: string[]): string {
  const args = ['npx azflex simulate'];
  if (flags.manifests) args.push('--manifests', ...flags.manifests.map(shellQuote), ...(flags.recursive ? ['-R'] : []), '--world', shellQuote(flags.world ?? DEFAULT_INPUT));
  else args.push('--scenario', shellQuote(flags.scenario ?? DEFAULT_INPUT));
  args.push(...runArgs);
  if (flags.hours !== undefined) args.push('--hours', String(flags.hours));
  if (flags.restarts !== undefined) args.push('--restarts', String(flags.restarts));
  if (flags.offeringsCache === false) args.push('--no-offerings-cache');
  if (flags.arm !== 'direct') args.push('--arm', flags.arm);
  return args.join(' ');
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
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
