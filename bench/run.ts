import { benchActorMemory } from './actors.js';
import { benchKarpenterParity } from './karpenter-parity.js';
import { benchScheduling } from './scheduling.js';
import { benchSimulation } from './simulation.js';

/**
 * `npm run bench`: one JSON object on stdout. Figures, never assertions: the targets are in
 * ../shared/TARGETS.md and the machine is noisy, so compare runs side by side.
 */
const results: Record<string, unknown> = {
  node: process.version,
  simulation: await benchSimulation(),
  memory: benchActorMemory(),
  scheduling: await benchScheduling(),
  // Measured right after the in-house scheduling figures, so the two are side by side.
  karpenterParity: benchKarpenterParity(),
};
process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
