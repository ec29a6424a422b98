import { createHash } from 'node:crypto';
import type { ClusterSetup } from '../cluster-setup.js';
import type { Scenario } from '../scenario.js';
import { summarizeRuns, type SeedSummary, type SweepReport, type SweepRun } from './sweep.js';

/**
 * Sweeps split across machines: shard `i/n` runs the seeds at positions i, i+n, i+2n, … of
 * the sweep's seed list (position modulo n, not the seed's value, so `1..1000` splits evenly
 * whatever its values), and `mergeShards` puts their runs back in the unsplit sweep's order.
 */
export interface Shard {
  index: number;
  count: number;
}

/** What a shard's output carries beside the sweep's fields, so that a merge can refuse shards of different sweeps. */
export interface ShardMeta extends Shard {
  /** The whole sweep's seed list, compact (`1..1000`, `7,1..3`), in its order. */
  seeds: string;
  /** The command line of the unsplit sweep: the same for every shard of one sweep. */
  sweep: string;
  /** Of the scenario and cluster as loaded: files of the same name with other contents are another sweep. */
  inputSha256: string;
}

/** A shard's output: the sweep's JSON plus `shard`. */
export type ShardOutput = SweepReport & { scenario: string; strategy: string; shard: ShardMeta };

export function shardSeeds(seeds: readonly number[], shard: Shard): number[] {
  return seeds.filter((_, i) => i % shard.count === shard.index);
}

/** `[1,2,3,7]` → `1..3,7`: the list `seedList` parses back to the same seeds in the same order. */
export function compactSeeds(seeds: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < seeds.length; ) {
    let j = i;
    while (j + 1 < seeds.length && seeds[j + 1] === seeds[j]! + 1) j++;
    parts.push(j === i ? String(seeds[i]) : `${seeds[i]}..${seeds[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

export function inputSha256(scenario: Scenario, cluster: ClusterSetup | undefined): string {
  return createHash('sha256').update(JSON.stringify({ scenario, cluster: cluster ?? null })).digest('hex');
}

/** Shards that do not make one sweep; the message says which and why. */
export class ShardMismatch extends Error {
  override readonly name = 'ShardMismatch';
}

/**
 * The unsplit sweep's report from all its shards: runs in the sweep's order (seed list order,
 * each seed's strategies in the order its shard ran them), failures and worst cases taken over
 * all of them. `workers` adds up; `wallSeconds` is the slowest shard's (they run side by side).
 * `seeds` is the sweep's whole list, parsed from the shards' `seeds`.
 */
export function mergeShards(shards: readonly ShardOutput[], seeds: readonly number[]): SweepReport & { scenario: string; strategy: string } {
  const first = shards[0];
  if (!first) throw new ShardMismatch('no shard outputs given');
  for (const s of shards) {
    for (const key of ['scenario', 'strategy'] as const) {
      if (s[key] !== first[key]) throw new ShardMismatch(`shard ${s.shard.index} is of ${key} "${s[key]}", shard ${first.shard.index} of "${first[key]}"`);
    }
    for (const key of ['count', 'seeds', 'sweep', 'inputSha256'] as const) {
      if (s.shard[key] !== first.shard[key]) throw new ShardMismatch(`shard ${s.shard.index} and shard ${first.shard.index} are of different sweeps (their ${key} differs: ${JSON.stringify(s.shard[key])} vs ${JSON.stringify(first.shard[key])})`);
    }
  }
  const count = first.shard.count;
  const byIndex = new Map<number, ShardOutput>();
  for (const s of shards) {
    if (byIndex.has(s.shard.index)) throw new ShardMismatch(`shard ${s.shard.index}/${count} is given twice`);
    byIndex.set(s.shard.index, s);
  }
  const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !byIndex.has(i));
  if (missing.length > 0) throw new ShardMismatch(`missing shard${missing.length > 1 ? 's' : ''} ${missing.map((i) => `${i}/${count}`).join(', ')} of ${count}`);
  const runs: SweepRun[] = [];
  for (const [index, s] of [...byIndex].sort((a, b) => a[0] - b[0])) {
    const expected = shardSeeds(seeds, { index, count });
    const got = [...new Set(s.perSeed.map((r) => r.seed))];
    if (got.join(',') !== expected.join(',')) throw new ShardMismatch(`shard ${index}/${count} holds seeds ${compactSeeds(got) || 'none'}, not its share ${compactSeeds(expected)} of ${first.shard.seeds}`);
  }
  const rowsBySeed = new Map<number, SeedSummary[]>();
  for (const s of byIndex.values()) for (const row of s.perSeed) rowsBySeed.set(row.seed, [...(rowsBySeed.get(row.seed) ?? []), row]);
  const reproduce = replayCommands(shards);
  for (const seed of seeds) {
    for (const summary of rowsBySeed.get(seed)!) runs.push({ summary, reproduce: reproduce.get(runKey(summary)) ?? '' });
  }
  const report = summarizeRuns(runs, {
    workers: shards.reduce((n, s) => n + s.workers, 0),
    wallSeconds: Math.max(...shards.map((s) => s.wallSeconds)),
  });
  // Every run the merged report names was named, with its command, by its own shard's report.
  const unnamed = [...report.failures, ...Object.values(report.worst).flat()].find((r) => r.reproduce === '');
  if (unnamed) throw new ShardMismatch(`seed ${unnamed.seed} (${unnamed.strategy}) is a failure or worst case of the merge but not of its shard: the shard's output was edited or is of another azflex`);
  return { scenario: first.scenario, strategy: first.strategy, ...report };
}

const runKey = (r: { seed: number; strategy: string }): string => `${r.seed}/${r.strategy}`;

/**
 * The replay command of every run a shard reported as failing or among its worst. A merged
 * report names no other: a run in the sweep's top k of a figure is in its own shard's top k.
 */
function replayCommands(shards: readonly ShardOutput[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of shards) for (const r of [...s.failures, ...Object.values(s.worst).flat()]) out.set(runKey(r), r.reproduce);
  return out;
}
