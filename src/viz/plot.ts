/**
 * Tiny SVG plotting for the simulation report: line charts over time, bar charts and
 * histograms, as strings. Drawn by hand so the report is one self-contained file (no CDN,
 * no JS) and byte-stable for the same input.
 */

export interface TimePoint {
  /** Simulated milliseconds since the start of the run. */
  t: number;
  value: number;
}

export interface NamedSeries {
  name: string;
  points: readonly TimePoint[];
}

export interface Domain {
  min: number;
  max: number;
}

export interface LineChartSpec {
  id: string;
  title: string;
  yLabel: string;
  series: readonly NamedSeries[];
  /** Shared across runs so side-by-side plots compare at a glance. */
  x: Domain;
  y: Domain;
  colors: ReadonlyMap<string, string>;
  /** Counts change in steps (a NIC exists or not): draw steps, not slopes. */
  step?: boolean;
  /** Horizontal reference lines, e.g. the subnet's capacity. */
  references?: readonly { label: string; value: number }[];
}

export interface BarChartSpec {
  id: string;
  title: string;
  yLabel: string;
  bars: readonly { label: string; value: number }[];
  yMax: number;
  colors: ReadonlyMap<string, string>;
}

export interface HistogramSpec {
  id: string;
  title: string;
  xLabel: string;
  /** Bin edges in the x unit; bins[i] counts values in [edges[i], edges[i+1]). */
  edges: readonly number[];
  counts: readonly number[];
  yMax: number;
  formatX: (x: number) => string;
  /** Vertical reference lines, e.g. ARM's 180 s reservation. */
  references?: readonly { label: string; value: number }[];
}

const WIDTH = 560;
const HEIGHT = 272;
const MARGIN = { top: 40, right: 16, bottom: 42, left: 52 };
const PLOT_W = WIDTH - MARGIN.left - MARGIN.right;
const PLOT_H = HEIGHT - MARGIN.top - MARGIN.bottom;
/** Above this many points a series is reduced to min/max per pixel column, keeping spikes. */
const MAX_POINTS = PLOT_W * 2;

export const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

/** Same name → same color in every plot and every run. */
export function colorMap(names: Iterable<string>): Map<string, string> {
  const sorted = [...new Set(names)].sort();
  return new Map(sorted.map((name, i) => [name, PALETTE[i % PALETTE.length] ?? '#333333']));
}

export function lineChart(spec: LineChartSpec): string {
  const sx = scale(spec.x, 0, PLOT_W);
  const sy = scale(spec.y, PLOT_H, 0);
  const parts: string[] = [frameOpen(spec.id, spec.title)];
  parts.push(yAxis(spec.y, spec.yLabel), timeAxis(spec.x));
  for (const ref of spec.references ?? []) {
    const y = fmt(sy(ref.value));
    parts.push(
      `<line class="reference" x1="0" x2="${PLOT_W}" y1="${y}" y2="${y}" stroke="#999" stroke-dasharray="4 3"/>`,
      `<text x="${PLOT_W - 4}" y="${fmt(sy(ref.value) - 4)}" text-anchor="end" class="ref-label">${escapeXml(ref.label)}</text>`,
    );
  }
  for (const series of spec.series) {
    const color = spec.colors.get(series.name) ?? '#333333';
    const points = decimate([...series.points].sort((a, b) => a.t - b.t));
    const d = pathData(points, sx, sy, spec.step ?? false);
    parts.push(
      `<path class="series" data-series="${escapeXml(series.name)}" d="${d}" fill="none" stroke="${color}" stroke-width="1.5"><title>${escapeXml(series.name)}</title></path>`,
    );
  }
  parts.push(legend(spec.series.map((s) => s.name), spec.colors));
  parts.push(frameClose());
  return parts.join('');
}

export function barChart(spec: BarChartSpec): string {
  const y: Domain = { min: 0, max: spec.yMax };
  const sy = scale(y, PLOT_H, 0);
  const parts: string[] = [frameOpen(spec.id, spec.title), yAxis(y, spec.yLabel)];
  parts.push(`<line x1="0" x2="${PLOT_W}" y1="${PLOT_H}" y2="${PLOT_H}" stroke="#333"/>`);
  if (spec.bars.length === 0) {
    parts.push(`<text x="${PLOT_W / 2}" y="${PLOT_H / 2}" text-anchor="middle" class="empty">none</text>`);
  }
  const slot = PLOT_W / Math.max(1, spec.bars.length);
  spec.bars.forEach((bar, i) => {
    const x = i * slot + slot * 0.15;
    const top = sy(bar.value);
    parts.push(
      `<rect class="series bar" data-series="${escapeXml(bar.label)}" x="${fmt(x)}" y="${fmt(top)}" width="${fmt(slot * 0.7)}" height="${fmt(PLOT_H - top)}" fill="${spec.colors.get(bar.label) ?? '#333333'}"><title>${escapeXml(`${bar.label}: ${bar.value}`)}</title></rect>`,
      `<text x="${fmt(x + slot * 0.35)}" y="${fmt(top - 3)}" text-anchor="middle">${bar.value}</text>`,
      `<text x="${fmt(x + slot * 0.35)}" y="${PLOT_H + 14}" text-anchor="middle" class="tick">${escapeXml(truncate(bar.label, Math.max(4, Math.floor(slot / 6))))}</text>`,
    );
  });
  parts.push(frameClose());
  return parts.join('');
}

export function histogram(spec: HistogramSpec): string {
  const first = spec.edges[0] ?? 0;
  const last = spec.edges[spec.edges.length - 1] ?? 1;
  const x: Domain = { min: first, max: last > first ? last : first + 1 };
  const y: Domain = { min: 0, max: spec.yMax };
  const sx = scale(x, 0, PLOT_W);
  const sy = scale(y, PLOT_H, 0);
  const parts: string[] = [frameOpen(spec.id, spec.title), yAxis(y, 'count')];
  parts.push(`<line x1="0" x2="${PLOT_W}" y1="${PLOT_H}" y2="${PLOT_H}" stroke="#333"/>`);
  for (const tick of niceTicks(x, 6)) {
    parts.push(`<text x="${fmt(sx(tick))}" y="${PLOT_H + 14}" text-anchor="middle" class="tick">${escapeXml(spec.formatX(tick))}</text>`);
  }
  parts.push(`<text x="${PLOT_W / 2}" y="${PLOT_H + 32}" text-anchor="middle" class="axis-label">${escapeXml(spec.xLabel)}</text>`);
  spec.counts.forEach((count, i) => {
    const left = sx(spec.edges[i] ?? first);
    const right = sx(spec.edges[i + 1] ?? last);
    const top = sy(count);
    parts.push(
      `<rect class="series bin" data-series="bin-${i}" x="${fmt(left)}" y="${fmt(top)}" width="${fmt(Math.max(0, right - left - 1))}" height="${fmt(PLOT_H - top)}" fill="#4c78a8"><title>${escapeXml(`${spec.formatX(spec.edges[i] ?? first)}–${spec.formatX(spec.edges[i + 1] ?? last)}: ${count}`)}</title></rect>`,
    );
  });
  for (const ref of spec.references ?? []) {
    if (ref.value < x.min || ref.value > x.max) continue;
    const px = sx(ref.value);
    const rx = fmt(px);
    // Keep the label inside the plot: to the left of the line when the line is on the right.
    const right = px > PLOT_W * 0.6;
    parts.push(
      `<line class="reference" x1="${rx}" x2="${rx}" y1="0" y2="${PLOT_H}" stroke="#d62728" stroke-dasharray="4 3"/>`,
      `<text x="${fmt(right ? px - 4 : px + 4)}" y="10" text-anchor="${right ? 'end' : 'start'}" class="ref-label">${escapeXml(ref.label)}</text>`,
    );
  }
  parts.push(frameClose());
  return parts.join('');
}

/**
 * Nice bin edges covering every value, or the given edges (so several
 * runs share bins). Values outside the edges count in the first or last bin.
 */
export function histogramBins(values: readonly number[], targetBins = 20, fixedEdges?: readonly number[]): { edges: number[]; counts: number[] } {
  let edges: number[];
  if (fixedEdges && fixedEdges.length >= 2) {
    edges = [...fixedEdges];
  } else {
    // Start at a round number below the smallest value: reap times bunch up just past 180 s,
    // and bins from 0 would spend the whole width on nothing.
    const max = values.reduce((m, v) => Math.max(m, v), 0);
    const min = values.reduce((m, v) => Math.min(m, v), max);
    const step = niceStep(Math.max(max - min, 1) / targetBins);
    const start = Math.floor(min / step) * step;
    const bins = Math.max(1, Math.floor((max - start) / step) + 1);
    edges = Array.from({ length: bins + 1 }, (_, i) => round(start + i * step));
  }
  const bins = edges.length - 1;
  const counts = new Array<number>(bins).fill(0);
  for (const v of values) {
    let i = 0;
    while (i < bins - 1 && v >= (edges[i + 1] ?? Infinity)) i++;
    counts[i] = (counts[i] ?? 0) + 1;
  }
  return { edges, counts };
}

/** A y maximum with a little headroom, rounded to a nice number. */
export function niceMax(max: number): number {
  if (max <= 0) return 1;
  const step = niceStep(max / 5);
  return Math.ceil((max * 1.05) / step) * step;
}

export function niceTicks(domain: Domain, target: number): number[] {
  const span = domain.max - domain.min;
  if (span <= 0) return [domain.min];
  const step = niceStep(span / target);
  const ticks: number[] = [];
  for (let v = Math.ceil(domain.min / step) * step; v <= domain.max + step * 1e-9; v += step) ticks.push(round(v));
  return ticks;
}

function niceStep(raw: number): number {
  if (raw <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  const unit = raw / power;
  const nice = unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10;
  return nice * power;
}

/** Simulated time axis; ticks land on whole minutes or hours so they read naturally. */
function timeAxis(x: Domain): string {
  const sx = scale(x, 0, PLOT_W);
  const span = x.max - x.min;
  const minute = 60_000;
  const hour = 60 * minute;
  const steps = [minute, 5 * minute, 10 * minute, 15 * minute, 30 * minute, hour, 2 * hour, 3 * hour, 6 * hour, 12 * hour, 24 * hour];
  const step = steps.find((s) => span / s <= 8) ?? 24 * hour;
  const parts: string[] = [`<line x1="0" x2="${PLOT_W}" y1="${PLOT_H}" y2="${PLOT_H}" stroke="#333"/>`];
  for (let t = Math.ceil(x.min / step) * step; t <= x.max; t += step) {
    const px = fmt(sx(t));
    parts.push(
      `<line x1="${px}" x2="${px}" y1="${PLOT_H}" y2="${PLOT_H + 4}" stroke="#333"/>`,
      `<text x="${px}" y="${PLOT_H + 16}" text-anchor="middle" class="tick">${formatSimTime(t)}</text>`,
    );
  }
  parts.push(`<text x="${PLOT_W / 2}" y="${PLOT_H + 34}" text-anchor="middle" class="axis-label">simulated time</text>`);
  return parts.join('');
}

export function formatSimTime(ms: number): string {
  const totalMinutes = Math.round(ms / 60_000);
  const h = Math.floor(totalMinutes / 60);
  const m = totalMinutes % 60;
  if (h === 0) return `${m}m`;
  return m === 0 ? `${h}h` : `${h}h${String(m).padStart(2, '0')}`;
}

function yAxis(y: Domain, label: string): string {
  const sy = scale(y, PLOT_H, 0);
  const parts: string[] = [`<line x1="0" x2="0" y1="0" y2="${PLOT_H}" stroke="#333"/>`];
  for (const tick of niceTicks(y, 5)) {
    const py = fmt(sy(tick));
    parts.push(
      `<line x1="0" x2="${PLOT_W}" y1="${py}" y2="${py}" stroke="#eee"/>`,
      `<text x="-6" y="${fmt(sy(tick) + 3)}" text-anchor="end" class="tick">${formatNumber(tick)}</text>`,
    );
  }
  parts.push(
    `<text transform="translate(-40 ${PLOT_H / 2}) rotate(-90)" text-anchor="middle" class="axis-label">${escapeXml(label)}</text>`,
  );
  return parts.join('');
}

function legend(names: readonly string[], colors: ReadonlyMap<string, string>): string {
  const parts: string[] = [];
  let x = 0;
  for (const name of names) {
    parts.push(
      `<rect x="${fmt(x)}" y="${-MARGIN.top + 26}" width="10" height="3" fill="${colors.get(name) ?? '#333333'}"/>`,
      `<text x="${fmt(x + 13)}" y="${-MARGIN.top + 30}" class="legend">${escapeXml(name)}</text>`,
    );
    x += 22 + name.length * 6.2;
  }
  return `<g class="legend">${parts.join('')}</g>`;
}

function frameOpen(id: string, title: string): string {
  return (
    `<svg class="plot" data-plot="${escapeXml(id)}" xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img">` +
    `<title>${escapeXml(title)}</title>` +
    `<text x="${MARGIN.left}" y="14" class="plot-title">${escapeXml(title)}</text>` +
    `<g transform="translate(${MARGIN.left} ${MARGIN.top})">`
  );
}

function frameClose(): string {
  return '</g></svg>';
}

function pathData(points: readonly TimePoint[], sx: (v: number) => number, sy: (v: number) => number, step: boolean): string {
  const out: string[] = [];
  let prevY: number | undefined;
  for (const p of points) {
    const x = fmt(sx(p.t));
    const y = fmt(sy(p.value));
    if (prevY === undefined) out.push(`M${x} ${y}`);
    else if (step) out.push(`H${x}V${y}`);
    else out.push(`L${x} ${y}`);
    prevY = sy(p.value);
  }
  return out.join('');
}

/** Keep the first, min, max and last point of each pixel column: spikes survive, size stays bounded. */
function decimate(points: readonly TimePoint[]): TimePoint[] {
  if (points.length <= MAX_POINTS) return [...points];
  const first = points[0];
  const last = points[points.length - 1];
  if (!first || !last) return [];
  const span = Math.max(1, last.t - first.t);
  const columns = new Map<number, TimePoint[]>();
  for (const p of points) {
    const c = Math.floor(((p.t - first.t) / span) * (PLOT_W - 1));
    const col = columns.get(c) ?? [];
    col.push(p);
    columns.set(c, col);
  }
  const out: TimePoint[] = [];
  for (const col of columns.values()) {
    const picked = new Set<TimePoint>();
    const firstOfCol = col[0];
    const lastOfCol = col[col.length - 1];
    let min = firstOfCol;
    let max = firstOfCol;
    for (const p of col) {
      if (min === undefined || p.value < min.value) min = p;
      if (max === undefined || p.value > max.value) max = p;
    }
    for (const p of [firstOfCol, min, max, lastOfCol]) if (p) picked.add(p);
    out.push(...[...picked].sort((a, b) => a.t - b.t));
  }
  return out;
}

function scale(domain: Domain, from: number, to: number): (v: number) => number {
  const span = domain.max - domain.min || 1;
  return (v) => from + ((v - domain.min) / span) * (to - from);
}

function fmt(n: number): string {
  return String(Math.round(n * 10) / 10);
}

function round(n: number): number {
  return Math.round(n * 1e9) / 1e9;
}

function formatNumber(n: number): string {
  if (Math.abs(n) >= 10_000) return `${round(n / 1000)}k`;
  return String(round(n));
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}
