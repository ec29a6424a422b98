import type { Command } from 'commander';
import { register as registerSimulate } from './simulate.js';
import { register as registerSimulateMerge } from './simulate-merge.js';
import { register as registerViz } from './viz.js';
import { register as registerSimServeArm } from './sim-serve-arm.js';
import { register as registerController } from './controller.js';
import { register as registerDev } from './dev.js';

/** Every subcommand registers itself here; one line per command file. */
export function registerCommands(program: Command): void {
  registerSimulate(program);
  registerSimulateMerge(program);
  registerViz(program);
  registerSimServeArm(program);
  registerController(program);
  registerDev(program);
}
