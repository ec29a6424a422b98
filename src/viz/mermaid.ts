import { internalTransitions, stateDetails } from './dot.js';
import type { GraphState, MachineGraph } from './graph.js';

/**
 * Mermaid `stateDiagram-v2`, e.g. for GitHub Markdown.
 *
 * Deliberately flat: Mermaid cannot draw a transition between states nested in different
 * composite states, and these machines jump out of `launching`/`terminating` from inner
 * states. So every state is a top-level Mermaid state named by its path
 * (`launching.creating-vm`); a compound state keeps a node of its own for the transitions
 * defined on it ("from any substate"), and a transition *into* it is drawn to its initial
 * leaf, which is where XState actually lands.
 */
export function renderMermaid(graph: MachineGraph): string {
  const byId = new Map(graph.states.map((s) => [s.id, s]));
  const internal = internalTransitions(graph);
  const ids = new Map<string, string>();
  for (const state of graph.states) ids.set(state.id, mermaidId(state));
  const anyId = '__any_state';
  const idOf = (stateId: string): string => ids.get(stateId) ?? mermaidId({ path: [stateId] });

  const lines: string[] = ['stateDiagram-v2', `  %% ${graph.id} machine, generated from its XState definition by \`azflex viz\``];
  for (const state of graph.states) {
    const name = state.path.join('.');
    const title = state.kind === 'compound' || state.kind === 'parallel' ? `${name} (any substate)` : name;
    lines.push(`  state "${escapeText(title)}" as ${idOf(state.id)}`);
    for (const detail of stateDetails(state, internal.get(state.id) ?? [])) lines.push(`  ${idOf(state.id)} : ${escapeText(detail)}`);
  }
  const rootInternal = internal.get(graph.id) ?? [];
  const hasRootEdges = graph.edges.some((e) => e.source === graph.id && e.target !== null);
  if (hasRootEdges || rootInternal.length > 0) {
    lines.push(`  state "any state" as ${anyId}`);
    for (const detail of rootInternal) lines.push(`  ${anyId} : ${escapeText(detail)}`);
  }

  lines.push(`  [*] --> ${idOf(initialLeaf(graph.initial, byId))}`);
  for (const edge of graph.edges) {
    if (edge.target === null) continue;
    const from = edge.source === graph.id ? anyId : idOf(edge.source);
    lines.push(`  ${from} --> ${idOf(initialLeaf(edge.target, byId))} : ${escapeText(edge.label)}`);
  }
  for (const state of graph.states) if (state.kind === 'final' && state.parent === graph.id) lines.push(`  ${idOf(state.id)} --> [*]`);
  return `${lines.join('\n')}\n`;
}

/** Where XState lands when it enters `id`: follow initial children down to a leaf. */
function initialLeaf(id: string, byId: Map<string, GraphState>): string {
  let current = byId.get(id);
  while (current?.initial !== undefined) current = byId.get(current.initial);
  return current?.id ?? id;
}

/** Mermaid ids allow letters, digits and `_`; `.` → `__` and `-` → `_` keeps them unique here. */
function mermaidId(state: Pick<GraphState, 'path'>): string {
  return state.path.map((p) => p.replace(/[^A-Za-z0-9_]/g, '_')).join('__');
}

/** Mermaid ends a label at a newline and treats `;` and `#` specially; `:` is fine after the first. */
function escapeText(s: string): string {
  return s.replace(/[\r\n]+/g, ' ').replace(/;/g, ',').replace(/#/g, '#35;').replace(/"/g, '#quot;');
}
