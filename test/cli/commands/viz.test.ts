import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/main.js';

/** Runs the CLI in-process and captures what it prints. */
async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await main(argv);
    return { code, stdout, stderr };
  } finally {
    vi.restoreAllMocks();
  }
}

describe('azflex viz', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('prints the NIC machine as SVG by default', async () => {
    const { code, stdout } = await run('viz', '--machine', 'nic');
    expect(code).toBe(0);
    expect(stdout).toContain('<svg');
    expect(stdout).toContain('reserved-180s');
  });

  it('prints Mermaid and JSON', async () => {
    expect((await run('viz', '--machine', 'nodeclaim', '--format', 'mermaid')).stdout.startsWith('stateDiagram-v2\n')).toBe(true);
    const all = await run('viz', '--machine', 'all', '--format', 'json');
    expect(Object.keys(JSON.parse(all.stdout) as object)).toEqual(['nodeclaim', 'nic']);
  });

  it('rejects bad values with one message and exit 2', async () => {
    const badMachine = await run('viz', '--machine', 'vm');
    expect(badMachine.code).toBe(2);
    expect(badMachine.stderr).toContain("argument 'vm' is invalid. Allowed choices are nodeclaim, nic, all.");
    const badFormat = await run('viz', '--machine', 'nic', '--format', 'png');
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toContain('Allowed choices are svg, dot, mermaid, json.');
    const twoSvgs = await run('viz', '--machine', 'all', '--format', 'svg');
    expect(twoSvgs.code).toBe(2);
    expect(twoSvgs.stderr).toBe('azflex: --machine all --format svg makes one document per machine: add --out <dir>, or pick --machine nodeclaim|nic\n');
    expect(twoSvgs.stdout).toBe('');
  });

  it('writes one file per machine with --out', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'azflex-viz-'));
    dirs.push(dir);
    const { code } = await run('viz', '--machine', 'all', '--format', 'dot', '--out', join(dir, 'sub'));
    expect(code).toBe(0);
    expect(readdirSync(join(dir, 'sub')).sort()).toEqual(['nic.dot', 'nodeclaim.dot']);
    expect(readFileSync(join(dir, 'sub', 'nic.dot'), 'utf8')).toMatch(/^digraph "nic" \{/);
  });
});
