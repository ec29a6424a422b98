/**
 * The disruption conditions a NodeClaim shows, as upstream Karpenter v1.15 writes them
 * (sigs.k8s.io/karpenter pkg/controllers/nodeclaim/disruption/drift.go and consolidation.go,
 * pkg/controllers/disruption/queue.go and controller.go), worked out from what a disruption pass
 * decided, so what users see (`kubectl get nodeclaims -o wide`, alerts on conditions) is what
 * azflex acts on:
 *
 *   - Drifted=True, reason and message the drift reason (NodePoolDrifted, RequirementsDrifted,
 *     NodeClassDrifted), on a launched NodeClaim that has drifted; removed otherwise;
 *   - Consolidatable=True (reason Consolidatable) on an initialized NodeClaim whose last pod
 *     event (status.lastPodEventTime, else when it initialized) is consolidateAfter ago or more;
 *     removed otherwise, and never with consolidateAfter: Never;
 *   - DisruptionReason=True, reason and message Drifted, Empty or Underutilized, once the
 *     disruption pass picks the NodeClaim (written before it is deleted, or when it is marked
 *     for a replacement, whose node then gets the karpenter.sh/disrupted:NoSchedule taint as
 *     well); removed (with that taint) from a NodeClaim neither being deleted nor marked.
 *     Expiration deletes without it, as upstream's expiration controller does.
 *
 * A NodeClaim being deleted keeps what it shows (upstream stops reconciling it).
 */
import type { NodeClaim } from '../ports/cluster.js';
import {
  CONDITION_CONSOLIDATABLE, CONDITION_DISRUPTION_REASON, CONDITION_DRIFTED, conditionChanges, type WantedCondition,
} from '../lifecycle/nodeclaim/conditions.js';
import type { DisruptionReason } from './budgets.js';
import type { DriftReason } from './drift.js';

export interface WantedDisruptionConditions {
  drifted: DriftReason | undefined;
  consolidatable: boolean;
  /** The reason the pass picked the claim for; 'unchanged' leaves the condition as it is. */
  disruptionReason: DisruptionReason | undefined | 'unchanged';
}

const CONSOLIDATABLE: WantedCondition = { type: CONDITION_CONSOLIDATABLE, status: 'True', reason: CONDITION_CONSOLIDATABLE, message: '' };

function trueWithReason(type: string, reason: string): WantedCondition {
  return { type, status: 'True', reason, message: reason };
}

/** The conditions to put and remove on `claim` to show `wanted`, or undefined when it already does. */
export function disruptionConditionChanges(claim: NodeClaim, wanted: WantedDisruptionConditions, nowIso: string): ReturnType<typeof conditionChanges> {
  const types: Array<readonly [string, WantedCondition | undefined]> = [
    [CONDITION_DRIFTED, wanted.drifted === undefined ? undefined : trueWithReason(CONDITION_DRIFTED, wanted.drifted)],
    [CONDITION_CONSOLIDATABLE, wanted.consolidatable ? CONSOLIDATABLE : undefined],
  ];
  if (wanted.disruptionReason !== 'unchanged') {
    types.push([CONDITION_DISRUPTION_REASON, wanted.disruptionReason === undefined ? undefined : trueWithReason(CONDITION_DISRUPTION_REASON, wanted.disruptionReason)]);
  }
  return conditionChanges(claim.status.conditions, types, nowIso);
}
