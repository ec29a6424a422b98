import { describe, expect, it } from 'vitest';
import { NIC_RESERVATION_MS } from '../../src/lifecycle/timing.js';
import { diagramGraph, machineGraph } from '../../src/viz/machines.js';
import { MACHINE_NAMES } from '../../src/viz/names.js';
import { renderMachine } from '../../src/viz/render.js';

/** Text nodes of an SVG, unescaped, so assertions don't depend on Graphviz's markup. */
function svgTexts(svg: string): string[] {
  return [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) =>
    (m[1] ?? '').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#45;/g, '-').replace(/&amp;/g, '&'),
  );
}

/** The SVG `<g class="edge">` groups, each with its title (`a&#45;&gt;b`) and its label texts. */
function svgEdges(svg: string): { title: string; texts: string[] }[] {
  return [...svg.matchAll(/<g id="edge\d+" class="edge">([\s\S]*?)<\/g>/g)].map((m) => {
    const body = m[1] ?? '';
    const title = (/<title>([^<]*)<\/title>/.exec(body)?.[1] ?? '').replace(/&#45;/g, '-').replace(/&gt;/g, '>');
    return { title, texts: svgTexts(body) };
  });
}

describe('graph model', () => {
  it('walks nested states, invokes, after delays and guards', () => {
    const nodeclaim = diagramGraph('nodeclaim');
    const launching = nodeclaim.states.find((s) => s.id === 'nodeclaim.launching');
    expect(launching?.kind).toBe('compound');
    expect(launching?.initial).toBe('nodeclaim.launching.creating-nic');
    expect(nodeclaim.states.find((s) => s.id === 'nodeclaim.deleted')?.kind).toBe('final');

    const createVmError = nodeclaim.edges.filter((e) => e.source === 'nodeclaim.launching.creating-vm' && e.kind === 'error');
    // The retry wait is folded into the edge: a throttled create records a new attempt after it.
    expect(createVmError.map((e) => [e.guard, e.target])).toEqual([
      ['isThrottledOrTransient', 'nodeclaim.launching.recording-attempt'],
      [undefined, 'nodeclaim.launch-failed'],
    ]);
    expect(createVmError[0]?.invokeSrc).toBe('createVm');
    expect(createVmError[0]?.label).toBe('error: createVm [isThrottledOrTransient] / scheduleRetry (retry after untilRetry)');
    expect(nodeclaim.states.some((s) => s.key.endsWith('-backoff') || s.key === 'backoff' || s.key === 'drain-wait')).toBe(false);

    const drainPoll = nodeclaim.edges.find((e) => e.source === 'nodeclaim.terminating.draining' && e.kind === 'error');
    expect(drainPoll?.target).toBe('nodeclaim.terminating.draining');
    expect(drainPoll?.label).toContain('after 5 s (drainPoll)');

    // A parameterised guard is drawn with what it is given.
    const suspect = (from: string) => nodeclaim.edges.find((e) => e.source === `nodeclaim.${from}` && e.target === 'nodeclaim.confirming-instance')?.guard;
    expect(suspect('launched')).toBe('observedInstanceSuspect(initialized: false)');
    expect(suspect('initialized')).toBe('observedInstanceSuspect(initialized: true)');
  });

  it('labels the NIC reservation wait with ARM’s 180 s and keeps other named delays by name', () => {
    const nic = machineGraph('nic');
    const reservation = nic.edges.find((e) => e.source === 'nic.reserved-180s' && e.kind === 'after');
    expect(reservation).toMatchObject({ target: 'nic.probing-before-delete', delay: { name: 'untilReservationEnds', ms: NIC_RESERVATION_MS } });
    expect(reservation?.label).toContain('180 s');
    const retry = nic.edges.find((e) => e.source === 'nic.create-backoff' && e.kind === 'after');
    expect(retry?.delay).toEqual({ name: 'untilRetry' });
    expect(retry?.label).toBe('after untilRetry');
  });

  it('is deterministic', () => {
    for (const name of MACHINE_NAMES) expect(JSON.stringify(machineGraph(name))).toBe(JSON.stringify(machineGraph(name)));
  });
});

describe('renderers', () => {
  it('NIC SVG shows the key states and "180 s" on the reserved-180s → probing-before-delete edge', async () => {
    const svg = await renderMachine('nic', 'svg');
    expect(svg.startsWith('<?xml')).toBe(true);
    const texts = svgTexts(svg);
    for (const state of ['pending', 'nic-created', 'vm-failed', 'reserved-180s', 'reaped']) {
      expect(texts).toContain(state);
      expect(svg).toContain(`>${state}</text>`); // literally, so grep finds it too
    }
    const edge = svgEdges(svg).find((e) => e.title === 'nic.reserved-180s->nic.probing-before-delete');
    expect(edge?.texts.join(' ')).toContain('180 s');
  });

  for (const name of MACHINE_NAMES) {
    it(`${name}: DOT and Mermaid name every state`, async () => {
      const graph = diagramGraph(name);
      const dot = await renderMachine(name, 'dot');
      const mermaid = await renderMachine(name, 'mermaid');
      expect(mermaid.startsWith('stateDiagram-v2\n')).toBe(true);
      for (const state of graph.states) {
        expect(dot).toContain(`<b>${state.key}</b>`);
        expect(mermaid).toContain(`state "${state.path.join('.')}`);
      }
      expect(graph.states.length).toBeGreaterThan(10);
    });

    it(`${name}: every transition with a target appears in the DOT and Mermaid`, async () => {
      const graph = diagramGraph(name);
      const dot = await renderMachine(name, 'dot');
      const mermaid = await renderMachine(name, 'mermaid');
      for (const edge of graph.edges) {
        const firstLine = edge.label.split(' / ')[0] ?? edge.label;
        expect(dot).toContain(firstLine);
        expect(mermaid).toContain(edge.label);
      }
    });

    it(`${name}: JSON is the graph model`, async () => {
      const json: unknown = JSON.parse(await renderMachine(name, 'json'));
      expect(json).toEqual(JSON.parse(JSON.stringify(machineGraph(name))));
    });
  }
});
