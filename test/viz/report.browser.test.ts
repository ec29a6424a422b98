import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReportHtml } from '../../src/viz/report.js';
import { fakeRun } from './report-fixture.js';
import { launchChromium, watchPage, type Browser } from '../live/browser.js';

const PLOTS = ['nics-by-state', 'subnet-ips', 'vms', 'arm-calls', 'create-failures', 'time-to-reap'];

describe('simulation report in chromium', () => {
  let browser: Browser;
  let dir: string;
  beforeAll(async () => {
    browser = await launchChromium();
    dir = mkdtempSync(join(tmpdir(), 'azflex-report-'));
  });
  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('renders every plot of every run side by side, offline', async () => {
    const runs = [fakeRun('machine', 1), fakeRun('naive', 1.6)];
    const file = join(dir, 'report.html');
    writeFileSync(file, renderReportHtml(runs, { title: 'quota-storm' }));
    const url = pathToFileURL(file).href;

    const page = await browser.context.newPage();
    const problems = watchPage(page, url);
    await page.goto(url);

    for (const plot of PLOTS) {
      const figures = page.locator(`section[data-plot-row="${plot}"] figure`);
      expect(await figures.count()).toBe(runs.length);
      const boxes = [];
      for (const run of runs) {
        const svg = page.locator(`section[data-plot-row="${plot}"] figure[data-run="${run.name}"] svg.plot`);
        const box = await svg.boundingBox();
        expect(box, `${plot} for ${run.name}`).not.toBeNull();
        expect(box?.width).toBeGreaterThan(400);
        expect(box?.height).toBeGreaterThan(150);
        boxes.push(box);
        // Every series (line, bar or bin) was laid out with a visible size, not just emitted.
        const series = svg.locator('.series');
        const n = await series.count();
        expect(n, `${plot} for ${run.name} has series`).toBeGreaterThan(0);
        let drawn = 0;
        for (let i = 0; i < n; i++) {
          const b = await series.nth(i).boundingBox();
          if (b && b.width > 0 && b.height + b.width > 1) drawn++;
        }
        expect(drawn, `${plot} for ${run.name}: series drawn`).toBeGreaterThan(0);
      }
      // Side by side: same row, left to right.
      expect(boxes[0]?.y).toBe(boxes[1]?.y);
      expect(boxes[1]?.x ?? 0).toBeGreaterThan((boxes[0]?.x ?? 0) + (boxes[0]?.width ?? 0) - 1);
    }
    expect(await page.locator('svg.plot').count()).toBe(PLOTS.length * runs.length);
    expect(problems).toEqual({ errors: [], foreignRequests: [] });
    await page.screenshot({ path: join(dir, 'report.png'), fullPage: true });
    await page.close();
  });
});
