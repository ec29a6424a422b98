import { describe, expect, it } from 'vitest';
import { renderReportHtml } from '../../src/viz/report.js';
import { launchChromium } from '../live/browser.js';
import { fakeRun } from './report-fixture.js';

/** The report in Debian's chromium at 1400 px: summary table first, the three strategies side by side in every plot row. */
describe('report layout at 1400 px', () => {
  it('puts the summary table first and every plot row on one line, nothing wider than the window', async () => {
    const runs = ['naive', 'delayed', 'machine'].map((name, i) => ({ ...fakeRun(name, 1 + i / 2), summary: [{ label: 'leaked NICs', value: 3 - i }, { label: 'ARM writes', value: 100 * (i + 1) }] }));
    const html = renderReportHtml(runs, { title: 'quota-storm' });
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      await page.setViewportSize({ width: 1400, height: 900 });
      await page.setContent(html);
      const layout = await page.evaluate(() => {
        const first = document.body.children[1]!;
        const rows = [...document.querySelectorAll('section[data-plot-row]')].map((s) => [...s.querySelectorAll('figure')].map((f) => f.getBoundingClientRect()));
        return {
          firstIsSummary: first.matches('table.summary'),
          summaryColumns: [...document.querySelectorAll('table.summary thead th[data-run]')].map((th) => th.textContent),
          rows: rows.map((figs) => ({ tops: figs.map((r) => Math.round(r.top)), rights: figs.map((r) => r.right), widths: figs.map((r) => r.width) })),
          scrollWidth: document.documentElement.scrollWidth,
        };
      });
      expect(layout.firstIsSummary).toBe(true);
      expect(layout.summaryColumns).toEqual(['naive', 'delayed', 'machine']);
      expect(layout.rows).toHaveLength(6);
      for (const row of layout.rows) {
        expect(new Set(row.tops).size, 'one line').toBe(1);
        expect(Math.max(...row.rights)).toBeLessThanOrEqual(1400);
        expect(Math.min(...row.widths)).toBeGreaterThan(300);
      }
      expect(layout.scrollWidth).toBeLessThanOrEqual(1400);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
