import { createActor, fromPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { createNicMachine, type NicObservation } from '../../../src/lifecycle/nic/machine.js';
import { AzureError } from '../../../src/ports/azure.js';
import { xstateClock } from '../../../src/ports/clock.js';
import { stateName } from '../../../src/runtime/event-log.js';
import { SeededRandom, VirtualClock } from '../../../src/sim/virtual-clock.js';

function setup(
  observed: NicObservation,
  deleteNic: () => Promise<void>,
  nicExists: () => Promise<boolean> = async () => false,
  // ARM's answer to a GET: by default what the observation says (a NIC left by a refused or
  // rolled-back create is detached).
  nicAttachment: () => Promise<'attached' | 'detached' | 'absent'> = async () => (observed.attached ? 'attached' : 'detached'),
) {
  const clock = new VirtualClock(1_000_000);
  const deletes: number[] = [];
  const gets: number[] = [];
  const machine = createNicMachine({ clock, random: new SeededRandom(1) }).provide({
    actors: {
      putNic: fromPromise<void, { name: string }>(async () => undefined),
      deleteNic: fromPromise(async () => {
        deletes.push(clock.now());
        await deleteNic();
      }),
      nicExists: fromPromise(async () => {
        gets.push(clock.now());
        return nicExists();
      }),
      nicAttachment: fromPromise(async () => {
        gets.push(clock.now());
        return nicAttachment();
      }),
    },
  });
  const actor = createActor(machine, { input: { name: 'azflex-pool-abcde-nic', observed }, clock: xstateClock(clock) }).start();
  const state = () => stateName(actor.getSnapshot().value);
  return { clock, actor, deletes, gets, state };
}

/** Lets invoked promises (the effects) resolve. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('NIC machine', () => {
  it('waits out the 180 s reservation from the VM attempt before deleting, then is reaped', async () => {
    const { clock, actor, deletes, state } = setup({ exists: true, attached: false, owner: 'wants' }, async () => undefined);
    expect(state()).toBe('nic-created');
    actor.send({ type: 'VM_FAILED', reservedUntil: clock.now() + 180_000 });
    expect(state()).toBe('reserved-180s');
    await clock.runUntil(clock.now() + 180_000);
    expect(deletes).toHaveLength(0);
    await clock.runUntil(clock.now() + 1_000);
    expect(deletes).toHaveLength(1);
    expect(state()).toBe('reaped');
  });

  it('at the end of the reservation a Failed VM that still holds the NIC gets no DELETE: a GET finds it attached', async () => {
    const { clock, actor, deletes, gets, state } = setup({ exists: true, attached: false, owner: 'wants' }, async () => undefined, undefined, async () => 'attached');
    actor.send({ type: 'VM_FAILED', reservedUntil: clock.now() + 180_000 });
    await clock.runUntil(clock.now() + 181_000);
    expect(gets.length).toBeGreaterThanOrEqual(1);
    expect(deletes).toHaveLength(0);
    expect(state()).toBe('attached');
  });

  it('a GET that fails at the end of the reservation is retried, never followed by a blind DELETE (generated world seed 1387461118)', async () => {
    const answers: Array<'fail' | 'attached' | 'detached'> = ['fail', 'fail', 'attached'];
    const { clock, actor, deletes, gets, state } = setup({ exists: true, attached: false, owner: 'wants' }, async () => undefined, undefined, async () => {
      const a = answers.shift() ?? 'detached';
      if (a === 'fail') throw new AzureError('InternalServerError', 500, 'transient');
      return a;
    });
    actor.send({ type: 'VM_FAILED', reservedUntil: clock.now() + 180_000 });
    await clock.runUntil(clock.now() + 240_000);
    expect(gets.length).toBe(3);
    expect(deletes).toHaveLength(0);
    expect(state()).toBe('attached');
  });

  it('rebuilt after a restart from the observed deadline, it deletes at that deadline, not 180 s later', async () => {
    const start = 1_000_000;
    const { clock, deletes, state } = setup({ exists: true, attached: false, owner: 'releasing', reservedUntil: start + 30_000 }, async () => undefined);
    expect(state()).toBe('reserved-180s');
    await clock.runUntil(start + 31_000);
    expect(deletes).toEqual([start + 31_000]);
    expect(state()).toBe('reaped');
  });

  it('when ARM still says reserved, it waits a little and tries again', async () => {
    let refusals = 1;
    const { clock, deletes, state } = setup({ exists: true, attached: false, owner: 'releasing', reservedUntil: 1_000_000 }, async () => {
      if (refusals-- > 0) throw new AzureError('NicReservedForAnotherVm', 400, 'reserved');
    });
    await clock.runUntil(clock.now() + 10_000);
    expect(deletes.length).toBe(2);
    // Soon enough that time-to-reap stays within the real end + 5 s.
    expect(deletes[1]! - deletes[0]!).toBe(2_000);
    expect(state()).toBe('reaped');
  });

  it('honours Retry-After on a throttled delete', async () => {
    let throttled = true;
    const { clock, deletes, state } = setup({ exists: true, attached: false, owner: 'gone' }, async () => {
      if (throttled) {
        throttled = false;
        throw new AzureError('TooManyRequests', 429, 'throttled', 17);
      }
    });
    await clock.runUntil(clock.now() + 60_000);
    expect(deletes[1]! - deletes[0]!).toBe(17_000);
    expect(state()).toBe('reaped');
  });

  it('an attached NIC is never deleted; when the VM delete cascades it, a GET confirms and the NIC is reaped', async () => {
    const { actor, deletes, gets, state } = setup({ exists: true, attached: true, owner: 'wants' }, async () => undefined);
    expect(state()).toBe('attached');
    actor.send({ type: 'OBSERVED', observed: { exists: true, attached: true, owner: 'releasing' } });
    expect(state()).toBe('attached');
    actor.send({ type: 'OBSERVED', observed: { exists: false, attached: false, owner: 'releasing' } });
    expect(state()).toBe('confirming-absent');
    await settle();
    expect(state()).toBe('reaped');
    expect(gets).toHaveLength(1);
    expect(deletes).toHaveLength(0);
  });

  it('a list that does not show the NIC yet is not proof: the GET finds it and the reservation is waited out', async () => {
    const { clock, actor, deletes, state } = setup({ exists: true, attached: false, owner: 'wants' }, async () => undefined, async () => true);
    actor.send({ type: 'VM_FAILED', reservedUntil: clock.now() + 180_000 });
    actor.send({ type: 'OBSERVED', observed: { exists: false, attached: false, owner: 'releasing' } });
    expect(state()).toBe('confirming-absent');
    await settle();
    expect(state()).toBe('reserved-180s');
    await clock.runUntil(clock.now() + 181_000);
    expect(deletes).toHaveLength(1);
    expect(state()).toBe('reaped');
  });

  it('a list that still shows the deleted VM is checked by GET once the owner let go: detached, it is deleted', async () => {
    let attached = true;
    const start = 1_000_000;
    const { clock, actor, deletes, gets, state } = setup({ exists: true, attached: true, owner: 'wants', reservedUntil: start + 10_000 }, async () => undefined, undefined, async () =>
      attached ? 'attached' : 'detached',
    );
    expect(state()).toBe('attached');
    actor.send({ type: 'OBSERVED', observed: { exists: true, attached: true, owner: 'releasing', reservedUntil: start + 10_000 } });
    await clock.runUntil(start + 10_999);
    expect(gets).toEqual([]); // nothing before the reservation ends
    await clock.runUntil(start + 11_000);
    await settle();
    expect(gets).toEqual([start + 11_000]);
    expect(state()).toBe('attached');
    attached = false;
    await clock.runUntil(start + 16_000);
    await settle();
    await clock.runUntil(start + 16_000);
    await settle();
    expect(deletes).toEqual([start + 16_000]);
    expect(state()).toBe('reaped');
  });
});
