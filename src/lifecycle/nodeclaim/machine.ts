import { assign, emit, enqueueActions, fromPromise, setup } from 'xstate';
import type { FailureAction } from '../../azure/errors.js';
import type { VmPowerState, VmProvisioningState } from '../../ports/azure.js';
import { classified, failureOf } from '../failure.js';
import { backoffMs, reservationEnd, retryDelayMs, retryWait, type MachineEnv } from '../timing.js';

type InsufficientCapacity = Extract<FailureAction, { kind: 'insufficientCapacity' }>;

/**
 * The NodeClaim machine: pending → NIC → VM → launched → registered → initialized →
 * terminating → deleted, with the failure paths. It starts in `observing` and picks its
 * state from the world, so a restarted controller resumes every NodeClaim where ARM and
 * the API server say it is. The NIC is owned by its own machine (../nic/machine.ts); this one
 * asks for it, and on termination waits for it to be reaped before removing the finalizer.
 * Its effects live in the phase files beside it (launch, status, liveness, termination).
 */

export interface NodeClaimObservation {
  exists: boolean;
  deleting: boolean;
  /** When a VM PUT referencing the NIC was last issued (NodeClaim annotation). */
  vmAttemptAt?: number;
  launched: boolean;
  registered: boolean;
  initialized: boolean;
  nicExists: boolean;
  vm?: VmProvisioningState;
  /** The VM's power state when a GET showed it not running (lists never show one). */
  vmPower?: VmPowerState;
  /** `ready`: initialized as Karpenter has it; `kubeletReady` false: the Node's Ready condition is not True. */
  node?: { name: string; ready: boolean; kubeletReady?: boolean };
}

/** What a GET of a launched NodeClaim's VM showed: its provisioning state (undefined: 404) and power state. */
export interface InstanceState {
  vm: VmProvisioningState | undefined;
  power?: VmPowerState;
}

/**
 * Why a launched NodeClaim's instance is lost, in the reason values upstream counts it under:
 * the VM is gone (core's NodeClaim garbage collection), being deleted by someone else or
 * stopped/deallocated (the AWS provider's interruption controller: instance_terminated, instance_stopped).
 */
export type InstanceLoss = 'garbage_collected' | 'instance_terminated' | 'instance_stopped';

/**
 * What is reported for a loss: a spot VM that is gone or being deleted and that azflex did
 * not delete was evicted (its eviction policy is Delete), the AWS provider's spot_interrupted.
 */
export type ReportedLoss = InstanceLoss | 'spot_interrupted';

/** Power states in which a VM runs no kubelet and will not by itself again. */
const STOPPED_POWER: ReadonlySet<VmPowerState> = new Set(['stopping', 'stopped', 'deallocating', 'deallocated']);

/** How long a check that found the instance alive holds before the next may run (upstream's GC looks every 2 minutes). */
export const INSTANCE_RECHECK_MS = 60_000;

export interface LaunchFailure {
  code: string;
  action: FailureAction['kind'];
  /** For capacity errors: the classified error, for the unavailable-offerings cache. */
  capacity?: InsufficientCapacity;
  /** Whether a VM PUT referenced the NIC, i.e. ARM holds a 180 s reservation on it. */
  nicReserved: boolean;
  /** ARM's own words, when the failure was an answer of ARM's. */
  detail?: string;
}

export interface NodeClaimContext {
  name: string;
  nicName: string;
  observed: NodeClaimObservation;
  vmAttemptAt?: number;
  failure?: LaunchFailure;
  /** Set only by evidence gathered while terminating: NIC_REAPED, or an observation without the NIC. */
  nicGone: boolean;
  retryAt: number;
  attempts: number;
  /** Set once a GET showed the launched instance lost (gone, deleted by someone else, stopped). */
  lost?: { loss: InstanceLoss; state: InstanceState };
}

/**
 * Whether the world suggests a launched NodeClaim's instance is lost, to be confirmed by a GET:
 * the view has no VM (or shows it Deleting, or a GET showed it stopped), or an initialized
 * node's kubelet stopped reporting Ready (a VM that is deleted or deallocated runs none; only
 * a node that was initialized counts, as a registering node is NotReady at first).
 */
function instanceSuspect(o: NodeClaimObservation, initialized: boolean): boolean {
  if (!o.exists || o.deleting) return false;
  if (o.vm === undefined || o.vm === 'Deleting') return true;
  if (o.vmPower !== undefined && STOPPED_POWER.has(o.vmPower)) return true;
  return initialized && o.node?.kubeletReady === false;
}

/** What a confirming GET means, upstream's way: gone counts only once the node's kubelet is not Ready (it may be right while it reports). */
export function instanceLoss(state: InstanceState, observed: NodeClaimObservation): InstanceLoss | undefined {
  if (state.vm === 'Deleting') return 'instance_terminated';
  if (state.vm === undefined) return observed.node !== undefined && observed.node.kubeletReady !== false ? undefined : 'garbage_collected';
  if (state.power !== undefined && STOPPED_POWER.has(state.power)) return 'instance_stopped';
  return undefined;
}

export type NodeClaimEvent =
  | { type: 'OBSERVED'; observed: NodeClaimObservation }
  | { type: 'NIC_READY' }
  | { type: 'NIC_FAILED'; code: string; kind: FailureAction['kind']; detail?: string }
  | { type: 'NIC_REAPED' };

export interface NodeClaimInput {
  name: string;
  nicName: string;
  observed: NodeClaimObservation;
}

export type NodeClaimEmitted =
  | { type: 'nic.requested'; nodeClaim: string; nic: string }
  | { type: 'vm.launched'; nodeClaim: string; nic: string }
  | { type: 'vm.failed'; nodeClaim: string; nic: string; reservedUntil: number; code: string };

/** Every effect is invoked with the NodeClaim's name (some with more). */
const byName = ({ context }: { context: NodeClaimContext }) => ({ name: context.name });

/** An observation of a NodeClaim that exists and is not being deleted (the root handles the others). */
function live(event: NodeClaimEvent): NodeClaimObservation | undefined {
  return event.type === 'OBSERVED' && event.observed.exists && !event.observed.deleting ? event.observed : undefined;
}

const UNKNOWN_FAILURE: LaunchFailure = { code: 'Unknown', action: 'transient', nicReserved: false };

export function createNodeClaimMachine(env: MachineEnv) {
  const now = (): number => env.clock.now();
  const notProvided = (name: string) => async (): Promise<never> => {
    throw new Error(`${name} effect not provided`);
  };

  return setup({
    types: {
      context: {} as NodeClaimContext,
      events: {} as NodeClaimEvent,
      input: {} as NodeClaimInput,
      emitted: {} as NodeClaimEmitted,
    },
    actors: {
      // Effects, provided from the phase files (../machines.ts).
      recordVmAttempt: fromPromise<number, { name: string }>(notProvided('recordVmAttempt')),
      createVm: fromPromise<VmProvisioningState, { name: string }>(notProvided('createVm')),
      /** GET of the NodeClaim's VM (undefined: none). Lists lag; "no VM" is decided by a GET. */
      getVmState: fromPromise<VmProvisioningState | undefined, { name: string }>(notProvided('getVmState')),
      /** GET of a launched NodeClaim's VM with its instance view: is the instance still there and running? */
      getInstanceState: fromPromise<InstanceState, { name: string }>(notProvided('getInstanceState')),
      /** Upstream's reaction to a lost instance: Events, the disrupted metric, the NodeClaim deleted. */
      disruptLostInstance: fromPromise<void, { name: string; loss: InstanceLoss; state: InstanceState }>(notProvided('disruptLostInstance')),
      markLaunched: fromPromise<void, { name: string }>(notProvided('markLaunched')),
      markRegistered: fromPromise<void, { name: string }>(notProvided('markRegistered')),
      markInitialized: fromPromise<void, { name: string }>(notProvided('markInitialized')),
      failLaunch: fromPromise<void, { name: string; failure: LaunchFailure }>(notProvided('failLaunch')),
      drain: fromPromise<boolean, { name: string }>(notProvided('drain')),
      deleteVm: fromPromise<void, { name: string }>(notProvided('deleteVm')),
      finalize: fromPromise<void, { name: string }>(notProvided('finalize')),
    },
    guards: {
      isGone: ({ context }) => !context.observed.exists,
      isDeleting: ({ context }) => context.observed.deleting,
      isInitialized: ({ context }) => context.observed.initialized || (context.observed.node?.ready ?? false),
      isRegistered: ({ context }) => context.observed.registered || context.observed.node !== undefined,
      vmSucceeded: ({ context }) => context.observed.vm === 'Succeeded',
      vmInFlight: ({ context }) => context.observed.vm === 'Creating',
      vmFailedInArm: ({ context }) => context.observed.vm === 'Failed',
      /** A VM PUT was issued (annotation) but no VM exists: that attempt failed or never landed. */
      attemptLeftNoVm: ({ context }) => context.observed.vmAttemptAt !== undefined && context.observed.vm === undefined,
      nicExists: ({ context }) => context.observed.nicExists,
      /** No Node was ever seen for it (none observed, never marked Registered): there is nothing to drain. */
      neverRegistered: ({ context }) => !context.observed.registered && context.observed.node === undefined,
      observedGone: ({ event }) => event.type === 'OBSERVED' && !event.observed.exists,
      observedDeleting: ({ event }) => event.type === 'OBSERVED' && event.observed.exists && event.observed.deleting,
      observedVmSucceeded: ({ event }) => live(event)?.vm === 'Succeeded',
      observedVmGoneOrFailed: ({ event }) => {
        const o = live(event);
        return o !== undefined && (o.vm === undefined || o.vm === 'Failed');
      },
      observedNode: ({ event }) => live(event)?.node !== undefined,
      observedNodeReady: ({ event }) => live(event)?.node?.ready ?? false,
      /** The launched instance may be lost (launched or registered: from ARM's view only; initialized: also a NotReady kubelet). */
      observedInstanceSuspect: ({ event }, params: { initialized: boolean }) => event.type === 'OBSERVED' && instanceSuspect(event.observed, params.initialized),
      /** Restored after a restart: a launched NodeClaim whose instance the world shows lost. */
      launchedInstanceSuspect: ({ context }) =>
        (context.observed.launched || context.observed.registered || context.observed.initialized) && context.observed.vmAttemptAt !== undefined &&
        instanceSuspect(context.observed, context.observed.initialized),
      instanceLost: ({ context, event }) => 'output' in event && instanceLoss(event.output as InstanceState, context.observed) !== undefined,
      /** A gone instance's node runs nothing: no drain (upstream removes the node of a NotReady kubelet whose instance is gone). */
      lostInstanceGone: ({ context }) => context.lost?.loss === 'garbage_collected' || context.lost?.loss === 'instance_terminated',
      vmResultSucceeded: ({ event }) => 'output' in event && event.output === 'Succeeded',
      vmResultInFlight: ({ event }) => 'output' in event && event.output === 'Creating',
      vmResultFailed: ({ event }) => 'output' in event && event.output === 'Failed',
      /** The VM create's failure, classified by the effect, is one to retry (not a failed launch). */
      isThrottledOrTransient: ({ event }) => ['throttled', 'transient'].includes(failureOf(event as { error?: unknown }).kind),
      drained: ({ event }) => 'output' in event && event.output === true,
      /** The NIC machine reported the NIC gone, or the world shows it gone. */
      nicReleased: ({ context }) => context.nicGone,
      observedNicGone: ({ event }) => event.type === 'OBSERVED' && !event.observed.nicExists,
      observedNicPresent: ({ event }) => live(event)?.nicExists ?? false,
      /** The VM is still there and no delete is running (a stale list, or a delete ARM failed): ask again. */
      observedVmNotDeleting: ({ event }) =>
        event.type === 'OBSERVED' && event.observed.vm !== undefined && event.observed.vm !== 'Deleting',
    },
    actions: {
      storeObservation: assign({
        observed: ({ context, event }) => (event.type === 'OBSERVED' ? event.observed : context.observed),
      }),
      markNicGone: assign({ nicGone: true }),
      forgetNicEvidence: assign({ nicGone: false }),
      noteNicFromObservation: assign({
        nicGone: ({ context, event }) => (event.type === 'OBSERVED' ? !event.observed.nicExists : context.nicGone),
      }),
      rememberAttempt: assign({ vmAttemptAt: ({ event }) => ('output' in event ? (event.output as number) : undefined) }),
      restoreAttempt: assign({ vmAttemptAt: ({ context }) => context.observed.vmAttemptAt }),
      requestNic: emit(({ context }) => ({ type: 'nic.requested' as const, nodeClaim: context.name, nic: context.nicName })),
      announceLaunched: emit(({ context }) => ({ type: 'vm.launched' as const, nodeClaim: context.name, nic: context.nicName })),
      /** The failure as the create effect classified it, with ARM's words for the NodeClaim's Event and condition. */
      recordVmFailure: assign({
        failure: ({ event }) => {
          const error = classified((event as { error?: unknown }).error);
          const action = error.action;
          const capacity = action.kind === 'insufficientCapacity' ? action : undefined;
          const detail = error.original instanceof Error && error.original.message ? error.original.message : undefined;
          // A name conflict is found by the GET before the PUT: no PUT referenced the NIC.
          return { code: action.code, action: action.kind, nicReserved: action.kind !== 'conflict', capacity, ...(detail ? { detail } : {}) };
        },
      }),
      recordLostAttempt: assign({
        failure: () => ({ code: 'VmAttemptLost', action: 'transient' as const, nicReserved: true }),
      }),
      recordVmFailedInArm: assign({
        failure: () => ({ code: 'ProvisioningStateFailed', action: 'insufficientCapacity' as const, nicReserved: true }),
      }),
      recordNicFailure: assign({
        failure: ({ event }) => (event.type === 'NIC_FAILED' ? { code: event.code, action: event.kind, nicReserved: false, ...(event.detail ? { detail: event.detail } : {}) } : UNKNOWN_FAILURE),
      }),
      /** The NIC machine is told when ARM's reservation ends only if a VM PUT referenced the NIC. */
      announceFailure: enqueueActions(({ context, enqueue }) => {
        const failure = context.failure ?? UNKNOWN_FAILURE;
        if (!failure.nicReserved) return;
        enqueue.emit({ type: 'vm.failed', nodeClaim: context.name, nic: context.nicName, reservedUntil: reservationEnd(context.vmAttemptAt ?? now()), code: failure.code });
      }),
      scheduleBackoff: assign({
        retryAt: ({ context }) => now() + backoffMs(env, context.attempts),
        attempts: ({ context }) => context.attempts + 1,
      }),
      /** After ARM's Retry-After when it throttled, else after the backoff. */
      scheduleRetry: assign({
        retryAt: ({ context, event }) => now() + retryDelayMs(env, event as { error?: unknown }, context.attempts),
        attempts: ({ context }) => context.attempts + 1,
      }),
      resetAttempts: assign({ attempts: 0 }),
      recordLostInstance: assign({
        lost: ({ context, event }) => {
          const state = (event as { output?: InstanceState }).output ?? { vm: undefined };
          return { loss: instanceLoss(state, context.observed) ?? 'garbage_collected', state };
        },
      }),
    },
    delays: {
      untilRetry: ({ context }) => Math.max(0, context.retryAt - now()),
      drainPoll: 5_000,
      instanceRecheck: INSTANCE_RECHECK_MS,
    },
  }).createMachine({
    id: 'nodeclaim',
    context: ({ input }) => ({
      name: input.name,
      nicName: input.nicName,
      observed: input.observed,
      vmAttemptAt: input.observed.vmAttemptAt,
      nicGone: false,
      retryAt: 0,
      attempts: 0,
    }),
    initial: 'observing',
    // Every state hears this unless it says otherwise: a child's own OBSERVED transitions
    // are tried first and fall through to these (XState checks the parent when none is enabled).
    on: {
      OBSERVED: [
        { guard: 'observedGone', target: '.deleted', actions: 'storeObservation' },
        { guard: 'observedDeleting', target: '.terminating', actions: 'storeObservation' },
        { actions: 'storeObservation' },
      ],
    },
    states: {
      // Rebuild from the world after a (re)start.
      observing: {
        always: [
          { guard: 'isGone', target: 'deleted' },
          { guard: 'isDeleting', target: 'terminating' },
          { guard: 'launchedInstanceSuspect', target: 'confirming-instance' },
          { guard: 'isInitialized', target: 'initialized' },
          { guard: 'isRegistered', target: 'registered' },
          { guard: 'vmSucceeded', target: 'launched' },
          { guard: 'vmInFlight', target: 'launching.awaiting-vm', actions: 'restoreAttempt' },
          { guard: 'vmFailedInArm', target: 'launch-failed', actions: ['restoreAttempt', 'recordVmFailedInArm'] },
          { guard: 'attemptLeftNoVm', target: 'launching.confirming-vm', actions: 'restoreAttempt' },
          { target: 'pending' },
        ],
      },
      pending: {
        always: [{ guard: 'nicExists', target: 'launching.recording-attempt' }, { target: 'launching.creating-nic' }],
      },
      launching: {
        initial: 'creating-nic',
        states: {
          'creating-nic': {
            entry: 'requestNic',
            on: {
              NIC_READY: 'recording-attempt',
              OBSERVED: { guard: 'observedNicPresent', target: 'recording-attempt', actions: 'storeObservation' },
              NIC_FAILED: { target: '#nodeclaim.launch-failed', actions: 'recordNicFailure' },
            },
          },
          // The attempt time goes into the NodeClaim *before* the VM PUT: it is what lets a
          // restarted controller know when ARM's reservation on the NIC ends.
          'recording-attempt': {
            invoke: {
              src: 'recordVmAttempt',
              input: byName,
              onDone: { target: 'creating-vm', actions: 'rememberAttempt' },
              onError: { target: 'backoff', actions: 'scheduleBackoff' },
            },
          },
          'creating-vm': {
            invoke: {
              src: 'createVm',
              input: byName,
              onDone: [
                { guard: 'vmResultSucceeded', target: '#nodeclaim.launched', actions: ['resetAttempts', 'announceLaunched'] },
                { guard: 'vmResultInFlight', target: 'awaiting-vm' },
                { target: '#nodeclaim.launch-failed', actions: 'recordVmFailedInArm' },
              ],
              // A throttled or transient create records a new attempt before it tries again.
              onError: [
                { guard: 'isThrottledOrTransient', target: 'backoff', actions: 'scheduleRetry' },
                { target: '#nodeclaim.launch-failed', actions: 'recordVmFailure' },
              ],
            },
          },
          backoff: retryWait('recording-attempt'),
          // The list shows no VM (or a Failed one) for an attempt: a list is not proof, a GET is.
          'confirming-vm': {
            invoke: {
              src: 'getVmState',
              input: byName,
              onDone: [
                { guard: 'vmResultSucceeded', target: '#nodeclaim.launched', actions: ['resetAttempts', 'announceLaunched'] },
                { guard: 'vmResultInFlight', target: 'awaiting-vm' },
                { guard: 'vmResultFailed', target: '#nodeclaim.launch-failed', actions: 'recordVmFailedInArm' },
                { target: '#nodeclaim.launch-failed', actions: 'recordLostAttempt' },
              ],
              onError: { target: 'confirm-backoff', actions: 'scheduleRetry' },
            },
          },
          'confirm-backoff': retryWait('confirming-vm'),
          'awaiting-vm': {
            on: {
              OBSERVED: [
                { guard: 'observedVmSucceeded', target: '#nodeclaim.launched', actions: ['storeObservation', 'announceLaunched'] },
                { guard: 'observedVmGoneOrFailed', target: 'confirming-vm', actions: 'storeObservation' },
              ],
            },
          },
        },
      },
      // Karpenter semantics: a launch that fails deletes the NodeClaim (and, for capacity
      // errors, marks the offering unavailable); the provisioner makes a new one later.
      'launch-failed': {
        entry: 'announceFailure',
        always: 'deleting-claim',
      },
      // A launch that failed before any Node registered has no pods to drain: its VM (a Failed
      // one ARM kept, if any) is deleted next. A Node seen meanwhile is drained as usual.
      'deleting-claim': {
        invoke: {
          src: 'failLaunch',
          input: ({ context }) => ({ name: context.name, failure: context.failure ?? UNKNOWN_FAILURE }),
          onDone: [{ guard: 'neverRegistered', target: 'terminating.deleting-vm' }, { target: 'terminating' }],
          onError: { target: 'deleting-claim-backoff', actions: 'scheduleBackoff' },
        },
      },
      'deleting-claim-backoff': retryWait('deleting-claim'),
      launched: {
        invoke: { src: 'markLaunched', input: byName, onError: { target: 'launched-backoff', actions: 'scheduleBackoff' } },
        on: {
          OBSERVED: [
            { guard: { type: 'observedInstanceSuspect', params: { initialized: false } }, target: 'confirming-instance', actions: 'storeObservation' },
            { guard: 'observedNode', target: 'registered', actions: 'storeObservation' },
          ],
        },
      },
      'launched-backoff': retryWait('launched'),
      registered: {
        invoke: { src: 'markRegistered', input: byName, onError: { target: 'registered-backoff', actions: 'scheduleBackoff' } },
        on: {
          OBSERVED: [
            { guard: { type: 'observedInstanceSuspect', params: { initialized: false } }, target: 'confirming-instance', actions: 'storeObservation' },
            { guard: 'observedNodeReady', target: 'initialized', actions: 'storeObservation' },
          ],
        },
      },
      'registered-backoff': retryWait('registered'),
      initialized: {
        invoke: { src: 'markInitialized', input: byName, onError: { target: 'initialized-backoff', actions: 'scheduleBackoff' } },
        on: {
          OBSERVED: { guard: { type: 'observedInstanceSuspect', params: { initialized: true } }, target: 'confirming-instance', actions: 'storeObservation' },
        },
      },
      'initialized-backoff': retryWait('initialized'),
      // The view suggests the launched instance is lost (lists lag; a kubelet may stop for other
      // reasons): a GET with the instance view decides, as upstream asks the cloud provider.
      'confirming-instance': {
        invoke: {
          src: 'getInstanceState',
          input: byName,
          onDone: [
            { guard: 'instanceLost', target: 'instance-lost', actions: 'recordLostInstance' },
            { target: 'instance-alive' },
          ],
          onError: { target: 'confirming-instance-backoff', actions: 'scheduleRetry' },
        },
      },
      'confirming-instance-backoff': retryWait('confirming-instance'),
      // Still there and running (or gone while its kubelet still reports Ready): look again later.
      'instance-alive': {
        after: { instanceRecheck: 'observing' },
      },
      // Deleted, deleted by someone else, stopped or deallocated: the NodeClaim goes, as upstream
      // has it (Events, the disrupted metric); its pods are planned again and its VM, NIC and disk
      // are cleaned up by the usual termination.
      'instance-lost': {
        invoke: {
          src: 'disruptLostInstance',
          input: ({ context }) => ({ name: context.name, loss: context.lost?.loss ?? 'garbage_collected', state: context.lost?.state ?? { vm: undefined } }),
          onDone: [{ guard: 'lostInstanceGone', target: 'terminating.deleting-vm' }, { target: 'terminating' }],
          onError: { target: 'instance-lost-backoff', actions: 'scheduleBackoff' },
        },
      },
      'instance-lost-backoff': retryWait('instance-lost'),
      terminating: {
        initial: 'draining',
        entry: 'forgetNicEvidence',
        // Not the root's: a deleting NodeClaim stays here, and a list's word on the NIC is noted.
        on: {
          OBSERVED: [
            { guard: 'observedGone', target: 'deleted', actions: 'storeObservation' },
            { actions: ['storeObservation', 'noteNicFromObservation'] },
          ],
          NIC_REAPED: { actions: 'markNicGone' },
        },
        states: {
          draining: {
            invoke: {
              src: 'drain',
              input: byName,
              onDone: [{ guard: 'drained', target: 'deleting-vm' }, { target: 'drain-wait' }],
              onError: { target: 'drain-wait' },
            },
          },
          'drain-wait': retryWait('draining', 'drainPoll'),
          'deleting-vm': {
            invoke: {
              src: 'deleteVm',
              input: byName,
              onDone: 'awaiting-nic-release',
              onError: { target: 'delete-backoff', actions: 'scheduleRetry' },
            },
          },
          'delete-backoff': retryWait('deleting-vm'),
          // The finalizer stays until the NIC machine has reaped the NIC: the NodeClaim
          // (and its vm-attempt annotation) is the durable record that guards against a leak.
          // The VM delete was only started (GPU VMs take minutes): the world shows it finish,
          // and a VM seen again without a running delete is deleted again.
          'awaiting-nic-release': {
            always: { guard: 'nicReleased', target: 'finalizing' },
            on: {
              NIC_REAPED: { target: 'finalizing', actions: 'markNicGone' },
              // A list without the NIC only notes it; `nicReleased` decides (the runtime also
              // waits for a NIC machine still at work), and finalize confirms with GETs. A list
              // that shows the NIC does not undo a NIC_REAPED here (the last candidate stores
              // only; terminating's handler would note the NIC present again).
              OBSERVED: [
                { guard: 'observedNicGone', actions: ['storeObservation', 'noteNicFromObservation'] },
                { guard: 'observedVmNotDeleting', target: 'deleting-vm', actions: 'storeObservation' },
                { actions: 'storeObservation' },
              ],
            },
          },
          finalizing: {
            invoke: {
              src: 'finalize',
              input: byName,
              onDone: '#nodeclaim.deleted',
              onError: { target: 'finalize-backoff', actions: 'scheduleBackoff' },
            },
          },
          'finalize-backoff': retryWait('finalizing'),
        },
      },
      deleted: { type: 'final' },
    },
  });
}

export type NodeClaimMachine = ReturnType<typeof createNodeClaimMachine>;
