/**
 * NodePools as templates for new NodeClaims (Karpenter's NodeClaimTemplate): their order,
 * requirements, taints and DaemonSet overhead, and the instance types each may launch.
 */
import type { AzureFlexNodeClass, NodePool, Pod, Taint } from '../../ports/cluster.js';
import { isOffered, type InstanceType } from '../../catalog/skus.js';
import { addInto, limitsFromList, podRequests, subtractResources, type Resources } from '../resources.js';
import { Requirement, Requirements, firstUntoleratedTaint, instanceTypeRequirements, regionalRequirements } from '../requirements.js';
import { instanceTypeCapacity, maxPodsFor } from '../overhead.js';
import { FirstFitIndex } from './first-fit-index.js';
import { podRequirementTerms } from './pod-groups.js';
import { firstCompatibleTerm, type RequirementsCache } from './requirements-cache.js';
import { cheapestOffering, offeredCapacityTypes, type CapacityType } from '../../catalog/offerings.js';
import { CAPACITY_TYPE_ON_DEMAND, LABEL_CAPACITY_TYPE, LABEL_NODEPOOL, NODECLASS_GROUP, NODECLASS_KIND } from '../../apis/well-known.js';
import type { Candidate, PoolTemplate, SchedulingInput } from './types.js';

export type KubeReserved = (instanceType: InstanceType, maxPods: number) => Resources;

export function isFlexNodePool(nodePool: NodePool): boolean {
  const ref = nodePool.spec.template.spec.nodeClassRef;
  return ref.kind === NODECLASS_KIND && (ref.group === NODECLASS_GROUP || ref.group === '');
}

/** NodePools in the order Karpenter tries them: weight descending, then name. */
export function orderNodePools(nodePools: readonly NodePool[]): NodePool[] {
  return [...nodePools].sort((a, b) => (b.spec.weight ?? 0) - (a.spec.weight ?? 0) || a.metadata.name.localeCompare(b.metadata.name));
}

/** NodePool requirements plus what the template pins: its own name and template labels. */
export function nodePoolRequirements(nodePool: NodePool): Requirements {
  return Requirements.fromSelectors(nodePool.spec.template.spec.requirements)
    .intersect(Requirements.fromLabels(nodePool.spec.template.metadata.labels))
    .intersect(Requirements.of([Requirement.in(LABEL_NODEPOOL, [nodePool.metadata.name])]));
}

/** An instance type as a NodeClass launches it: capacity, and allocatable after kube-reserved. */
export function candidateOf(
  instanceType: InstanceType, nodeClass: AzureFlexNodeClass, requirements: Requirements, kubeReserved: KubeReserved, pricePerHour = instanceType.pricePerHour,
): Candidate {
  const capacity = instanceTypeCapacity(instanceType, nodeClass.spec);
  const reserved = kubeReserved(instanceType, maxPodsFor(instanceType, nodeClass.spec));
  return { instanceType, requirements, capacity, allocatable: subtractResources(capacity, reserved), pricePerHour };
}

/**
 * The capacity types the type offers that the pool's karpenter.sh/capacity-type requirement
 * admits. A pool that names none gets on-demand, as the AWS provider's defaulting webhook gave
 * it ("if not included … will default to on-demand"): spot only where a NodePool allows it.
 */
export function allowedCapacityTypes(instanceType: InstanceType, requirements: Requirements, reservable = false): CapacityType[] {
  const wanted = requirements.get(LABEL_CAPACITY_TYPE);
  const offered = offeredCapacityTypes(instanceType, reservable);
  return offered.filter((ct) => (wanted ? wanted.has(ct) : ct === CAPACITY_TYPE_ON_DEMAND));
}

/** The pools a pass may launch from, in Karpenter's order, each with its candidates cheapest first. */
export function buildPools(input: SchedulingInput, cache: RequirementsCache, kubeReserved: KubeReserved, cluster: string | undefined): PoolTemplate[] {
  const classes = new Map(input.nodeClasses.map((nc) => [nc.metadata.name, nc]));
  const pools: PoolTemplate[] = [];
  for (const nodePool of orderNodePools(input.nodePools.filter(isFlexNodePool))) {
    if (nodePool.metadata.deletionTimestamp) continue;
    const nodeClass = classes.get(nodePool.spec.template.spec.nodeClassRef.name);
    if (!nodeClass || nodeClass.metadata.deletionTimestamp) continue;
    const region = nodeClass.spec.location;
    const requirements = nodePoolRequirements(nodePool);
    const taints = nodePool.spec.template.spec.taints;
    const daemonOverhead = daemonOverheadOf(input.daemonSetPods, requirements, taints, cache);
    const candidates: Candidate[] = [];
    const unavailable: Candidate[] = [];
    for (const instanceType of input.instanceTypes) {
      if (!isOffered(instanceType, nodeClass.spec.subscriptionID, region)) continue;
      // A type the pool cannot take with all its zones cannot with fewer either: skip it
      // before asking about each zone's marks (a pool of one size asked about the whole catalog).
      if (requirements.intersects(instanceTypeRequirements(instanceType, region, undefined, cluster)) !== undefined) continue;
      // A reservation of the size with room (reservations.ts) offers it as reserved too; the
      // catalog's requirements never name reserved, so such a type always says what it offers.
      const reservable = input.isReservable?.(nodeClass.metadata.name, instanceType.name) ?? false;
      const { available, zones } = availableOfferings(instanceType, region, allowedCapacityTypes(instanceType, requirements, reservable), input);
      const narrowed = available.length > 0 && (reservable || available.length < offeredCapacityTypes(instanceType).length) ? available : undefined;
      // Every zone marked: the type is still offered regionally (no zone in the VM PUT), as the
      // Azure provider falls back to, to pods that do not need a zone, until that fails too.
      const itRequirements = zones?.length === 0
        ? regionalRequirements(instanceType, region, cluster, narrowed)
        : instanceTypeRequirements(instanceType, region, zones, cluster, narrowed);
      if (requirements.intersects(itRequirements) !== undefined) continue;
      const cheapest = cheapestOffering(instanceType, (ct) => available.includes(ct), reservable);
      const candidate = candidateOf(instanceType, nodeClass, itRequirements, kubeReserved, cheapest?.pricePerHour);
      if (!cheapest) unavailable.push(candidate);
      else candidates.push(candidate);
    }
    candidates.sort((a, b) => a.pricePerHour - b.pricePerHour || a.instanceType.name.localeCompare(b.instanceType.name));
    const hasLimits = Object.keys(nodePool.spec.limits ?? {}).length > 0;
    const limits = hasLimits ? limitsFromList(nodePool.spec.limits) : undefined;
    pools.push({
      nodePool, name: nodePool.metadata.name, nodeClass, region, requirements, taints, daemonOverhead, candidates,
      unavailable, limits, remaining: limits ? { ...limits } : undefined,
      inFlight: [], inFlightIndex: new FirstFitIndex(), planned: [], plannedIndex: new FirstFitIndex(),
    });
  }
  return pools;
}

/**
 * The capacity types whose offering the marks and quota leave (a spot refusal leaves
 * on-demand), and the zones any of them has left (undefined: no zone is marked for one of
 * them, the catalog's list; empty: every zone is marked for all of them, so the type is
 * offered regionally).
 */
function availableOfferings(
  instanceType: InstanceType, region: string, allowed: readonly CapacityType[], input: SchedulingInput,
): { available: CapacityType[]; zones: readonly string[] | undefined } {
  const available: CapacityType[] = [];
  const zoneSets: Array<readonly string[] | undefined> = [];
  for (const ct of allowed) {
    if (input.isOfferingUnavailable(instanceType.name, region, ct)) continue;
    available.push(ct);
    zoneSets.push(offeredZones(instanceType, region, input.isZoneUnavailable, ct));
  }
  if (available.length === 0) return { available, zones: [] };
  if (zoneSets.some((z) => z === undefined)) return { available, zones: undefined };
  if (zoneSets.length === 1) return { available, zones: zoneSets[0] };
  const any = new Set(zoneSets.flatMap((z) => z!));
  return { available, zones: (instanceType.zones?.[region] ?? []).filter((z) => any.has(z)) };
}

/** The type's zones in the region minus those marked unavailable for the capacity type (undefined: none marked, use the catalog's list). */
function offeredZones(
  instanceType: InstanceType, region: string, marked: SchedulingInput['isZoneUnavailable'], capacityType: CapacityType,
): readonly string[] | undefined {
  const all = instanceType.zones?.[region];
  if (!all || all.length === 0 || !marked || !all.some((z) => marked(instanceType.name, region, z, capacityType))) return undefined;
  return all.filter((z) => !marked(instanceType.name, region, z, capacityType));
}

/** DaemonSet pods that tolerate the pool's taints and accept its labels run on each node. */
function daemonOverheadOf(daemonSetPods: readonly Pod[], requirements: Requirements, taints: readonly Taint[], cache: RequirementsCache): Resources {
  const overhead: Resources = {};
  for (const pod of daemonSetPods) {
    if (firstUntoleratedTaint(pod.spec.tolerations, taints)) continue;
    if (!firstCompatibleTerm(requirements, podRequirementTerms(pod), cache)) continue;
    addInto(overhead, podRequests(pod));
  }
  return overhead;
}
