import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('azflex CLI process', () => {
  it('a --json far larger than a pipe buffer reaches a pipe whole before the process exits', async () => {
    // bin/azflex.mjs as `npx azflex` runs it; stdout is a pipe here, as in `azflex … | jq`.
    const { stdout } = await run(process.execPath, ['bin/azflex.mjs', 'simulate', '--scenario', 'fleet', '--hours', '0.05', '--seed', '1', '--strategy', 'machine', '--json'], { maxBuffer: 64 * 1024 * 1024 });
    expect(stdout.length).toBeGreaterThan(4 * 64 * 1024);
    const result = JSON.parse(stdout.trim()) as { placement?: { nodes: unknown[] } };
    expect(result.placement?.nodes.length).toBeGreaterThan(0);
  }, 120_000);
});
