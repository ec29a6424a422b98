import type { NodeClaimContext } from './nodeclaim/machine.js';
import { createNodeClaimMachine } from './nodeclaim/machine.js';
import { launchActors } from './nodeclaim/launch.js';
import { instanceActors } from './nodeclaim/liveness.js';
import { statusActors } from './nodeclaim/status.js';
import { claimTerminationActors } from './nodeclaim/termination.js';
import { createNicMachine } from './nic/machine.js';
import { nicActors } from './nic/effects.js';
import type { LifecycleScope } from './scope.js';
import type { MachineEnv } from './timing.js';

/** The NodeClaim machine with every phase's effects provided (launch, status, instance liveness, termination). */
export function nodeClaimMachineFor(env: MachineEnv, s: LifecycleScope, nicReleased: (args: { context: NodeClaimContext }) => boolean) {
  return createNodeClaimMachine(env).provide({
    actors: { ...launchActors(s), ...statusActors(s), ...instanceActors(s), ...claimTerminationActors(s) },
    guards: { nicReleased },
  });
}

/** The NIC machine with its ARM effects provided. */
export function nicMachineFor(env: MachineEnv, s: LifecycleScope) {
  return createNicMachine(env).provide({ actors: nicActors(s) });
}
