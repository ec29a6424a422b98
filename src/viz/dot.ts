import type { GraphEdge, GraphState, MachineGraph } from './graph.js';

/**
 * Graphviz DOT for a machine graph. Compound states become clusters; an edge from or to a
 * compound state is drawn to the cluster's border (`compound=true` + ltail/lhead, anchored on
 * the cluster's initial-state dot) so it reads "from any substate" / "enters at initial".
 * Targetless transitions (actions only, no state change) are listed inside their state, as
 * UML internal transitions, instead of as self-loops that would bury the real edges.
 * Transitions on the machine root apply in every state; they leave from an "any state" note.
 */
export function renderDot(graph: MachineGraph): string {
  const byId = new Map(graph.states.map((s) => [s.id, s]));
  const internal = internalTransitions(graph);
  const lines: string[] = [];
  lines.push(`digraph ${quote(graph.id)} {`);
  lines.push(
    `  graph [fontname="Helvetica", fontsize=14, rankdir=TB, compound=true, nodesep=0.35, ranksep=0.45, labelloc=t, label=${quote(`${graph.id} machine`)}];`,
  );
  lines.push('  node [fontname="Helvetica", fontsize=11, shape=box, style="rounded,filled", fillcolor="#f7f7f7", color="#555555"];');
  lines.push('  edge [fontname="Helvetica", fontsize=9, color="#444444"];');
  lines.push(`  ${quote(initialDot(graph.id))} [shape=point, width=0.15, label=""];`);

  const rootInternal = internal.get(graph.id) ?? [];
  const hasRootEdges = graph.edges.some((e) => e.source === graph.id && e.target !== null);
  if (hasRootEdges || rootInternal.length > 0) {
    lines.push(`  ${quote(anyStateNode(graph.id))} [shape=note, style=filled, fillcolor="#fffbe6", label=${htmlLabel('any state', rootInternal)}];`);
  }

  const emit = (state: GraphState, indent: string): void => {
    if (state.kind === 'compound' || state.kind === 'parallel') {
      lines.push(`${indent}subgraph ${quote(clusterId(state.id))} {`);
      lines.push(`${indent}  label=${htmlLabel(state.key, stateDetails(state, internal.get(state.id) ?? []))};`);
      lines.push(`${indent}  style="rounded"; color="#888888";`);
      lines.push(`${indent}  ${quote(initialDot(state.id))} [shape=point, width=0.12, label=""];`);
      for (const childId of state.children) {
        const child = byId.get(childId);
        if (child) emit(child, `${indent}  `);
      }
      lines.push(`${indent}}`);
      return;
    }
    const attrs = [`label=${htmlLabel(state.key, stateDetails(state, internal.get(state.id) ?? []))}`];
    if (state.kind === 'final') attrs.push('peripheries=2', 'fillcolor="#e8f5e9"');
    lines.push(`${indent}${quote(state.id)} [${attrs.join(', ')}];`);
  };
  for (const state of graph.states) if (state.parent === graph.id) emit(state, '  ');

  // Initial transitions: the machine's, then each compound state's.
  lines.push(`  ${quote(initialDot(graph.id))} -> ${headOf(graph.initial, byId).join(' ')};`);
  for (const state of graph.states) {
    if (state.initial) lines.push(`  ${quote(initialDot(state.id))} -> ${headOf(state.initial, byId).join(' ')};`);
  }

  for (const edge of graph.edges) {
    if (edge.target === null) continue;
    lines.push(`  ${renderEdge(edge, graph, byId)}`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

/** Targetless transitions grouped by source, in document order. */
export function internalTransitions(graph: MachineGraph): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const edge of graph.edges) {
    if (edge.target !== null) continue;
    const list = out.get(edge.source) ?? [];
    list.push(edge.label);
    out.set(edge.source, list);
  }
  return out;
}

/** Entry/exit actions, invoked actors and internal transitions, one line each. */
export function stateDetails(state: GraphState, internal: readonly string[]): string[] {
  return [
    ...state.entry.map((a) => `entry / ${a}`),
    ...state.invoke.map((src) => `invoke ${src}`),
    ...state.exit.map((a) => `exit / ${a}`),
    ...internal,
  ];
}

function renderEdge(edge: GraphEdge, graph: MachineGraph, byId: Map<string, GraphState>): string {
  const target = edge.target ?? edge.source;
  const attrs: string[] = [`label=${quote(wrapLabel(edge.label))}`];
  const sourceState = byId.get(edge.source);
  const targetState = byId.get(target);
  let tail: string;
  if (edge.source === graph.id) {
    tail = quote(anyStateNode(graph.id));
  } else if (sourceState && isCluster(sourceState)) {
    tail = quote(initialDot(sourceState.id));
    attrs.push(`ltail=${quote(clusterId(sourceState.id))}`);
  } else {
    tail = quote(edge.source);
  }
  let head: string;
  if (targetState && isCluster(targetState) && !isAncestor(targetState.id, edge.source, byId)) {
    head = quote(initialDot(targetState.id));
    attrs.push(`lhead=${quote(clusterId(targetState.id))}`);
  } else {
    head = quote(target);
  }
  if (edge.kind === 'after') attrs.push('style=dashed', 'color="#1f5fa8"', 'fontcolor="#1f5fa8"');
  if (edge.kind === 'always') attrs.push('style=dotted');
  if (edge.kind === 'error') attrs.push('color="#b03a2e"', 'fontcolor="#b03a2e"');
  if (edge.kind === 'done') attrs.push('color="#2e7d32"', 'fontcolor="#2e7d32"');
  return `${tail} -> ${head} [${attrs.join(', ')}];`;
}

/** Head of an initial transition: entering a compound state ends at its cluster's border. */
function headOf(id: string, byId: Map<string, GraphState>): [string] | [string, string] {
  const state = byId.get(id);
  if (state && isCluster(state)) return [quote(initialDot(state.id)), `[lhead=${quote(clusterId(state.id))}]`];
  return [quote(id)];
}

function isCluster(state: GraphState): boolean {
  return state.kind === 'compound' || state.kind === 'parallel';
}

function isAncestor(ancestorId: string, id: string, byId: Map<string, GraphState>): boolean {
  let current = byId.get(id);
  while (current) {
    if (current.parent === ancestorId) return true;
    current = byId.get(current.parent);
  }
  return false;
}

/** Put actions on their own line: long guard + action labels otherwise widen the layout a lot. */
function wrapLabel(label: string): string {
  const at = label.indexOf(' / ');
  return at < 0 ? label : `${label.slice(0, at)}\n${label.slice(at + 1)}`;
}

function htmlLabel(title: string, details: readonly string[]): string {
  const body = details.length === 0 ? '' : `<br/><font point-size="9">${details.map(escapeHtml).join('<br/>')}</font>`;
  return `<<b>${escapeHtml(title)}</b>${body}>`;
}

function initialDot(id: string): string {
  return `${id}.__initial`;
}

function anyStateNode(machineId: string): string {
  return `${machineId}.__any`;
}

function clusterId(id: string): string {
  return `cluster_${id}`;
}

function quote(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
