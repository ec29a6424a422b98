import type { AnyStateMachine, AnyStateNode } from 'xstate';

/**
 * A plain, typed picture of an XState machine *definition*, walked from `machine.root`
 * so diagrams can never drift from the code. Renderers (dot.ts, mermaid.ts, svg.ts) only
 * read this model; JSON output is this model as-is.
 *
 * Ordering is the machine's document order everywhere (XState keeps config order in
 * `states`, `transitions`, `after`, `invoke`), which keeps the committed diagrams stable.
 */

export type StateKind = 'atomic' | 'compound' | 'parallel' | 'final' | 'history';

export interface GraphState {
  /** XState id, e.g. `nodeclaim.launching.creating-vm`. */
  id: string;
  /** Key relative to the parent, e.g. `creating-vm`. */
  key: string;
  /** Path from the root, e.g. `['launching', 'creating-vm']`. */
  path: string[];
  kind: StateKind;
  /** Id of the parent state; the machine id for top-level states. */
  parent: string;
  /** For compound states: id of the initial child. */
  initial?: string;
  /** Ids of direct children, in document order. */
  children: string[];
  entry: string[];
  exit: string[];
  /** Names (`src`) of the actors invoked while in this state. */
  invoke: string[];
}

/** What fires a transition. */
export type TransitionKind = 'event' | 'after' | 'always' | 'done' | 'error';

export interface GraphDelay {
  /** The named delay from `setup({ delays })`, when it is named. */
  name?: string;
  /** Milliseconds, when known (a literal, a numeric named delay, or a nominal value supplied by the caller). */
  ms?: number;
}

export interface GraphEdge {
  /** State id, or the machine id for transitions defined on the machine root (apply in any state). */
  source: string;
  /** State id; `null` for a targetless transition (runs actions, stays put). */
  target: string | null;
  kind: TransitionKind;
  /** Event type for `event` edges. */
  event?: string;
  delay?: GraphDelay;
  /** The invoked actor's `src` for `done`/`error` edges. */
  invokeSrc?: string;
  guard?: string;
  actions: string[];
  /** Position among the candidates for the same trigger on the same source (0 is tried first). */
  priority: number;
  /** How many candidates share that trigger; > 1 means guards decide. */
  candidates: number;
  /** Human label shared by every renderer. */
  label: string;
}

export interface MachineGraph {
  /** Machine id, also the id of its root node. */
  id: string;
  /** Id of the top-level initial state. */
  initial: string;
  /** Every state except the root, depth-first in document order. */
  states: GraphState[];
  edges: GraphEdge[];
}

export interface GraphOptions {
  /**
   * Nominal values for named delays that are computed at run time (a function of context),
   * so a diagram can still say how long the wait usually is.
   */
  namedDelays?: Readonly<Record<string, number>>;
}

const AFTER_PREFIX = 'xstate.after.';
const DONE_PREFIX = 'xstate.done.actor.';
const ERROR_PREFIX = 'xstate.error.actor.';

/** Walk a machine definition into the graph model. */
export function machineToGraph(machine: AnyStateMachine, options: GraphOptions = {}): MachineGraph {
  const root: AnyStateNode = machine.root;
  const delays = implementationDelays(machine);
  const states: GraphState[] = [];
  const edges: GraphEdge[] = [];

  const visit = (node: AnyStateNode): void => {
    edges.push(...nodeEdges(node, { ...delays, ...options.namedDelays }, delays));
    for (const child of childNodes(node)) {
      states.push(toGraphState(child));
      visit(child);
    }
  };
  visit(root);

  const initial = root.initial.target[0];
  if (!initial) throw new Error(`machine ${root.id} has no initial state`);
  return { id: root.id, initial: initial.id, states, edges };
}

function childNodes(node: AnyStateNode): AnyStateNode[] {
  return Object.values(node.states) as AnyStateNode[];
}

function toGraphState(node: AnyStateNode): GraphState {
  const state: GraphState = {
    id: node.id,
    key: node.key,
    path: [...node.path],
    kind: node.type,
    parent: node.parent?.id ?? node.machine.id,
    children: childNodes(node).map((c) => c.id),
    entry: actionNames(node.entry),
    exit: actionNames(node.exit),
    invoke: node.invoke.map((inv) => srcName(inv.src)),
  };
  if (node.type === 'compound') {
    const initial = node.initial.target[0];
    if (initial) state.initial = initial.id;
  }
  return state;
}

/** Delays given as plain numbers in `setup({ delays })` are known without running anything. */
function implementationDelays(machine: AnyStateMachine): Record<string, number> {
  const out: Record<string, number> = {};
  const delays: Record<string, unknown> = machine.implementations.delays;
  for (const [name, value] of Object.entries(delays)) if (typeof value === 'number') out[name] = value;
  return out;
}

interface Trigger {
  kind: TransitionKind;
  event?: string;
  delay?: GraphDelay;
  invokeSrc?: string;
}

function nodeEdges(node: AnyStateNode, nominal: Record<string, number>, literal: Record<string, number>): GraphEdge[] {
  const edges: GraphEdge[] = [];
  const invokeSrcById = new Map(node.invoke.map((inv) => [inv.id, srcName(inv.src)]));
  const delayByEvent = new Map<string, GraphDelay>();
  for (const after of node.after) delayByEvent.set(after.eventType, describeDelay(after.delay, nominal, literal));

  const push = (trigger: Trigger, candidates: ReadonlyArray<TransitionLike>): void => {
    candidates.forEach((t, priority) => {
      const guard = t.guard === undefined ? undefined : guardName(t.guard);
      const actions = actionNames(t.actions);
      const target = t.target?.[0]?.id ?? null;
      const edge: GraphEdge = {
        source: node.id,
        target,
        ...trigger,
        ...(guard === undefined ? {} : { guard }),
        actions,
        priority,
        candidates: candidates.length,
        label: '',
      };
      edge.label = edgeLabel(edge);
      edges.push(edge);
    });
  };

  for (const [eventType, candidates] of node.transitions) {
    if (eventType.startsWith(AFTER_PREFIX)) {
      push({ kind: 'after', delay: delayByEvent.get(eventType) ?? {} }, candidates);
    } else if (eventType.startsWith(DONE_PREFIX)) {
      const id = eventType.slice(DONE_PREFIX.length);
      push({ kind: 'done', invokeSrc: invokeSrcById.get(id) ?? id }, candidates);
    } else if (eventType.startsWith(ERROR_PREFIX)) {
      const id = eventType.slice(ERROR_PREFIX.length);
      push({ kind: 'error', invokeSrc: invokeSrcById.get(id) ?? id }, candidates);
    } else {
      push({ kind: 'event', event: eventType }, candidates);
    }
  }
  if (node.always) push({ kind: 'always' }, node.always);
  return edges;
}

/** The parts of XState's TransitionDefinition this module reads. */
interface TransitionLike {
  target?: ReadonlyArray<{ id: string }> | undefined;
  guard?: unknown;
  actions: readonly unknown[];
}

function describeDelay(delay: unknown, nominal: Record<string, number>, literal: Record<string, number>): GraphDelay {
  if (typeof delay === 'number') return { ms: delay };
  if (typeof delay === 'string') {
    const ms = nominal[delay] ?? literal[delay];
    return ms === undefined ? { name: delay } : { name: delay, ms };
  }
  return { name: 'inline' };
}

/** `180000` → `180 s`; whole seconds stay in seconds so the NIC reservation reads as ARM documents it. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  return `${Number((ms / 1000).toFixed(3))} s`;
}

function edgeLabel(edge: GraphEdge): string {
  let head: string;
  switch (edge.kind) {
    case 'event':
      head = edge.event ?? '?';
      break;
    case 'after': {
      const d = edge.delay ?? {};
      if (d.ms !== undefined && d.name !== undefined) head = `after ${formatMs(d.ms)} (${d.name})`;
      else if (d.ms !== undefined) head = `after ${formatMs(d.ms)}`;
      else head = `after ${d.name ?? '?'}`;
      break;
    }
    case 'always':
      head = 'always';
      break;
    case 'done':
      head = `done: ${edge.invokeSrc ?? '?'}`;
      break;
    case 'error':
      head = `error: ${edge.invokeSrc ?? '?'}`;
      break;
  }
  // An unguarded candidate after guarded ones is the fallback branch.
  const guard = edge.guard !== undefined ? ` [${edge.guard}]` : edge.candidates > 1 && edge.priority > 0 ? ' [else]' : '';
  const actions = edge.actions.length > 0 ? ` / ${edge.actions.join(', ')}` : '';
  return `${head}${guard}${actions}`;
}

function srcName(src: unknown): string {
  if (typeof src === 'string') return src;
  if (typeof src === 'object' && src !== null && 'id' in src && typeof src.id === 'string') return src.id;
  return 'inline';
}

function guardName(guard: unknown): string {
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'object' && guard !== null && 'type' in guard && typeof guard.type === 'string') {
    // A parameterised guard says what it was given: observedInstanceSuspect(initialized: true).
    const params = 'params' in guard && typeof guard.params === 'object' && guard.params !== null ? Object.entries(guard.params) : [];
    return params.length === 0 ? guard.type : `${guard.type}(${params.map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ')})`;
  }
  // Inline functions get the property name `guard` from the object literal: say what it is instead.
  return 'inline';
}

/**
 * Names of user actions. XState adds its own built-ins (the `raise`/`cancel` pair that
 * schedules an `after` timer on entry and drops it on exit); those scheduling details are already drawn as the
 * `after` edge, so they are left out.
 */
function actionNames(actions: readonly unknown[]): string[] {
  const names: string[] = [];
  for (const action of actions) {
    if (typeof action === 'string') {
      names.push(action);
    } else if (typeof action === 'function' || (typeof action === 'object' && action !== null)) {
      const type: unknown = 'type' in action ? action.type : undefined;
      if (typeof type === 'string') {
        if (isAfterSchedule(action)) continue;
        names.push(type.startsWith('xstate.') ? type.slice('xstate.'.length) : type);
      } else {
        names.push(typeof action === 'function' && action.name !== '' ? action.name : 'inline');
      }
    }
  }
  return names;
}

/** The `raise` (entry) and `cancel` (exit) XState adds to every state with an `after`. */
function isAfterSchedule(action: object): boolean {
  const event: unknown = 'event' in action ? action.event : undefined;
  if (typeof event === 'object' && event !== null && 'type' in event && typeof event.type === 'string') {
    return event.type.startsWith(AFTER_PREFIX);
  }
  const sendId: unknown = 'sendId' in action ? action.sendId : undefined;
  return typeof sendId === 'string' && sendId.startsWith(AFTER_PREFIX);
}
