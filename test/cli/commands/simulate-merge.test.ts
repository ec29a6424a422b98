import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { cliHarness } from './cli-harness.js';

const run = promisify(execFile);
/** A sweep small enough for a test that still has failing runs (the naive strategy leaks here) and worst cases. */
const SWEEP = ['simulate', '--scenario', 'quota-blind', '--hours', '0.1', '--strategy', 'all', '--seeds', '1..24', '--workers', '1'];

type Report = { perSeed: Array<Record<string, unknown>>; failures: unknown[]; worst: Record<string, unknown[]>; failed: number; [k: string]: unknown };
/** What the split must not change: every field, per-run wall times (measured, not simulated) aside. */
const comparable = (r: Report) => ({
  ...r,
  workers: undefined,
  wallSeconds: undefined,
  perSeed: r.perSeed.map((s) => ({ ...s, wallSeconds: undefined })),
  worst: { ...r.worst, wallSeconds: undefined },
});

describe('azflex simulate --shard / simulate merge', () => {
  const { out, file, refused } = cliHarness('azflex-merge-');

  it('4 shard processes merged give the unsplit sweep, run for run', async () => {
    const cli = ['--import', 'tsx', 'src/cli/main.ts'];
    const [whole, ...shards] = await Promise.all([
      run('node', [...cli, ...SWEEP]),
      ...[0, 1, 2, 3].map((i) => run('node', [...cli, ...SWEEP, '--shard', `${i}/4`])),
    ]);
    const files = shards.map((s, i) => file(s.stdout, 'json'));
    expect(JSON.parse(shards[1]!.stdout).shard).toMatchObject({ index: 1, count: 4, seeds: '1..24' });
    // Shard 1 of 4 runs the seeds at positions 1, 5, 9, …: 2, 6, 10, … (each with every strategy).
    expect([...new Set((JSON.parse(shards[1]!.stdout) as Report).perSeed.map((s) => s.seed))]).toEqual([2, 6, 10, 14, 18, 22]);
    // Files in any order, one of them holding two shards as kubectl logs of two pods does.
    const both = file(`${readFileSync(files[3]!, 'utf8')}azflex: 3 of 24 runs failed; first: …\n${readFileSync(files[0]!, 'utf8')}`);
    expect(await main(['simulate', 'merge', files[2]!, both, files[1]!])).toBe(0);
    const merged = JSON.parse(out.stdout.join('')) as Report;
    const unsplit = JSON.parse(whole.stdout) as Report;
    expect(Object.keys(merged).sort()).toEqual(Object.keys(unsplit).sort());
    expect(unsplit.failed).toBeGreaterThan(0);
    expect(unsplit.perSeed).toHaveLength(72);
    expect(comparable(merged)).toEqual(comparable(unsplit));
  }, 180_000);

  it('refuses shards that are not one whole sweep, with one line', async () => {
    const shard = (i: number, n: number, extra: string[] = []) => main([...SWEEP, '--seeds', '1..6', '--shard', `${i}/${n}`, ...extra]).then(() => file(out.stdout.splice(0).join('')));
    const [s0, s1, s2] = [await shard(0, 3), await shard(1, 3), await shard(2, 3)];
    const longer = await shard(2, 3, ['--hours', '0.2']);
    const ofTwo = await shard(1, 2);
    const merge = ['simulate', 'merge'];
    await refused([s0, s2], /missing shard 1\/3 of 3/, merge);
    await refused([s0, s1, s1, s2], /shard 1\/3 is given twice/, merge);
    await refused([s0, s1, longer], /different sweeps \(their sweep differs: .*--hours 0\.2/, merge);
    await refused([s0, s1, ofTwo], /different sweeps \(their count differs/, merge);
    const edited = JSON.parse(readFileSync(s1, 'utf8')) as Report;
    edited.perSeed = edited.perSeed.filter((r) => r.seed !== 5);
    await refused([s0, file(JSON.stringify(edited)), s2], /shard 1\/3 holds seeds 2, not its share 2,5 of 1\.\.6/, merge);
    await refused([s0, file(readFileSync(s1, 'utf8').replace('"quota-blind"', '"quota-storm"')), s2], /shard 1 is of scenario "quota-storm", shard 0 of "quota-blind"/, merge);
    // Not shard outputs at all.
    await main([...SWEEP, '--seeds', '1..2']);
    await refused([file(out.stdout.splice(0).join(''))], /line 1 is no shard output: it has no "shard"/, merge);
    await refused([file('{"oops"')], /line 1 is not JSON/, merge);
    await refused([join(s0, 'missing')], /cannot read .*missing \(ENOTDIR\)/, merge);
    await refused([file('')], /holds no shard output/, merge);
    await refused([], /missing required argument 'results'/, merge);
    // --shard itself.
    await refused(['--shard', '0/2'], /--shard splits a sweep: it goes with --seeds/);
    await refused(['--seeds', '1..3', '--shard', '3/3'], /--shard must be i\/n with 0 <= i < n <= 10000/);
    await refused(['--seeds', '1..3', '--shard', '1/-2'], /--shard must be i\/n/);
    await refused(['--seeds', '1..3', '--shard', '0/4'], /--shard 0\/4: more shards than the 3 seeds of --seeds/);
  }, 120_000);
});
