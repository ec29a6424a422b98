/**
 * Underutilisation (consolidationPolicy WhenEmptyOrUnderutilized): a node can go when every
 * pod on it would fit on the other NodeClaims, with no new capacity. The check is the
 * provisioning scheduler run on "these pods are pending, those NodeClaims remain", so
 * consolidation and provisioning can never disagree about what fits where.
 *
 * When the pods do not all fit elsewhere, a single cheaper replacement may be launched
 * (see cheaperReplacement); the controller deletes the candidate once it is initialized.
 */
import type { AzureFlexNodeClass, NodeClaim, NodePool, Pod } from '../ports/cluster.js';
import type { InstanceType } from '../catalog/skus.js';
import { schedule, type NodeClaimPlan, type SchedulingInput } from '../provisioning/scheduler.js';
import { isReschedulable } from './emptiness.js';
import { LABEL_INSTANCE_TYPE } from '../apis/well-known.js';
import type { ClaimRecord } from './facts.js';

export interface ConsolidationState {
  nodePools: readonly NodePool[];
  nodeClasses: readonly AzureFlexNodeClass[];
  instanceTypes: readonly InstanceType[];
  nodeClaims: readonly NodeClaim[];
  /** Pods bound to each NodeClaim's node, by NodeClaim name. */
  podsByNodeClaim: ReadonlyMap<string, readonly Pod[]>;
  daemonSetPods: readonly Pod[];
  isOfferingUnavailable: (sku: string, region: string, capacityType: string) => boolean;
  nodeResourceGroup?: SchedulingInput['nodeResourceGroup'];
  /** Where a moving pod's volumes let it go (a zonal disk pins its zone). */
  volumeRequirements?: SchedulingInput['volumeRequirements'];
}

/** Whether the reschedulable pods of `removed` all fit on the remaining NodeClaims. */
export function canRemoveWithoutReplacement(state: ConsolidationState, removed: ReadonlySet<string>): boolean {
  const moving: Pod[] = [];
  for (const name of removed) for (const pod of state.podsByNodeClaim.get(name) ?? []) if (isReschedulable(pod)) moving.push(pod);
  if (moving.length === 0) return true;
  const remaining = state.nodeClaims.filter((c) => !removed.has(c.metadata.name));
  const boundPods: Pod[] = [];
  for (const claim of remaining) for (const pod of state.podsByNodeClaim.get(claim.metadata.name) ?? []) boundPods.push(pod);
  const result = schedule({
    pendingPods: moving,
    nodePools: state.nodePools,
    nodeClasses: state.nodeClasses,
    instanceTypes: state.instanceTypes,
    existingNodeClaims: remaining,
    boundPods,
    daemonSetPods: state.daemonSetPods,
    isOfferingUnavailable: state.isOfferingUnavailable,
    ...(state.nodeResourceGroup ? { nodeResourceGroup: state.nodeResourceGroup } : {}),
    ...(state.volumeRequirements ? { volumeRequirements: state.volumeRequirements } : {}),
  });
  return result.nodeClaims.length === 0 && result.unschedulable.length === 0;
}

/**
 * Order in which to try candidates: fewest pods to move first (cheapest to disrupt), then
 * the most expensive node first (largest saving), then name for determinism.
 */
export function consolidationOrder(
  candidates: readonly NodeClaim[], podsByNodeClaim: ReadonlyMap<string, readonly Pod[]>, pricePerHour: (claim: NodeClaim) => number,
): NodeClaim[] {
  const podCount = (c: NodeClaim): number => (podsByNodeClaim.get(c.metadata.name) ?? []).filter(isReschedulable).length;
  return [...candidates].sort((a, b) => podCount(a) - podCount(b) || pricePerHour(b) - pricePerHour(a) || a.metadata.name.localeCompare(b.metadata.name));
}

/**
 * Replacement consolidation: one new NodeClaim, cheaper than the candidate, that takes the
 * pods the other NodeClaims cannot. Returns its plan, or undefined when there is none.
 * The replacement is launched first and the candidate deleted once it is initialized, so
 * pods are never left waiting for capacity.
 */
export function cheaperReplacement(
  state: ConsolidationState, candidate: NodeClaim, removed: ReadonlySet<string>, candidatePricePerHour: number,
): NodeClaimPlan | undefined {
  const moving = (state.podsByNodeClaim.get(candidate.metadata.name) ?? []).filter(isReschedulable);
  if (moving.length === 0) return undefined;
  const remaining = state.nodeClaims.filter((c) => c !== candidate && !removed.has(c.metadata.name));
  const boundPods: Pod[] = [];
  for (const claim of remaining) for (const pod of state.podsByNodeClaim.get(claim.metadata.name) ?? []) boundPods.push(pod);
  const result = schedule({
    pendingPods: moving,
    nodePools: state.nodePools,
    nodeClasses: state.nodeClasses,
    instanceTypes: state.instanceTypes,
    existingNodeClaims: remaining,
    boundPods,
    daemonSetPods: state.daemonSetPods,
    isOfferingUnavailable: state.isOfferingUnavailable,
    ...(state.nodeResourceGroup ? { nodeResourceGroup: state.nodeResourceGroup } : {}),
    ...(state.volumeRequirements ? { volumeRequirements: state.volumeRequirements } : {}),
  });
  if (result.unschedulable.length > 0 || result.nodeClaims.length !== 1) return undefined;
  const plan = result.nodeClaims[0]!;
  // Only the cheapest option is compared: it is what launches first. Options that cost more
  // than the candidate are dropped so a capacity fallback cannot make things worse.
  const cheaper = plan.instanceTypeOptions.filter((t) => t.pricePerHour < candidatePricePerHour);
  if (cheaper.length === 0) return undefined;
  if (cheaper.length === plan.instanceTypeOptions.length) return plan;
  const names = new Set(cheaper.map((t) => t.name));
  return {
    ...plan,
    instanceTypeOptions: cheaper,
    requirements: plan.requirements.map((r) =>
      r.key === LABEL_INSTANCE_TYPE && r.operator === 'In' ? { ...r, values: (r.values ?? []).filter((v) => names.has(v)) } : r),
  };
}

/** What consolidateAfter counts from: the claim's last pod event, else when it initialized (upstream's rule); undefined before. */
export function consolidationClock(record: ClaimRecord): number | undefined {
  if (!record.facts.initialized) return undefined;
  return record.lastPodEvent ?? record.facts.initializedAt;
}

/** Upstream's Consolidatable: initialized, and consolidateAfter has passed since consolidationClock. */
export function isConsolidatable(record: ClaimRecord, consolidateAfter: number | undefined, now: number): boolean {
  if (consolidateAfter === undefined) return false;
  const since = consolidationClock(record);
  return since !== undefined && now - since >= consolidateAfter;
}
