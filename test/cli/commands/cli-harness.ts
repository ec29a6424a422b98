import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterEach, beforeEach, expect, vi } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { builtInScenarioInput } from '../../../src/sim/scenarios.js';
import type { ScenarioInput } from '../../../src/sim/scenario.js';

/**
 * The CLI tests' shared harness: `azflex` run in-process with its output captured, input
 * files written to a temporary directory, and the one check every refusal must pass (exit 2,
 * exactly one line, no stack trace).
 */
export function cliHarness(prefix: string) {
  const out = { stderr: [] as string[], stdout: [] as string[] };
  beforeEach(() => {
    out.stderr = [];
    out.stdout = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (out.stderr.push(String(chunk)), true));
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.stdout.push(String(chunk)), true));
  });
  afterEach(() => {
    vi.restoreAllMocks();
    process.exitCode = undefined;
  });

  const dir = mkdtempSync(join(tmpdir(), prefix));
  let n = 0;
  const file = (content: string | Buffer, ext = 'yaml'): string => {
    const path = join(dir, `f${n++}.${ext}`);
    writeFileSync(path, content);
    return path;
  };
  /** quota-storm with one change, as a scenario file. */
  const scenario = (change: (s: ScenarioInput) => void): string => {
    const s = builtInScenarioInput('quota-storm')!;
    change(s);
    return file(stringify(s));
  };
  const refused = async (args: string[], message: string | RegExp, command: string[] = ['simulate']): Promise<void> => {
    out.stderr = [];
    const code = await main([...command, ...args]);
    const text = out.stderr.join('');
    expect(code, text).toBe(2);
    expect(text.trimEnd().split('\n'), text).toHaveLength(1);
    expect(text).toMatch(message);
    expect(text).not.toMatch(/\n\s+at /);
  };
  return { out, dir, file, scenario, refused };
}
