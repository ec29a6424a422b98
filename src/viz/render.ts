import { renderDot } from './dot.js';
import { diagramGraph, machineGraph } from './machines.js';
import { renderMermaid } from './mermaid.js';
import { renderSvg } from './svg.js';
import { MACHINE_NAMES, type MachineName, type VizFormat } from './names.js';

export const FILE_EXTENSIONS: Readonly<Record<VizFormat, string>> = { svg: 'svg', dot: 'dot', mermaid: 'mmd', json: 'json' };

/** Where the committed diagrams live, relative to the repository root. */
export const DIAGRAMS_DIR = 'docs/diagrams';
/** The formats committed under DIAGRAMS_DIR (JSON is for tools, not for reading in a review). */
export const COMMITTED_FORMATS: readonly VizFormat[] = ['svg', 'mermaid', 'dot'];

export async function renderMachine(name: MachineName, format: VizFormat): Promise<string> {
  if (format === 'json') return `${JSON.stringify(machineGraph(name), null, 2)}\n`;
  const graph = diagramGraph(name);
  switch (format) {
    case 'dot':
      return renderDot(graph);
    case 'mermaid':
      return renderMermaid(graph);
    case 'svg':
      return renderSvg(renderDot(graph));
  }
}

export function diagramFileName(name: MachineName, format: VizFormat): string {
  return `${name}.${FILE_EXTENSIONS[format]}`;
}

/**
 * Every committed diagram, file name → content, in a fixed order. Shared by
 * scripts/gen-diagrams.ts (writes them) and test/viz/render.diagrams.test.ts (compares them).
 */
export async function committedDiagrams(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const name of MACHINE_NAMES) {
    for (const format of COMMITTED_FORMATS) files.set(diagramFileName(name, format), await renderMachine(name, format));
  }
  return files;
}
