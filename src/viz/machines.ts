import type { AnyStateMachine } from 'xstate';
import { NIC_RESERVATION_MS, type MachineEnv } from '../lifecycle/timing.js';
import { createNicMachine } from '../lifecycle/nic/machine.js';
import { createNodeClaimMachine } from '../lifecycle/nodeclaim/machine.js';
import { machineToGraph, type MachineGraph } from './graph.js';
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

export function machineGraph(name: MachineName): MachineGraph {
  return machineToGraph(createMachine(name), { namedDelays: NOMINAL_DELAYS });
}
