import type { MachineGraph } from '../viz/graph.js';
import { machineGraph } from '../viz/machines.js';
import { MACHINE_NAMES, type MachineName } from '../viz/names.js';
import { renderMachine } from '../viz/render.js';

/** One machine as the page needs it: its diagram and the states actors can be in. */
export interface MachineView {
  name: MachineName;
  /** Leaf states as `stateName()` spells them (`launching.creating-vm`), in document order. */
  states: string[];
  final: string[];
  /** Inline SVG whose node `<title>`s are the XState ids (`nic.reserved-180s`): the page highlights by those. */
  svg: string;
}

export interface Machines {
  views: MachineView[];
  /** By actor kind (`nodeclaim`, `nic`), for inferring transition causes. */
  graphs: ReadonlyMap<string, MachineGraph>;
}

/** Drawn once per server from the machine definitions (src/viz), so the page can never drift from the code. */
export async function loadMachines(): Promise<Machines> {
  const views: MachineView[] = [];
  const graphs = new Map<string, MachineGraph>();
  for (const name of MACHINE_NAMES) {
    const graph = machineGraph(name);
    graphs.set(name, graph);
    const leaves = graph.states.filter((s) => s.kind === 'atomic' || s.kind === 'final');
    const local = (id: string): string => id.slice(graph.id.length + 1);
    views.push({
      name,
      states: leaves.map((s) => local(s.id)),
      final: leaves.filter((s) => s.kind === 'final').map((s) => local(s.id)),
      svg: inlineSvg(await renderMachine(name, 'svg'), name),
    });
  }
  return { views, graphs };
}

/** Drops the XML prolog and the fixed size, so the diagram scales to its panel. */
function inlineSvg(svg: string, name: string): string {
  const start = svg.indexOf('<svg');
  if (start < 0) throw new Error(`renderMachine(${name}) returned no <svg>`);
  // The natural width (in pt, read as px) is what "zoom" shows: Graphviz's 11 pt labels become readable.
  return svg
    .slice(start)
    .replace(/^<svg width="([\d.]+)pt" height="[^"]*"/, (_m, width: string) => `<svg class="diagram" data-machine="${name}" data-width="${width}" preserveAspectRatio="xMidYMin meet"`);
}
