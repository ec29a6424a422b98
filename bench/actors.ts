import { createActor } from 'xstate';
import { createNicMachine } from '../src/lifecycle/nic/machine.js';
import { createNodeClaimMachine } from '../src/lifecycle/nodeclaim/machine.js';
import { xstateClock } from '../src/ports/clock.js';
import { SeededRandom, VirtualClock } from '../src/sim/virtual-clock.js';

/**
 * Resident memory per live actor: 10,000 NodeClaim actors and 10,000 NIC actors held in the
 * states a busy controller keeps most of them in, measured as heap growth after a full GC.
 */
export function benchActorMemory(count = 10_000): Record<string, number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc (npm run bench does)');
  const clock = new VirtualClock(0);
  const env = { clock, random: new SeededRandom(1) };
  const nodeClaimMachine = createNodeClaimMachine(env);
  const nicMachine = createNicMachine(env);
  const measure = (spawn: (i: number) => { stop(): void }): number => {
    gc();
    const before = process.memoryUsage().heapUsed;
    const actors = Array.from({ length: count }, (_, i) => spawn(i));
    gc();
    const after = process.memoryUsage().heapUsed;
    for (const a of actors) a.stop();
    return (after - before) / count;
  };
  const perNodeClaim = measure((i) =>
    createActor(nodeClaimMachine, {
      input: {
        name: `pool-${i}`,
        nicName: `azflex-pool-${i}-nic`,
        observed: { exists: true, deleting: false, launched: true, registered: true, initialized: true, nicExists: true, vm: 'Succeeded', node: { name: `n${i}`, ready: true } },
      },
      clock: xstateClock(clock),
    }).start(),
  );
  const perNic = measure((i) =>
    createActor(nicMachine, { input: { name: `azflex-pool-${i}-nic`, observed: { exists: true, attached: true, owner: 'wants' } }, clock: xstateClock(clock) }).start(),
  );
  return { actors: count, bytesPerNodeClaimActor: Math.round(perNodeClaim), bytesPerNicActor: Math.round(perNic) };
}
