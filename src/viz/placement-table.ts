import { escapeXml } from './plot.js';

/** One region and zone of a run's final placement ("" zone: regional nodes). */
export interface ZonePlacement {
  region: string;
  zone: string;
  nodes: number;
  registered: number;
  /** Nodes by VM size. */
  sizes: Record<string, number>;
  /** Pods bound to nodes there. */
  pods: number;
}

export interface PlacementSummary {
  zones: ZonePlacement[];
  /** Pods bound to no node at the end. */
  pending: number;
}

/** A run's placement by region and zone as an HTML table: nodes (by size), how many registered, pods. */
export function placementTable(p: PlacementSummary): string {
  const sizes = (z: ZonePlacement): string => Object.entries(z.sizes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([s, n]) => `${n}× ${s}`).join(', ');
  const rows = p.zones.map((z) =>
    `<tr><th scope="row">${escapeXml(z.region || '(no region label)')}</th><td>${escapeXml(z.zone || '(regional)')}</td>` +
    `<td>${z.nodes}</td><td>${z.registered}</td><td class="sizes">${escapeXml(sizes(z))}</td><td>${z.pods}</td></tr>`);
  return '<table class="placement"><thead><tr><th>region</th><th>zone</th><th>nodes</th><th>registered</th><th>sizes</th><th>pods</th></tr></thead>' +
    `<tbody>${rows.join('')}<tr class="pending"><th scope="row">pending</th><td></td><td></td><td></td><td></td><td>${p.pending}</td></tr></tbody></table>`;
}

export const PLACEMENT_CSS = 'table.placement{border-collapse:collapse;font-size:12px}table.placement th,table.placement td{padding:2px 10px 2px 0;text-align:right}' +
  'table.placement th[scope=row],table.placement td.sizes{text-align:left}table.placement thead th{font-weight:600}table.placement tr.pending th{font-weight:normal;color:#555}';
