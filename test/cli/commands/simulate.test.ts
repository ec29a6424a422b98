import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const CLI = ['--import', 'tsx', 'src/cli/main.ts'];

async function azflex(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('node', [...CLI, ...args], { cwd: process.cwd() });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('azflex simulate', () => {
  it('--json prints exactly one JSON object with the documented fields', async () => {
    const { code, stdout } = await azflex(['simulate', '--scenario', 'quota-storm', '--hours', '1', '--json']);
    expect(code).toBe(0);
    expect(stdout.trim().split('\n')).toHaveLength(1);
    const out = JSON.parse(stdout) as Record<string, unknown>;
    for (const key of ['scenario', 'seed', 'strategy', 'simulatedSeconds', 'wallSeconds', 'nodeClaimsLaunched', 'createFailures', 'createsRefusedForQuota', 'createsRefusedForCapacity', 'nicsCreated', 'nicsDeleted', 'leakedNics', 'leakedVms', 'leakedDisks', 'peakSubnetIpsUsed', 'armCalls', 'timeToReapSeconds']) {
      expect(out).toHaveProperty(key);
    }
    expect(out.leakedNics).toBe(0);
    expect(out.simulatedSeconds).toBe(3600);
  });

  it('--assert-no-leaks exits 1 for the naive strategy, which leaks under allocation failures', async () => {
    // Not quota-storm: with usages read, quota-aware planning sends no create quota refuses.
    const { code, stderr } = await azflex(['simulate', '--scenario', 'capacity-flap', '--hours', '1', '--strategy', 'naive', '--assert-no-leaks', '--json']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/leaks found with strategy naive \(\d+ NICs/);
  });

  it('a bad flag value gets one precise message and exit 2', async () => {
    const { code, stderr } = await azflex(['simulate', '--seed', 'abc']);
    expect(code).toBe(2);
    expect(stderr).toContain('--seed must be a whole number');
    const strategy = await azflex(['simulate', '--strategy', 'lazy']);
    expect(strategy.code).toBe(2);
    expect(strategy.stderr).toContain("Allowed choices are naive, delayed, machine, all");
  });

  it('an unknown scenario or an invalid scenario file is reported precisely with exit 2', async () => {
    const unknown = await azflex(['simulate', '--scenario', 'no-such-thing']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim()).toBe('azflex: unknown scenario "no-such-thing": not a built-in (quota-storm, quota-blind, capacity-flap, throttle, crash-restart, churn, spot-fallback, spot-evictions, reserved-h200, fleet) and no such file');
    const dir = mkdtempSync(join(tmpdir(), 'azflex-cli-'));
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'name: bad\nhours: 1\nregions: [{ location: eastus2 }]\nnodeClasses: [{ name: c, location: eastus2 }]\nnodePools: [{ name: p, nodeClass: missing, instanceTypes: [Standard_D8s_v5] }]\nworkload: [{ count: 1, prefix: web, requests: { cpu: "1" } }]\n');
    const bad = await azflex(['simulate', '--scenario', file]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe(`azflex: ${file}: nodePools.0.nodeClass: no nodeClass named "missing"`);
  });
});
