import type { Condition, NodeClaim, NodeClaimStatusChange } from '../../ports/cluster.js';

/** The lifecycle conditions upstream's NodeClaim carries from its first reconcile; Ready is their root. */
export const NODECLAIM_DEPENDENT_CONDITIONS = ['Launched', 'Registered', 'Initialized'] as const;
export const NODECLAIM_ROOT_CONDITION = 'Ready';
/** Reasons of upstream's condition sets (operatorpkg status): not set yet, dependents pending, a dependent False. */
export const REASON_AWAITING = 'AwaitingReconciliation';
export const REASON_RECONCILING_DEPENDENTS = 'ReconcilingDependents';
export const REASON_UNHEALTHY_DEPENDENTS = 'UnhealthyDependents';

/**
 * A NodeClaim's conditions as upstream shows them: Launched, Registered and Initialized are
 * always there (Unknown, AwaitingReconciliation, until the lifecycle sets them), and Ready is
 * their root: True when all three are, False (UnhealthyDependents) when one is False, else
 * Unknown (ReconcilingDependents), the message naming the ones not True. So `kubectl get
 * nodeclaims` shows READY Unknown while a node is on its way, and `kubectl wait
 * --for=condition=Ready` works as with upstream. Returns `conditions` itself when nothing changes.
 */
export function withLifecycleConditions(conditions: readonly Condition[], nowIso: string): Condition[] {
  let out: Condition[] | undefined;
  const current = (): readonly Condition[] => out ?? conditions;
  const put = (next: Condition): void => {
    out = [...current().filter((c) => c.type !== next.type), next];
  };
  for (const type of NODECLAIM_DEPENDENT_CONDITIONS) {
    if (!current().some((c) => c.type === type)) {
      put({ type, status: 'Unknown', reason: REASON_AWAITING, message: 'not reconciled yet', lastTransitionTime: nowIso });
    }
  }
  const dependents = NODECLAIM_DEPENDENT_CONDITIONS.map((t) => current().find((c) => c.type === t)!);
  const pending = dependents.filter((c) => c.status !== 'True');
  const want: Omit<Condition, 'lastTransitionTime'> = pending.length === 0
    ? { type: NODECLAIM_ROOT_CONDITION, status: 'True', reason: NODECLAIM_ROOT_CONDITION, message: '' }
    : {
      type: NODECLAIM_ROOT_CONDITION,
      status: pending.some((c) => c.status === 'False') ? 'False' : 'Unknown',
      reason: pending.some((c) => c.status === 'False') ? REASON_UNHEALTHY_DEPENDENTS : REASON_RECONCILING_DEPENDENTS,
      message: pending.map((c) => `${c.type}=${c.status}`).join(', '),
    };
  const root = current().find((c) => c.type === NODECLAIM_ROOT_CONDITION);
  if (!root || root.status !== want.status || root.reason !== want.reason || root.message !== want.message) {
    put({ ...want, lastTransitionTime: root && root.status === want.status ? root.lastTransitionTime : nowIso });
  }
  return out ?? (conditions as Condition[]);
}

/**
 * The conditions upstream's disruption controllers write (sigs.k8s.io/karpenter v1.15,
 * pkg/apis/v1/nodeclaim_status.go). None is a dependent of Ready, and each is removed, not set
 * False, when it no longer holds (operatorpkg's Clear).
 */
export const CONDITION_DRIFTED = 'Drifted';
export const CONDITION_CONSOLIDATABLE = 'Consolidatable';
export const CONDITION_DISRUPTION_REASON = 'DisruptionReason';

/** A condition as wanted: its lastTransitionTime comes from the one it replaces, or now. */
export type WantedCondition = Omit<Condition, 'lastTransitionTime'>;

/**
 * What to change so that each type of `wanted` is as given (undefined: absent): the conditions
 * to put and the types to remove, or undefined when `conditions` already show it. A condition
 * whose status stays keeps its lastTransitionTime, as operatorpkg does.
 */
export function conditionChanges(
  conditions: readonly Condition[], wanted: ReadonlyArray<readonly [string, WantedCondition | undefined]>, nowIso: string,
): { set: Condition[]; remove: string[] } | undefined {
  let set: Condition[] | undefined;
  let remove: string[] | undefined;
  for (const [type, want] of wanted) {
    const have = conditions.find((c) => c.type === type);
    if (!want) {
      if (have) (remove ??= []).push(type);
      continue;
    }
    if (have && have.status === want.status && have.reason === want.reason && have.message === want.message) continue;
    (set ??= []).push({ ...want, type, lastTransitionTime: have && have.status === want.status ? have.lastTransitionTime : nowIso });
  }
  return set || remove ? { set: set ?? [], remove: remove ?? [] } : undefined;
}

/** `conditions` with `set` put (in place of the same type) and `remove`d types gone. */
export function applyConditionChanges(conditions: readonly Condition[], set: readonly Condition[], remove: readonly string[]): Condition[] {
  const replaced = new Set([...remove, ...set.map((c) => c.type)]);
  return [...conditions.filter((c) => !replaced.has(c.type)), ...set];
}

/** `status` with `change` applied (ClusterPort.patchNodeClaimStatus); `status` itself when that changes nothing. */
export function changedNodeClaimStatus(status: NodeClaim['status'], change: NodeClaimStatusChange): NodeClaim['status'] {
  const set = (change.set ?? []).filter((want) => {
    const have = status.conditions.find((c) => c.type === want.type);
    return !have || have.status !== want.status || have.reason !== want.reason || have.message !== want.message || have.lastTransitionTime !== want.lastTransitionTime;
  });
  const remove = (change.remove ?? []).filter((type) => status.conditions.some((c) => c.type === type));
  const time = change.lastPodEventTime !== undefined && change.lastPodEventTime !== status.lastPodEventTime ? change.lastPodEventTime : undefined;
  if (set.length === 0 && remove.length === 0 && time === undefined) return status;
  const next = { ...status, conditions: set.length || remove.length ? applyConditionChanges(status.conditions, set, remove) : status.conditions };
  if (time !== undefined) next.lastPodEventTime = time;
  return next;
}

/** The conditions with one set; the same array when it already has that status and reason (no write needed). */
export function setCondition(conditions: Condition[], type: string, status: Condition['status'], reason: string, message: string, now: number): Condition[] {
  const existing = conditions.find((c) => c.type === type);
  if (existing && existing.status === status && existing.reason === reason) return conditions;
  const next: Condition = { type, status, reason, message, lastTransitionTime: new Date(now).toISOString() };
  return [...conditions.filter((c) => c.type !== type), next];
}
