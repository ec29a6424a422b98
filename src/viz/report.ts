import { NIC_RESERVATION_MS } from '../lifecycle/timing.js';
import {
  barChart,
  colorMap,
  escapeXml,
  histogram,
  histogramBins,
  lineChart,
  niceMax,
  type Domain,
  type NamedSeries,
  type TimePoint,
} from './plot.js';

import { PLACEMENT_CSS, placementTable, type PlacementSummary } from './placement-table.js';

export type { NamedSeries, TimePoint } from './plot.js';

/**
 * One simulated run, as time series the simulator samples (times are simulated ms since
 * the start of the run). With several runs (one per NIC cleanup strategy) the report puts
 * the same plots side by side, on shared axes, so strategies compare at a glance.
 */
export interface SimulationReportInput {
  /** Run label, typically the strategy name. */
  name: string;
  /** Shown under the run's name, e.g. "quota-storm, seed 1". */
  subtitle?: string;
  /** Simulated length of the run. */
  durationMs: number;
  /** NICs per NIC-machine state (pending, attached, reserved-180s, ...), one series per state. */
  nicsByState: NamedSeries[];
  /** Subnet addresses in use, one series per subnet. */
  subnetIpsUsed: NamedSeries[];
  /** Usable addresses per subnet, drawn as dashed reference lines on the subnet plot. */
  subnetCapacity?: { name: string; capacity: number }[];
  /** VMs in ARM, one or more series (e.g. by provisioning state, or a single "vms"). */
  vms: NamedSeries[];
  /** ARM calls per simulated minute, one series per outcome (ok, throttled, reserved, ...). */
  armCallsPerMinute: NamedSeries[];
  /** NIC and VM create failures over the run, by ARM error code. */
  createFailuresByCode: { code: string; count: number }[];
  /** For each reaped NIC: ms from when it stopped being needed to its successful delete. */
  timeToReapMs: number[];
  /** Headline numbers for the run (leaks, NodeClaims launched, ...). */
  summary?: { label: string; value: string | number }[];
  /** Where the run's nodes and pods ended up, by region and zone. */
  placement?: PlacementSummary;
}

export interface ReportOptions {
  title?: string;
}

type PlotId = 'nics-by-state' | 'subnet-ips' | 'vms' | 'arm-calls' | 'create-failures' | 'time-to-reap';

interface PlotRow {
  id: PlotId;
  title: string;
  render: (run: SimulationReportInput) => string;
}

/** A self-contained HTML report (inline SVG and CSS, no scripts, nothing fetched). */
export function renderReportHtml(runs: SimulationReportInput[], options: ReportOptions = {}): string {
  if (runs.length === 0) throw new RangeError('renderReportHtml needs at least one run');
  const title = options.title ?? 'azflex simulation report';
  const sections = placementSection(runs) + plotRows(runs).map((row) => plotSection(runs, row)).join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeXml(title)}</title>
<style>${CSS}
.runs{grid-template-columns:repeat(${runs.length},minmax(0,1fr))}</style>
</head>
<body>
<h1>${escapeXml(title)}</h1>
${summaryTable(runs)}
<div class="runs">${runHeaders(runs)}</div>
${sections}
</body>
</html>
`;
}

/** Every plot row, each on axes shared by all runs so they compare side by side. */
function plotRows(runs: SimulationReportInput[]): PlotRow[] {
  const x: Domain = { min: 0, max: Math.max(1, ...runs.map((r) => r.durationMs)) };
  return [
    lineRow(runs, x, { id: 'nics-by-state', title: 'NICs by state', yLabel: 'NICs', pick: (r) => r.nicsByState, step: true }),
    lineRow(runs, x, {
      id: 'subnet-ips',
      title: 'Subnet addresses used',
      yLabel: 'addresses',
      pick: (r) => r.subnetIpsUsed,
      step: true,
      references: (r) => (r.subnetCapacity ?? []).map((c) => ({ label: `${c.name} capacity ${c.capacity}`, value: c.capacity })),
    }),
    lineRow(runs, x, { id: 'vms', title: 'VMs', yLabel: 'VMs', pick: (r) => r.vms, step: true }),
    lineRow(runs, x, { id: 'arm-calls', title: 'ARM calls per minute by outcome', yLabel: 'calls / min', pick: (r) => r.armCallsPerMinute }),
    createFailuresRow(runs),
    timeToReapRow(runs),
  ];
}

interface LineRowSpec {
  id: PlotId;
  title: string;
  yLabel: string;
  pick: (run: SimulationReportInput) => NamedSeries[];
  step?: boolean;
  references?: (run: SimulationReportInput) => { label: string; value: number }[];
}

/** A line chart per run, with one y scale and one color per series name across all runs. */
function lineRow(runs: SimulationReportInput[], x: Domain, spec: LineRowSpec): PlotRow {
  const { id, title, yLabel, pick, references } = spec;
  const colors = colorMap(runs.flatMap((r) => pick(r).map((s) => s.name)));
  const yMax = niceMax(
    Math.max(
      0,
      ...runs.flatMap((r) => pick(r).map((s) => maxValue(s.points))),
      ...runs.flatMap((r) => (references?.(r) ?? []).map((ref) => ref.value)),
    ),
  );
  return {
    id,
    title,
    render: (run) =>
      lineChart({ id, title, yLabel, series: pick(run), x, y: { min: 0, max: yMax }, colors, step: spec.step ?? false, references: references?.(run) ?? [] }),
  };
}

function createFailuresRow(runs: SimulationReportInput[]): PlotRow {
  const colors = colorMap(runs.flatMap((r) => r.createFailuresByCode.map((f) => f.code)));
  const yMax = niceMax(Math.max(0, ...runs.flatMap((r) => r.createFailuresByCode.map((f) => f.count))));
  return {
    id: 'create-failures',
    title: 'Create failures by code',
    render: (run) =>
      barChart({
        id: 'create-failures',
        title: 'Create failures by code',
        yLabel: 'failures',
        bars: [...run.createFailuresByCode].sort((a, b) => a.code.localeCompare(b.code)).map((f) => ({ label: f.code, value: f.count })),
        yMax,
        colors,
      }),
  };
}

function timeToReapRow(runs: SimulationReportInput[]): PlotRow {
  // One set of bins for every run, so the histograms line up side by side.
  const bins = histogramBins(runs.flatMap((r) => r.timeToReapMs.map((ms) => ms / 1000)));
  const counts = runs.map((r) => histogramBins(r.timeToReapMs.map((ms) => ms / 1000), 20, bins.edges).counts);
  const yMax = niceMax(Math.max(0, ...counts.flat()));
  return {
    id: 'time-to-reap',
    title: 'Time to reap a NIC',
    render: (run) =>
      histogram({
        id: 'time-to-reap',
        title: `Time to reap a NIC (${run.timeToReapMs.length} NICs)`,
        xLabel: 'seconds from release to delete',
        edges: bins.edges,
        counts: counts[runs.indexOf(run)] ?? [],
        yMax,
        formatX: (s) => `${s} s`,
        // The floor every strategy has to wait: ARM's reservation on a NIC a VM PUT referenced.
        references: [{ label: `ARM reservation ${NIC_RESERVATION_MS / 1000} s`, value: NIC_RESERVATION_MS / 1000 }],
      }),
  };
}

/** A column per run, a row per headline figure, so runs compare in one glance. */
function summaryTable(runs: SimulationReportInput[]): string {
  const labels = [...new Set(runs.flatMap((r) => (r.summary ?? []).map((s) => s.label)))];
  const cell = (run: SimulationReportInput, label: string) => escapeXml(String(run.summary?.find((s) => s.label === label)?.value ?? '-'));
  return (
    `<table class="summary"><thead><tr><th></th>${runs.map((r) => `<th scope="col" data-run="${escapeXml(r.name)}">${escapeXml(r.name)}</th>`).join('')}</tr></thead><tbody>` +
    labels.map((label) => `<tr><th scope="row">${escapeXml(label)}</th>${runs.map((r) => `<td>${cell(r, label)}</td>`).join('')}</tr>`).join('') +
    '</tbody></table>'
  );
}

function runHeaders(runs: SimulationReportInput[]): string {
  return runs
    .map((run) => `<div class="run-head" data-run="${escapeXml(run.name)}"><h2>${escapeXml(run.name)}</h2>${run.subtitle ? `<p>${escapeXml(run.subtitle)}</p>` : ''}</div>`)
    .join('');
}

/** Empty when no run carries a placement. */
function placementSection(runs: SimulationReportInput[]): string {
  if (!runs.some((r) => r.placement)) return '';
  return (
    '<section data-plot-row="placement"><h3>Placement by region and zone</h3><div class="runs">' +
    runs.map((run) => `<figure data-run="${escapeXml(run.name)}">${run.placement ? placementTable(run.placement) : ''}</figure>`).join('') +
    '</div></section>\n'
  );
}

function plotSection(runs: SimulationReportInput[], row: PlotRow): string {
  return (
    `<section data-plot-row="${row.id}"><h3>${escapeXml(row.title)}</h3><div class="runs">` +
    runs.map((run) => `<figure data-run="${escapeXml(run.name)}">${row.render(run)}</figure>`).join('') +
    '</div></section>'
  );
}

function maxValue(points: readonly TimePoint[]): number {
  return points.reduce((m, p) => Math.max(m, p.value), 0);
}

const CSS = [
  'body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#222;background:#fff}',
  'h1{font-size:22px;margin:0 0 12px}h2{font-size:17px;margin:0}h3{font-size:15px;margin:18px 0 6px;color:#444}',
  // Every run in one row (the column count is set per report): plots shrink to fit rather than wrap.
  '.runs{display:grid;gap:16px}figure{margin:0;min-width:0}figure svg.plot{width:100%;height:auto}',
  '.run-head p{margin:2px 0 6px;color:#666}',
  'table.summary{border-collapse:collapse;font-size:13px;margin:0 0 18px}table.summary th,table.summary td{padding:2px 14px 2px 0;text-align:right}',
  'table.summary th[scope=row]{text-align:left;font-weight:normal;color:#555}table.summary thead th{font-weight:600}',
  'svg.plot{border:1px solid #e4e4e4;border-radius:4px;background:#fff}',
  'svg.plot text{font-family:inherit;font-size:10px;fill:#333}svg.plot .plot-title{font-size:12px;font-weight:600}',
  'svg.plot .axis-label{fill:#666}svg.plot .ref-label{fill:#888;font-size:9px}svg.plot .empty{fill:#aaa;font-size:12px}',
  PLACEMENT_CSS,
].join('\n');
