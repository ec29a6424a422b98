import type { Condition } from '../../ports/cluster.js';

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
