import type { Viz } from '@viz-js/viz';

/**
 * DOT → SVG with Graphviz compiled to WebAssembly: no `dot` binary, no network, no browser.
 * The WASM instance is costly to create, so it is made once per process and reused; the module
 * itself (megabytes of source) is loaded only then, not by every process that could render.
 */
let vizPromise: Promise<Viz> | undefined;

function viz(): Promise<Viz> {
  vizPromise ??= import('@viz-js/viz').then((m) => m.instance());
  return vizPromise;
}

export async function renderSvg(dot: string): Promise<string> {
  const v = await viz();
  const result = v.render(dot, { format: 'svg', engine: 'dot' });
  if (result.status !== 'success') {
    const messages = result.errors.map((e) => `${e.level ?? 'error'}: ${e.message}`).join('; ');
    throw new Error(`Graphviz could not render the diagram: ${messages}`);
  }
  // Graphviz warnings (e.g. a bad ltail) would silently degrade the picture; fail loudly instead.
  const warnings = result.errors.filter((e) => e.level === 'warning');
  if (warnings.length > 0) throw new Error(`Graphviz warnings: ${warnings.map((w) => w.message.trim()).join('; ')}`);
  return readableHyphens(result.output);
}

/**
 * Graphviz writes every `-` as `&#45;`, so `grep reserved-180s nic.svg` would find nothing.
 * A plain hyphen is valid anywhere in XML except inside comments (where `--` is forbidden),
 * so comments are left as Graphviz wrote them.
 */
function readableHyphens(svg: string): string {
  return svg.replace(/(<!--[\s\S]*?-->)|&#45;/g, (_match, comment: string | undefined) => comment ?? '-');
}
