import { describe, expect, it } from 'vitest';
import type { GraphEdge, GraphState, MachineGraph } from '../../src/viz/graph.js';
import { diagramGraph, foldRetryWaits, machineGraph } from '../../src/viz/machines.js';

const state = (id: string, children: string[] = []): GraphState => ({
  id, key: id.split('.').pop()!, path: id.split('.').slice(1), kind: children.length > 0 ? 'compound' : 'atomic', parent: 'm', children, entry: [], exit: [], invoke: [],
});
const edge = (source: string, target: string, kind: GraphEdge['kind'], label: string): GraphEdge => ({ source, target, kind, actions: [], priority: 0, candidates: 1, label });

describe('retry waits folded into the call they retry', () => {
  it('draws the failure edge to the retried state with the wait in its label, and drops the wait', () => {
    const graph: MachineGraph = {
      id: 'm',
      initial: 'm.calling',
      states: [state('m.calling'), state('m.calling-backoff'), state('m.done')],
      edges: [
        edge('m.calling', 'm.calling-backoff', 'error', 'error: call / scheduleBackoff'),
        edge('m.calling', 'm.done', 'done', 'done: call'),
        edge('m.calling-backoff', 'm.calling', 'after', 'after untilRetry'),
      ],
    };
    const folded = foldRetryWaits(graph, new Set(['m.calling-backoff']));
    expect(folded.states.map((s) => s.id)).toEqual(['m.calling', 'm.done']);
    expect(folded.edges.map((e) => [e.source, e.target, e.label])).toEqual([
      ['m.calling', 'm.calling', 'error: call / scheduleBackoff (retry after untilRetry)'],
      ['m.calling', 'm.done', 'done: call'],
    ]);
  });

  it('keeps a wait that also reacts to events', () => {
    const graph: MachineGraph = {
      id: 'm',
      initial: 'm.calling',
      states: [state('m.calling'), state('m.wait')],
      edges: [edge('m.calling', 'm.wait', 'error', 'error: call'), edge('m.wait', 'm.calling', 'after', 'after untilRetry'), edge('m.wait', 'm.calling', 'event', 'OBSERVED')],
    };
    expect(foldRetryWaits(graph, new Set(['m.wait']))).toEqual(graph);
  });

  it('draws the NodeClaim machine without its wait states, and the NIC machine with its design card\'s states', () => {
    const leaves = (g: MachineGraph) => g.states.filter((s) => s.kind === 'atomic' || s.kind === 'final').map((s) => s.key);
    expect(leaves(diagramGraph('nodeclaim')).length).toBeLessThanOrEqual(20);
    // The full graph keeps them: actors wait in them (the live view counts actors per state).
    expect(leaves(machineGraph('nodeclaim'))).toContain('launched-backoff');
    const nic = diagramGraph('nic').states.map((s) => s.key);
    for (const key of ['pending', 'nic-created', 'vm-failed', 'reserved-180s', 'reaped']) expect(nic).toContain(key);
  });
});
