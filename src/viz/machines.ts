import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { NIC_RESERVATION_MS, type MachineEnv } from '../lifecycle/timing.js';
import { createNicMachine } from '../lifecycle/nic/machine.js';
import { createNodeClaimMachine } from '../lifecycle/nodeclaim/machine.js';
import { machineToGraph, type GraphEdge, type MachineGraph } from './graph.js';
import type { MachineName } from './names.js';


/**
 * Drawing only reads the definition, so any fixed clock and random do: nothing is run,
 * no timer is set.
 */
const DRAWING_ENV: MachineEnv = {
  clock: { now: () => 0, setTimer: () => 0, clearTimer: () => undefined },
  random: { next: () => 0 },
};

/**
 * `untilReservationEnds` is computed from context at run time (the attempt time plus ARM's
 * reservation); the wait it stands for is ARM's 180 s, so that is what the diagram shows.
 */
const NOMINAL_DELAYS: Readonly<Record<string, number>> = { untilReservationEnds: NIC_RESERVATION_MS };

export function createMachine(name: MachineName): AnyStateMachine {
  return name === 'nic' ? createNicMachine(DRAWING_ENV) : createNodeClaimMachine(DRAWING_ENV);
}

/** Every state and transition of the machine: what actors can be in (the live view, `azflex viz --format json`). */
export function machineGraph(name: MachineName): MachineGraph {
  return machineToGraph(createMachine(name), { namedDelays: NOMINAL_DELAYS });
}

/** The machine as drawn: its retry waits folded into the calls they retry (foldRetryWaits). */
export function diagramGraph(name: MachineName): MachineGraph {
  const machine = createMachine(name);
  return foldRetryWaits(machineToGraph(machine, { namedDelays: NOMINAL_DELAYS }), retryWaitIds(machine.root));
}

/** The states built by retryWait (meta.retryOf), at any depth. */
function retryWaitIds(node: AnyStateNode): Set<string> {
  const ids = new Set<string>();
  const visit = (n: AnyStateNode): void => {
    const meta: unknown = n.meta;
    if (typeof meta === 'object' && meta !== null && 'retryOf' in meta) ids.add(n.id);
    for (const child of Object.values(n.states) as AnyStateNode[]) visit(child);
  };
  visit(node);
  return ids;
}

/**
 * A retry wait is drawn as what it means, a call tried again: the edge into the wait goes to
 * the call's state, labelled with the wait ("(retry after untilRetry)"). A wait that also reacts to
 * events stays a state, as those edges say something of their own.
 */
export function foldRetryWaits(graph: MachineGraph, waits: ReadonlySet<string>): MachineGraph {
  const out = new Map<string, GraphEdge[]>();
  for (const e of graph.edges) if (waits.has(e.source)) out.set(e.source, [...(out.get(e.source) ?? []), e]);
  const resume = new Map<string, GraphEdge>();
  for (const [id, edges] of out) if (edges.length === 1 && edges[0]!.kind === 'after' && edges[0]!.target !== null) resume.set(id, edges[0]!);
  const edges = graph.edges.flatMap((e) => {
    if (resume.has(e.source)) return [];
    const wait = e.target === null ? undefined : resume.get(e.target);
    return wait ? [{ ...e, target: wait.target, label: `${e.label} (retry ${wait.label})` }] : [e];
  });
  const states = graph.states
    .filter((s) => !resume.has(s.id))
    .map((s) => ({ ...s, children: s.children.filter((c) => !resume.has(c)) }));
  return { ...graph, states, edges };
}
