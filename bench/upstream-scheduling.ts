/**
 * Karpenter's own scheduler, measured in the same bench run as azflex's: the test binary of
 * upstream's scheduling benchmark (scripts/upstream-scheduling-bench.mjs builds and caches it)
 * runs the named benchmarks, and its `go test -bench` lines are parsed here. Upstream's harness
 * (benchmarkScheduler) reports pods/sec and the NodeClaims of the first Solve as "nodes"; the
 * benchmarks we add also report cpu-ms/op.
 */
import { spawnSync } from 'node:child_process';
import { ensureUpstreamSchedulingBench } from '../scripts/upstream-scheduling-bench.mjs';
import { median } from './median.js';

/** One line of `go test -bench` output: the name, GOMAXPROCS, iterations and value per unit. */
export interface GoBenchLine {
  name: string;
  procs: number;
  iterations: number;
  metrics: Record<string, number>;
}

// "BenchmarkName-2 <tab> N <tab> value unit <tab> value unit ...": the -procs suffix is absent when GOMAXPROCS is 1.
const LINE = /^(Benchmark\S+?)(?:-(\d+))?\s+(\d+)\s+(.+)$/;

export function parseGoBenchOutput(text: string): GoBenchLine[] {
  const lines: GoBenchLine[] = [];
  for (const raw of text.split('\n')) {
    const m = LINE.exec(raw.trim());
    if (m === null) continue;
    const fields = m[4]!.trim().split(/\s+/);
    if (fields.length % 2 !== 0) continue;
    const metrics: Record<string, number> = {};
    for (let i = 0; i < fields.length; i += 2) {
      const value = Number(fields[i]);
      if (!Number.isFinite(value)) break;
      metrics[fields[i + 1]!] = value;
    }
    if (Object.keys(metrics).length * 2 !== fields.length) continue;
    lines.push({ name: m[1]!, procs: m[2] === undefined ? 1 : Number(m[2]), iterations: Number(m[3]), metrics });
  }
  return lines;
}

/** A benchmark's repeated samples folded to medians. */
export interface UpstreamFigure {
  benchmark: string;
  samples: number;
  podsPerSecond: number;
  nodes: number;
  pods: number;
  msPerSolve: number;
  /** CPU per Solve (all threads), which only our added benchmarks report; null for upstream's own. */
  cpuMsPerSolve: number | null;
}

function metric(line: GoBenchLine, unit: string): number {
  const value = line.metrics[unit];
  if (value === undefined) throw new Error(`${line.name} reported no ${unit}`);
  return value;
}

/** Medians per benchmark; throws when one asked for is missing (a failed or renamed benchmark). */
export function summarise(lines: readonly GoBenchLine[], benchmarks: readonly string[]): UpstreamFigure[] {
  return benchmarks.map((benchmark) => {
    const runs = lines.filter((l) => l.name === benchmark);
    if (runs.length === 0) throw new Error(`upstream's output has no ${benchmark} line`);
    return {
      benchmark, samples: runs.length,
      podsPerSecond: Math.round(median(runs.map((l) => metric(l, 'pods/sec')))),
      nodes: median(runs.map((l) => metric(l, 'nodes'))),
      pods: median(runs.map((l) => metric(l, 'pods'))),
      msPerSolve: Number((median(runs.map((l) => metric(l, 'ns/op'))) / 1e6).toFixed(1)),
      cpuMsPerSolve: runs.every((l) => 'cpu-ms/op' in l.metrics) ? Number(median(runs.map((l) => metric(l, 'cpu-ms/op'))).toFixed(1)) : null,
    };
  });
}

export type UpstreamMeasurement =
  | { version: string; gomaxprocs: number; buildMs: number; results: UpstreamFigure[] }
  | { version?: string; error: string };

const RUN_TIMEOUT_MS = 20 * 60_000;

/**
 * Runs `benchmarks` `count` times each, one Solve per sample (-benchtime=1x: the first Solve
 * is upstream's own node count, and one Solve of 1,000+ pods outlasts Go's default 1 s anyway).
 * Never throws: a Go side that cannot build or run is reported as `error`.
 */
export async function measureUpstream(benchmarks: readonly string[], count: number): Promise<UpstreamMeasurement> {
  let version: string | undefined;
  try {
    const built = await ensureUpstreamSchedulingBench();
    version = built.version;
    const pattern = `^(${benchmarks.join('|')})$`;
    const r = spawnSync(built.binary, ['-test.run=^$', `-test.bench=${pattern}`, '-test.benchtime=1x', `-test.count=${count}`], {
      encoding: 'utf8', timeout: RUN_TIMEOUT_MS, maxBuffer: 16 << 20,
    });
    if (r.error) throw new Error(`running ${built.binary}: ${r.error.message}`);
    if (r.status !== 0) throw new Error(`upstream's benchmark exited ${r.status}: ${(r.stdout + r.stderr).slice(-2000)}`);
    const lines = parseGoBenchOutput(r.stdout);
    return { version, gomaxprocs: lines[0]?.procs ?? 0, buildMs: built.buildMs, results: summarise(lines, benchmarks) };
  } catch (err) {
    return { ...(version === undefined ? {} : { version }), error: err instanceof Error ? err.message : String(err) };
  }
}
