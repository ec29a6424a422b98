import type { GraphEdge, MachineGraph } from '../viz/graph.js';

/**
 * Why an actor moved from one state to another. The event log records the transition and,
 * separately, the outcome of each effect (an invoked ARM call), but not the event itself;
 * the machine definition says which transitions lead from `from` to `to`, and a preceding
 * effect outcome at the same instant picks the done/error edge among them.
 */
export interface EffectOutcome {
  /** Effect (invoked actor) name, e.g. `deleteNic`. */
  effect: string;
  /** `ok`, or the error code. */
  detail: string;
}

/** Eventless (`always`) transitions are taken in the same macrostep: follow at most this many. */
const MAX_ALWAYS_HOPS = 4;

export function inferCause(graph: MachineGraph, from: string | undefined, to: string, effect?: EffectOutcome): string {
  if (from === undefined) return 'started: state rebuilt from the world';
  const edges = candidateEdges(graph, `${graph.id}.${from}`, `${graph.id}.${to}`);
  if (effect) {
    const kind = effect.detail === 'ok' ? 'done' : 'error';
    const matching = edges.filter((e) => e.kind === kind && e.invokeSrc === effect.effect);
    const outcome = effect.detail === 'ok' ? `${effect.effect} ok` : `${effect.effect} failed: ${effect.detail}`;
    const labels = unique(matching.map((e) => e.label));
    return labels.length === 1 ? `${outcome} (${labels[0]})` : outcome;
  }
  // Without an effect outcome, done/error edges are unlikely causes (their effect would have been logged).
  const plain = edges.filter((e) => e.kind !== 'done' && e.kind !== 'error');
  const labels = unique((plain.length > 0 ? plain : edges).map((e) => e.label));
  return labels.length > 0 ? labels.join(' | ') : 'unknown';
}

/**
 * Edges whose source contains `fromId` and that end in `toId`, possibly through `always`
 * hops; only those with the fewest hops, since a longer detour is the less likely story.
 */
export function candidateEdges(graph: MachineGraph, fromId: string, toId: string): GraphEdge[] {
  const states = new Map(graph.states.map((s) => [s.id, s]));
  const ancestorsOf = (id: string): Set<string> => {
    const out = new Set<string>([graph.id]);
    for (let s = states.get(id); s; s = states.get(s.parent)) out.add(s.id);
    return out;
  };
  /** A transition to a compound state enters its initial leaf. */
  const leafOf = (id: string): string => {
    let s = states.get(id);
    while (s?.initial !== undefined) s = states.get(s.initial);
    return s?.id ?? id;
  };
  /** Fewest `always` hops from entering `id` to standing in `toId`, or Infinity. */
  const hopsTo = (id: string, budget: number): number => {
    const leaf = leafOf(id);
    if (leaf === toId) return 0;
    if (budget === 0) return Infinity;
    const sources = ancestorsOf(leaf);
    let best = Infinity;
    for (const e of graph.edges) {
      if (e.kind === 'always' && e.target !== null && sources.has(e.source)) best = Math.min(best, 1 + hopsTo(e.target, budget - 1));
    }
    return best;
  };
  const sources = ancestorsOf(fromId);
  const scored = graph.edges
    .filter((e) => e.target !== null && sources.has(e.source))
    .map((e) => ({ e, hops: hopsTo(e.target ?? '', MAX_ALWAYS_HOPS) }))
    .filter((x) => x.hops !== Infinity);
  const fewest = Math.min(...scored.map((x) => x.hops));
  return scored.filter((x) => x.hops === fewest).map((x) => x.e);
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
