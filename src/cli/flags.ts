import { InvalidArgumentError } from 'commander';
import { parseRepairPolicies, type RepairPolicy } from '../disruption/repair.js';

/**
 * Flag parsers shared by the commands. Kept apart from the commands' implementations so that
 * a bad flag is refused before anything heavy (the runtime, the SDKs, client-node) is loaded.
 */

/** Seeds are 32-bit: the PRNG's whole state, so distinct seeds in this range give distinct runs. */
export const MAX_SEED = 2 ** 32 - 1;
/** Most runs one sweep may ask for. */
export const MAX_SWEEP_SEEDS = 100_000;

export function bounded(name: string, min: number, max: number) {
  return (raw: string): number => {
    if (!/^\d{1,16}$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
    return Number(raw);
  };
}

/** `1..1000`, `7`, or `1,5,9` (ranges and single seeds, comma-separated, spaces allowed around them), each within 0..MAX_SEED. */
export function seedList(raw: string): number[] {
  const seeds = new Set<number>();
  const seed = (text: string): number => {
    if (text === '') throw new InvalidArgumentError(`"${raw.slice(0, 80)}" has an empty entry: seeds are separated by single commas`);
    if (!/^\d{1,10}$/.test(text) || Number(text) > MAX_SEED) throw new InvalidArgumentError(`seeds are whole numbers from 0 to ${MAX_SEED}, got "${text}"`);
    return Number(text);
  };
  for (const part of raw.split(',')) {
    const range = /^(\d+)\s*\.\.\s*(\d+)$/.exec(part.trim());
    const [from, to] = range ? [seed(range[1]!), seed(range[2]!)] : [seed(part.trim()), seed(part.trim())];
    if (to < from) throw new InvalidArgumentError(`seed range "${part}" runs backwards`);
    if (to - from + 1 + seeds.size > MAX_SWEEP_SEEDS) throw new InvalidArgumentError(`at most ${MAX_SWEEP_SEEDS} seeds per sweep, got more in "${raw}"`);
    for (let s = from; s <= to; s++) seeds.add(s);
  }
  return [...seeds];
}

/** `--repair-policies` of `azflex controller` and `azflex dev`. */
export function repairPoliciesFlag(raw: string): RepairPolicy[] {
  try {
    return parseRepairPolicies(raw);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

export const REPAIR_POLICIES_HELP = "node repair policies besides the Azure provider's (Ready False or Unknown for 10m), e.g. node-problem-detector GPU conditions: GpuXidError=True:5m";

/** `--shard i/n`: shard i (0-based, as a Job's completion index) of n, n at most MAX_SHARDS. */
export const MAX_SHARDS = 10_000;
export function shardFlag(raw: string): { index: number; count: number } {
  const m = /^(\d{1,5})\/(\d{1,5})$/.exec(raw);
  const [index, count] = m ? [Number(m[1]), Number(m[2])] : [NaN, NaN];
  if (!m || count < 1 || count > MAX_SHARDS || index >= count) throw new InvalidArgumentError(`--shard must be i/n with 0 <= i < n <= ${MAX_SHARDS} (such as 0/4), got "${raw.slice(0, 80)}"`);
  return { index, count };
}
