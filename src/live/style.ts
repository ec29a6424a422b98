/** The live view's stylesheet, inlined into the page (no external requests). */
export const PAGE_CSS = `
*{box-sizing:border-box}
body{margin:0;font:13px/1.35 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1f2328;background:#f3f4f6}
header{display:flex;align-items:center;gap:18px;padding:10px 16px;background:#1f2937;color:#f9fafb;position:sticky;top:0;z-index:2}
header h1{font-size:17px;margin:0;white-space:nowrap}header h1 span{font-weight:400;color:#9ca3af}
header .title{color:#d1d5db;flex:0 1 auto;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.clock{font:600 16px ui-monospace,SFMono-Regular,Menlo,monospace;white-space:nowrap}
.badge{font:600 11px system-ui,sans-serif;text-transform:uppercase;letter-spacing:.04em;padding:2px 7px;border-radius:9px;background:#4b5563;vertical-align:2px}
.badge.running{background:#15803d}.badge.paused{background:#b45309}.badge.finished{background:#1d4ed8}.badge.live{background:#15803d}
#controls{display:flex;gap:6px;align-items:center;margin-left:auto}
#controls button,#controls select{font:inherit;border:1px solid #6b7280;background:#374151;color:#f9fafb;border-radius:5px;padding:4px 10px;cursor:pointer}
#controls button:hover{background:#4b5563}#controls button:disabled,#controls select:disabled{opacity:.45;cursor:default}
#controls label{color:#d1d5db}
.conn{font-size:11px;color:#9ca3af;white-space:nowrap}.conn.ok{color:#86efac}.conn.lost{color:#fca5a5}
main{display:grid;grid-template-columns:300px minmax(0,1fr) 400px;gap:12px;padding:12px;align-items:start}
.panel{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:10px 12px;margin-bottom:12px}
.panel h2{font-size:13px;margin:0 0 8px;color:#374151;text-transform:uppercase;letter-spacing:.03em}
.panel h3{font-size:12px;margin:10px 0 4px;color:#4b5563}
.panel h2 span{text-transform:none;letter-spacing:0;font-weight:400;color:#6b7280}
table{border-collapse:collapse;width:100%}
td{padding:2px 4px;vertical-align:top}
.empty{color:#9ca3af;font-style:italic;margin:0}
table.counts td.state{font-family:ui-monospace,Menlo,monospace;font-size:11.5px;white-space:nowrap;width:1%}
table.counts td.bar{width:99%}table.counts td.n{text-align:right;font-variant-numeric:tabular-nums;width:1%}
table.counts tr.zero{color:#9ca3af}
table.counts .fill{display:block;height:10px;margin-top:3px;border-radius:3px;background:#f59e0b;min-width:0}
table.counts .fill.final{background:#10b981}
.countdown{display:grid;grid-template-columns:1fr auto;gap:2px 8px;padding:4px 0;border-bottom:1px solid #f3f4f6;cursor:pointer}
.countdown .name{font-family:ui-monospace,Menlo,monospace;font-size:11.5px;overflow:hidden;text-overflow:ellipsis}
.countdown .left{font:600 12px ui-monospace,Menlo,monospace;color:#b45309}
.countdown .track{grid-column:1/3;height:6px;background:#fde68a;border-radius:3px;overflow:hidden}
.countdown .track .fill{display:block;height:100%;background:#d97706}
#actors,#reservations{max-height:46vh;overflow-y:auto}
#actors .actor{display:grid;grid-template-columns:34px 1fr;gap:0 6px;padding:3px 4px;border-bottom:1px solid #f3f4f6;cursor:pointer}
#actors .actor:hover{background:#f9fafb}#actors .actor.selected{background:#dbeafe}
#actors .actor.gone{color:#9ca3af}
#actors .name{font-family:ui-monospace,Menlo,monospace;font-size:11.5px;word-break:break-all}
#actors .state{grid-column:2;font-family:ui-monospace,Menlo,monospace;font-size:11.5px;color:#b45309}
#actors .gone .state{color:#9ca3af}
#actors .kind{grid-row:1/3;align-self:start;font:700 10px/16px system-ui,sans-serif;color:#fff;text-align:center;border-radius:3px}
#actors .kind.nodeclaim{background:#6366f1}#actors .kind.nic{background:#0891b2}
.chip{margin-left:6px;padding:0 5px;border-radius:7px;background:#fef3c7;color:#92400e;font-size:10.5px}
.machine svg.diagram{display:block;width:100%;height:auto;max-height:78vh}
.machine h2 .legend{float:right;font-size:11px;text-transform:none}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin:0 3px 0 10px;vertical-align:-1px}
.sw.active{background:#fde68a;border:1.5px solid #d97706}.sw.selected{background:#bfdbfe;border:1.5px solid #1d4ed8}
svg.diagram g.node.active > path,svg.diagram g.node.active > polygon,svg.diagram g.node.active > ellipse{fill:#fde68a;stroke:#d97706;stroke-width:2.5}
svg.diagram g.node.selected > path,svg.diagram g.node.selected > polygon,svg.diagram g.node.selected > ellipse{fill:#bfdbfe;stroke:#1d4ed8;stroke-width:3.5}
svg.diagram g.node.active{filter:drop-shadow(0 0 5px #f59e0b)}svg.diagram g.node.selected{filter:drop-shadow(0 0 6px #2563eb)}
svg.diagram g.badge circle{fill:#dc2626;stroke:#fff;stroke-width:1.5}
svg.diagram g.badge text{fill:#fff;font:700 12px system-ui,sans-serif}
.rows{max-height:60vh;overflow-y:auto}
#feed.rows{max-height:40vh}
.rows .row{display:grid;grid-template-columns:70px 1fr;gap:6px;padding:3px 0 4px;border-bottom:1px solid #f3f4f6;font-size:12px}
.rows .t{font-family:ui-monospace,Menlo,monospace;color:#6b7280;white-space:nowrap}
.rows .who{font-family:ui-monospace,Menlo,monospace;font-size:11px;color:#0f766e;word-break:break-all}
.rows .what{font-family:ui-monospace,Menlo,monospace;font-weight:600;word-break:break-word}
.rows .why{color:#4b5563;word-break:break-word;font-size:11.5px}
.rows .row.effect .what{color:#7c3aed;font-weight:400}.rows .row.arm .what{color:#6b7280;font-weight:400}
.rows .row.controller .what{color:#b91c1c}
#feed .row{cursor:pointer}#feed .row:hover{background:#f9fafb}
#counts table.counts tr.zero{display:none}#counts.all table.counts tr.zero{display:table-row}
.opt{float:right;font-size:11px;font-weight:400;text-transform:none;letter-spacing:0;color:#6b7280}
.hint{font-size:11px;font-weight:400;text-transform:none;letter-spacing:0;color:#9ca3af}
.machine svg.diagram{cursor:zoom-in}
.machine.zoomed{overflow-x:auto}.machine.zoomed svg.diagram{width:auto;max-width:none;max-height:none;cursor:zoom-out}
#selected{font-family:ui-monospace,Menlo,monospace}
`;
