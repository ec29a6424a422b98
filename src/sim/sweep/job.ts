import type { StrategyName } from '../../runtime/deps.js';
import type { Scenario } from '../scenario.js';
import type { ClusterSetup } from '../cluster-setup.js';
import { runSimulation } from '../simulation.js';
import { leakSummary, type SimulationResult } from '../result.js';

/**
 * One simulation of a sweep: everything a worker needs, as plain data (it crosses a
 * worker_threads boundary by structured clone).
 */
export interface SweepJob {
  scenario: Scenario;
  /** From --manifests: the cluster to start with. */
  cluster?: ClusterSetup;
  seed: number;
  strategy: StrategyName;
  hours?: number;
  restarts?: number;
  crashes?: Array<[number, number]>;
  offeringsCache?: boolean;
  /** `sdk`: through the production SDK adapter and the ARM face's REST route (`--arm sdk`), built in the worker. */
  arm?: 'direct' | 'sdk';
  /** The command line that replays this job alone (printed for failing seeds). */
  reproduce: string;
}

export interface SweepOutcome {
  seed: number;
  strategy: StrategyName;
  result?: SimulationResult;
  /** What a settled world must not show (leakSummary: leaks, stuck NodeClaims, Failed VMs left, deletes of attached NICs) and invariant violations. Empty when all is well. */
  problems: string[];
  /** The run threw (a bug in the controller or the simulator); the message. */
  error?: string;
  /** Per failed attempt's NIC: seconds from the end of ARM's reservation to the NIC gone (for pooled percentiles). */
  reapAfterReservationSeconds?: number[];
  reproduce: string;
}

/** Runs one job in this thread. The workers call it; so does a sweep with one worker. */
export async function runSweepJob(job: SweepJob): Promise<SweepOutcome> {
  const base = { seed: job.seed, strategy: job.strategy, reproduce: job.reproduce };
  try {
    // Loaded only for `--arm sdk`: the SDKs cost a worker a second it need not pay otherwise.
    const armAdapter = job.arm === 'sdk' ? (await import('../sdk-route.js')).sdkArmAdapter : undefined;
    const run = await runSimulation({
      armAdapter,
      scenario: job.scenario,
      cluster: job.cluster,
      seed: job.seed,
      strategy: job.strategy,
      hours: job.hours,
      restarts: job.restarts,
      crashes: job.crashes,
      offeringsCache: job.offeringsCache,
      keepEventLog: false,
    });
    const leaks = leakSummary(run.result);
    const problems = [
      ...(leaks !== undefined ? [`--assert-no-leaks refuses: ${leaks}`] : []),
      ...run.invariantViolations,
      // The controller's own requests must be ones ARM accepts (reached only through the REST face, `arm: 'sdk'`).
      ...run.arm.refusedRequestBodies().map((r) => `ARM refused a request body as invalid: ${r}`),
    ];
    return { ...base, result: run.result, problems, reapAfterReservationSeconds: run.arm.reapAfterReservationSeconds() };
  } catch (err) {
    return { ...base, problems: [], error: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  }
}
