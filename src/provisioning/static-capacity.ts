/**
 * Static capacity (upstream's `spec.replicas`, gate StaticCapacity): a NodePool that keeps a
 * fixed number of NodeClaims whether pods are pending or not. Each pass compares the pool's
 * live NodeClaims with what it wants (replicas, capped by `limits.nodes`) and plans the
 * missing ones from the template (offerings chosen as for any pool: cheapest available, any
 * zone) or picks the surplus to delete.
 *
 * No churn: a launch that fails for quota or capacity deletes its NodeClaim and marks the
 * offering (offering-marks.ts); the replacement is planned only from offerings that are not
 * marked, and an expired mark admits one canary per offering (the provisioner applies the
 * same one-canary rule as for pod-driven plans). With no offering left a static pool plans
 * nothing and waits. A healthy NodeClaim is never deleted to retry elsewhere: only a
 * replicas decrease deletes, and then the least established NodeClaims first.
 */
import type { AzureFlexNodeClass, NodeClaim, NodePool, Pod } from '../ports/cluster.js';
import type { InstanceType } from '../catalog/skus.js';
import { addInto, limitsFromList, type Resources } from './resources.js';
import { clusterLabelValue } from './requirements.js';
import { defaultKubeReserved } from './overhead.js';
import { RequirementsCache } from './scheduling/requirements-cache.js';
import { buildPools } from './scheduling/nodepools.js';
import { PlanWriter } from './scheduling/plans.js';
import type { NodeClaimPlan, PoolTemplate, SchedulingInput } from './scheduling/types.js';
import { LABEL_NODEPOOL } from '../apis/well-known.js';

export function isStaticNodePool(pool: NodePool): boolean {
  return pool.spec.replicas !== undefined;
}

export interface StaticCapacityInput {
  /** Static NodePools azflex may provision for. */
  nodePools: readonly NodePool[];
  nodeClasses: readonly AzureFlexNodeClass[];
  instanceTypes: readonly InstanceType[];
  /** Every NodeClaim, the provisioner's in-flight ones included. */
  nodeClaims: readonly NodeClaim[];
  daemonSetPods: readonly Pod[];
  isOfferingUnavailable: SchedulingInput['isOfferingUnavailable'];
  isZoneUnavailable?: SchedulingInput['isZoneUnavailable'];
  kubeReserved?: SchedulingInput['kubeReserved'];
  nodeResourceGroup?: string;
}

export interface StaticCapacityDecision {
  create: NodeClaimPlan[];
  /** NodeClaims above a pool's replicas, to delete. */
  remove: NodeClaim[];
}

/** How many NodeClaims a static pool wants: replicas, never past `limits.nodes`. */
export function desiredReplicas(pool: NodePool): number {
  const replicas = pool.spec.replicas ?? 0;
  const nodesLimit = limitsFromList(pool.spec.limits).nodes;
  return nodesLimit === undefined ? replicas : Math.max(0, Math.min(replicas, Math.floor(nodesLimit)));
}

export function planStaticCapacity(input: StaticCapacityInput): StaticCapacityDecision {
  const decision: StaticCapacityDecision = { create: [], remove: [] };
  const pools = input.nodePools.filter((p) => isStaticNodePool(p) && !p.metadata.deletionTimestamp);
  if (pools.length === 0) return decision;
  const live = new Map<string, NodeClaim[]>();
  for (const claim of input.nodeClaims) {
    const pool = claim.metadata.labels[LABEL_NODEPOOL];
    if (pool === undefined || claim.metadata.deletionTimestamp) continue;
    let list = live.get(pool);
    if (!list) live.set(pool, (list = []));
    list.push(claim);
  }
  const schedulingInput: SchedulingInput = {
    pendingPods: [], nodePools: pools, nodeClasses: input.nodeClasses, instanceTypes: input.instanceTypes,
    existingNodeClaims: [], daemonSetPods: input.daemonSetPods, isOfferingUnavailable: input.isOfferingUnavailable,
    ...(input.isZoneUnavailable ? { isZoneUnavailable: input.isZoneUnavailable } : {}),
  };
  const templates = buildPools(schedulingInput, new RequirementsCache(), input.kubeReserved ?? defaultKubeReserved, clusterLabelValue(input.nodeResourceGroup));
  const writer = new PlanWriter();
  for (const template of templates) {
    const claims = live.get(template.name) ?? [];
    const want = desiredReplicas(template.nodePool);
    if (claims.length > want) decision.remove.push(...surplus(claims, claims.length - want));
    for (let i = claims.length; i < want; i++) {
      const plan = planFor(template, writer, i);
      if (!plan) break; // every offering is marked: wait for a mark to expire
      decision.create.push(plan);
    }
  }
  return decision;
}

/** A NodeClaim from the template alone: every available offering, cheapest first; holds only DaemonSet overhead. */
function planFor(template: PoolTemplate, writer: PlanWriter, index: number): NodeClaimPlan | undefined {
  if (template.candidates.length === 0) return undefined;
  const used: Resources = {};
  addInto(used, template.daemonOverhead);
  return writer.toPlan({
    pool: template, hostname: `static-${template.name}-${index}`, domainCache: new Map(), requirements: template.requirements,
    options: template.candidates, used, reservation: {}, podKeys: [], position: index,
  });
}

/**
 * Which NodeClaims go on a scale-down: those without a node first (launching or booting: no
 * workload yet), then the newest, so the longest-serving nodes stay.
 */
function surplus(claims: readonly NodeClaim[], count: number): NodeClaim[] {
  const order = [...claims].sort((a, b) =>
    Number(a.status.nodeName !== undefined) - Number(b.status.nodeName !== undefined)
    || b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp)
    || a.metadata.name.localeCompare(b.metadata.name));
  return order.slice(0, count);
}
