import { benchActorMemory } from './actors.js';
import { benchKarpenterParity } from './karpenter-parity.js';
import { benchScheduling } from './scheduling.js';
import { benchSimulation } from './simulation.js';

/**
 * `npm run bench`: one JSON object on stdout. Figures, never assertions: the targets are in
 * ../shared/TARGETS.md and the machine is noisy, so compare runs side by side.
 * `npm run bench -- karpenterParity scheduling` runs only the named sections.
 */
const SECTIONS: Record<string, () => unknown> = {
  simulation: benchSimulation,
  memory: benchActorMemory,
  scheduling: benchScheduling,
  // Measured right after the in-house scheduling figures, so the two are side by side.
  karpenterParity: benchKarpenterParity,
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !(name in SECTIONS));
if (unknown.length > 0) throw new Error(`unknown bench section(s) ${unknown.join(', ')}; known: ${Object.keys(SECTIONS).join(', ')}`);
const results: Record<string, unknown> = { node: process.version };
for (const [name, run] of Object.entries(SECTIONS)) {
  if (wanted.length === 0 || wanted.includes(name)) results[name] = await run();
}
process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
