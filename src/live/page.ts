import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { MachineView } from './diagrams.js';
import { PAGE_CSS } from './style.js';

/** What the page script needs before the first push; embedded as JSON. */
export interface PageBootstrap {
  title: string;
  /** Whether pause/step/speed exist (a simulation) or the page is read-only. */
  controls: boolean;
  reservationMs: number;
  machines: Array<Pick<MachineView, 'name' | 'states' | 'final'>>;
}

export interface Page {
  html: string;
  /** Allows exactly the inline script and style of this page, and nothing from elsewhere. */
  csp: string;
}

/** Read once: the script is a plain .js file so it stays readable and checkable (`node --check`). */
const CLIENT_JS = readFileSync(new URL('./client.js', import.meta.url), 'utf8');

const SPEEDS: ReadonlyArray<[string, string]> = [
  ['1', '1× (real time)'],
  ['10', '10×'],
  ['60', '60× (1 min/s)'],
  ['600', '600×'],
  ['3600', '3600× (1 h/s)'],
  ['max', 'as fast as possible'],
];

export function renderPage(bootstrap: PageBootstrap, views: readonly MachineView[]): Page {
  const script = CLIENT_JS;
  const hash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
  const controls = bootstrap.controls
    ? `<div id="controls">
  <button id="toggle" type="button">▶ Resume</button>
  <button type="button" data-step-ms="10000" title="run 10 s of virtual time, then pause">Step +10 s</button>
  <button type="button" data-step-ms="60000" title="run 1 min of virtual time, then pause">Step +1 min</button>
  <label>speed <select id="speed">${SPEEDS.map(([v, label]) => `<option value="${v}">${label}</option>`).join('')}</select></label>
</div>`
    : '<div id="controls"></div>';
  const diagrams = views
    .map(
      (v) => `<section class="panel machine" data-machine="${v.name}">
  <h2>${v.name === 'nic' ? 'NIC' : 'NodeClaim'} machine <span class="hint">click to zoom</span> <span class="legend"><i class="sw active"></i>has actors <i class="sw selected"></i>selected actor</span></h2>
  ${v.svg}
</section>`,
    )
    .join('\n');
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>azflex live view</title>
<style>${PAGE_CSS}</style>
</head>
<body>
<header>
  <h1>azflex <span>live view</span></h1>
  <div class="title">${escapeHtml(bootstrap.title)}</div>
  <div class="clock"><span id="time">–</span> <span id="status" class="badge">connecting</span></div>
  ${controls}
  <span id="conn" class="conn">connecting…</span>
</header>
<main>
  <aside class="left">
    <section class="panel"><h2>Actors per state <label class="opt"><input type="checkbox" id="show-empty"> empty states</label></h2><div id="counts"></div></section>
    <section class="panel"><h2>NIC reservations <span id="reservations-count"></span></h2><div id="reservations"></div></section>
    <section class="panel"><h2>Actors <span id="actors-count"></span></h2><div id="actors"></div></section>
  </aside>
  <div class="center">
${diagrams}
  </div>
  <aside class="right">
    <section class="panel"><h2>Timeline: <span id="selected"></span></h2><div id="timeline" class="rows"></div></section>
    <section class="panel"><h2>Recent transitions</h2><div id="feed" class="rows"></div></section>
  </aside>
</main>
<script id="bootstrap" type="application/json">${jsonForScript(bootstrap)}</script>
<script>${script}</script>
</body>
</html>
`;
  const csp = [
    "default-src 'none'",
    `script-src ${hash(script)}`,
    `style-src ${hash(PAGE_CSS)}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { html, csp };
}

/** JSON inside <script> must not contain `</script>` or `<!--`. */
function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
