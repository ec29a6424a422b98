import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('azflex simulate --report', () => {
  it('writes one self-contained HTML file with every plot for every strategy, side by side', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'azflex-report-')), 'report.html');
    const { stdout } = await run('node', ['--import', 'tsx', 'src/cli/main.ts', 'simulate', '--hours', '1', '--strategy', 'all', '--json', '--report', file]);
    expect(JSON.parse(stdout).runs).toHaveLength(3);
    const html = readFileSync(file, 'utf8');
    for (const strategy of ['naive', 'delayed', 'machine']) expect(html).toContain(`>${strategy}<`);
    for (const plot of ['NICs by state', 'Subnet addresses used', 'VMs', 'ARM calls per minute', 'Create failures by code', 'Time to reap']) {
      expect(html.split(plot).length - 1, plot).toBeGreaterThanOrEqual(3);
    }
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)="https?:/);
    expect(html).toMatch(/idle/);
    // Where each strategy's nodes and pods landed, by region and zone.
    expect(html.split('<table class="placement">').length - 1).toBe(3);
    expect(html).toMatch(/<h3>Placement by region and zone<\/h3>/);
    expect(html).toMatch(/<td>eastus2-[123]<\/td>/);
  });
});
