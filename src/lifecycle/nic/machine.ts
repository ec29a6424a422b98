import { assign, emit, fromPromise, setup } from 'xstate';
import type { FailureAction } from '../../azure/errors.js';
import { classified, failureOf } from '../failure.js';
import { ATTACHMENT_PROBE_MAX_MS, ATTACHMENT_PROBE_MS, RESERVATION_FRESH_MS, RESERVATION_MARGIN_MS, RESERVED_RETRY_MS, backoffMs, retryDelayMs, retryWait, type MachineEnv } from '../timing.js';

/**
 * The NIC machine: one per network interface azflex owns. It exists to guarantee that a
 * NIC never outlives its purpose: once no VM uses it and its NodeClaim no longer wants it,
 * it waits out ARM's 180 s reservation and deletes it, retrying until ARM says it is gone.
 * Every deadline is an absolute time in context, rebuilt from the world after a restart.
 */

/** Who the NIC belongs to, as observed in the cluster. */
export type NicOwner = 'wants' | 'releasing' | 'gone';

export interface NicObservation {
  exists: boolean;
  /** A VM that references the NIC exists in ARM. */
  attached: boolean;
  owner: NicOwner;
  /** End of ARM's reservation, from the NodeClaim's vm-attempt annotation, if known. */
  reservedUntil?: number;
}

export interface NicContext {
  name: string;
  observed: NicObservation;
  reservedUntil: number;
  retryAt: number;
  attempts: number;
  /** When the current (or last) DELETE was sent: retries are paced from the request, not its answer. */
  deleteSentAt: number;
  lastError?: string;
}

export type NicEvent =
  | { type: 'OBSERVED'; observed: NicObservation }
  | { type: 'CREATE' }
  | { type: 'VM_ATTACHED' }
  | { type: 'VM_FAILED'; reservedUntil: number };

export interface NicInput {
  name: string;
  observed: NicObservation;
}

export type NicEmitted =
  | { type: 'nic.ready'; name: string }
  | { type: 'nic.createFailed'; name: string; code: string; kind: FailureAction['kind']; detail?: string }
  | { type: 'nic.reaped'; name: string };

export function createNicMachine(env: MachineEnv) {
  const now = (): number => env.clock.now();
  const notProvided = (name: string) => async (): Promise<never> => {
    throw new Error(`${name} effect not provided`);
  };
  const errorKind = (event: { error?: unknown }): string => failureOf(event).kind;

  return setup({
    types: {
      context: {} as NicContext,
      events: {} as NicEvent,
      input: {} as NicInput,
      emitted: {} as NicEmitted,
    },
    actors: {
      // Effects: the ARM calls, provided from effects.ts beside this file.
      putNic: fromPromise<void, { name: string }>(notProvided('putNic')),
      deleteNic: fromPromise<void, { name: string }>(notProvided('deleteNic')),
      /** GET: does the NIC exist? Lists lag behind ARM; a decision that the NIC is gone rests on a GET. */
      nicExists: fromPromise<boolean, { name: string }>(notProvided('nicExists')),
      /** GET: is the NIC still attached to a VM? (A list may still show a VM that is gone.) */
      nicAttachment: fromPromise<'attached' | 'detached' | 'absent', { name: string }>(notProvided('nicAttachment')),
    },
    guards: {
      isAbsent: ({ context }) => !context.observed.exists,
      isAttached: ({ context }) => context.observed.exists && context.observed.attached,
      ownerWantsIt: ({ context }) => context.observed.owner === 'wants',
      ownerReleasedIt: ({ context }) => context.observed.owner !== 'wants',
      observedAbsent: ({ event }) => event.type === 'OBSERVED' && !event.observed.exists,
      observedPresent: ({ event }) => event.type === 'OBSERVED' && event.observed.exists,
      observedAttached: ({ event }) => event.type === 'OBSERVED' && event.observed.exists && event.observed.attached,
      observedReleased: ({ event }) =>
        event.type === 'OBSERVED' && event.observed.exists && !event.observed.attached && event.observed.owner !== 'wants',
      observedOwnerGone: ({ event }) => event.type === 'OBSERVED' && !event.observed.exists && event.observed.owner !== 'wants',
      isReserved: ({ event }) => 'error' in event && errorKind(event) === 'reserved',
      isInUse: ({ event }) => 'error' in event && errorKind(event) === 'inUse',
      confirmedPresent: ({ event }) => 'output' in event && event.output === true,
      probedAbsent: ({ event }) => 'output' in event && event.output === 'absent',
      probedDetached: ({ event }) => 'output' in event && event.output === 'detached',
      observedOwnerLetGo: ({ event }) => event.type === 'OBSERVED' && event.observed.owner !== 'wants',
      isPermanentCreateFailure: ({ event }) =>
        'error' in event && ['subnetFull', 'invalid', 'insufficientCapacity', 'conflict'].includes(errorKind(event)),
    },
    actions: {
      storeObservation: assign({
        observed: ({ context, event }) => (event.type === 'OBSERVED' ? event.observed : context.observed),
        reservedUntil: ({ context, event }) =>
          event.type === 'OBSERVED' && event.observed.reservedUntil !== undefined
            ? Math.max(context.reservedUntil, event.observed.reservedUntil)
            : context.reservedUntil,
      }),
      recordVmFailure: assign({
        reservedUntil: ({ context, event }) =>
          event.type === 'VM_FAILED' ? Math.max(context.reservedUntil, event.reservedUntil) : context.reservedUntil,
      }),
      /**
       * ARM still refuses: its reservation ends later than we reckoned (a later start, jitter,
       * skew, an unknown attempt time). Ask again RESERVED_RETRY_MS after the refused request
       * was sent, so the answer's latency does not stretch the gap.
       */
      extendReservation: assign({
        reservedUntil: ({ context }) => Math.max(context.deleteSentAt + RESERVED_RETRY_MS, now() - RESERVATION_MARGIN_MS),
        attempts: ({ context }) => context.attempts + 1,
      }),
      noteDeleteSent: assign({ deleteSentAt: () => now() }),
      /** After ARM's Retry-After when it throttled, else after the backoff. */
      scheduleRetry: assign({
        retryAt: ({ context, event }) => now() + retryDelayMs(env, event as { error?: unknown }, context.attempts),
        attempts: ({ context }) => context.attempts + 1,
      }),
      resetAttempts: assign({ attempts: 0 }),
      /**
       * The next attachment probe: every ATTACHMENT_PROBE_MS around a reservation's end, else
       * backing off while the VM holds on (the one retry pattern: backoffMs).
       */
      scheduleProbe: assign({
        retryAt: ({ context }) =>
          now() + (now() - context.reservedUntil < RESERVATION_FRESH_MS ? ATTACHMENT_PROBE_MS : backoffMs(env, context.attempts, ATTACHMENT_PROBE_MS, ATTACHMENT_PROBE_MAX_MS)),
        attempts: ({ context }) => context.attempts + 1,
      }),
      /** A GET found the NIC the list did not show yet. */
      noteConfirmedPresent: assign({ observed: ({ context }) => ({ ...context.observed, exists: true }) }),
      noteDetached: assign({ observed: ({ context }) => ({ ...context.observed, exists: true, attached: false }) }),
      rememberError: assign({ lastError: ({ event }) => ('error' in event ? failureOf(event).code : undefined) }),
      emitReady: emit(({ context }) => ({ type: 'nic.ready' as const, name: context.name })),
      emitCreateFailed: emit(({ context, event }) => {
        const error = 'error' in event ? classified(event.error) : undefined;
        const action = error?.action;
        // A name conflict's words (the resource and its owner) go to the NodeClaim's condition and Event.
        const detail = action?.kind === 'conflict' && error?.original instanceof Error ? { detail: error.original.message } : {};
        return { type: 'nic.createFailed' as const, name: context.name, code: action?.code ?? 'Unknown', kind: action?.kind ?? 'invalid', ...detail };
      }),
      emitReaped: emit(({ context }) => ({ type: 'nic.reaped' as const, name: context.name })),
    },
    delays: {
      untilReservationEnds: ({ context }) => Math.max(0, context.reservedUntil + RESERVATION_MARGIN_MS - now()),
      untilRetry: ({ context }) => Math.max(0, context.retryAt - now()),
      /** Not before the reservation ends (a delete would be refused anyway), nor before the probe backoff says. */
      untilAttachmentProbe: ({ context }) => Math.max(0, context.reservedUntil + RESERVATION_MARGIN_MS - now(), context.retryAt - now()),
    },
  }).createMachine({
    id: 'nic',
    context: ({ input }) => ({
      name: input.name,
      observed: input.observed,
      reservedUntil: input.observed.reservedUntil ?? 0,
      retryAt: 0,
      attempts: 0,
      deleteSentAt: 0,
    }),
    initial: 'observing',
    // Every state stores what it observes; a state's own OBSERVED transitions are tried first
    // and fall through to this one (XState checks the parent when none is enabled).
    on: {
      OBSERVED: { actions: 'storeObservation' },
    },
    states: {
      // Rebuild from the world: where a restarted controller picks the NIC up.
      observing: {
        always: [
          { guard: 'isAttached', target: 'attached' },
          { guard: 'isAbsent', target: 'pending' },
          { guard: 'ownerWantsIt', target: 'nic-created' },
          { target: 'vm-failed' },
        ],
      },
      pending: {
        always: { guard: 'ownerReleasedIt', target: 'confirming-absent' },
        on: {
          CREATE: 'creating',
          OBSERVED: [
            { guard: 'observedOwnerGone', target: 'confirming-absent', actions: 'storeObservation' },
            { guard: 'observedPresent', target: 'observing', actions: 'storeObservation' },
          ],
        },
      },
      creating: {
        invoke: {
          src: 'putNic',
          input: ({ context }) => ({ name: context.name }),
          onDone: { target: 'nic-created', actions: 'resetAttempts' },
          onError: [
            { guard: 'isPermanentCreateFailure', target: 'create-failed', actions: ['rememberError', 'emitCreateFailed'] },
            { target: 'create-backoff', actions: ['rememberError', 'scheduleRetry'] },
          ],
        },
      },
      'create-backoff': {
        ...retryWait('creating'),
        on: {
          OBSERVED: [
            { guard: 'observedPresent', target: 'observing', actions: 'storeObservation' },
            // The NodeClaim went away while we were backing off: nothing to create any more (if a GET agrees).
            { guard: 'observedOwnerGone', target: 'confirming-absent', actions: 'storeObservation' },
          ],
        },
      },
      // ARM refused the NIC (e.g. subnet full): nothing was created, but look once more
      // in case a timed-out PUT did land.
      'create-failed': {
        on: {
          OBSERVED: [
            { guard: 'observedPresent', target: 'observing', actions: 'storeObservation' },
            { guard: 'observedOwnerGone', target: 'confirming-absent', actions: 'storeObservation' },
          ],
        },
      },
      // Entered after our PUT or after finding the NIC (a timed-out PUT that landed, a restart):
      // either way the NodeClaim may be waiting for it.
      'nic-created': {
        entry: 'emitReady',
        on: {
          VM_ATTACHED: 'attached',
          VM_FAILED: { target: 'vm-failed', actions: 'recordVmFailure' },
          OBSERVED: [
            { guard: 'observedAbsent', target: 'observing', actions: 'storeObservation' },
            { guard: 'observedAttached', target: 'attached', actions: 'storeObservation' },
            { guard: 'observedReleased', target: 'vm-failed', actions: 'storeObservation' },
          ],
        },
      },
      attached: {
        // Once the owner let go, a list that still shows the VM is not trusted for long: a GET
        // decides, ever less often while the VM holds on (its delete takes minutes).
        entry: 'scheduleProbe',
        after: { untilAttachmentProbe: { guard: 'ownerReleasedIt', target: 'probing-attachment' } },
        on: {
          VM_FAILED: { target: 'vm-failed', actions: 'recordVmFailure' },
          OBSERVED: [
            // deleteOption: Delete took the NIC with the VM (a GET confirms: lists lag).
            { guard: 'observedAbsent', target: 'confirming-absent', actions: 'storeObservation' },
            { guard: 'observedReleased', target: 'vm-failed', actions: 'storeObservation' },
            { guard: 'observedOwnerLetGo', target: 'attached', reenter: true, actions: ['storeObservation', 'resetAttempts'] },
          ],
        },
      },
      'probing-attachment': {
        invoke: {
          src: 'nicAttachment',
          input: ({ context }) => ({ name: context.name }),
          onDone: [
            { guard: 'probedAbsent', target: 'reaped' },
            { guard: 'probedDetached', target: 'vm-failed', actions: 'noteDetached' },
            { target: 'attached' },
          ],
          onError: { target: 'attached', actions: 'rememberError' },
        },
      },
      // Probes counted so far say nothing about the delete to come: its retries start afresh.
      'vm-failed': {
        entry: 'resetAttempts',
        always: 'reserved-180s',
      },
      // No observation leads back to `attached`: the reservation's end brings a GET that decides,
      // and a view that still showed the deleted VM (or the refused DELETE's retry 2 s later)
      // must not trade that for the attachment probe's 5 s cadence.
      'reserved-180s': {
        after: { untilReservationEnds: 'probing-before-delete' },
        on: {
          VM_FAILED: { actions: 'recordVmFailure' },
          OBSERVED: [
            { guard: 'observedAbsent', target: 'confirming-absent', actions: 'storeObservation' },
          ],
        },
      },
      // A Failed VM that ARM kept still holds the NIC until its own delete finishes (which may
      // be throttled past the reservation): a GET decides, so no DELETE is sent to an attached NIC.
      'probing-before-delete': {
        invoke: {
          src: 'nicAttachment',
          input: ({ context }) => ({ name: context.name }),
          onDone: [
            { guard: 'probedAbsent', target: 'reaped' },
            { guard: 'probedDetached', target: 'deleting', actions: 'noteDetached' },
            { target: 'attached' },
          ],
          // No answer is no proof of detachment: probe again, never DELETE blind.
          onError: [
            { target: 'probe-backoff', actions: ['rememberError', 'scheduleRetry'] },
          ],
        },
      },
      // Every retry after a wait (Retry-After, backoff), of a GET or of a DELETE, probes first:
      // the GET that cleared a DELETE is stale by then, so no DELETE rests on an old answer.
      'probe-backoff': {
        ...retryWait('probing-before-delete'),
        on: {
          OBSERVED: { guard: 'observedAbsent', target: 'confirming-absent', actions: 'storeObservation' },
        },
      },
      deleting: {
        entry: 'noteDeleteSent',
        invoke: {
          src: 'deleteNic',
          input: ({ context }) => ({ name: context.name }),
          onDone: 'reaped',
          onError: [
            { guard: 'isReserved', target: 'reserved-180s', actions: ['rememberError', 'extendReservation'] },
            { guard: 'isInUse', target: 'attached', actions: 'rememberError' },
            { target: 'probe-backoff', actions: ['rememberError', 'scheduleRetry'] },
          ],
        },
      },
      // A list without the NIC is a hint, not proof (ARM's lists trail its resources): GET decides.
      'confirming-absent': {
        invoke: {
          src: 'nicExists',
          input: ({ context }) => ({ name: context.name }),
          onDone: [{ guard: 'confirmedPresent', target: 'observing', actions: 'noteConfirmedPresent' }, { target: 'reaped' }],
          onError: [
            { target: 'confirm-backoff', actions: ['rememberError', 'scheduleRetry'] },
          ],
        },
      },
      'confirm-backoff': retryWait('confirming-absent'),
      reaped: {
        type: 'final',
        entry: 'emitReaped',
      },
    },
  });
}

export type NicMachine = ReturnType<typeof createNicMachine>;
