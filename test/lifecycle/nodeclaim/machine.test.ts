import { createActor, fromPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { createNodeClaimMachine, INSTANCE_RECHECK_MS, type InstanceLoss, type InstanceState, type LaunchFailure, type NodeClaimObservation } from '../../../src/lifecycle/nodeclaim/machine.js';
import { classified } from '../../../src/lifecycle/failure.js';
import { NIC_RESERVATION_MS } from '../../../src/lifecycle/timing.js';
import { AzureError, type VmProvisioningState } from '../../../src/ports/azure.js';
import { xstateClock } from '../../../src/ports/clock.js';
import { stateName } from '../../../src/runtime/event-log.js';
import { SeededRandom, VirtualClock } from '../../../src/sim/virtual-clock.js';

/** Lets invoked promises (the effects) resolve. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

const base: NodeClaimObservation = { exists: true, deleting: false, launched: false, registered: false, initialized: false, nicExists: false };

function start(
  observed: NodeClaimObservation,
  createVm: () => Promise<VmProvisioningState> = async () => 'Succeeded',
  getVmState: () => Promise<VmProvisioningState | undefined> = async () => undefined,
  getInstanceState: () => Promise<InstanceState> = async () => ({ vm: 'Succeeded' }),
) {
  const lost: InstanceLoss[] = [];
  const clock = new VirtualClock(5_000_000);
  const failures: LaunchFailure[] = [];
  const emitted: string[] = [];
  const drains: number[] = [];
  const machine = createNodeClaimMachine({ clock, random: new SeededRandom(1) }).provide({
    actors: {
      recordVmAttempt: fromPromise(async () => clock.now()),
      createVm: fromPromise<VmProvisioningState, { name: string }>(createVm),
      getVmState: fromPromise<VmProvisioningState | undefined, { name: string }>(getVmState),
      getInstanceState: fromPromise<InstanceState, { name: string }>(getInstanceState),
      disruptLostInstance: fromPromise(async ({ input }) => {
        lost.push(input.loss);
      }),
      markLaunched: fromPromise<void, { name: string }>(async () => undefined),
      markRegistered: fromPromise<void, { name: string }>(async () => undefined),
      markInitialized: fromPromise<void, { name: string }>(async () => undefined),
      failLaunch: fromPromise(async ({ input }) => {
        failures.push(input.failure);
      }),
      drain: fromPromise(async () => {
        drains.push(clock.now());
        return true;
      }),
      deleteVm: fromPromise<void, { name: string }>(async () => undefined),
      finalize: fromPromise<void, { name: string }>(async () => undefined),
    },
  });
  const actor = createActor(machine, { input: { name: 'h200-abcde', nicName: 'azflex-h200-abcde-nic', observed }, clock: xstateClock(clock) });
  for (const type of ['nic.requested', 'vm.launched', 'vm.failed'] as const) actor.on(type, (e) => emitted.push(e.type));
  actor.start();
  return { clock, actor, failures, emitted, drains, lost, state: () => stateName(actor.getSnapshot().value) };
}

describe('NodeClaim machine, rebuilt from observed state', () => {
  it.each([
    [{ ...base, deleting: true }, 'terminating.draining'],
    [{ ...base, vm: 'Creating' as const, nicExists: true, vmAttemptAt: 1 }, 'launching.awaiting-vm'],
    [{ ...base, vm: 'Succeeded' as const, nicExists: true }, 'launched'],
    [{ ...base, vm: 'Succeeded' as const, nicExists: true, node: { name: 'n', ready: false } }, 'registered'],
    [{ ...base, vm: 'Succeeded' as const, nicExists: true, node: { name: 'n', ready: true } }, 'initialized'],
    [{ ...base, nicExists: true }, 'launching.recording-attempt'],
    [base, 'launching.creating-nic'],
  ])('%j resumes in %s', (observed, expected) => {
    expect(start(observed).state()).toBe(expected);
  });

  it('a VM attempt recorded before a crash, with no VM in ARM (by GET), is treated as a failed launch that reserved the NIC', async () => {
    const { state, failures, emitted } = start({ ...base, nicExists: true, vmAttemptAt: 4_990_000 });
    expect(state()).toBe('launching.confirming-vm');
    await settle();
    await settle();
    expect(failures[0]).toMatchObject({ code: 'VmAttemptLost', nicReserved: true });
    expect(emitted).toContain('vm.failed');
    expect(state()).toBe('terminating.awaiting-nic-release');
  });

  it('a VM the list does not show yet but a GET finds Creating is awaited, not declared lost', async () => {
    const { state, failures } = start({ ...base, nicExists: true, vmAttemptAt: 4_990_000 }, undefined, async () => 'Creating');
    await settle();
    expect(state()).toBe('launching.awaiting-vm');
    expect(failures).toEqual([]);
  });

  it('a quota refusal deletes the NodeClaim, marks the offering, and waits for the NIC before removing the finalizer', async () => {
    const { actor, state, failures } = start({ ...base, nicExists: true }, async () => {
      throw new AzureError('OperationNotAllowed', 409, 'quota');
    });
    await settle();
    expect(failures[0]).toMatchObject({ code: 'OperationNotAllowed', action: 'insufficientCapacity', capacity: { kind: 'insufficientCapacity', reason: 'quota' } });
    expect(state()).toBe('terminating.awaiting-nic-release');
    // A stale observation that still shows the NIC keeps it waiting...
    actor.send({ type: 'OBSERVED', observed: { ...base, deleting: true, nicExists: true } });
    expect(state()).toBe('terminating.awaiting-nic-release');
    // ...until the NIC machine reports the NIC reaped.
    actor.send({ type: 'NIC_REAPED' });
    await settle();
    expect(state()).toBe('deleted');
  });

  it('a VM create failure classified by its effect travels in the event: the failure keeps ARM\'s words, and the NIC hears when the reservation ends', async () => {
    const answer = new AzureError('AllocationFailed', 409, 'Allocation failed. We do not have sufficient capacity');
    const { state, failures, actor } = start({ ...base, nicExists: true }, async () => {
      throw classified(answer);
    });
    const vmFailed: number[] = [];
    actor.on('vm.failed', (e) => vmFailed.push(e.reservedUntil));
    await settle();
    expect(failures[0]).toMatchObject({ code: 'AllocationFailed', action: 'insufficientCapacity', nicReserved: true, detail: answer.message });
    // The attempt was recorded at the clock's start (5,000,000): ARM holds the NIC 180 s from it.
    expect(vmFailed).toEqual([5_000_000 + NIC_RESERVATION_MS]);
    expect(state()).toBe('terminating.awaiting-nic-release');
  });

  it('a failed launch with no Node ever seen goes on to the VM delete without a drain; one whose Node was seen is drained', async () => {
    const refused = async (): Promise<never> => {
      throw new AzureError('OperationNotAllowed', 409, 'quota');
    };
    const never = start({ ...base, nicExists: true }, refused);
    await settle();
    expect(never.state()).toBe('terminating.awaiting-nic-release');
    expect(never.drains).toEqual([]);
    // A Node seen while the create was still out (its VM booted, then ARM failed it): drained.
    let fail: (err: unknown) => void = () => undefined;
    const seen = start({ ...base, nicExists: true }, () => new Promise((_, reject) => (fail = reject)));
    await settle();
    expect(seen.state()).toBe('launching.creating-vm');
    seen.actor.send({ type: 'OBSERVED', observed: { ...base, nicExists: true, vm: 'Creating', node: { name: 'n', ready: false } } });
    fail(new AzureError('AllocationFailed', 409, 'allocation'));
    await settle();
    await settle();
    expect(seen.drains).toHaveLength(1);
    expect(seen.state()).toBe('terminating.awaiting-nic-release');
  });

  it('a throttled VM create is retried after Retry-After without giving up the NodeClaim', async () => {
    let calls = 0;
    const { state, clock } = start({ ...base, nicExists: true }, async () => {
      calls++;
      if (calls === 1) throw new AzureError('TooManyRequests', 429, 'throttled', 30);
      return 'Succeeded';
    });
    await settle();
    expect(state()).toBe('launching.backoff');
    await clock.runUntil(clock.now() + 30_000);
    expect(calls).toBe(2);
    expect(state()).toBe('launched');
  });
});

describe('NodeClaim machine: a launched instance taken away', () => {
  const running: NodeClaimObservation = { ...base, launched: true, registered: true, initialized: true, vmAttemptAt: 1, nicExists: true, vm: 'Succeeded', node: { name: 'n', ready: true, kubeletReady: true } };
  const notReady: NodeClaimObservation = { ...running, node: { name: 'n', ready: false, kubeletReady: false } };

  it('a deallocated VM (its kubelet NotReady, a GET shows it): the NodeClaim is disrupted as instance_stopped and drained before its VM goes', async () => {
    const m = start(running, undefined, undefined, async () => ({ vm: 'Succeeded', power: 'deallocated' }));
    expect(m.state()).toBe('initialized');
    m.actor.send({ type: 'OBSERVED', observed: notReady });
    await settle();
    await settle();
    expect(m.lost).toEqual(['instance_stopped']);
    expect(m.drains.length).toBe(1);
    expect(m.state()).toBe('terminating.awaiting-nic-release');
  });

  it('a VM gone from ARM (by GET) while its kubelet is NotReady: garbage_collected, straight to the VM delete without a drain', async () => {
    const m = start(running, undefined, undefined, async () => ({ vm: undefined }));
    m.actor.send({ type: 'OBSERVED', observed: { ...notReady, vm: undefined } });
    await settle();
    await settle();
    expect(m.lost).toEqual(['garbage_collected']);
    expect(m.drains).toEqual([]);
    expect(m.state()).toBe('terminating.awaiting-nic-release');
  });

  it('a VM being deleted by someone else: instance_terminated', async () => {
    const m = start(running, undefined, undefined, async () => ({ vm: 'Deleting' }));
    m.actor.send({ type: 'OBSERVED', observed: { ...running, vm: 'Deleting' } });
    await settle();
    await settle();
    expect(m.lost).toEqual(['instance_terminated']);
  });

  it('as upstream: a VM missing while its kubelet still reports Ready, or a NotReady node whose VM runs, is left alone and looked at again a minute later', async () => {
    const gone = start(running, undefined, undefined, async () => ({ vm: undefined }));
    gone.actor.send({ type: 'OBSERVED', observed: { ...running, vm: undefined } });
    await settle();
    expect(gone.state()).toBe('instance-alive');
    expect(gone.lost).toEqual([]);
    const alive = start(running);
    alive.actor.send({ type: 'OBSERVED', observed: notReady });
    await settle();
    expect(alive.state()).toBe('instance-alive');
    alive.actor.send({ type: 'OBSERVED', observed: notReady });
    expect(alive.state()).toBe('instance-alive');
    alive.actor.send({ type: 'OBSERVED', observed: running });
    await alive.clock.runUntil(alive.clock.now() + INSTANCE_RECHECK_MS);
    expect(alive.state()).toBe('initialized');
    expect(alive.lost).toEqual([]);
  });

  it('a NodeClaim still registering (its node NotReady at first) is not suspected; a restart that finds the VM gone confirms at once', async () => {
    const registering = start({ ...running, initialized: false, node: { name: 'n', ready: false, kubeletReady: false } });
    expect(registering.state()).toBe('registered');
    const restarted = start({ ...notReady, vm: undefined }, undefined, undefined, async () => ({ vm: undefined }));
    expect(restarted.state()).toBe('confirming-instance');
    await settle();
    await settle();
    expect(restarted.lost).toEqual(['garbage_collected']);
  });
});
