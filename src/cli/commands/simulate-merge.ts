import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { ShardOutput } from '../../sim/sweep/shard.js';
import { UsageError } from '../errors.js';
import { MAX_SHARDS, seedList } from '../flags.js';

/**
 * `azflex simulate merge <results…>`: the shards of `simulate --seeds … --shard i/n` back into
 * the one JSON object the unsplit sweep prints. A file holds one shard's JSON or several, one
 * per line (what `kubectl logs` of the shards' pods gives); lines the CLI wrote to stderr
 * (`azflex: …`, interleaved by `kubectl logs`) are skipped.
 */
export function register(program: Command): void {
  const simulate = program.commands.find((c) => c.name() === 'simulate');
  if (!simulate) throw new Error('simulate merge registers after simulate');
  simulate
    .command('merge')
    .description('merge the outputs of `simulate --seeds … --shard i/n` into the JSON of the unsplit sweep')
    .argument('<results...>', 'files with shard outputs (JSON, one object per line)')
    .option('--assert-no-leaks', 'exit 1 if any run failed, as the sweep does')
    .action(async (files: string[], flags: { assertNoLeaks?: boolean }) => {
      const shards = files.flatMap(readShards);
      if (shards.length > MAX_SHARDS) throw new UsageError(`${shards.length} shard outputs: at most ${MAX_SHARDS}`);
      const { mergeShards, ShardMismatch } = await import('../../sim/sweep/shard.js');
      let merged;
      try {
        merged = mergeShards(shards, seedsOf(shards[0]!));
      } catch (err) {
        if (err instanceof ShardMismatch) throw new UsageError(`simulate merge: ${err.message}`);
        throw err;
      }
      process.stdout.write(`${JSON.stringify(merged)}\n`);
      if (merged.failed > 0 && (flags.assertNoLeaks || merged.failures.some((f) => f.error !== undefined))) {
        process.stderr.write(`azflex: ${merged.failed} of ${merged.runs} runs failed; first: ${merged.failures[0]!.reproduce}\n`);
        process.exitCode = 1;
      }
    });
}

function seedsOf(shard: ShardOutput): number[] {
  try {
    return seedList(shard.shard.seeds);
  } catch (err) {
    throw new UsageError(`simulate merge: shard ${shard.shard.index} names no valid seed list (${err instanceof Error ? err.message : String(err)})`);
  }
}

function readShards(file: string): ShardOutput[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`simulate merge: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const shards: ShardOutput[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('azflex: ')) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new UsageError(`simulate merge: ${file} line ${i + 1} is not JSON (a shard prints one JSON object per line)`);
    }
    const problem = shardShapeProblem(value);
    if (problem) throw new UsageError(`simulate merge: ${file} line ${i + 1} is no shard output: ${problem}`);
    shards.push(value as ShardOutput);
  }
  if (shards.length === 0) throw new UsageError(`simulate merge: ${file} holds no shard output`);
  return shards;
}

/** What the merge reads of a shard's JSON, checked before it is trusted; undefined when all is there. */
function shardShapeProblem(v: unknown): string | undefined {
  if (!isRecord(v)) return 'not a JSON object';
  const shard = v.shard;
  if (!isRecord(shard)) return 'it has no "shard" (a sweep run without --shard)';
  for (const key of ['index', 'count'] as const) if (!Number.isInteger(shard[key])) return `shard.${key} is not a whole number`;
  for (const key of ['seeds', 'sweep', 'inputSha256'] as const) if (typeof shard[key] !== 'string') return `shard.${key} is not a string`;
  for (const key of ['scenario', 'strategy'] as const) if (typeof v[key] !== 'string') return `${key} is not a string`;
  for (const key of ['workers', 'wallSeconds'] as const) if (typeof v[key] !== 'number') return `${key} is not a number`;
  if (!Array.isArray(v.perSeed) || !v.perSeed.every((r) => isRecord(r) && Number.isInteger(r.seed) && typeof r.strategy === 'string' && typeof r.ok === 'boolean' && Array.isArray(r.problems))) return 'perSeed is not a list of runs';
  if (!Array.isArray(v.failures) || !v.failures.every(isReplayable)) return 'failures is not a list of runs with their reproduce commands';
  if (!isRecord(v.worst) || !Object.values(v.worst).every((list) => Array.isArray(list) && list.every(isReplayable))) return 'worst is not lists of runs with their reproduce commands';
  return undefined;
}

const isReplayable = (r: unknown): boolean => isRecord(r) && Number.isInteger(r.seed) && typeof r.strategy === 'string' && typeof r.reproduce === 'string';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
