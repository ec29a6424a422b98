/**
 * The scheduling simulation: pending pods → NodeClaim plans, with Karpenter's semantics.
 *
 * Pure and synchronous (no I/O, no clock) so the provisioner, the simulator, the property
 * tests and the benchmark all drive the same code. Pods of identical shape are grouped and
 * placed in bulk: a group of 500 identical pods costs one requirement intersection per claim,
 * not 500, which is what makes 10,000 mixed pods take milliseconds.
 *
 * Order of placement for each group (largest first: GPU, then cpu, then memory):
 *   1. in-flight NodeClaims (pending pods will land there once their node registers);
 *   2. NodeClaims planned earlier in this run (first fit);
 *   3. a new NodeClaim on the highest-weight NodePool that can take the pod within limits,
 *      sized for the cheapest price per pod placed.
 */
import type {
  AzureFlexNodeClass, NodeClaim, NodePool, NodeSelectorRequirement, Pod, ResourceList, Taint,
} from '../ports/cluster.js';
import type { InstanceType } from '../catalog/skus.js';
import {
  addInto, copiesThatFit, fitsWithin, formatQuantity, maxInto,
  podRequests, resourcesFromList, resourcesToList, subtractResources, type Resources,
} from './resources.js';
import {
  CAPACITY_TYPE_ON_DEMAND, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, LABEL_REGION, Requirement,
  Requirements, firstUntoleratedTaint, formatTaint, instanceTypeRequirements,
} from './requirements.js';
import { defaultKubeReserved, instanceTypeCapacity, maxPodsFor } from './overhead.js';
import { FirstFitIndex, INDEX_DIMENSIONS, indexVector } from './first-fit-index.js';
import { groupPods, podKey, podRequirementTerms, type PodGroup } from './pod-groups.js';
import { RequirementsCache, firstCompatibleTerm } from './requirements-cache.js';

export { podKey, podRequirementTerms };

export const NODECLASS_GROUP = 'flex.aks.azure.com';
export const NODECLASS_KIND = 'AzureFlexNodeClass';

export interface SchedulingInput {
  pendingPods: readonly Pod[];
  /** All NodePools; those not referencing AzureFlexNodeClass are ignored. */
  nodePools: readonly NodePool[];
  nodeClasses: readonly AzureFlexNodeClass[];
  instanceTypes: readonly InstanceType[];
  /** All NodeClaims: in-flight capacity for pending pods and NodePool limit usage. */
  existingNodeClaims: readonly NodeClaim[];
  /** Pods already bound to nodes (their requests use up the NodeClaims' capacity). */
  boundPods?: readonly Pod[];
  /** One representative pod per DaemonSet: its requests are overhead on every node it fits. */
  daemonSetPods: readonly Pod[];
  /** kube-reserved + eviction threshold per instance type; defaults to the AKS formula. */
  kubeReserved?: (instanceType: InstanceType, maxPods: number) => Resources;
  isOfferingUnavailable: (sku: string, region: string, capacityType: string) => boolean;
}

export interface NodeClaimPlan {
  nodePoolName: string;
  nodeClassName: string;
  /** Cheapest option: what the plan is priced at and launched with first. */
  instanceType: InstanceType;
  /** Every SKU that satisfies the requirements and holds all the pods, cheapest first. */
  instanceTypeOptions: InstanceType[];
  /** NodePool ∩ pods' requirements, narrowed to the options' instance types and region. */
  requirements: NodeSelectorRequirement[];
  /** Summed pod requests plus DaemonSet overhead. */
  requests: ResourceList;
  /** "namespace/name" of the pods this claim is for. */
  podKeys: string[];
}

export interface ExistingPlacement {
  nodeClaimName: string;
  podKeys: string[];
}

export interface UnschedulablePod {
  pod: Pod;
  reason: string;
}

export interface SchedulingResult {
  nodeClaims: NodeClaimPlan[];
  /** Pending pods expected to land on in-flight NodeClaims: no new capacity needed. */
  existingPlacements: ExistingPlacement[];
  unschedulable: UnschedulablePod[];
}

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

interface Candidate {
  instanceType: InstanceType;
  requirements: Requirements;
  capacity: Resources;
  /** Capacity minus kube-reserved; DaemonSet overhead is charged as usage. */
  allocatable: Resources;
}

interface PoolTemplate {
  nodePool: NodePool;
  name: string;
  nodeClass: AzureFlexNodeClass;
  region: string;
  requirements: Requirements;
  taints: readonly Taint[];
  daemonOverhead: Resources;
  candidates: Candidate[];
  /** Would-be candidates the unavailable-offerings cache rules out (for messages only). */
  unavailable: Candidate[];
  limits: Resources | undefined;
  /** limits − usage of every NodeClaim of this pool, existing and planned. */
  remaining: Resources | undefined;
  inFlight: InFlightClaim[];
  inFlightIndex: FirstFitIndex;
  planned: PlannedClaim[];
  plannedIndex: FirstFitIndex;
}

interface PlannedClaim {
  pool: PoolTemplate;
  requirements: Requirements;
  options: Candidate[];
  used: Resources;
  /** Max capacity across options: what this claim holds against the pool's limits. */
  reservation: Resources;
  podKeys: string[];
  /** Position in the pool's plannedIndex. */
  position: number;
}

interface InFlightClaim {
  name: string;
  /**
   * The claim's requirements combined with each instance type it may launch as. A pod may
   * only count on the claim if it is compatible with every variant: the claim's own
   * requirements say nothing about, say, the GPU model of the SKU that will come up.
   */
  variants: Requirements[];
  taints: readonly Taint[];
  allocatable: Resources;
  used: Resources;
  podKeys: string[];
  position: number;
}

/** karpenter.sh/v1 minValues: enough distinct values of the key must remain among the options. */
function satisfiesMinValues(requirements: Requirements, options: readonly Candidate[]): boolean {
  for (const r of requirements.values()) {
    if (r.minValues === undefined) continue;
    const distinct = new Set<string>();
    for (const option of options) {
      const value = option.requirements.get(r.key);
      if (value && !value.complement) for (const v of value.values) distinct.add(v);
    }
    if (distinct.size < r.minValues) return false;
  }
  return true;
}

function capacityForLimits(capacity: Resources, limits: Resources): Resources {
  const out: Resources = {};
  for (const name in limits) out[name] = capacity[name] ?? 0;
  return out;
}

function maxCapacity(options: readonly Candidate[], limits: Resources): Resources {
  const out: Resources = {};
  for (const option of options) maxInto(out, capacityForLimits(option.capacity, limits));
  return out;
}

/*
 * Scratch vectors for plannedFree: FirstFitIndex.set copies what it is given, so one set of
 * buffers serves every call (this runs once per placement; fresh arrays showed up as GC).
 */
const FREE_SCRATCH = new Float64Array(INDEX_DIMENSIONS);
const OPTION_SCRATCH = new Float64Array(INDEX_DIMENSIONS);
const USED_SCRATCH = new Float64Array(INDEX_DIMENSIONS);

/** Most room left on any of a planned claim's options, per indexed dimension (a shared buffer). */
function plannedFree(claim: PlannedClaim): Float64Array {
  const free = FREE_SCRATCH;
  const scratch = OPTION_SCRATCH;
  const used = indexVector(claim.used, USED_SCRATCH);
  free.fill(-Infinity);
  for (const option of claim.options) {
    indexVector(option.allocatable, scratch);
    for (let d = 0; d < INDEX_DIMENSIONS; d++) free[d] = Math.max(free[d]!, scratch[d]! - used[d]!);
  }
  return free;
}

/** Deterministic formatting of a resource amount for messages: "16 nvidia.com/gpu". */
function describeAmount(name: string, amount: number): string {
  return `${formatQuantity(amount, name)} ${name}`;
}

class Scheduler {
  private readonly cache = new RequirementsCache();
  private readonly pools: PoolTemplate[];
  private readonly inFlight: InFlightClaim[];
  private readonly planned: PlannedClaim[] = [];
  private readonly unschedulable: UnschedulablePod[] = [];
  private readonly kubeReserved: (instanceType: InstanceType, maxPods: number) => Resources;
  /** Largest capacity per resource across the whole catalog, for "no SKU offers" messages. */
  private readonly catalogMax: Resources = {};
  private readonly typesByName: ReadonlyMap<string, InstanceType>;

  constructor(private readonly input: SchedulingInput) {
    this.kubeReserved = input.kubeReserved ?? defaultKubeReserved;
    this.typesByName = new Map(input.instanceTypes.map((it) => [it.name, it]));
    for (const it of input.instanceTypes) maxInto(this.catalogMax, instanceTypeCapacity(it, undefined));
    this.pools = this.buildPools();
    this.inFlight = this.buildInFlight();
  }

  private buildPools(): PoolTemplate[] {
    const classes = new Map(this.input.nodeClasses.map((nc) => [nc.metadata.name, nc]));
    const pools: PoolTemplate[] = [];
    for (const nodePool of orderNodePools(this.input.nodePools.filter(isFlexNodePool))) {
      if (nodePool.metadata.deletionTimestamp) continue;
      const nodeClass = classes.get(nodePool.spec.template.spec.nodeClassRef.name);
      if (!nodeClass || nodeClass.metadata.deletionTimestamp) continue;
      const region = nodeClass.spec.location;
      const requirements = nodePoolRequirements(nodePool);
      const taints = nodePool.spec.template.spec.taints;
      const daemonOverhead = this.daemonOverhead(requirements, taints);
      const candidates: Candidate[] = [];
      const unavailable: Candidate[] = [];
      for (const instanceType of this.input.instanceTypes) {
        if (!instanceType.locations.includes(region)) continue;
        const itRequirements = instanceTypeRequirements(instanceType, region);
        if (requirements.intersects(itRequirements) !== undefined) continue;
        const capacity = instanceTypeCapacity(instanceType, nodeClass.spec);
        const reserved = this.kubeReserved(instanceType, maxPodsFor(instanceType, nodeClass.spec));
        const candidate: Candidate = { instanceType, requirements: itRequirements, capacity, allocatable: subtractResources(capacity, reserved) };
        if (this.input.isOfferingUnavailable(instanceType.name, region, CAPACITY_TYPE_ON_DEMAND)) unavailable.push(candidate);
        else candidates.push(candidate);
      }
      candidates.sort((a, b) => a.instanceType.pricePerHour - b.instanceType.pricePerHour || a.instanceType.name.localeCompare(b.instanceType.name));
      const hasLimits = Object.keys(nodePool.spec.limits ?? {}).length > 0;
      const limits = hasLimits ? resourcesFromList(nodePool.spec.limits) : undefined;
      pools.push({
        nodePool, name: nodePool.metadata.name, nodeClass, region, requirements, taints, daemonOverhead, candidates,
        unavailable, limits, remaining: limits ? { ...limits } : undefined,
        inFlight: [], inFlightIndex: new FirstFitIndex(), planned: [], plannedIndex: new FirstFitIndex(),
      });
    }
    return pools;
  }

  /** DaemonSet pods that tolerate the pool's taints and accept its labels run on each node. */
  private daemonOverhead(requirements: Requirements, taints: readonly Taint[]): Resources {
    const overhead: Resources = {};
    for (const pod of this.input.daemonSetPods) {
      if (firstUntoleratedTaint(pod.spec.tolerations, taints)) continue;
      if (!firstCompatibleTerm(requirements, podRequirementTerms(pod), this.cache)) continue;
      addInto(overhead, podRequests(pod));
    }
    return overhead;
  }

  private resolveInstanceTypes(claim: NodeClaim, pool: PoolTemplate): Candidate[] {
    const launched = claim.metadata.labels[LABEL_INSTANCE_TYPE];
    const names = launched ? [launched] : [...(Requirements.fromSelectors(claim.spec.requirements).get(LABEL_INSTANCE_TYPE)?.values ?? [])];
    const out: Candidate[] = [];
    for (const name of names) {
      const instanceType = this.typesByName.get(name);
      if (!instanceType) continue;
      const capacity = instanceTypeCapacity(instanceType, pool.nodeClass.spec);
      const reserved = this.kubeReserved(instanceType, maxPodsFor(instanceType, pool.nodeClass.spec));
      out.push({ instanceType, requirements: instanceTypeRequirements(instanceType, pool.region), capacity, allocatable: subtractResources(capacity, reserved) });
    }
    return out;
  }

  /**
   * Existing NodeClaims: every one counts against its pool's limits (until it is gone), and
   * those not being deleted are capacity that pending pods can land on.
   */
  private buildInFlight(): InFlightClaim[] {
    const poolsByName = new Map(this.pools.map((p) => [p.name, p]));
    const usedByNode = new Map<string, Resources>();
    const nodeNames = new Set<string>();
    for (const claim of this.input.existingNodeClaims) if (claim.status.nodeName) nodeNames.add(claim.status.nodeName);
    for (const pod of this.input.boundPods ?? []) {
      const nodeName = pod.spec.nodeName;
      if (!nodeName || !nodeNames.has(nodeName) || pod.status.phase === 'Succeeded' || pod.status.phase === 'Failed') continue;
      let used = usedByNode.get(nodeName);
      if (!used) usedByNode.set(nodeName, (used = {}));
      addInto(used, podRequests(pod));
    }
    const inFlight: InFlightClaim[] = [];
    const claims = [...this.input.existingNodeClaims].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    for (const claim of claims) {
      const pool = poolsByName.get(claim.metadata.labels[LABEL_NODEPOOL] ?? '');
      if (!pool) continue;
      const options = this.resolveInstanceTypes(claim, pool);
      if (pool.limits && pool.remaining) {
        const usage = claim.status.capacity ? resourcesFromList(claim.status.capacity) : maxCapacity(options, pool.limits);
        for (const name in pool.limits) pool.remaining[name]! -= usage[name] ?? 0;
      }
      if (claim.metadata.deletionTimestamp) continue;
      let allocatable: Resources | undefined;
      const used: Resources = {};
      if (claim.status.allocatable) {
        // Launched: allocatable is known. Once the node registers its DaemonSet pods are
        // bound and counted below; until then they are still to come.
        allocatable = resourcesFromList(claim.status.allocatable);
        if (!claim.status.nodeName) addInto(used, pool.daemonOverhead);
      } else if (options.length > 0) {
        // Not launched yet: any option may come up, so only the smallest is promised.
        allocatable = { ...options[0]!.allocatable };
        for (const option of options.slice(1)) {
          for (const name in allocatable) allocatable[name] = Math.min(allocatable[name]!, option.allocatable[name] ?? 0);
        }
        addInto(used, pool.daemonOverhead);
      }
      if (!allocatable) continue;
      const bound = claim.status.nodeName ? usedByNode.get(claim.status.nodeName) : undefined;
      if (bound) addInto(used, bound);
      const requirements = Requirements.fromSelectors(claim.spec.requirements).intersect(Requirements.fromLabels(claim.metadata.labels));
      const variants = options.length > 0 ? options.map((o) => requirements.intersect(o.requirements)) : [requirements];
      const position = pool.inFlightIndex.push(indexVector(subtractResources(allocatable, used)));
      const entry: InFlightClaim = { name: claim.metadata.name, variants, taints: claim.spec.taints, allocatable, used, podKeys: [], position };
      pool.inFlight.push(entry);
      inFlight.push(entry);
    }
    return inFlight;
  }

  run(): SchedulingResult {
    const groups = groupPods(this.input.pendingPods);
    let limitRefused: Array<{ group: PodGroup; from: number }> = [];
    for (const group of groups) {
      const refusedFrom = this.placeGroup(group, 0);
      if (refusedFrom !== undefined) limitRefused.push({ group, from: refusedFrom });
    }
    // Narrowing a planned claim's options can hand limit headroom back; give pods that were
    // refused for limits another go so none is left out while the limits would allow it.
    for (let pass = 0; pass < 4 && limitRefused.length > 0; pass++) {
      const retry = limitRefused;
      limitRefused = [];
      let progressed = false;
      for (const { group, from } of retry) {
        const refusedFrom = this.placeGroup(group, from, true);
        if (refusedFrom !== from) progressed = true;
        if (refusedFrom !== undefined) limitRefused.push({ group, from: refusedFrom });
      }
      if (!progressed) break;
    }
    for (const { group, from } of limitRefused) this.refuse(group, from, this.explain(group));
    return {
      nodeClaims: this.planned.map((claim) => this.toPlan(claim)),
      existingPlacements: this.inFlight.filter((c) => c.podKeys.length > 0).map((c) => ({ nodeClaimName: c.name, podKeys: c.podKeys })),
      unschedulable: this.unschedulable,
    };
  }

  /**
   * Places group.pods[from..]; returns the index of the first pod refused because of
   * NodePool limits (the caller may retry those), or undefined. Pods refused for any other
   * reason are recorded as unschedulable here.
   */
  private placeGroup(group: PodGroup, from: number, retrying = false): number | undefined {
    let next = from;
    if (group.invalid !== undefined) {
      this.refuse(group, next, group.invalid);
      return undefined;
    }
    if (group.terms.length === 0) {
      this.refuse(group, next, 'required node affinity has no term with match expressions');
      return undefined;
    }
    if (!retrying) next = this.placeOnInFlight(group, next);
    const plannedBefore = this.pools.map((pool) => pool.planned.length);
    if (next < group.pods.length) next = this.placeOnPlanned(group, next, plannedBefore);
    while (next < group.pods.length) {
      const placed = this.openClaim(group, next);
      if (placed === 0) {
        if (this.limitsBlocked(group)) return next;
        this.refuse(group, next, this.explain(group));
        return undefined;
      }
      next += placed;
    }
    return undefined;
  }

  private copies = new Float64Array(16);

  /** A reusable per-option counter array (options lists are short; grown when not). */
  private copiesScratch(length: number): Float64Array {
    if (this.copies.length < length) this.copies = new Float64Array(length * 2);
    return this.copies;
  }

  private refuse(group: PodGroup, from: number, reason: string): void {
    for (let i = from; i < group.pods.length; i++) this.unschedulable.push({ pod: group.pods[i]!, reason });
  }

  private placeOnInFlight(group: PodGroup, from: number): number {
    let next = from;
    for (const pool of this.pools) {
      for (let position = pool.inFlightIndex.findFirst(group.requestVector, 0); position !== -1 && next < group.pods.length;
        position = pool.inFlightIndex.findFirst(group.requestVector, position + 1)) {
        const claim = pool.inFlight[position]!;
        if (firstUntoleratedTaint(group.tolerations, claim.taints)) continue;
        const fit = copiesThatFit(group.requests, claim.used, claim.allocatable);
        if (fit === 0) continue;
        if (!claim.variants.every((variant) => firstCompatibleTerm(variant, group.terms, this.cache))) continue;
        const count = Math.min(fit, group.pods.length - next);
        addInto(claim.used, group.requests, count);
        pool.inFlightIndex.set(position, indexVector(subtractResources(claim.allocatable, claim.used)));
        for (let i = 0; i < count; i++) claim.podKeys.push(podKey(group.pods[next + i]!));
        next += count;
      }
    }
    return next;
  }

  /**
   * First fit over claims planned before this group started (see openClaim for why), pool
   * by pool in weight order; the index skips claims without room in O(log n).
   */
  private placeOnPlanned(group: PodGroup, from: number, plannedBefore: readonly number[]): number {
    let next = from;
    for (let p = 0; p < this.pools.length && next < group.pods.length; p++) {
      const pool = this.pools[p]!;
      const end = plannedBefore[p]!;
      if (end === 0 || firstUntoleratedTaint(group.tolerations, pool.taints)) continue;
      if (!firstCompatibleTerm(pool.requirements, group.terms, this.cache)) continue;
      for (let position = pool.plannedIndex.findFirst(group.requestVector, 0, end); position !== -1 && next < group.pods.length;
        position = pool.plannedIndex.findFirst(group.requestVector, position + 1, end)) {
        next += this.addToPlanned(pool.planned[position]!, group, next);
      }
    }
    return next;
  }

  /** Adds as many of group.pods[from..] to a planned claim as fit; returns how many. */
  private addToPlanned(claim: PlannedClaim, group: PodGroup, from: number): number {
    const term = firstCompatibleTerm(claim.requirements, group.terms, this.cache);
    if (!term) return 0;
    const requirements = this.cache.intersect(claim.requirements, term);
    // Two passes without intermediate objects: this runs for every (group, claim) the index
    // proposes, and per-option allocations here were a visible share of GC at 10,000 pods.
    const copiesPerOption = this.copiesScratch(claim.options.length);
    let most = 0;
    for (let i = 0; i < claim.options.length; i++) {
      const option = claim.options[i]!;
      const copies = this.cache.intersects(option.requirements, requirements) ? copiesThatFit(group.requests, claim.used, option.allocatable) : 0;
      copiesPerOption[i] = copies;
      if (copies > most) most = copies;
    }
    if (most === 0) return 0;
    const count = Math.min(most, group.pods.length - from);
    let keepsAll = true;
    for (let i = 0; i < claim.options.length; i++) if (copiesPerOption[i]! < count) keepsAll = false;
    const options = keepsAll ? claim.options : claim.options.filter((_, i) => copiesPerOption[i]! >= count);
    if (!satisfiesMinValues(requirements, options)) return 0;
    claim.requirements = requirements;
    this.narrow(claim, options);
    addInto(claim.used, group.requests, count);
    claim.pool.plannedIndex.set(claim.position, plannedFree(claim));
    for (let i = 0; i < count; i++) claim.podKeys.push(podKey(group.pods[from + i]!));
    return count;
  }

  /** Replaces a planned claim's options by a subset, returning unneeded limit headroom. */
  private narrow(claim: PlannedClaim, options: Candidate[]): void {
    if (options.length === claim.options.length) return;
    claim.options = options;
    const limits = claim.pool.limits;
    const remaining = claim.pool.remaining;
    if (!limits || !remaining) return;
    const reservation = maxCapacity(options, limits);
    for (const name in limits) remaining[name]! += (claim.reservation[name] ?? 0) - (reservation[name] ?? 0);
    claim.reservation = reservation;
  }

  /**
   * Opens one new claim for group.pods[from..] on the first NodePool (by weight) that can
   * take the pod, and returns how many pods it holds (0 when no pool can). The claim is sized
   * for the lowest price per pod placed, so 2 one-GPU pods get two 1-GPU VMs rather than an
   * 8-GPU one; later pods of the same group go to further new claims instead of stretching
   * this one onto a pricier SKU.
   */
  private openClaim(group: PodGroup, from: number): number {
    const left = group.pods.length - from;
    for (const pool of this.pools) {
      if (firstUntoleratedTaint(group.tolerations, pool.taints)) continue;
      for (const term of group.terms) {
        if (this.cache.compatible(pool.requirements, term) !== undefined) continue;
        const requirements = this.cache.intersect(pool.requirements, term);
        const fits: Array<{ option: Candidate; copies: number }> = [];
        for (const option of pool.candidates) {
          if (!this.cache.intersects(option.requirements, requirements)) continue;
          if (pool.remaining && !fitsWithin(capacityForLimits(option.capacity, pool.remaining), pool.remaining)) continue;
          const copies = copiesThatFit(group.requests, pool.daemonOverhead, option.allocatable);
          if (copies > 0) fits.push({ option, copies });
        }
        if (fits.length === 0) continue;
        let bestCount = 0;
        let bestPricePerPod = Infinity;
        for (const { option, copies } of fits) {
          const count = Math.min(copies, left);
          const pricePerPod = option.instanceType.pricePerHour / count;
          if (pricePerPod < bestPricePerPod || (pricePerPod === bestPricePerPod && count > bestCount)) {
            bestPricePerPod = pricePerPod;
            bestCount = count;
          }
        }
        const options = fits.filter((f) => f.copies >= bestCount).map((f) => f.option);
        if (!satisfiesMinValues(requirements, options)) continue;
        const used = addInto({}, pool.daemonOverhead);
        addInto(used, group.requests, bestCount);
        const reservation = pool.limits ? maxCapacity(options, pool.limits) : {};
        if (pool.remaining) for (const name in reservation) pool.remaining[name]! -= reservation[name]!;
        const podKeys: string[] = new Array<string>(bestCount);
        for (let i = 0; i < bestCount; i++) podKeys[i] = podKey(group.pods[from + i]!);
        const claim: PlannedClaim = { pool, requirements, options, used, reservation, podKeys, position: pool.planned.length };
        pool.planned.push(claim);
        pool.plannedIndex.push(plannedFree(claim));
        this.planned.push(claim);
        return bestCount;
      }
    }
    return 0;
  }

  /** Whether some pool could take the group if only its limits allowed. */
  private limitsBlocked(group: PodGroup): boolean {
    return this.pools.some((pool) => pool.remaining !== undefined && this.poolVerdict(pool, group).limited);
  }

  /** Why no pool can take the group: the catalog-wide reason if there is one, else per pool. */
  private explain(group: PodGroup): string {
    for (const name in group.requests) {
      const amount = group.requests[name]!;
      if (amount > 0 && amount > (this.catalogMax[name] ?? 0)) return `no SKU in catalog offers ${describeAmount(name, amount)}`;
    }
    if (this.pools.length === 0) return `no NodePool references a ready ${NODECLASS_KIND}`;
    return this.pools.map((pool) => this.poolVerdict(pool, group).reason).join('; ');
  }

  private poolVerdict(pool: PoolTemplate, group: PodGroup): { reason: string; limited: boolean } {
    const taint = firstUntoleratedTaint(group.tolerations, pool.taints);
    if (taint) return { reason: `NodePool ${pool.name}: did not tolerate taint ${formatTaint(taint)}`, limited: false };
    let incompatibility: string | undefined;
    const matching = new Set<Candidate>();
    const matchingUnavailable = new Set<Candidate>();
    for (const term of group.terms) {
      const why = this.cache.compatible(pool.requirements, term);
      if (why !== undefined) {
        incompatibility ??= why;
        continue;
      }
      const requirements = this.cache.intersect(pool.requirements, term);
      for (const option of pool.candidates) if (this.cache.intersects(option.requirements, requirements)) matching.add(option);
      for (const option of pool.unavailable) if (this.cache.intersects(option.requirements, requirements)) matchingUnavailable.add(option);
    }
    if (incompatibility !== undefined && matching.size === 0 && matchingUnavailable.size === 0) {
      return { reason: `NodePool ${pool.name}: incompatible requirements, ${incompatibility}`, limited: false };
    }
    const fits = (c: Candidate): boolean => copiesThatFit(group.requests, pool.daemonOverhead, c.allocatable) > 0;
    const fitting = [...matching].filter(fits);
    if (fitting.length > 0 && pool.limits && pool.remaining) {
      // Every fitting SKU exceeds some limit (else a claim would have been opened); name the
      // limit the cheapest one hits.
      const capacity = capacityForLimits(fitting[0]!.capacity, pool.limits);
      for (const name in pool.limits) {
        if ((capacity[name] ?? 0) > pool.remaining[name]!) {
          return { reason: `NodePool ${pool.name} limit ${name}=${formatQuantity(pool.limits[name]!, name)} reached`, limited: true };
        }
      }
    }
    if (fitting.length > 0) return { reason: `NodePool ${pool.name}: no set of instance types satisfies minValues`, limited: false };
    const blocked = [...matchingUnavailable].filter(fits).map((c) => c.instanceType.name);
    if (blocked.length > 0) {
      return { reason: `NodePool ${pool.name}: offerings unavailable (${blocked.join(', ')} ${CAPACITY_TYPE_ON_DEMAND} in ${pool.region})`, limited: false };
    }
    if (matching.size === 0) return { reason: `NodePool ${pool.name}: no instance type in ${pool.region} matches the requirements`, limited: false };
    // Name the requests no matching SKU can meet on its own; if each can be met but never all
    // at once, name them all.
    const names = Object.keys(group.requests).sort();
    const short = names.filter((name) => ![...matching].some((c) => (c.allocatable[name] ?? 0) - (pool.daemonOverhead[name] ?? 0) >= group.requests[name]!));
    const listed = (short.length > 0 ? short : names).map((name) => describeAmount(name, group.requests[name]!)).join(', ');
    return { reason: `NodePool ${pool.name}: no instance type in ${pool.region} matching the requirements has room for ${listed}`, limited: false };
  }

  /**
   * Selectors per (claim requirements, options): most planned claims share both, so each
   * distinct pair is intersected and sorted once; plans get their own copies.
   */
  private readonly selectorCache = new Map<Requirements, Map<string, NodeSelectorRequirement[]>>();

  private planSelectors(claim: PlannedClaim): NodeSelectorRequirement[] {
    const names = claim.options.map((o) => o.instanceType.name);
    const optionsKey = names.join('\u0000');
    let byOptions = this.selectorCache.get(claim.requirements);
    if (!byOptions) this.selectorCache.set(claim.requirements, (byOptions = new Map()));
    let selectors = byOptions.get(optionsKey);
    if (!selectors) {
      selectors = claim.requirements.intersect(
        Requirements.of([
          Requirement.in(LABEL_INSTANCE_TYPE, names),
          Requirement.in(LABEL_REGION, [claim.pool.region]),
          Requirement.in(LABEL_CAPACITY_TYPE, [CAPACITY_TYPE_ON_DEMAND]),
        ]),
      ).toSelectors();
      byOptions.set(optionsKey, selectors);
    }
    return selectors.map((r) => (r.values ? { ...r, values: [...r.values] } : { ...r }));
  }

  private toPlan(claim: PlannedClaim): NodeClaimPlan {
    return {
      nodePoolName: claim.pool.name,
      nodeClassName: claim.pool.nodeClass.metadata.name,
      instanceType: claim.options[0]!.instanceType,
      instanceTypeOptions: claim.options.map((o) => o.instanceType),
      requirements: this.planSelectors(claim),
      requests: resourcesToList(claim.used),
      podKeys: claim.podKeys,
    };
  }
}

/** Decides NodeClaims for pending pods. Pure: same input, same output. */
export function schedule(input: SchedulingInput): SchedulingResult {
  return new Scheduler(input).run();
}
