import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/main.js';

const CLI = ['--import', 'tsx', 'src/cli/main.ts'];

/** Resolves with the first match of `re` in the stream's text so far. */
function waitFor(stream: NodeJS.ReadableStream, re: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no ${String(re)} in: ${text}`)), timeoutMs);
    stream.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const m = text.match(re);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
  });
}

async function post(url: string, body: object): Promise<number> {
  const res = await fetch(`${url}api/clock`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return res.status;
}

describe('azflex simulate --ui', () => {
  it('serves the live view, waits for the page, prints the usual result, and stops on Ctrl-C', async () => {
    const child = spawn('node', [...CLI, 'simulate', '--scenario', 'quota-storm', '--hours', '0.2', '--json', '--ui'], { cwd: process.cwd() });
    try {
      const url = (await waitFor(child.stderr, /live view at (http:\/\/127\.0\.0\.1:\d+\/)/))[1] ?? '';
      const page = await (await fetch(url)).text();
      expect(page).toContain('azflex <span>live view</span>');
      const state = (await (await fetch(`${url}api/state`)).json()) as { clock: { paused: boolean } };
      expect(state.clock.paused).toBe(true);

      const stdout = waitFor(child.stdout, /^\{.*\}\n/);
      expect(await post(url, { action: 'speed', speed: 'max' })).toBe(200);
      expect(await post(url, { action: 'resume' })).toBe(200);
      const result = JSON.parse((await stdout)[0]) as { strategy: string; leakedNics: number };
      expect(result).toMatchObject({ strategy: 'machine', leakedNics: 0 });

      // The page stays up after the run, showing the settled world.
      await waitFor(child.stderr, /simulation finished/);
      expect((await fetch(`${url}api/state`)).status).toBe(200);
      child.kill('SIGINT');
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('runs one strategy only', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await main(['simulate', '--ui', '--strategy', 'all'])).toBe(2);
      expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toContain('--ui runs one strategy at a time');
    } finally {
      stderr.mockRestore();
    }
  });
});
