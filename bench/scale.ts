import { ensureEnvtest } from '../scripts/envtest.mjs';
import { measureControllerMemory } from './controller-scale/memory.js';
import { measureControllerScale, type ControllerScaleEntry } from './controller-scale/run.js';

/**
 * `npm run bench:scale [-- PODS...]`: the `azflex controller` process at scale on a real
 * control plane (bench/controller-scale/), one entry per size, as JSON on stdout. Each size
 * is given in pods (ten to a node) and also brings a burst of 1,000 pods; the default is
 * 10,000 pods (1,000 nodes). A size that fails ends the run with its error, the sizes
 * before it reported.
 *
 * `--memory-only` measures only the controller's memory at each size, on a smaller cluster
 * (bench/controller-scale/memory.ts); `--node-options=...` replaces the chart's NODE_OPTIONS
 * for it, `--heap-snapshot` keeps a heap snapshot of the settled controller, `--prebuilt=MAIN`
 * runs a controller an earlier run bundled.
 */
const sizes = process.argv.slice(2).map(Number).filter((n) => Number.isInteger(n) && n > 0);
const log = (msg: string): void => void process.stderr.write(`[bench:scale] ${msg}\n`);
const binaries = await ensureEnvtest();
const flag = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
if (process.argv.includes('--memory-only')) {
  const nodeOptions = flag('--node-options');
  const controllerMemory = [];
  for (const pods of sizes.length ? sizes : [10_000]) {
    log(`memory at ${pods} pods`);
    controllerMemory.push(await measureControllerMemory(binaries, { pods, timeoutMs: Math.max(600_000, pods * 1_000), heapSnapshot: process.argv.includes('--heap-snapshot'), prebuilt: flag('--prebuilt'), log, ...(nodeOptions !== undefined ? { nodeOptions } : {}) }));
  }
  process.stdout.write(`${JSON.stringify({ node: process.version, controllerMemory }, null, 2)}\n`);
  process.exit(0);
}
const controllerScale: Array<ControllerScaleEntry | { pods: number; error: string }> = [];
for (const pods of sizes.length ? sizes : [10_000]) {
  log(`size: ${pods} pods`);
  try {
    // The ramp creates pods/10 NodeClaims, VMs and Nodes: allow a second of wall time for each pod.
    controllerScale.push(await measureControllerScale(binaries, { pods, burstPods: 1_000, timeoutMs: Math.max(600_000, pods * 1_000), log }));
  } catch (e) {
    controllerScale.push({ pods, error: e instanceof Error ? e.message : String(e) });
    break;
  }
}
process.stdout.write(`${JSON.stringify({ node: process.version, controllerScale }, null, 2)}\n`);
