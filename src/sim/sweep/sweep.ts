import { Worker } from 'node:worker_threads';
import { runSweepJob, type SweepJob, type SweepOutcome } from './job.js';
import { defaultWorkers, MAX_WORKERS } from './pool-size.js';

export type { SweepJob, SweepOutcome } from './job.js';

export interface SweepOptions {
  /** Worker threads; defaults to the core count. 1 runs every job in this thread. */
  workers?: number;
  /** Called as each job finishes (in completion order), e.g. for progress. */
  onOutcome?: (outcome: SweepOutcome, done: number, total: number) => void;
}


/**
 * Runs the jobs on a pool of worker threads (each job is one independent simulation, so
 * they scale with cores) and returns the outcomes in job order. A job that throws becomes
 * an outcome with `error`; a worker that dies is replaced and its job reported as failed.
 */
export async function runSweep(jobs: readonly SweepJob[], opts: SweepOptions = {}): Promise<SweepOutcome[]> {
  const workers = Math.max(1, Math.min(opts.workers ?? defaultWorkers(), MAX_WORKERS, jobs.length || 1));
  const outcomes: SweepOutcome[] = new Array<SweepOutcome>(jobs.length);
  let done = 0;
  const finish = (i: number, outcome: SweepOutcome): void => {
    outcomes[i] = outcome;
    opts.onOutcome?.(outcome, ++done, jobs.length);
  };
  if (workers === 1) {
    for (const [i, job] of jobs.entries()) finish(i, await runSweepJob(job));
    return outcomes;
  }
  let next = 0;
  const lane = (): Promise<void> =>
    new Promise<void>((resolve) => {
      let worker = spawnWorker();
      let current = -1;
      const feed = (): void => {
        if (next >= jobs.length) {
          void worker.terminate().then(() => resolve());
          return;
        }
        current = next++;
        worker.postMessage({ id: current, job: jobs[current] });
      };
      const attach = (w: Worker): void => {
        w.on('message', (msg: { id: number; outcome: SweepOutcome }) => {
          finish(msg.id, msg.outcome);
          feed();
        });
        w.on('error', (err) => {
          const job = jobs[current]!;
          finish(current, { seed: job.seed, strategy: job.strategy, reproduce: job.reproduce, problems: [], error: `worker died: ${err.message}` });
          worker = spawnWorker();
          attach(worker);
          feed();
        });
      };
      attach(worker);
      feed();
    });
  await Promise.all(Array.from({ length: workers }, lane));
  return outcomes;
}

function spawnWorker(): Worker {
  // Plenty for a 1,000-node world; a runaway job fails alone instead of taking the machine.
  // From TypeScript sources the worker registers tsx first; bundled (the image), worker-loop.js
  // is the bundle's second entry point, next to main.js.
  const entry = import.meta.url.endsWith('.ts') ? './worker.mjs' : './worker-loop.js';
  return new Worker(new URL(entry, import.meta.url), { resourceLimits: { maxOldGenerationSizeMb: 1024 } });
}

/** Per-seed figures a sweep reports (the full result stays available through the API). */
export interface SeedSummary {
  seed: number;
  strategy: string;
  ok: boolean;
  nodeClaimsCreated: number;
  createFailures: number;
  leakedNics: number;
  leakedVms: number;
  leakedDisks: number;
  stuckNodeClaims: number;
  failedVmsLeft: number;
  reapMaxSeconds: number;
  armWrites: number;
  restarts: number;
  wallSeconds: number;
  eventLogSha256: string;
  problems: string[];
  error?: string;
}

export interface SweepReport {
  seeds: number;
  runs: number;
  workers: number;
  wallSeconds: number;
  failed: number;
  /** Each failing run with the command that replays it alone. */
  failures: Array<{ seed: number; strategy: string; problems: string[]; error?: string; reproduce: string }>;
  /** The runs at the tail of each figure that matters, largest first (a figure of 0 is no worst case: a sweep without leaks lists none). */
  worst: Record<'leaks' | 'reapMaxSeconds' | 'armWrites' | 'createFailures' | 'wallSeconds', Array<{ seed: number; strategy: string; value: number; reproduce: string }>>;
  perSeed: SeedSummary[];
}

/** One run of a sweep as its report keeps it: the per-seed figures and the command that replays it. */
export interface SweepRun {
  summary: SeedSummary;
  reproduce: string;
}

export function summarizeSweep(outcomes: readonly SweepOutcome[], meta: { workers: number; wallSeconds: number }, worstCount = 5): SweepReport {
  return summarizeRuns(outcomes.map((o) => ({ summary: seedSummary(o), reproduce: o.reproduce })), meta, worstCount);
}

function seedSummary(o: SweepOutcome): SeedSummary {
  const r = o.result;
  return {
    seed: o.seed,
    strategy: o.strategy,
    ok: isOk(o),
    nodeClaimsCreated: r?.nodeClaimsCreated ?? 0,
    createFailures: r?.createFailures ?? 0,
    leakedNics: r?.leakedNics ?? 0,
    leakedVms: r?.leakedVms ?? 0,
    leakedDisks: r?.leakedDisks ?? 0,
    stuckNodeClaims: r?.stuckNodeClaims ?? 0,
    failedVmsLeft: r?.failedVmsLeft ?? 0,
    reapMaxSeconds: r?.timeToReapSeconds.max ?? 0,
    armWrites: r?.armWrites ?? 0,
    restarts: r?.restarts ?? 0,
    wallSeconds: r?.wallSeconds ?? 0,
    eventLogSha256: r?.eventLogSha256 ?? '',
    problems: o.problems,
    ...(o.error !== undefined ? { error: o.error } : {}),
  };
}

/**
 * The report of runs in job order: a sweep's own, or shards' merged back into that order
 * (`mergeShards`), which then reads the same as the unsplit sweep's.
 */
export function summarizeRuns(runs: readonly SweepRun[], meta: { workers: number; wallSeconds: number }, worstCount = 5): SweepReport {
  const worstBy = (value: (s: SeedSummary) => number) =>
    runs
      .filter((r) => value(r.summary) > 0)
      .sort((a, b) => value(b.summary) - value(a.summary) || a.summary.seed - b.summary.seed)
      .slice(0, worstCount)
      .map((r) => ({ seed: r.summary.seed, strategy: r.summary.strategy, value: value(r.summary), reproduce: r.reproduce }));
  const failing = runs.filter((r) => !r.summary.ok);
  return {
    seeds: new Set(runs.map((r) => r.summary.seed)).size,
    runs: runs.length,
    workers: meta.workers,
    wallSeconds: Math.round(meta.wallSeconds * 1000) / 1000,
    failed: failing.length,
    failures: failing.map(({ summary: s, reproduce }) => ({ seed: s.seed, strategy: s.strategy, problems: s.problems, ...(s.error !== undefined ? { error: s.error } : {}), reproduce })),
    worst: {
      leaks: worstBy((s) => s.leakedNics + s.leakedVms + s.leakedDisks + s.stuckNodeClaims + s.failedVmsLeft),
      reapMaxSeconds: worstBy((s) => s.reapMaxSeconds),
      armWrites: worstBy((s) => s.armWrites),
      createFailures: worstBy((s) => s.createFailures),
      wallSeconds: worstBy((s) => s.wallSeconds),
    },
    perSeed: runs.map((r) => r.summary),
  };
}

/** A run passes when it finished and its settled world shows none of the problems `runSweepJob` looks for. */
export function isOk(o: SweepOutcome): boolean {
  return o.error === undefined && o.problems.length === 0 && o.result !== undefined;
}
