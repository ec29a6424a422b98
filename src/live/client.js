// The live view's page script, inlined into the page by page.ts (no bundler, no CDN).
// Plain browser JavaScript: everything from the server is written with textContent, never
// parsed as HTML, because actor names come from the cluster.
'use strict';

(() => {
  const boot = JSON.parse(document.getElementById('bootstrap').textContent);
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs = {}, text) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const SVG_NS = 'http://www.w3.org/2000/svg';

  let snapshot = null;
  let selected = null;
  let selectedRows = [];
  const feed = [];
  const FEED_SIZE = 60;

  // ---------------------------------------------------------------- time

  const pad = (n) => String(n).padStart(2, '0');
  function formatTime(t) {
    if (snapshot && snapshot.startedAt !== undefined) {
      const s = Math.max(0, Math.floor((t - snapshot.startedAt) / 1000));
      return `T+${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`;
    }
    return new Date(t).toISOString().slice(11, 19);
  }
  const seconds = (ms) => `${Math.ceil(ms / 1000)} s`;

  // ---------------------------------------------------------------- diagrams

  /** state name → SVG node group, per machine, found by the node's <title> (the XState id). */
  const nodes = {};
  for (const m of boot.machines) {
    nodes[m.name] = new Map();
    const svg = document.querySelector(`svg.diagram[data-machine="${m.name}"]`);
    if (!svg) continue;
    for (const g of svg.querySelectorAll('g.node')) {
      const title = g.querySelector('title');
      if (!title) continue;
      const id = title.textContent.trim();
      if (id.startsWith(`${m.name}.`)) nodes[m.name].set(id.slice(m.name.length + 1), g);
    }
  }

  function badge(g, count) {
    let b = g.querySelector('g.badge');
    if (count <= 0) {
      if (b) b.remove();
      return;
    }
    if (!b) {
      const box = g.getBBox();
      b = document.createElementNS(SVG_NS, 'g');
      b.setAttribute('class', 'badge');
      const c = document.createElementNS(SVG_NS, 'circle');
      c.setAttribute('cx', String(box.x + box.width));
      c.setAttribute('cy', String(box.y));
      c.setAttribute('r', '11');
      const t = document.createElementNS(SVG_NS, 'text');
      t.setAttribute('x', String(box.x + box.width));
      t.setAttribute('y', String(box.y + 4));
      t.setAttribute('text-anchor', 'middle');
      b.append(c, t);
      g.append(b);
    }
    b.querySelector('text').textContent = String(count);
  }

  function renderDiagrams() {
    const sel = selected ? snapshot.actors.find((a) => a.id === selected) : undefined;
    for (const m of boot.machines) {
      const counts = snapshot.counts[m.name] || {};
      for (const [state, g] of nodes[m.name]) {
        const n = counts[state] || 0;
        g.classList.toggle('active', n > 0);
        g.classList.toggle('selected', !!sel && sel.kind === m.name && sel.state === state);
        badge(g, n);
      }
    }
  }

  // ---------------------------------------------------------------- side panels

  function renderCounts() {
    const box = $('counts');
    box.replaceChildren();
    box.classList.toggle('all', $('show-empty').checked);
    for (const m of boot.machines) {
      const counts = snapshot.counts[m.name] || {};
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      const max = Math.max(1, ...Object.values(counts));
      box.append(el('h3', {}, `${m.name === 'nic' ? 'NICs' : 'NodeClaims'} (${total})`));
      const table = el('table', { class: 'counts', 'data-machine': m.name });
      for (const state of m.states) {
        const n = counts[state] || 0;
        const tr = el('tr', { 'data-state': `${m.name}:${state}`, 'data-count': n, class: n > 0 ? 'nonzero' : 'zero' });
        const bar = el('td', { class: 'bar' });
        const fill = el('span', { class: `fill ${m.final.includes(state) ? 'final' : ''}` });
        fill.style.width = `${(100 * n) / max}%`;
        bar.append(fill);
        tr.append(el('td', { class: 'state' }, state), bar, el('td', { class: 'n' }, String(n)));
        table.append(tr);
      }
      box.append(table);
    }
  }

  function renderReservations() {
    const box = $('reservations');
    box.replaceChildren();
    const list = snapshot.reservations;
    $('reservations-count').textContent = `(${list.length})`;
    if (list.length === 0) {
      box.append(el('p', { class: 'empty' }, 'No NIC is reserved by ARM right now.'));
      return;
    }
    for (const r of list) {
      const row = el('div', { class: 'countdown', 'data-nic': r.nic, 'data-remaining-ms': r.remainingMs });
      row.append(el('span', { class: 'name' }, r.nic), el('span', { class: 'left' }, seconds(r.remainingMs)));
      const bar = el('div', { class: 'track' });
      const fill = el('span', { class: 'fill' });
      fill.style.width = `${Math.min(100, (100 * r.remainingMs) / boot.reservationMs)}%`;
      bar.append(fill);
      row.append(bar);
      row.addEventListener('click', () => select(`nic/${r.nic}`));
      box.append(row);
    }
  }

  function renderActors() {
    const box = $('actors');
    box.replaceChildren();
    $('actors-count').textContent = `(${snapshot.actors.length})`;
    const reserved = new Map(snapshot.reservations.map((r) => [r.nic, r.remainingMs]));
    const row = (id, kind, name, state, cls) => {
      const div = el('div', { class: `actor ${cls} ${id === selected ? 'selected' : ''}`, 'data-actor': id, 'data-state': state });
      const st = el('span', { class: 'state' }, state);
      if (kind === 'nic' && reserved.has(name)) st.append(el('span', { class: 'chip' }, seconds(reserved.get(name))));
      div.append(el('span', { class: `kind ${kind}`, title: kind === 'nic' ? 'NIC' : 'NodeClaim' }, kind === 'nic' ? 'NIC' : 'NC'), el('span', { class: 'name' }, name), st);
      div.addEventListener('click', () => select(id));
      box.append(div);
    };
    for (const a of snapshot.actors) row(a.id, a.kind, a.name, a.state, 'live');
    for (const id of snapshot.recent) {
      const [kind, ...rest] = id.split('/');
      row(id, kind, rest.join('/'), 'finished', 'gone');
    }
    if (snapshot.actors.length + snapshot.recent.length === 0) box.append(el('p', { class: 'empty' }, 'No actors yet.'));
  }

  function renderClock() {
    $('time').textContent = formatTime(snapshot.now);
    $('time').setAttribute('data-now', String(snapshot.now));
    const c = snapshot.clock;
    const status = !c ? 'live' : c.finished ? 'finished' : c.paused ? 'paused' : 'running';
    $('status').textContent = status;
    $('status').className = `badge ${status}`;
    if (!c) return;
    $('toggle').textContent = c.paused ? '▶ Resume' : '⏸ Pause';
    for (const b of document.querySelectorAll('#controls button')) b.disabled = c.finished;
    $('speed').disabled = c.finished;
    const value = String(c.speed);
    if ($('speed').value !== value && document.activeElement !== $('speed')) {
      if (![...$('speed').options].some((o) => o.value === value)) $('speed').append(el('option', { value }, `${value}×`));
      $('speed').value = value;
    }
  }

  // ---------------------------------------------------------------- timelines

  function describe(row) {
    switch (row.kind) {
      case 'transition':
        return [row.from ? `${row.from} → ${row.to}` : `→ ${row.to}`, row.cause || ''];
      case 'effect':
        return [`effect ${row.event}`, row.detail || ''];
      case 'arm':
        return [`ARM ${row.event}`, row.detail || ''];
      default:
        return [row.event || row.kind, row.detail || ''];
    }
  }

  /** One timeline row: time and what happened on the first line, why on the second. */
  function rowElement(row, who) {
    const [what, why] = describe(row);
    const div = el('div', { class: `row ${row.kind}`, 'data-seq': row.seq, 'data-actor': row.actor });
    const body = el('div', { class: 'body' });
    if (who) body.append(el('div', { class: 'who' }, row.actor));
    body.append(el('div', { class: 'what' }, what));
    if (why) body.append(el('div', { class: 'why' }, why));
    div.append(el('span', { class: 't' }, formatTime(row.t)), body);
    return div;
  }

  function renderTimeline() {
    $('selected').textContent = selected || 'pick an actor';
    const box = $('timeline');
    box.replaceChildren(...[...selectedRows].reverse().map((row) => rowElement(row, false)));
    if (selected && selectedRows.length === 0) box.append(el('p', { class: 'empty' }, 'Nothing recorded for this actor yet.'));
  }

  function renderFeed() {
    const box = $('feed');
    box.replaceChildren();
    for (const row of feed) {
      const div = rowElement(row, true);
      div.addEventListener('click', () => select(row.actor));
      box.append(div);
    }
    if (feed.length === 0) box.append(el('p', { class: 'empty' }, 'No transitions yet.'));
  }

  async function select(id) {
    selected = id;
    selectedRows = [];
    render();
    const res = await fetch(`/api/timeline?actor=${encodeURIComponent(id)}`);
    if (!res.ok || selected !== id) return;
    const rows = await res.json();
    // Rows pushed while the fetch was in flight may already be there: merge by seq.
    const seen = new Set(selectedRows.map((r) => r.seq));
    selectedRows = [...rows.filter((r) => !seen.has(r.seq)), ...selectedRows].sort((a, b) => a.seq - b.seq);
    renderTimeline();
  }

  // ---------------------------------------------------------------- updates

  function render() {
    if (!snapshot) return;
    renderClock();
    renderCounts();
    renderReservations();
    renderActors();
    renderDiagrams();
    renderTimeline();
    renderFeed();
  }

  function onUpdate(msg) {
    snapshot = msg.snapshot;
    for (const row of msg.rows) {
      // A timeline fetched before this push may already hold the row: seqs only grow.
      const last = selectedRows[selectedRows.length - 1];
      if (row.actor === selected && !(last && last.seq >= row.seq)) selectedRows.push(row);
      if (row.kind === 'transition' || row.kind === 'controller') feed.unshift(row);
    }
    if (feed.length > FEED_SIZE) feed.length = FEED_SIZE;
    if (selectedRows.length > 400) selectedRows.splice(0, selectedRows.length - 400);
    if (!selected && snapshot.actors.length > 0) {
      void select(snapshot.actors[0].id);
      return;
    }
    render();
  }

  function connect() {
    const source = new EventSource('/events');
    source.addEventListener('update', (e) => {
      $('conn').textContent = 'live';
      $('conn').className = 'conn ok';
      onUpdate(JSON.parse(e.data));
    });
    source.addEventListener('error', () => {
      $('conn').textContent = 'reconnecting…';
      $('conn').className = 'conn lost';
    });
  }

  // ---------------------------------------------------------------- controls

  async function command(body) {
    const res = await fetch('/api/clock', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) $('conn').textContent = `control failed: ${res.status}`;
  }

  $('show-empty').addEventListener('change', render);

  // Fitted to the panel the labels are tiny; a click shows the diagram at its natural size.
  for (const svg of document.querySelectorAll('svg.diagram')) {
    svg.addEventListener('click', () => {
      const section = svg.closest('section');
      const zoomed = section.classList.toggle('zoomed');
      svg.style.width = zoomed ? `${svg.getAttribute('data-width')}px` : '';
    });
  }

  if (boot.controls) {
    $('toggle').addEventListener('click', () => command({ action: snapshot && snapshot.clock && snapshot.clock.paused ? 'resume' : 'pause' }));
    for (const b of document.querySelectorAll('button[data-step-ms]')) {
      b.addEventListener('click', () => command({ action: 'step', ms: Number(b.getAttribute('data-step-ms')) }));
    }
    $('speed').addEventListener('change', () => {
      const v = $('speed').value;
      void command({ action: 'speed', speed: v === 'max' ? 'max' : Number(v) });
      $('speed').blur();
    });
  } else {
    $('controls').remove();
  }

  connect();
})();
