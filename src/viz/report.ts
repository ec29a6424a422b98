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
  const x: Domain = { min: 0, max: Math.max(1, ...runs.map((r) => r.durationMs)) };

  const lineRow = (
    id: PlotId,
    plotTitle: string,
    yLabel: string,
    pick: (run: SimulationReportInput) => NamedSeries[],
    extra: { step?: boolean; references?: (run: SimulationReportInput) => { label: string; value: number }[] } = {},
  ): PlotRow => {
    const colors = colorMap(runs.flatMap((r) => pick(r).map((s) => s.name)));
    const yMax = niceMax(
      Math.max(
        0,
        ...runs.flatMap((r) => pick(r).map((s) => maxValue(s.points))),
        ...runs.flatMap((r) => (extra.references?.(r) ?? []).map((ref) => ref.value)),
      ),
    );
    return {
      id,
      title: plotTitle,
      render: (run) =>
        lineChart({
          id,
          title: plotTitle,
          yLabel,
          series: pick(run),
          x,
          y: { min: 0, max: yMax },
          colors,
          step: extra.step ?? false,
          references: extra.references?.(run) ?? [],
        }),
    };
  };

  const failureColors = colorMap(runs.flatMap((r) => r.createFailuresByCode.map((f) => f.code)));
  const failureMax = niceMax(Math.max(0, ...runs.flatMap((r) => r.createFailuresByCode.map((f) => f.count))));
  // One set of bins for every run, so the histograms line up side by side.
  const reapBins = histogramBins(runs.flatMap((r) => r.timeToReapMs.map((ms) => ms / 1000)));
  const reapCounts = runs.map((r) => histogramBins(r.timeToReapMs.map((ms) => ms / 1000), 20, reapBins.edges).counts);
  const reapMax = niceMax(Math.max(0, ...reapCounts.flat()));

  const rows: PlotRow[] = [
    lineRow('nics-by-state', 'NICs by state', 'NICs', (r) => r.nicsByState, { step: true }),
    lineRow('subnet-ips', 'Subnet addresses used', 'addresses', (r) => r.subnetIpsUsed, {
      step: true,
      references: (r) => (r.subnetCapacity ?? []).map((c) => ({ label: `${c.name} capacity ${c.capacity}`, value: c.capacity })),
    }),
    lineRow('vms', 'VMs', 'VMs', (r) => r.vms, { step: true }),
    lineRow('arm-calls', 'ARM calls per minute by outcome', 'calls / min', (r) => r.armCallsPerMinute),
    {
      id: 'create-failures',
      title: 'Create failures by code',
      render: (run) =>
        barChart({
          id: 'create-failures',
          title: 'Create failures by code',
          yLabel: 'failures',
          bars: [...run.createFailuresByCode].sort((a, b) => a.code.localeCompare(b.code)).map((f) => ({ label: f.code, value: f.count })),
          yMax: failureMax,
          colors: failureColors,
        }),
    },
    {
      id: 'time-to-reap',
      title: 'Time to reap a NIC',
      render: (run) =>
        histogram({
          id: 'time-to-reap',
          title: `Time to reap a NIC (${run.timeToReapMs.length} NICs)`,
          xLabel: 'seconds from release to delete',
          edges: reapBins.edges,
          counts: reapCounts[runs.indexOf(run)] ?? [],
          yMax: reapMax,
          formatX: (s) => `${s} s`,
          // The floor every strategy has to wait: ARM's reservation on a NIC a VM PUT referenced.
          references: [{ label: `ARM reservation ${NIC_RESERVATION_MS / 1000} s`, value: NIC_RESERVATION_MS / 1000 }],
        }),
    },
  ];

  // One summary table first: a column per run, a row per headline figure, so runs compare in one glance.
  const labels = [...new Set(runs.flatMap((r) => (r.summary ?? []).map((s) => s.label)))];
  const cell = (run: SimulationReportInput, label: string) => escapeXml(String(run.summary?.find((s) => s.label === label)?.value ?? '-'));
  const summaryTable =
    `<table class="summary"><thead><tr><th></th>${runs.map((r) => `<th scope="col" data-run="${escapeXml(r.name)}">${escapeXml(r.name)}</th>`).join('')}</tr></thead><tbody>` +
    labels.map((label) => `<tr><th scope="row">${escapeXml(label)}</th>${runs.map((r) => `<td>${cell(r, label)}</td>`).join('')}</tr>`).join('') +
    '</tbody></table>';
  const header = runs
    .map((run) => `<div class="run-head" data-run="${escapeXml(run.name)}"><h2>${escapeXml(run.name)}</h2>${run.subtitle ? `<p>${escapeXml(run.subtitle)}</p>` : ''}</div>`)
    .join('');

  const placement = runs.some((r) => r.placement)
    ? '<section data-plot-row="placement"><h3>Placement by region and zone</h3><div class="runs">' +
      runs.map((run) => `<figure data-run="${escapeXml(run.name)}">${run.placement ? placementTable(run.placement) : ''}</figure>`).join('') +
      '</div></section>\n'
    : '';
  const sections = placement + rows
    .map(
      (row) =>
        `<section data-plot-row="${row.id}"><h3>${escapeXml(row.title)}</h3><div class="runs">` +
        runs.map((run) => `<figure data-run="${escapeXml(run.name)}">${row.render(run)}</figure>`).join('') +
        '</div></section>',
    )
    .join('\n');

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
${summaryTable}
<div class="runs">${header}</div>
${sections}
</body>
</html>
`;
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
