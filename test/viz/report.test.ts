import { describe, expect, it } from 'vitest';
import { histogramBins } from '../../src/viz/plot.js';
import { renderReportHtml } from '../../src/viz/report.js';
import { fakeRun } from './report-fixture.js';

const PLOTS = ['nics-by-state', 'subnet-ips', 'vms', 'arm-calls', 'create-failures', 'time-to-reap'];

/** The `<svg class="plot" data-plot=…>` element of one run's plot, as a string. */
function plotSvg(html: string, run: string, plot: string): string {
  const figure = new RegExp(`<figure data-run="${run}"><svg class="plot" data-plot="${plot}"[\\s\\S]*?</svg></figure>`).exec(html);
  if (!figure) throw new Error(`no ${plot} plot for run ${run}`);
  return figure[0];
}

function seriesNames(svg: string): string[] {
  return [...svg.matchAll(/class="series[^"]*" data-series="([^"]*)"/g)].map((m) => m[1] ?? '');
}

describe('renderReportHtml', () => {
  const runs = [fakeRun('machine', 1), fakeRun('naive', 1.6)];
  const html = renderReportHtml(runs, { title: 'quota-storm' });

  it('is one self-contained HTML file: no scripts, nothing fetched', () => {
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).not.toMatch(/<script|<link|src="http|href="http|@import|url\(/i);
  });

  it('draws every plot for every run, side by side', () => {
    for (const plot of PLOTS) {
      for (const run of runs) expect(() => plotSvg(html, run.name, plot)).not.toThrow();
    }
    expect(html.match(/<svg class="plot"/g)).toHaveLength(PLOTS.length * runs.length);
  });

  it('draws one element per series with data', () => {
    for (const run of runs) {
      const svg = (plot: string): string => plotSvg(html, run.name, plot);
      expect(seriesNames(svg('nics-by-state'))).toEqual(run.nicsByState.map((s) => s.name));
      expect(seriesNames(svg('subnet-ips'))).toEqual(run.subnetIpsUsed.map((s) => s.name));
      expect(seriesNames(svg('vms'))).toEqual(run.vms.map((s) => s.name));
      expect(seriesNames(svg('arm-calls'))).toEqual(run.armCallsPerMinute.map((s) => s.name));
      expect(seriesNames(svg('create-failures'))).toEqual(run.createFailuresByCode.map((f) => f.code).sort());
      expect(svg('subnet-ips')).toContain('class="reference"');
      // Every series path actually goes somewhere: one move and at least one segment.
      for (const d of svg('nics-by-state').matchAll(/<path class="series"[^>]* d="([^"]+)"/g)) expect(d[1]).toMatch(/^M[\d.-]+ [\d.-]+(H[\d.-]+V[\d.-]+)+$/);
    }
  });

  it('time-to-reap histograms share bins and count every NIC, with the 180 s reservation marked', () => {
    for (const run of runs) {
      const svg = plotSvg(html, run.name, 'time-to-reap');
      expect(svg).toContain('ARM reservation 180 s');
      const counts = [...svg.matchAll(/class="series bin"[^>]*><title>[^<]*: (\d+)<\/title>/g)].map((m) => Number(m[1]));
      expect(counts.reduce((a, b) => a + b, 0)).toBe(run.timeToReapMs.length);
    }
    const binsOf = (run: string): number => (plotSvg(html, run, 'time-to-reap').match(/class="series bin"/g) ?? []).length;
    expect(binsOf('machine')).toBe(binsOf('naive'));
  });

  it('uses the same color for the same series in every run', () => {
    const colorOf = (run: string): string | undefined =>
      /data-series="reserved-180s" d="[^"]*" fill="none" stroke="([^"]+)"/.exec(plotSvg(html, run, 'nics-by-state'))?.[1];
    expect(colorOf('machine')).toBeDefined();
    expect(colorOf('machine')).toBe(colorOf('naive'));
  });

  it('escapes names and is deterministic', () => {
    const odd = { ...fakeRun('<b>&"x"', 1), nicsByState: [{ name: '<script>', points: [{ t: 0, value: 1 }] }] };
    const out = renderReportHtml([odd]);
    expect(out).not.toContain('<script>');
    expect(out).toContain('&lt;b&gt;&amp;&quot;x&quot;');
    expect(renderReportHtml(runs, { title: 'quota-storm' })).toBe(html);
  });

  it('keeps long series small (min/max per pixel column) without losing a spike', () => {
    const points = Array.from({ length: 100_000 }, (_, i) => ({ t: i * 1000, value: i === 54_321 ? 500 : 1 }));
    const run = { ...fakeRun('long', 1), durationMs: 100_000_000, vms: [{ name: 'vms', points }] };
    const svg = plotSvg(renderReportHtml([run]), 'long', 'vms');
    const d = /data-series="vms" d="([^"]+)"/.exec(svg)?.[1] ?? '';
    expect(d.length).toBeLessThan(40_000);
    const yTicks = [...svg.matchAll(/text-anchor="end" class="tick">(\d+)</g)].map((m) => Number(m[1]));
    expect(Math.max(...yTicks)).toBeGreaterThanOrEqual(500); // the y axis reaches the spike
    const ys = [...d.matchAll(/V([\d.]+)/g)].map((m) => Number(m[1]));
    expect(Math.min(...ys)).toBeLessThan(50); // the spike is drawn (value 1 would sit near y = 190)
  });

  it('refuses an empty report', () => {
    expect(() => renderReportHtml([])).toThrow(RangeError);
  });
});

describe('histogramBins', () => {
  it('covers every value, starting at a round number', () => {
    const { edges, counts } = histogramBins([181, 185, 199, 240]);
    expect(edges[0]).toBe(180);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(4);
    expect(edges[edges.length - 1]).toBeGreaterThan(240);
  });
});
