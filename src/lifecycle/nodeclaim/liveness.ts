/**
 * Liveness: a NodeClaim that does not launch within 5 minutes (of its creation, or of its
 * first VM attempt after ARM made it wait; never while ARM makes it wait), or whose node does not
 * register within 15 minutes of launch, is deleted (Karpenter's timeouts) — through the
 * normal deletion path, so the NodeClaim machine tears the VM and NIC down leak-free — and
 * its NodePool is marked NodeRegistrationHealthy=False so operators see a pool that cannot
 * produce working nodes (bad image, broken bootstrap, unreachable API server).
 * A later successful registration in the pool flips the condition back to True.
 *
 * And the liveness of a launched instance (instanceActors, at the end): one the view suggests
 * is lost is confirmed by a GET, and a lost one's NodeClaim is deleted as upstream does.
 */
import { fromPromise } from 'xstate';
import type { ClusterPort, Condition, NodeClaim, NodePool } from '../../ports/cluster.js';
import type { Clock } from '../../ports/clock.js';
import { isFlexNodePool } from '../../provisioning/scheduler.js';
import type { ProvisionerLog } from '../../provisioning/provisioner.js';
import { CAPACITY_TYPE_SPOT, LABEL_CAPACITY_TYPE, LABEL_NODEPOOL } from '../../apis/well-known.js';
import { walkAlongside } from '../../utils/list-walk.js';
import { namesOf, nodeClassOf, nodeOf, observedNodeClaim, refIn, type LifecycleScope } from '../scope.js';
import { ours } from '../ownership.js';
import type { InstanceLoss, InstanceState, ReportedLoss } from './machine.js';

export const LAUNCH_TIMEOUT_MS = 5 * 60_000;
/**
 * Launched=Unknown with this reason: ARM throttled the NodeClaim's VM create (a local refusal
 * at the ARM gate or a 429), so no launch was attempted and none failed. Such a NodeClaim is
 * waiting its turn behind azflex's own write budget (Compute's PutVM3Min lets 240 creates
 * through per 3 minutes), and the launch timeout does not run meanwhile.
 */
export const LAUNCH_REASON_THROTTLED = 'Throttled';
export const REGISTRATION_TIMEOUT_MS = 15 * 60_000;
export const CONDITION_NODE_REGISTRATION_HEALTHY = 'NodeRegistrationHealthy';

export type LivenessFailure = 'LaunchTimeout' | 'RegistrationTimeout';

function condition(claim: NodeClaim, type: string): Condition | undefined {
  return claim.status.conditions.find((c) => c.type === type);
}

function isTrue(claim: NodeClaim, type: string): boolean {
  return condition(claim, type)?.status === 'True';
}

/** When the NodeClaim times out, and why; undefined while no timeout runs (deleting, registered, throttled). */
export function livenessDeadline(claim: NodeClaim): { at: number; failure: LivenessFailure } | undefined {
  if (claim.metadata.deletionTimestamp) return undefined;
  if (isTrue(claim, 'Registered')) return undefined;
  const created = Date.parse(claim.metadata.creationTimestamp);
  const launched = condition(claim, 'Launched');
  if (launched?.status !== 'True') {
    if (launched?.reason === LAUNCH_REASON_THROTTLED) return undefined;
    // Upstream times the launch from the Launched condition's last transition: here the first
    // VM attempt after a throttled wait (Throttled -> Launching), else the NodeClaim's creation.
    const transitioned = launched ? Date.parse(launched.lastTransitionTime) : Number.NaN;
    const since = Number.isNaN(transitioned) ? created : Math.max(created, transitioned);
    return { at: since + LAUNCH_TIMEOUT_MS, failure: 'LaunchTimeout' };
  }
  const launchedAt = Date.parse(launched.lastTransitionTime);
  const since = Number.isNaN(launchedAt) ? created : launchedAt;
  return { at: since + REGISTRATION_TIMEOUT_MS, failure: 'RegistrationTimeout' };
}

/** Why the NodeClaim has outlived its launch or registration deadline, or undefined. */
export function livenessFailure(claim: NodeClaim, now: number): LivenessFailure | undefined {
  const deadline = livenessDeadline(claim);
  // (An unparseable timestamp makes `at` NaN: never due.)
  return deadline && now >= deadline.at ? deadline.failure : undefined;
}

export function withCondition(conditions: readonly Condition[], next: Omit<Condition, 'lastTransitionTime'>, nowIso: string): Condition[] {
  const existing = conditions.find((c) => c.type === next.type);
  if (existing && existing.status === next.status && existing.reason === next.reason && existing.message === next.message) return [...conditions];
  const lastTransitionTime = existing && existing.status === next.status ? existing.lastTransitionTime : nowIso;
  return [...conditions.filter((c) => c.type !== next.type), { ...next, lastTransitionTime }];
}

export interface LivenessOptions {
  cluster: ClusterPort;
  clock: Clock;
  log: ProvisionerLog;
  /** Observer (src/metrics): a timed-out NodeClaim was deleted. */
  onTimedOut?: (action: LivenessAction, claim: NodeClaim) => void;
}

export interface LivenessAction {
  nodeClaim: string;
  nodePool: string | undefined;
  failure: LivenessFailure;
}

interface ClaimTimes {
  version: string | undefined;
  pass: number;
  deadline: ReturnType<typeof livenessDeadline>;
  /** When its Registered condition turned True; undefined while it is not True. */
  registeredAt: number | undefined;
}

export class LivenessController {
  /**
   * Each NodeClaim's deadline and registration time, by name, while its resourceVersion is the
   * one they were worked out for; `pass` marks the entries a pass looked at (the others are gone).
   */
  private readonly claims = new Map<string, ClaimTimes>();
  private pass = 0;
  /**
   * The last pass that deleted nothing and found every pool healthy, and its earliest deadline:
   * with the same NodeClaim objects (all with resourceVersions) and pools, a pass before that
   * deadline would do nothing either (a 1,000-node fleet re-parsed every claim's timestamps twice a minute).
   */
  private idle: { claims: readonly NodeClaim[]; pools: string; dueAt: number } | undefined;
  /**
   * The list `claims` and `deadlines` were last brought up to, and the pools it was read with:
   * each pass walks the new list alongside it (src/utils/list-walk.ts), so it pays for the
   * NodeClaims written, added or gone, and looks at the whole list only when a deadline is due.
   */
  private tracked: { claims: readonly NodeClaim[]; pools: string } | undefined;
  /** Deadline by NodeClaim name, for the tracked NodeClaims of flex pools that have one. */
  private readonly deadlines = new Map<string, number>();

  constructor(private readonly options: LivenessOptions) {}

  async reconcile(): Promise<LivenessAction[]> {
    const { cluster, clock, log } = this.options;
    const now = clock.now();
    const nowIso = new Date(now).toISOString();
    const [nodeClaims, nodePools] = await Promise.all([cluster.listNodeClaims(), cluster.listNodePools()]);
    const flexPools = new Map(nodePools.filter(isFlexNodePool).map((p) => [p.metadata.name, p]));
    const pools = [...flexPools.keys()].join('\n');
    const healthy = [...flexPools.values()].every((p) => !p.status.conditions.some((c) => c.type === CONDITION_NODE_REGISTRATION_HEALTHY && c.status === 'False'));
    const idle = this.idle;
    if (healthy && idle && now < idle.dueAt && idle.pools === pools && sameClaims(idle.claims, nodeClaims)) return [];
    this.idle = undefined;
    const actions: LivenessAction[] = [];
    const failedPools = new Map<string, LivenessAction>();
    let dueAt = Number.POSITIVE_INFINITY;
    if (this.track(nodeClaims, flexPools, pools)) {
      for (const at of this.deadlines.values()) if (at < dueAt) dueAt = at;
    }
    // Nothing due (or nothing tracked): the whole list in order, as a pass from scratch looks at it.
    if (this.tracked === undefined || now >= dueAt) dueAt = await this.sweep(nodeClaims, flexPools, now, actions, failedPools);
    if (actions.length === 0 && healthy) this.idle = { claims: nodeClaims, pools, dueAt };
    for (const pool of flexPools.values()) {
      const failed = failedPools.get(pool.metadata.name);
      const next = failed
        ? { type: CONDITION_NODE_REGISTRATION_HEALTHY, status: 'False' as const, reason: failed.failure, message: `NodeClaim ${failed.nodeClaim} timed out (${failed.failure})` }
        : this.recovered(pool, nodeClaims);
      if (!next) continue;
      const conditions = withCondition(pool.status.conditions, next, nowIso);
      if (sameConditions(conditions, pool.status.conditions)) continue;
      try {
        await cluster.updateNodePoolStatus(pool.metadata.name, { ...pool.status, conditions });
      } catch (error) {
        log.warn({ nodePool: pool.metadata.name, err: error instanceof Error ? error.message : String(error) }, 'updating NodePool condition failed');
      }
    }
    return actions;
  }

  /**
   * Looks at every NodeClaim of a flex pool in list order: deletes those whose deadline has
   * passed, and returns the earliest deadline still ahead.
   */
  private async sweep(
    nodeClaims: readonly NodeClaim[], flexPools: ReadonlyMap<string, NodePool>, now: number,
    actions: LivenessAction[], failedPools: Map<string, LivenessAction>,
  ): Promise<number> {
    const { cluster, log } = this.options;
    let dueAt = Number.POSITIVE_INFINITY;
    const pass = ++this.pass;
    let looked = 0;
    for (const claim of nodeClaims) {
      const poolName = claim.metadata.labels[LABEL_NODEPOOL];
      if (poolName === undefined || !flexPools.has(poolName)) continue;
      const times = this.timesOf(claim);
      if (times.pass !== pass) {
        times.pass = pass;
        looked++;
      }
      const deadline = times.deadline;
      if (!deadline) continue;
      // (A claim whose delete fails below keeps a deadline already due: the next pass looks again.)
      if (deadline.at < dueAt) dueAt = deadline.at;
      if (!(now >= deadline.at)) continue;
      const failure = deadline.failure;
      const action: LivenessAction = { nodeClaim: claim.metadata.name, nodePool: poolName, failure };
      try {
        await cluster.deleteNodeClaim(claim.metadata.name);
      } catch (error) {
        log.warn({ nodeClaim: claim.metadata.name, err: error instanceof Error ? error.message : String(error) }, 'deleting timed-out NodeClaim failed');
        continue;
      }
      actions.push(action);
      this.options.onTimedOut?.(action, claim);
      failedPools.set(poolName, action);
      log.warn({ nodeClaim: claim.metadata.name, nodePool: poolName, failure }, 'NodeClaim timed out; deleting');
      await cluster.recordEvent({
        involvedObject: { kind: 'NodeClaim', name: claim.metadata.name, uid: claim.metadata.uid },
        type: 'Warning',
        reason: failure,
        message: failure === 'LaunchTimeout'
          ? `NodeClaim not launched within ${LAUNCH_TIMEOUT_MS / 60_000}m; deleting`
          : `Node not registered within ${REGISTRATION_TIMEOUT_MS / 60_000}m of launch; deleting`,
      }).catch(() => undefined);
    }
    if (this.claims.size > looked) for (const [name, times] of this.claims) if (times.pass !== pass) this.claims.delete(name);
    return dueAt;
  }

  /**
   * Brings `claims` and `deadlines` to the list by walking it alongside the last one; false
   * (and nothing is tracked until a list allows it again) when a NodeClaim has no
   * resourceVersion (it may have changed in place) or a name is listed twice.
   */
  private track(nodeClaims: readonly NodeClaim[], flexPools: ReadonlyMap<string, NodePool>, pools: string): boolean {
    let ok = true;
    const note = (claim: NodeClaim, added: boolean): void => {
      const name = claim.metadata.name;
      if (claim.metadata.resourceVersion === undefined || (added && this.claims.has(name))) ok = false;
      if (!ok) return;
      const poolName = claim.metadata.labels[LABEL_NODEPOOL];
      if (poolName === undefined || !flexPools.has(poolName)) {
        this.forget(name);
        return;
      }
      const deadline = this.timesOf(claim).deadline;
      if (deadline) this.deadlines.set(name, deadline.at);
      else this.deadlines.delete(name);
    };
    const last = this.tracked;
    this.tracked = undefined;
    const walked = last !== undefined && last.pools === pools && walkAlongside(last.claims, nodeClaims, sameName, {
      replaced: (_old, claim) => note(claim, false),
      removed: (old) => this.forget(old.metadata.name),
      added: (claim) => note(claim, true),
    }, Math.max(64, nodeClaims.length >> 2));
    if (!walked || !ok) {
      ok = true;
      this.claims.clear();
      this.deadlines.clear();
      for (const claim of nodeClaims) note(claim, true);
    }
    if (!ok) {
      this.deadlines.clear();
      return false;
    }
    this.tracked = { claims: nodeClaims.slice(), pools };
    return true;
  }

  private forget(name: string): void {
    this.claims.delete(name);
    this.deadlines.delete(name);
  }

  private timesOf(claim: NodeClaim): ClaimTimes {
    const version = claim.metadata.resourceVersion;
    let times = this.claims.get(claim.metadata.name);
    if (version === undefined || times?.version !== version) {
      const registered = condition(claim, 'Registered');
      const fresh: ClaimTimes = {
        version, pass: times?.pass ?? 0, deadline: livenessDeadline(claim),
        registeredAt: registered?.status === 'True' ? Date.parse(registered.lastTransitionTime) : undefined,
      };
      this.claims.set(claim.metadata.name, (times = fresh));
    }
    return times;
  }

  /** True again once some NodeClaim of the pool registered after the failure was recorded. */
  private recovered(pool: NodePool, nodeClaims: readonly NodeClaim[]): Omit<Condition, 'lastTransitionTime'> | undefined {
    const current = pool.status.conditions.find((c) => c.type === CONDITION_NODE_REGISTRATION_HEALTHY);
    if (current?.status !== 'False') return undefined;
    const failedAt = Date.parse(current.lastTransitionTime);
    const registeredSince = nodeClaims.some((c) => {
      if (c.metadata.labels[LABEL_NODEPOOL] !== pool.metadata.name) return false;
      const registeredAt = this.claims.get(c.metadata.name)?.registeredAt;
      return registeredAt !== undefined && registeredAt > failedAt;
    });
    return registeredSince ? { type: CONDITION_NODE_REGISTRATION_HEALTHY, status: 'True', reason: 'NodeRegistered', message: '' } : undefined;
  }
}

/** The same NodeClaim objects, each with a resourceVersion (so none was changed in place). */
function sameClaims(a: readonly NodeClaim[], b: readonly NodeClaim[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] || b[i]!.metadata.resourceVersion === undefined) return false;
  return true;
}

function sameConditions(a: readonly Condition[], b: readonly Condition[]): boolean {
  return a.length === b.length && a.every((c, i) => {
    const d = b[i]!;
    return c.type === d.type && c.status === d.status && c.reason === d.reason && c.message === d.message && c.lastTransitionTime === d.lastTransitionTime;
  });
}

function sameName(a: NodeClaim, b: NodeClaim): boolean {
  return a.metadata.name === b.metadata.name;
}

/** GET of the NodeClaim's VM with its instance view: still there, and running? */
async function instanceState(s: LifecycleScope, name: string): Promise<InstanceState> {
  const nc = observedNodeClaim(s, name);
  // Another cluster's VM under the name is not this NodeClaim's instance: its own is gone.
  const vm = ours(await s.deps.arm.getVm(refIn(nodeClassOf(s, nc), namesOf(s, name).vm)), s.deps.config.clusterName, name);
  return { vm: vm?.provisioningState, ...(vm?.powerState !== undefined ? { power: vm.powerState } : {}) };
}

/**
 * A launched NodeClaim's instance is gone, being deleted by someone else, or stopped or
 * deallocated (a person, or ARM evicting a Spot VM): as upstream reacts (core's NodeClaim
 * garbage collection, the AWS provider's interruption controller), a Warning Event on the
 * NodeClaim and its Node, karpenter_nodeclaims_disrupted_total with upstream's reason, and
 * the NodeClaim deleted; its termination drains the node (unless the instance is gone) and
 * deletes the VM, NIC and disk, and the provisioner plans the pods again at once.
 */
async function disruptLostInstance(s: LifecycleScope, name: string, loss: InstanceLoss, state: InstanceState): Promise<void> {
  const nc = s.world()?.nodeClaims.get(name);
  if (!nc || nc.metadata.deletionTimestamp) return;
  const vmName = namesOf(s, name).vm;
  const what = state.vm === undefined ? `VM ${vmName} no longer exists in ARM`
    : state.vm === 'Deleting' ? `VM ${vmName} is being deleted outside azflex (a person, or ARM evicting a Spot VM)`
    : `VM ${vmName} is ${state.power ?? 'not running'} (a person, or ARM evicting a Spot VM with policy Deallocate)`;
  const evicted = loss !== 'instance_stopped' && nc.metadata.labels[LABEL_CAPACITY_TYPE] === CAPACITY_TYPE_SPOT;
  const reported: ReportedLoss = evicted ? 'spot_interrupted' : loss;
  const reason = evicted ? 'SpotInterrupted' : loss === 'instance_stopped' ? 'InstanceStopping' : 'InstanceTerminating';
  const message = `${what}; deleting the NodeClaim so its pods are planned again`;
  await s.deps.cluster.recordEvent({ involvedObject: { kind: 'NodeClaim', name, uid: nc.metadata.uid }, type: 'Warning', reason, message });
  const node = nodeOf(s, nc);
  if (node) await s.deps.cluster.recordEvent({ involvedObject: { kind: 'Node', name: node.metadata.name, uid: node.metadata.uid }, type: 'Warning', reason, message });
  await s.deps.cluster.deleteNodeClaim(name);
  s.deps.observer?.instanceLost?.({ nodeClaim: name, nodePool: nc.metadata.labels[LABEL_NODEPOOL] ?? '', reason: reported, message });
  s.kick('provisioner');
}

/** The instance checks as the NodeClaim machine invokes them. */
export function instanceActors(s: LifecycleScope) {
  const traced = <T>(name: string, effect: string, run: () => Promise<T>): Promise<T> => s.traced(`nodeclaim/${name}`, effect, run);
  return {
    getInstanceState: fromPromise<InstanceState, { name: string }>(({ input }) => traced(input.name, 'getInstanceState', () => instanceState(s, input.name))),
    disruptLostInstance: fromPromise<void, { name: string; loss: InstanceLoss; state: InstanceState }>(({ input }) =>
      traced(input.name, 'disruptLostInstance', () => disruptLostInstance(s, input.name, input.loss, input.state))),
  };
}
