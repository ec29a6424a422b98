import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleApp } from '../../scripts/bundle-app.mjs';
import { builtInScenario } from '../../src/sim/scenarios.js';
import { runSweepJob } from '../../src/sim/sweep/job.js';

const run = promisify(execFile);

/** Every file under `dir`, relative and sorted, with its bytes. */
function tree(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const f of (readdirSync(dir, { recursive: true }) as string[]).sort()) {
    const p = path.join(dir, f);
    if (statSync(p).isFile()) out.set(f, readFileSync(p));
  }
  return out;
}

// Outside the checkout, as in the image: nothing the bundle missed can resolve from node_modules.
describe('scripts/bundle-app.mjs', () => {
  let work: string;
  let app: string;
  let again: string;

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'azflex-bundle-test-'));
    app = path.join(work, 'app');
    again = path.join(work, 'again');
    await Promise.all([bundleApp(app), bundleApp(again)]);
  }, 300_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('writes the bundle, its source maps, the notices, package.json and crds, and nothing else', () => {
    expect(readdirSync(app).sort()).toEqual(['crds', 'dist', 'package.json']);
    expect(readdirSync(path.join(app, 'dist')).sort()).toEqual(['THIRD-PARTY-NOTICES', 'cli']);
    const cli = readdirSync(path.join(app, 'dist/cli')).sort();
    const chunks = cli.filter((f) => /^[a-z0-9-]+-[A-Z0-9]{8}\.js$/.test(f));
    // Entry points, their lazily imported chunks (each with a map), and client.js beside them.
    expect(chunks.length).toBeGreaterThan(10);
    expect(cli).toEqual(['client.js', ...chunks.flatMap((c) => [c, `${c}.map`]), 'main.js', 'main.js.map', 'worker-loop.js', 'worker-loop.js.map'].sort());
    // ASCII only: V8 would hold a script with any other character at two bytes a character.
    for (const f of cli.filter((f) => f.endsWith('.js') && f !== 'client.js')) expect(readFileSync(path.join(app, 'dist/cli', f)).every((b) => b <= 0x7f), f).toBe(true);
    expect(readdirSync(path.join(app, 'crds')).sort()).toEqual(readdirSync(path.resolve(import.meta.dirname, '../../crds')).sort());
    const main = readFileSync(path.join(app, 'dist/cli/main.js'), 'utf8');
    expect(main.trimEnd().endsWith('//# sourceMappingURL=main.js.map')).toBe(true);
    const map = JSON.parse(readFileSync(path.join(app, 'dist/cli/main.js.map'), 'utf8')) as { sources: string[]; sourcesContent?: unknown };
    expect(map.sourcesContent).toBeUndefined();
    expect(map.sources).toContain('../../src/cli/main.ts');
  });

  it('is reproducible: a second bundle elsewhere has the same bytes', () => {
    const a = tree(app);
    const b = tree(again);
    expect([...b.keys()]).toEqual([...a.keys()]);
    for (const [f, bytes] of a) expect(bytes.equals(b.get(f)!), f).toBe(true);
  });

  it('lists each bundled npm package once, sorted, with its license text, and no devDependency', () => {
    const notices = readFileSync(path.join(app, 'dist/THIRD-PARTY-NOTICES'), 'utf8');
    const headers = [...notices.matchAll(/^(\S+) (\d+\.\d+\.\d+\S*) \((.+)\)$/gm)].map((m) => `${m[1]}@${m[2]}`);
    expect(headers.length).toBeGreaterThan(20);
    expect(new Set(headers).size).toBe(headers.length);
    expect([...headers].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))).toEqual(headers);
    for (const pkg of ['@kubernetes/client-node', '@azure/arm-compute', '@azure/identity', 'xstate', 'pino', 'zod']) {
      expect(headers.some((h) => h.startsWith(`${pkg}@`)), pkg).toBe(true);
    }
    for (const dev of ['typescript', 'vitest', 'tsx', 'esbuild', 'fast-check']) expect(headers.some((h) => h.startsWith(`${dev}@`)), dev).toBe(false);
    expect(notices).toContain('Apache License');
    expect(notices).toContain('Permission is hereby granted, free of charge');
  });

  it('runs the CLI from the bundle, and a sweep on its worker threads gives the event logs the sources give', async () => {
    const cwd = path.join(app, 'dist/cli');
    const help = await run(process.execPath, ['main.js', '--help'], { cwd });
    expect(help.stdout).toContain('simulate');
    const sweep = await run(process.execPath, ['main.js', 'simulate', '--scenario', 'quota-storm', '--strategy', 'machine', '--seeds', '1..2', '--workers', '2', '--json'], { cwd, maxBuffer: 64 << 20 });
    const bundled = (JSON.parse(sweep.stdout) as { perSeed: Array<{ seed: number; eventLogSha256: string; nodeClaimsCreated: number }> }).perSeed.sort((x, y) => x.seed - y.seed);
    const scenario = builtInScenario('quota-storm')!;
    const fromSources = await Promise.all([1, 2].map((seed) => runSweepJob({ scenario, seed, strategy: 'machine', reproduce: '' })));
    expect(bundled.map((r) => r.eventLogSha256)).toEqual(fromSources.map((o) => o.result?.eventLogSha256));
    // The bundle found the CRDs it validates against (without them nothing launches).
    expect(bundled.every((r) => r.nodeClaimsCreated > 0)).toBe(true);
  });
});
