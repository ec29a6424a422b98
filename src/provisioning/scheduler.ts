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
  AzureFlexNodeClass, Node, NodeAffinityTerm, NodeClaim, NodePool, NodeSelectorRequirement, Pod, ResourceList, Taint,
} from '../ports/cluster.js';
import { isOffered, type InstanceType } from '../catalog/skus.js';
import {
  addInto, copiesThatFit, fitsOnTop, fitsWithin, formatQuantity, limitsFromList, maxInto,
  podRequests, resourcesFromList, resourcesToList, subtractResources, type Resources,
} from './resources.js';
import { Requirement, Requirements, clusterLabelValue, firstUntoleratedTaint, formatTaint, instanceTypeRequirements } from './requirements.js';
import { defaultKubeReserved, instanceTypeCapacity, maxPodsFor } from './overhead.js';
import { FirstFitIndex, INDEX_DIMENSIONS, indexVector } from './first-fit-index.js';
import { groupPods, podKey, podRequirementTerms, type PodGroup } from './pod-groups.js';
import { RequirementsCache, firstCompatibleTerm } from './requirements-cache.js';
import {
  EMPTY_TOPOLOGY, NO_RELAXATION, Topology, TopologyError, decide, describeTopology, domainsFor, record, relax, requiredOnly,
  type DomainSource, type PodTopology, type Relaxation,
} from './topology.js';
import {
  CAPACITY_TYPE_ON_DEMAND, LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, LABEL_REGION, LABEL_ZONE,
  NODECLASS_GROUP, NODECLASS_KIND,
} from '../apis/well-known.js';
import { sameNamespacedName, walkAlongside, type ListChanges } from '../utils/list-walk.js';

export { podKey, podRequirementTerms };


export interface SchedulingInput {
  pendingPods: readonly Pod[];
  /** All NodePools; those not referencing AzureFlexNodeClass are ignored. */
  nodePools: readonly NodePool[];
  nodeClasses: readonly AzureFlexNodeClass[];
  instanceTypes: readonly InstanceType[];
  /** All NodeClaims: in-flight capacity for pending pods and NodePool limit usage. */
  existingNodeClaims: readonly NodeClaim[];
  /** Pods already bound to nodes (their requests use up the NodeClaims' capacity; they count for topology). */
  boundPods?: readonly Pod[];
  /** Nodes, for the topology domains (zone, hostname, …) of pods already running. */
  nodes?: readonly Node[];
  /**
   * Node requirements a pod's volumes impose (a zonal disk pins region and zone), or a reason
   * the pod cannot be placed (e.g. its PVC does not exist). See volume-topology.ts.
   */
  volumeRequirements?: (pod: Pod) => NodeSelectorRequirement[] | { error: string } | undefined;
  /** One representative pod per DaemonSet: its requests are overhead on every node it fits. */
  daemonSetPods: readonly Pod[];
  /** kube-reserved + eviction threshold per instance type; defaults to the AKS formula. */
  kubeReserved?: (instanceType: InstanceType, maxPods: number) => Resources;
  isOfferingUnavailable: (sku: string, region: string, capacityType: string) => boolean;
  /** The AKS node resource group: its label value is kubernetes.azure.com/cluster on every node (none: no such label). */
  nodeResourceGroup?: string;
  /** Per-zone marks (a zonal allocation failure): the SKU's other zones stay offered. */
  isZoneUnavailable?: (sku: string, region: string, zone: string) => boolean;
  /**
   * What earlier passes derived from each existing NodeClaim, for a caller that schedules
   * again and again (the provisioner): only NodeClaims that changed are rebuilt. The result
   * is the same with or without it.
   */
  memo?: SchedulingMemo;
}

/**
 * What a pass derives from one existing NodeClaim, given its pool: valid while the claim
 * (uid, resourceVersion) and its pool's context (NodePool, NodeClass, DaemonSet overhead)
 * are the same. Shared read-only by every pass that uses it.
 */
interface ExistingClaimState {
  /** The claim it was derived from: same uid and resourceVersion (or, without one, the same object). */
  version: { uid: string; resourceVersion: string | undefined; object: NodeClaim };
  context: string;
  /** What the claim holds against its pool's limits (when the pool has limits). */
  limitUsage: Resources | undefined;
  /** Room for pending pods; none while it is being deleted or has no known size. */
  capacity: {
    allocatable: Resources;
    /** Usage before the pods bound to its node: the DaemonSet pods still to come. */
    baseUsed: Resources;
    variants: Requirements[];
    source: DomainSource;
  } | undefined;
  /**
   * Usage with the pods bound to its node, and the free vector it leaves, for the node's
   * usage version (BoundUsage; 0 without bound pods). Read-only: a pass that places pods on
   * the claim replaces its `used`, never writes into this one.
   */
  withBound?: { version: number; used: Resources; free: Float64Array };
}

/**
 * Per-NodeClaim scheduling state kept across passes (SchedulingInput.memo). A provisioning
 * pass over a fleet rebuilt ~1,000 NodeClaims' requirements, options and topology views
 * every 10 s, most of them unchanged since the pass before.
 */
export class SchedulingMemo {
  /** @internal by NodeClaim name */
  readonly claims = new Map<string, ExistingClaimState>();
  /** @internal the last pass's NodeClaims and their names in input order, and that list sorted */
  order: { claims: NodeClaim[]; names: string[]; sorted: NodeClaim[]; distinct: boolean; slots?: Map<string, number> } | undefined;
  /** @internal what every entry was derived with */
  basis: SchedulingBasis | undefined;
  /** @internal requests per node of the bound pods, carried from list to list */
  readonly bound = new BoundUsage();
  /** @internal the last pass's in-flight NodeClaims, carried to the next pass and updated where they changed */
  inFlight: InFlightCache | undefined;
  /**
   * @internal whether every variant of an existing NodeClaim (ExistingClaimState's, kept while
   * the claim is) accepts one of a pod group's terms (one array per pod spec, pod-groups.ts):
   * both are immutable, so the answer holds for as long as either lives. A pass over 2,000
   * pending pods asked it of every in-flight NodeClaim with room, pass after pass.
   */
  readonly accepts = new WeakMap<readonly Requirements[], WeakMap<readonly Requirements[], boolean>>();
  private readonly contexts = new Map<string, string>();

  /** @internal one string per distinct pool context, so entries compare contexts by reference */
  intern(context: string): string {
    const kept = this.contexts.get(context);
    if (kept !== undefined) return kept;
    if (this.contexts.size > 1_000) this.contexts.clear();
    this.contexts.set(context, context);
    return context;
  }
}

/** What the pods bound to one node request, and a version that changes whenever that does. */
export interface NodeUsage {
  used: Resources;
  /** Unique across nodes and never reused (so a cached answer for a version stays true). */
  version: number;
}

/**
 * Requests of the pods bound to each node (Succeeded and Failed pods hold nothing), kept from
 * list to list: each list of bound pods is walked alongside the last one, and an unchanged pod
 * is the same object (informer caches hand them out so), so a pass re-sums only the nodes whose
 * pods were written, deleted or added, not all 8,000 bound pods of a fleet. A list that differs
 * in more places (copies, another order) is summed afresh, what a plain walk costs.
 */
export class BoundUsage {
  private last: readonly Pod[] = [];
  private readonly podsByNode = new Map<string, Set<Pod>>();
  private readonly byNode = new Map<string, NodeUsage>();
  private versions = 0;
  /** Nodes whose usage changed since takeChanged() last answered; 'all' after starting afresh. */
  private changed: Set<string> | 'all' = 'all';
  /** The running pods of `last` with required anti-affinity, in list order; undefined once a pod that has or had such a rule changed. */
  private antiAffinity: readonly Pod[] | undefined;

  /** Brings the sums to `pods`; throws what podRequests throws for a bound pod (and then starts afresh next time). */
  update(pods: readonly Pod[]): ReadonlyMap<string, NodeUsage> {
    if (pods === this.last) return this.byNode;
    const dirty = new Set<string>();
    try {
      if (!this.walk(pods, dirty)) {
        this.antiAffinity = undefined;
        for (const name of this.podsByNode.keys()) dirty.add(name);
        this.podsByNode.clear();
        for (const pod of pods) this.add(pod, dirty);
      }
      for (const name of dirty) {
        const onNode = this.podsByNode.get(name);
        if (!onNode) {
          this.byNode.delete(name);
          continue;
        }
        const used: Resources = {};
        for (const pod of onNode) addInto(used, podRequests(pod));
        this.byNode.set(name, { used, version: ++this.versions });
      }
    } catch (error) {
      this.last = [];
      this.podsByNode.clear();
      this.byNode.clear();
      this.changed = 'all';
      this.antiAffinity = undefined;
      throw error;
    }
    if (this.changed !== 'all') for (const name of dirty) this.changed.add(name);
    this.last = pods;
    return this.byNode;
  }

  /**
   * The running pods with required anti-affinity of the list last brought in, in its order:
   * worked out again only after a pod that has or had such a rule was written, added or removed.
   */
  withAntiAffinity(): readonly Pod[] {
    return (this.antiAffinity ??= this.last.filter((pod) => hasRequiredAntiAffinity(pod) && isRunningBound(pod)));
  }

  /** The nodes whose usage changed since the last call (every node: 'all'). */
  takeChanged(): ReadonlySet<string> | 'all' {
    const changed = this.changed;
    this.changed = new Set();
    return changed;
  }

  /** Applies the differences from the last list; false when there are too many to be worth it. */
  private walk(pods: readonly Pod[], dirty: Set<string>): boolean {
    const changes: ListChanges<Pod> = {
      replaced: (old, pod) => {
        if (hasRequiredAntiAffinity(old) || hasRequiredAntiAffinity(pod)) this.antiAffinity = undefined;
        this.remove(old, dirty);
        this.add(pod, dirty);
      },
      removed: (old) => {
        if (hasRequiredAntiAffinity(old)) this.antiAffinity = undefined;
        this.remove(old, dirty);
      },
      added: (pod) => {
        if (hasRequiredAntiAffinity(pod)) this.antiAffinity = undefined;
        this.add(pod, dirty);
      },
    };
    return walkAlongside(this.last, pods, sameNamespacedName, changes, Math.max(64, pods.length >> 2));
  }

  private add(pod: Pod, dirty: Set<string>): void {
    const nodeName = pod.spec.nodeName;
    if (!nodeName || pod.status.phase === 'Succeeded' || pod.status.phase === 'Failed') return;
    let onNode = this.podsByNode.get(nodeName);
    if (!onNode) this.podsByNode.set(nodeName, (onNode = new Set()));
    onNode.add(pod);
    dirty.add(nodeName);
  }

  private remove(pod: Pod, dirty: Set<string>): void {
    const nodeName = pod.spec.nodeName;
    if (!nodeName) return;
    const onNode = this.podsByNode.get(nodeName);
    if (!onNode?.delete(pod)) return;
    if (onNode.size === 0) this.podsByNode.delete(nodeName);
    dirty.add(nodeName);
  }
}

/** The catalog's entries and the kube-reserved model a memo's entries were derived with, and what a pass reads of them. */
interface SchedulingBasis {
  instanceTypes: readonly InstanceType[];
  kubeReserved: (instanceType: InstanceType, maxPods: number) => Resources;
  typesByName: ReadonlyMap<string, InstanceType>;
  catalogMax: Readonly<Resources>;
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
  /** The hostname domain this claim will be (unique within the run). */
  hostname: string;
  /** Topology domains per key, recomputed when requirements or options change. */
  domainCache: Map<string, readonly string[] | undefined>;
  requirements: Requirements;
  options: Candidate[];
  used: Resources;
  /** Max capacity across options: what this claim holds against the pool's limits. */
  reservation: Resources;
  podKeys: string[];
  /** Position in the pool's plannedIndex. */
  position: number;
  /** Largest allocatable over the options in index dimensions (cached; reset when options change). */
  maxAllocatable?: Float64Array | undefined;
  /** The claim's topology view (reads the claim live). */
  source?: DomainSource | undefined;
}

/** Whether some option holds used + request; options are cheapest first, so look from the largest. */
function anyHolds(options: readonly Candidate[], used: Resources, request: Resources): boolean {
  for (let i = options.length - 1; i >= 0; i--) if (fitsOnTop(used, request, options[i]!.allocatable)) return true;
  return false;
}

function hasMinValues(requirements: Requirements): boolean {
  for (const r of requirements.values()) if (r.minValues !== undefined) return true;
  return false;
}

interface InFlightClaim {
  name: string;
  /** Topology view: hostname, labels and requirements of the claim as created. */
  source: DomainSource;
  /**
   * The claim's requirements combined with each instance type it may launch as. A pod may
   * only count on the claim if it is compatible with every variant: the claim's own
   * requirements say nothing about, say, the GPU model of the SKU that will come up.
   */
  variants: Requirements[];
  taints: readonly Taint[];
  allocatable: Resources;
  /** What it holds before this pass places anything; `used` starts as (and is reset to) base.used. */
  used: Resources;
  podKeys: string[];
  position: number;
  base: { used: Resources; free: Float64Array };
  pool: string;
  nodeName: string | undefined;
  /** Its NodeClaim's position in the sorted list it was built from. */
  at: number;
}

/**
 * A pass's in-flight NodeClaims as the next pass starts from them (SchedulingMemo.inFlight):
 * the entries and first-fit indexes of each pool, put back to what they were before the pass
 * placed pods, then updated for the NodeClaims that are other objects now and the nodes whose
 * bound pods changed. A fleet's 1,000 NodeClaims were each looked at on every pass.
 */
interface InFlightCache {
  /** Pool names, contexts and limits, in order: when they differ, everything is rebuilt. */
  poolsKey: string;
  /** The sorted NodeClaims it holds, each one's state (undefined: no pool) and entry (none: no capacity). */
  claims: NodeClaim[];
  states: Array<ExistingClaimState | undefined>;
  entries: Array<InFlightClaim | undefined>;
  pools: Map<string, { entries: InFlightClaim[]; index: FirstFitIndex; remaining: Resources | undefined; limitNames: string[] }>;
  all: InFlightClaim[];
  byNode: Map<string, InFlightClaim[]>;
  /** Entries the last pass placed pods on. */
  touched: Set<InFlightClaim>;
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
  for (const name in limits) {
    let most = 0;
    for (const option of options) most = Math.max(most, option.capacity[name] ?? 0);
    out[name] = most;
  }
  return out;
}

/*
 * Scratch vectors for plannedFree: FirstFitIndex.set copies what it is given, so one set of
 * buffers serves every call (this runs once per placement; fresh arrays showed up as GC).
 */
const FREE_SCRATCH = new Float64Array(INDEX_DIMENSIONS);
const OPTION_SCRATCH = new Float64Array(INDEX_DIMENSIONS);
const USED_SCRATCH = new Float64Array(INDEX_DIMENSIONS);

/**
 * Most room left on any of a planned claim's options, per indexed dimension (a shared
 * buffer): every option carries the same pods, so it is the options' largest allocatable
 * minus what is used, and the largest allocatable is kept until the options change.
 */
function plannedFree(claim: PlannedClaim): Float64Array {
  const free = FREE_SCRATCH;
  const used = indexVector(claim.used, USED_SCRATCH);
  let largest = claim.maxAllocatable;
  if (!largest) {
    const scratch = OPTION_SCRATCH;
    largest = new Float64Array(INDEX_DIMENSIONS).fill(-Infinity);
    for (const option of claim.options) {
      indexVector(option.allocatable, scratch);
      for (let d = 0; d < INDEX_DIMENSIONS; d++) largest[d] = Math.max(largest[d]!, scratch[d]!);
    }
    claim.maxAllocatable = largest;
  }
  for (let d = 0; d < INDEX_DIMENSIONS; d++) free[d] = largest[d]! - used[d]!;
  return free;
}

/** fitsWithin(capacityForLimits(capacity, remaining), remaining) without the intermediate object. */
function withinLimits(capacity: Resources, remaining: Resources): boolean {
  for (const name in remaining) {
    const amount = capacity[name] ?? 0;
    if (amount > 0 && amount > remaining[name]!) return false;
  }
  return true;
}

/** Deterministic formatting of a resource amount for messages: "16 nvidia.com/gpu". */
function describeAmount(name: string, amount: number): string {
  return `${formatQuantity(amount, name)} ${name}`;
}

class Scheduler {
  private readonly cache = new RequirementsCache();
  /** In-flight entries this pass placed pods on (the next pass with the memo puts them back). */
  private readonly touched = new Set<InFlightClaim>();
  private readonly pools: PoolTemplate[];
  private readonly inFlight: InFlightClaim[];
  private readonly planned: PlannedClaim[] = [];
  private readonly unschedulable: UnschedulablePod[] = [];
  private readonly kubeReserved: (instanceType: InstanceType, maxPods: number) => Resources;
  /** Largest capacity per resource across the whole catalog, for "no SKU offers" messages. */
  private readonly catalogMax: Readonly<Resources>;
  private readonly typesByName: ReadonlyMap<string, InstanceType>;
  /** kubernetes.azure.com/cluster's value on the nodes, part of every instance type's labels. */
  private readonly cluster: string | undefined;

  constructor(private readonly input: SchedulingInput) {
    this.cluster = clusterLabelValue(input.nodeResourceGroup);
    this.kubeReserved = input.kubeReserved ?? defaultKubeReserved;
    const basis = this.basis();
    this.typesByName = basis.typesByName;
    this.catalogMax = basis.catalogMax;
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
        if (!isOffered(instanceType, nodeClass.spec.subscriptionID, region)) continue;
        // A type the pool cannot take with all its zones cannot with fewer either: skip it
        // before asking about each zone's marks (a pool of one size asked about the whole catalog).
        if (requirements.intersects(instanceTypeRequirements(instanceType, region, undefined, this.cluster)) !== undefined) continue;
        const zones = this.offeredZones(instanceType, region);
        const itRequirements = instanceTypeRequirements(instanceType, region, zones, this.cluster);
        if (requirements.intersects(itRequirements) !== undefined) continue;
        const capacity = instanceTypeCapacity(instanceType, nodeClass.spec);
        const reserved = this.kubeReserved(instanceType, maxPodsFor(instanceType, nodeClass.spec));
        const candidate: Candidate = { instanceType, requirements: itRequirements, capacity, allocatable: subtractResources(capacity, reserved) };
        if (zones?.length === 0 || this.input.isOfferingUnavailable(instanceType.name, region, CAPACITY_TYPE_ON_DEMAND)) unavailable.push(candidate);
        else candidates.push(candidate);
      }
      candidates.sort((a, b) => a.instanceType.pricePerHour - b.instanceType.pricePerHour || a.instanceType.name.localeCompare(b.instanceType.name));
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

  /** The type's zones in the region minus those marked unavailable (undefined: none marked, use the catalog's list). */
  private offeredZones(instanceType: InstanceType, region: string): readonly string[] | undefined {
    const all = instanceType.zones?.[region];
    const marked = this.input.isZoneUnavailable;
    if (!all || all.length === 0 || !marked || !all.some((z) => marked(instanceType.name, region, z))) return undefined;
    return all.filter((z) => !marked(instanceType.name, region, z));
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
      out.push({ instanceType, requirements: instanceTypeRequirements(instanceType, pool.region, undefined, this.cluster), capacity, allocatable: subtractResources(capacity, reserved) });
    }
    return out;
  }

  /**
   * Existing NodeClaims: every one counts against its pool's limits (until it is gone), and
   * those not being deleted are capacity that pending pods can land on.
   */
  private buildInFlight(): InFlightClaim[] {
    const memo = this.input.memo;
    if (!memo) return this.buildFresh(undefined).all;
    const usage = memo.bound.update(this.input.boundPods ?? []);
    const changedNodes = memo.bound.takeChanged();
    const perPool = this.poolContexts(memo);
    const sorted = this.sortedClaims(memo);
    const kept = memo.inFlight;
    memo.inFlight = undefined;
    let cache: InFlightCache;
    if (kept && kept.poolsKey === perPool.key && this.updateInFlight(kept, sorted, usage, changedNodes, perPool.pools, memo)) {
      cache = kept;
    } else {
      cache = this.buildFresh(usage, sorted, perPool);
    }
    cache.touched = this.touched;
    for (const pool of this.pools) {
      const held = cache.pools.get(pool.name)!;
      pool.inFlight = held.entries;
      pool.inFlightIndex = held.index;
      if (pool.remaining) pool.remaining = { ...held.remaining! };
    }
    if (memo.claims.size > this.input.existingNodeClaims.length) {
      const live = new Set(this.input.existingNodeClaims.map((c) => c.metadata.name));
      for (const name of memo.claims.keys()) if (!live.has(name)) memo.claims.delete(name);
    }
    memo.inFlight = cache;
    return cache.all;
  }

  /**
   * Per pool, once: its context, the names of its limits (a for-in over a pass's fresh limits
   * object, once per NodeClaim, deoptimised the loop below pass after pass), and a key of all
   * of them that says whether the last pass's in-flight entries were derived alike.
   */
  private poolContexts(memo: SchedulingMemo | undefined): { key: string; pools: Map<string, { pool: PoolTemplate; context: string; limitNames: string[] }> } {
    const pools = new Map<string, { pool: PoolTemplate; context: string; limitNames: string[] }>();
    let key = '';
    for (const pool of this.pools) {
      const context = memo ? memo.intern(poolContext(pool)) : poolContext(pool);
      pools.set(pool.name, { pool, context, limitNames: pool.limits && pool.remaining ? Object.keys(pool.limits) : [] });
      key += `${pool.name}\u0000${context}\u0000${pool.limits ? JSON.stringify(pool.limits) : '-'}\u0001`;
    }
    return { key, pools };
  }

  /** The state of an existing NodeClaim in its pool: the memo's while the claim and the context are the same. */
  private stateOf(claim: NodeClaim, pool: PoolTemplate, context: string, memo: SchedulingMemo | undefined): ExistingClaimState {
    let state = memo?.claims.get(claim.metadata.name);
    // Contexts are interned, so the comparison is usually one of references.
    if (!state || state.context !== context || !sameVersion(state, claim)) {
      state = this.existingClaimState(claim, pool, context);
      memo?.claims.set(claim.metadata.name, state);
    }
    return state;
  }

  /**
   * Every existing NodeClaim counts against its pool's limits (until it is gone), and those
   * not being deleted are capacity that pending pods can land on.
   */
  private buildFresh(
    usage: ReadonlyMap<string, NodeUsage> | undefined,
    sorted: readonly NodeClaim[] = this.sortedClaims(undefined),
    perPool = this.poolContexts(undefined),
  ): InFlightCache {
    const memo = this.input.memo;
    const usedByNode = usage ? undefined : this.usedByNode();
    const pools: InFlightCache['pools'] = new Map();
    const vectors = new Map<string, Float64Array[]>();
    for (const { pool, limitNames } of perPool.pools.values()) {
      pools.set(pool.name, { entries: [], index: new FirstFitIndex(), remaining: pool.remaining ? { ...pool.remaining } : undefined, limitNames });
      vectors.set(pool.name, []);
    }
    const cache: InFlightCache = {
      poolsKey: perPool.key, claims: [...sorted], states: [], entries: [], pools, all: [], byNode: new Map(), touched: new Set(),
    };
    for (let at = 0; at < sorted.length; at++) {
      const claim = sorted[at]!;
      const of = perPool.pools.get(claim.metadata.labels[LABEL_NODEPOOL] ?? '');
      cache.states.push(undefined);
      cache.entries.push(undefined);
      if (!of) continue;
      const { pool, context, limitNames } = of;
      const state = this.stateOf(claim, pool, context, memo);
      cache.states[at] = state;
      const held = pools.get(pool.name)!;
      for (let i = 0; i < limitNames.length; i++) {
        const name = limitNames[i]!;
        held.remaining![name]! -= state.limitUsage![name] ?? 0;
      }
      const capacity = state.capacity;
      if (!capacity) continue;
      const nodeName = claim.status.nodeName;
      let base: InFlightClaim['base'];
      if (usage) {
        base = withBoundOf(state, usage, nodeName);
      } else {
        const used = { ...capacity.baseUsed };
        const bound = nodeName ? usedByNode!.get(nodeName) : undefined;
        if (bound) addInto(used, bound);
        base = { used, free: indexVector(subtractResources(capacity.allocatable, used)) };
      }
      const entry: InFlightClaim = {
        name: claim.metadata.name, source: capacity.source, variants: capacity.variants, taints: claim.spec.taints,
        allocatable: capacity.allocatable, used: base.used, podKeys: [], position: held.entries.length, base, pool: pool.name, nodeName, at,
      };
      vectors.get(pool.name)!.push(base.free);
      held.entries.push(entry);
      cache.entries[at] = entry;
      cache.all.push(entry);
      if (nodeName) {
        const onNode = cache.byNode.get(nodeName);
        if (onNode) onNode.push(entry);
        else cache.byNode.set(nodeName, [entry]);
      }
    }
    for (const [name, held] of pools) held.index = FirstFitIndex.of(vectors.get(name)!);
    if (!memo) {
      // A pass without a memo hands the pools their entries here.
      for (const pool of this.pools) {
        const held = pools.get(pool.name)!;
        pool.inFlight = held.entries;
        pool.inFlightIndex = held.index;
        if (pool.remaining) pool.remaining = held.remaining!;
      }
    }
    return cache;
  }

  /**
   * Brings the last pass's entries to this pass: puts back what it placed, then updates the
   * NodeClaims that are other objects now and the entries on nodes whose bound pods changed.
   * False (and the caller rebuilds) when NodeClaims came or went, moved pools, or gained or
   * lost capacity (being deleted): those change positions.
   */
  private updateInFlight(
    cache: InFlightCache, sorted: readonly NodeClaim[], usage: ReadonlyMap<string, NodeUsage>, changedNodes: ReadonlySet<string> | 'all',
    perPool: ReadonlyMap<string, { pool: PoolTemplate; context: string; limitNames: string[] }>, memo: SchedulingMemo,
  ): boolean {
    if (sorted.length !== cache.claims.length) return false;
    const changed: Array<{ at: number; state: ExistingClaimState | undefined }> = [];
    for (let at = 0; at < sorted.length; at++) {
      const claim = sorted[at]!;
      const was = cache.claims[at]!;
      if (claim === was) continue;
      const poolName = claim.metadata.labels[LABEL_NODEPOOL] ?? '';
      if (claim.metadata.name !== was.metadata.name || poolName !== (was.metadata.labels[LABEL_NODEPOOL] ?? '')) return false;
      const of = perPool.get(poolName);
      const state = of ? this.stateOf(claim, of.pool, of.context, memo) : undefined;
      if ((state?.capacity === undefined) !== (cache.entries[at] === undefined)) return false;
      changed.push({ at, state });
    }
    for (const entry of cache.touched) {
      entry.used = entry.base.used;
      entry.podKeys = [];
      cache.pools.get(entry.pool)!.index.set(entry.position, entry.base.free);
    }
    for (const { at, state } of changed) {
      const claim = sorted[at]!;
      cache.claims[at] = claim;
      const before = cache.states[at];
      cache.states[at] = state;
      if (!state) continue;
      const held = cache.pools.get(claim.metadata.labels[LABEL_NODEPOOL] ?? '')!;
      // Integer amounts: adding back the old usage and taking the new is exact.
      for (const name of held.limitNames) held.remaining![name]! += (before!.limitUsage![name] ?? 0) - (state.limitUsage![name] ?? 0);
      const entry = cache.entries[at];
      const capacity = state.capacity;
      if (!entry || !capacity) continue;
      entry.source = capacity.source;
      entry.variants = capacity.variants;
      entry.taints = claim.spec.taints;
      entry.allocatable = capacity.allocatable;
      const nodeName = claim.status.nodeName;
      if (nodeName !== entry.nodeName) {
        if (entry.nodeName) {
          const onNode = cache.byNode.get(entry.nodeName)!.filter((e) => e !== entry);
          if (onNode.length > 0) cache.byNode.set(entry.nodeName, onNode);
          else cache.byNode.delete(entry.nodeName);
        }
        if (nodeName) {
          const onNode = cache.byNode.get(nodeName);
          if (onNode) onNode.push(entry);
          else cache.byNode.set(nodeName, [entry]);
        }
        entry.nodeName = nodeName;
      }
      this.rebase(cache, entry, withBoundOf(state, usage, nodeName));
    }
    const refresh = (entry: InFlightClaim): void => this.rebase(cache, entry, withBoundOf(cache.states[entry.at]!, usage, entry.nodeName));
    if (changedNodes === 'all') {
      for (const entries of cache.byNode.values()) for (const entry of entries) refresh(entry);
    } else {
      for (const name of changedNodes) for (const entry of cache.byNode.get(name) ?? []) refresh(entry);
    }
    return true;
  }

  /** Sets what an entry holds before placement (and its slot in the index), when it changed. */
  private rebase(cache: InFlightCache, entry: InFlightClaim, base: InFlightClaim['base']): void {
    if (entry.base === base) return;
    entry.base = base;
    entry.used = base.used;
    cache.pools.get(entry.pool)!.index.set(entry.position, base.free);
  }

  /** What the catalog and kube-reserved model give every pass; the memo is emptied when either changed. */
  private basis(): SchedulingBasis {
    const memo = this.input.memo;
    const kept = memo?.basis;
    if (kept && kept.kubeReserved === this.kubeReserved && sameItems(kept.instanceTypes, this.input.instanceTypes)) return kept;
    const catalogMax: Resources = {};
    for (const it of this.input.instanceTypes) maxInto(catalogMax, instanceTypeCapacity(it, undefined));
    const basis: SchedulingBasis = {
      instanceTypes: [...this.input.instanceTypes],
      kubeReserved: this.kubeReserved,
      typesByName: new Map(this.input.instanceTypes.map((it) => [it.name, it])),
      catalogMax,
    };
    if (memo) {
      memo.claims.clear();
      memo.inFlight = undefined;
      memo.basis = basis;
    }
    return basis;
  }

  /** Requests of the pods bound to the existing NodeClaims' nodes, for a pass without a memo (BoundUsage keeps them across passes). */
  private usedByNode(): ReadonlyMap<string, Resources> {
    const nodeNames = new Set<string>();
    for (const claim of this.input.existingNodeClaims) if (claim.status.nodeName) nodeNames.add(claim.status.nodeName);
    const usedByNode = new Map<string, Resources>();
    for (const pod of this.input.boundPods ?? []) {
      const nodeName = pod.spec.nodeName;
      if (!nodeName || !nodeNames.has(nodeName) || pod.status.phase === 'Succeeded' || pod.status.phase === 'Failed') continue;
      let used = usedByNode.get(nodeName);
      if (!used) usedByNode.set(nodeName, (used = {}));
      addInto(used, podRequests(pod));
    }
    return usedByNode;
  }

  /** Existing NodeClaims by name; the order of the last pass when the same names came in the same order. */
  private sortedClaims(memo: SchedulingMemo | undefined): readonly NodeClaim[] {
    const claims = this.input.existingNodeClaims;
    const last = memo?.order;
    // The very same objects in the same order: the last pass's sorted list is this one's.
    if (last && sameItems(last.claims, claims)) return last.sorted;
    if (last?.distinct) {
      // Usually the same names in the same order with a few NodeClaims written: each written
      // one takes its slot in the last sorted list (walked alongside, list-walk.ts).
      const sorted = this.rewrittenInPlace(last, claims);
      if (sorted) {
        memo!.order = { claims: [...claims], names: last.names, sorted, distinct: true, slots: last.slots };
        return sorted;
      }
    }
    const names = claims.map((c) => c.metadata.name);
    if (last && last.names.length === names.length && last.names.every((n, i) => n === names[i])) {
      // Same names, same order: the same permutation, applied to this pass's objects.
      const current = new Map(claims.map((c) => [c.metadata.name, c]));
      const sorted = last.sorted.map((c) => current.get(c.metadata.name)!);
      memo!.order = { claims: [...claims], names, sorted, distinct: last.distinct };
      return sorted;
    }
    const sorted = (last?.distinct ? insertSorted(last.sorted, claims) : undefined) ?? sortByName(claims);
    if (memo) memo.order = { claims: [...claims], names, sorted: sorted.list, distinct: sorted.distinct };
    return sorted.list;
  }

  /** The last sorted list with this pass's objects, when the input names the same NodeClaims in the same order; else undefined. */
  private rewrittenInPlace(last: NonNullable<SchedulingMemo['order']>, claims: readonly NodeClaim[]): NodeClaim[] | undefined {
    if (last.claims.length !== claims.length) return undefined;
    const slots = (last.slots ??= new Map(last.sorted.map((c, at) => [c.metadata.name, at])));
    const sorted = last.sorted.slice();
    let same = true;
    const walked = walkAlongside(last.claims, claims, sameNamespacedName, {
      replaced: (_old, claim) => {
        sorted[slots.get(claim.metadata.name)!] = claim;
      },
      removed: () => {
        same = false;
      },
      added: () => {
        same = false;
      },
    }, Math.max(64, claims.length >> 2));
    return walked && same ? sorted : undefined;
  }

  /**
   * Everything about an existing NodeClaim that does not depend on the pods bound to it:
   * every one counts against its pool's limits (until it is gone), and those not being
   * deleted are capacity that pending pods can land on.
   */
  private existingClaimState(claim: NodeClaim, pool: PoolTemplate, context: string): ExistingClaimState {
    const version = { uid: claim.metadata.uid, resourceVersion: claim.metadata.resourceVersion, object: claim };
    const options = this.resolveInstanceTypes(claim, pool);
    const limitUsage = pool.limits ? (claim.status.capacity ? resourcesFromList(claim.status.capacity) : maxCapacity(options, pool.limits)) : undefined;
    if (claim.metadata.deletionTimestamp) return { version, context, limitUsage, capacity: undefined };
    let allocatable: Resources | undefined;
    const baseUsed: Resources = {};
    if (claim.status.allocatable) {
      // Launched: allocatable is known. Once the node registers its DaemonSet pods are
      // bound and counted with the bound pods; until then they are still to come.
      allocatable = resourcesFromList(claim.status.allocatable);
      if (!claim.status.nodeName) addInto(baseUsed, pool.daemonOverhead);
    } else if (options.length > 0) {
      // Not launched yet: any option may come up, so only the smallest is promised.
      allocatable = { ...options[0]!.allocatable };
      for (const option of options.slice(1)) {
        for (const name in allocatable) allocatable[name] = Math.min(allocatable[name]!, option.allocatable[name] ?? 0);
      }
      addInto(baseUsed, pool.daemonOverhead);
    }
    if (!allocatable) return { version, context, limitUsage, capacity: undefined };
    const requirements = claimRequirements(claim);
    const variants = options.length > 0 ? options.map((o) => intersected(requirements, o.requirements)) : [requirements];
    return { version, context, limitUsage, capacity: { allocatable, baseUsed, variants, source: inFlightSource(claim, requirements, variants) } };
  }

  run(): SchedulingResult {
    // Pods topology concerns (or whose volumes pin them) go one by one, most constrained
    // first; the rest keep the bulk path, which topology cannot see.
    const { plain, constrained } = this.partition();
    for (const group of groupPods([...constrained.keys()])) {
      for (const pod of group.pods) this.placeConstrained(pod, group, constrained.get(pod)!);
    }
    const groups = groupPods(plain);
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
    // Constrained pods leave options too small for what their claim now holds; drop them.
    for (const claim of this.planned) {
      if (claim.options.some((o) => !fitsWithin(claim.used, o.allocatable))) this.narrow(claim, claim.options.filter((o) => fitsWithin(claim.used, o.allocatable)));
    }
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

  private readonly topology = new Topology((pod) => podRequirementTerms(pod));
  private readonly preferenceRequirements = new Map<NodeAffinityTerm, Requirements>();

  /**
   * Splits pending pods into those the bulk path may place and those placed one at a time.
   * Each loop is a method of its own: in one function, V8 optimised the first loop on stack
   * and deoptimised on reaching the next, pass after pass, leaving the loop over a fleet's
   * 8,000 bound pods to the interpreter.
   */
  private partition(): { plain: Pod[]; constrained: Map<Pod, ConstrainedPod> } {
    const invalid = this.addPendingTopology();
    this.addBoundAntiAffinity();
    // Without a single topology group no bound pod has a topology to record (Topology.of).
    if (this.topology.size > 0) {
      const bound = (this.input.boundPods ?? []).filter(isRunningBound);
      this.setUniverses(bound);
      this.recordBound(bound);
    }
    return this.splitPending(invalid);
  }

  /** Registers the pending pods' own constraints; returns those whose constraints are invalid, with why. */
  private addPendingTopology(): Map<Pod, string> {
    const invalid = new Map<Pod, string>();
    for (const pod of this.input.pendingPods) {
      try {
        this.topology.add(pod);
      } catch (error) {
        if (!(error instanceof TopologyError)) throw error;
        invalid.set(pod, error.message);
      }
    }
    return invalid;
  }

  /** Only a running pod's required anti-affinity binds newcomers; its other rules are history. */
  private addBoundAntiAffinity(): void {
    for (const pod of this.boundWithAntiAffinity()) {
      try {
        this.topology.add({ ...pod, spec: { ...pod.spec, topologySpreadConstraints: [], affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: pod.spec.affinity!.podAntiAffinity!.requiredDuringSchedulingIgnoredDuringExecution } } } });
      } catch (error) {
        if (!(error instanceof TopologyError)) throw error;
      }
    }
  }

  /** The running bound pods with required anti-affinity, in list order (the memo's bound usage keeps them from pass to pass). */
  private boundWithAntiAffinity(): readonly Pod[] {
    const memo = this.input.memo;
    // buildInFlight brought memo.bound to this pass's bound pods.
    if (memo) return memo.bound.withAntiAffinity();
    return (this.input.boundPods ?? []).filter((pod) => hasRequiredAntiAffinity(pod) && isRunningBound(pod));
  }

  /** Counts the bound pods in the topology groups that select them. */
  private recordBound(bound: readonly Pod[]): void {
    for (const pod of bound) {
      const topology = this.topology.of(pod);
      if (topology) record(pod, topology, requiredOnly(topology), this.nodeSource(pod.spec.nodeName!));
    }
  }

  private splitPending(invalid: ReadonlyMap<Pod, string>): { plain: Pod[]; constrained: Map<Pod, ConstrainedPod> } {
    const constrained = new Map<Pod, ConstrainedPod>();
    const plain: Pod[] = [];
    for (const pod of this.input.pendingPods) {
      const error = invalid.get(pod);
      const volumes = this.input.volumeRequirements?.(pod);
      const topology = error === undefined ? this.topology.of(pod) : undefined;
      if (error === undefined && topology === undefined && volumes === undefined) {
        plain.push(pod);
        continue;
      }
      const entry: ConstrainedPod = { topology: topology ?? EMPTY_TOPOLOGY, volumes: undefined, error };
      if (volumes && 'error' in volumes) entry.error ??= volumes.error;
      else if (volumes) entry.volumes = Requirements.fromSelectors(volumes);
      constrained.set(pod, entry);
    }
    return { plain, constrained };
  }

  /** Domains each spread may use: what the NodePools can launch for its owner, plus existing nodes. */
  private setUniverses(bound: readonly Pod[]): void {
    for (const group of this.topology.all()) {
      if (group.type !== 'spread' || group.key === LABEL_HOSTNAME) continue;
      const values = new Set<string>();
      for (const pool of this.pools) {
        const filter = group.nodeFilter;
        if (filter?.tolerations && firstUntoleratedTaint(filter.tolerations, pool.taints)) continue;
        const scopes = filter?.terms
          ? filter.terms.filter((t) => this.cache.compatible(pool.requirements, t) === undefined).map((t) => this.cache.intersect(pool.requirements, t))
          : [pool.requirements];
        for (const scope of scopes) for (const v of this.launchableDomains(pool, scope, group.key)) values.add(v);
      }
      for (const pod of bound) {
        const source = this.nodeSource(pod.spec.nodeName!);
        if (!group.countsOn(source.requirements, source.taints)) continue;
        for (const v of source.domains(group.key) ?? []) values.add(v);
      }
      group.universe = values;
    }
  }

  private readonly launchable = new Map<PoolTemplate, Map<Requirements, Map<string, ReadonlySet<string>>>>();

  /** Values of `key` some SKU of the pool can launch with under `scope` (spreads share scopes). */
  private launchableDomains(pool: PoolTemplate, scope: Requirements, key: string): ReadonlySet<string> {
    let byScope = this.launchable.get(pool);
    if (!byScope) this.launchable.set(pool, (byScope = new Map()));
    let byKey = byScope.get(scope);
    if (!byKey) byScope.set(scope, (byKey = new Map()));
    let values = byKey.get(key);
    if (!values) {
      const out = new Set<string>();
      const r = scope.get(key);
      let previous: ReadonlySet<string> | undefined;
      for (const candidate of pool.candidates) {
        const o = candidate.requirements.get(key);
        if (!o || o.complement || o.values === previous || !this.cache.intersects(candidate.requirements, scope)) continue;
        previous = o.values;
        for (const v of o.values) if (!r || r.has(v)) out.add(v);
      }
      if (out.size === 0 && r && !r.complement) for (const v of r.values) out.add(v);
      byKey.set(key, (values = out));
    }
    return values;
  }

  private nodeSources = new Map<string, DomainSource>();

  /** Topology view of an existing node, from its labels (or its NodeClaim's, before it is listed). */
  private nodeSource(nodeName: string): DomainSource {
    let source = this.nodeSources.get(nodeName);
    if (source) return source;
    const node = this.input.nodes?.find((n) => n.metadata.name === nodeName);
    const claim = node ? undefined : this.input.existingNodeClaims.find((c) => c.status.nodeName === nodeName);
    const labels: Record<string, string> = { ...(node?.metadata.labels ?? claim?.metadata.labels ?? {}) };
    labels[LABEL_HOSTNAME] ??= nodeName;
    const requirements = Requirements.fromLabels(labels);
    source = {
      requirements,
      taints: node?.spec.taints ?? claim?.spec.taints ?? [],
      domains: (key) => (labels[key] !== undefined ? [labels[key]] : undefined),
    };
    this.nodeSources.set(nodeName, source);
    return source;
  }

  /** Places one pod under its topology, relaxing preferences the way Karpenter does when it cannot. */
  private placeConstrained(pod: Pod, shape: PodGroup, constrained: ConstrainedPod): void {
    const { topology, volumes, error } = constrained;
    const single: PodGroup = { ...shape, pods: [pod] };
    if (error !== undefined || shape.invalid !== undefined) {
      this.refuse(single, 0, error ?? shape.invalid!);
      return;
    }
    const baseTerms = volumes ? shape.terms.map((t) => this.cache.intersect(t, volumes)) : shape.terms;
    if (baseTerms.length === 0) {
      this.refuse(single, 0, 'required node affinity has no term with match expressions');
      return;
    }
    let r: Relaxation | undefined = NO_RELAXATION;
    while (r) {
      const preference = topology.preferredNode[r.preferredNode];
      const terms = preference ? baseTerms.map((t) => this.cache.intersect(t, this.preferenceOf(preference))) : baseTerms;
      const group: PodGroup = { ...single, terms };
      if (this.placeOneOnInFlight(group, topology, r) || this.placeOneOnPlanned(group, topology, r) || this.openOne(group, topology, r)) return;
      const next = relax(topology, r);
      if (!next) {
        const resources = this.explain(group);
        const constrained = topology !== EMPTY_TOPOLOGY && this.someClaimHasRoom(group);
        const reason = constrained ? `no node satisfies ${describeTopology(topology, r)}` : resources;
        // Volumes pin where the node must be; say so, since the pod itself asks for none of it.
        this.refuse(group, 0, volumes ? `its volumes require ${volumes.toString()}; ${reason}` : reason);
      }
      r = next;
    }
  }

  private preferenceOf(term: NodeAffinityTerm): Requirements {
    let requirements = this.preferenceRequirements.get(term);
    if (!requirements) this.preferenceRequirements.set(term, (requirements = Requirements.fromSelectors(term.matchExpressions)));
    return requirements;
  }

  /** Whether resources alone would allow the pod somewhere (so topology is what refused it). */
  private someClaimHasRoom(group: PodGroup): boolean {
    return this.pools.some((pool) => !firstUntoleratedTaint(group.tolerations, pool.taints) && group.terms.some((term) =>
      this.cache.compatible(pool.requirements, term) === undefined &&
      pool.candidates.some((c) => this.cache.intersects(c.requirements, this.cache.intersect(pool.requirements, term)) &&
        copiesThatFit(group.requests, pool.daemonOverhead, c.allocatable) > 0)));
  }

  private placeOneOnInFlight(group: PodGroup, topology: PodTopology, r: Relaxation): boolean {
    const pod = group.pods[0]!;
    for (const pool of this.pools) {
      for (let position = pool.inFlightIndex.findFirst(group.requestVector, 0); position !== -1;
        position = pool.inFlightIndex.findFirst(group.requestVector, position + 1)) {
        const claim = pool.inFlight[position]!;
        if (firstUntoleratedTaint(group.tolerations, claim.taints)) continue;
        if (copiesThatFit(group.requests, claim.used, claim.allocatable) === 0) continue;
        if (!claim.variants.every((variant) => firstCompatibleTerm(variant, group.terms, this.cache))) continue;
        const narrowed = decide(pod, topology, r, claim.source);
        // A created claim cannot be narrowed any more: every domain the pod needs must be its own.
        if (!narrowed || [...narrowed].some(([key, values]) => values.length !== (claim.source.domains(key)?.length ?? 0))) continue;
        // A copy: claim.used may be the memo's (ExistingClaimState.withBound).
        claim.used = addInto({ ...claim.used }, group.requests);
        this.touched.add(claim);
        pool.inFlightIndex.set(position, indexVector(subtractResources(claim.allocatable, claim.used)));
        claim.podKeys.push(podKey(pod));
        record(pod, topology, r, claim.source);
        return true;
      }
    }
    return false;
  }

  /**
   * Hostname rules only ever close a claim to a pod (counts grow): once a claim has a replica
   * of an anti-affinity group, or maxSkew of a hostname spread, it stays closed. Per (rule,
   * pool), ClosedRuns links each claim found closed to the next one, so a scan jumps over a
   * whole run of closed claims at once. (A cursor over the closed prefix alone stopped at the
   * first claim no replica fits into: past it, each of 4,000 anti-affinity replicas re-tried
   * thousands of closed claims, and 20,000 diverse pods took 7× as long as 10,000.)
   */
  private readonly closedRuns = new Map<string, ClosedRuns>();

  private hostnameRules(pool: PoolTemplate, pod: Pod, topology: PodTopology, r: Relaxation): ClosedRuns[] {
    const rules: ClosedRuns[] = [];
    const rule = (id: string, closed: (claim: PlannedClaim) => boolean): void => {
      const key = `${id}\u0000${pool.name}`;
      let runs = this.closedRuns.get(key);
      if (!runs) this.closedRuns.set(key, (runs = new ClosedRuns(closed)));
      rules.push(runs);
    };
    const anti = [...topology.antiAffinity];
    for (let i = r.preferredAntiAffinity; i < topology.preferredAntiAffinity.length; i++) anti.push(topology.preferredAntiAffinity[i]!.group);
    for (const g of anti) if (g.key === LABEL_HOSTNAME) rule(`anti\u0000${g.id}`, (c) => g.count(c.hostname) > 0);
    for (const g of topology.inverse) if (g.key === LABEL_HOSTNAME) rule(`inverse\u0000${g.id}`, (c) => (g.owners.get(c.hostname) ?? 0) > 0);
    const spreads = r.softSpread ? topology.spread : [...topology.spread, ...topology.softSpread];
    for (const g of spreads) {
      if (g.key !== LABEL_HOSTNAME) continue;
      const self = g.selects(pod) ? 1 : 0;
      rule(`spread\u0000${self}\u0000${g.id}`, (c) => g.count(c.hostname) + self > g.maxSkew);
    }
    return rules;
  }

  private placeOneOnPlanned(group: PodGroup, topology: PodTopology, r: Relaxation): boolean {
    for (const pool of this.pools) {
      if (pool.planned.length === 0 || firstUntoleratedTaint(group.tolerations, pool.taints)) continue;
      if (!firstCompatibleTerm(pool.requirements, group.terms, this.cache)) continue;
      const rules = topology === EMPTY_TOPOLOGY ? [] : this.hostnameRules(pool, group.pods[0]!, topology, r);
      // Alternate the two skips until they agree: the index skips claims without room, the
      // rules skip closed ones.
      let from = 0;
      for (;;) {
        const position = pool.plannedIndex.findFirst(group.requestVector, from);
        if (position === -1) break;
        const open = firstOpenToAll(rules, pool.planned, position);
        if (open !== position) {
          from = open;
          continue;
        }
        if (this.addOneToPlanned(pool.planned[position]!, group, topology, r)) return true;
        from = position + 1;
      }
    }
    return false;
  }

  private claimSource(claim: PlannedClaim): DomainSource {
    claim.source ??= new PlannedClaimSource(claim);
    return claim.source;
  }

  /**
   * Narrows requirements and options to what topology decided; undefined when no option is
   * left. Hostname needs no requirement: the claim is its own host.
   */
  private applyNarrowing(narrowed: ReadonlyMap<string, string[]>, requirements: Requirements, options: Candidate[]): { requirements: Requirements; options: Candidate[] } | undefined {
    let req = requirements;
    let opts = options;
    for (const [key, values] of narrowed) {
      if (key === LABEL_HOSTNAME) continue;
      req = req.intersect(Requirements.of([Requirement.in(key, values)]));
      opts = this.optionsWith(opts, key, values);
    }
    return opts.length > 0 ? { requirements: req, options: opts } : undefined;
  }

  private readonly narrowedOptions = new Map<readonly Candidate[], Map<string, Candidate[]>>();

  /**
   * Options that may take one of `values` for `key`. They already satisfy everything else,
   * so only that key is checked; claims opened alike narrow alike, so results are shared.
   */
  private optionsWith(options: Candidate[], key: string, values: readonly string[]): Candidate[] {
    let byValues = this.narrowedOptions.get(options);
    if (!byValues) this.narrowedOptions.set(options, (byValues = new Map()));
    const id = `${key}\u0000${values.join('\u0000')}`;
    let out = byValues.get(id);
    if (!out) {
      out = options.filter((o) => {
        const r = o.requirements.get(key);
        return !r || values.some((v) => r.has(v));
      });
      byValues.set(id, out.length === options.length ? options : out);
      out = byValues.get(id)!;
    }
    return out;
  }

  private addOneToPlanned(claim: PlannedClaim, group: PodGroup, topology: PodTopology, r: Relaxation): boolean {
    const pod = group.pods[0]!;
    // Topology first: it is cheap on the claim's cached domains, and fewer domains (fewer
    // options) can only refuse more, so a refusal here is final.
    if (topology !== EMPTY_TOPOLOGY && !decide(pod, topology, r, this.claimSource(claim))) return false;
    for (const term of group.terms) {
      if (this.cache.compatible(claim.requirements, term) !== undefined) continue;
      const requirements = this.cache.intersect(claim.requirements, term);
      // One pod at a time, options are not filtered by size on every add (that made each
      // placement O(instance types) several times over, the bulk of a diverse run): the
      // options too small for what the claim holds are dropped when the plan is made.
      // Requirements narrow them at once, and minValues needs the exact set each time.
      const exact = hasMinValues(requirements);
      let options = requirements === claim.requirements ? claim.options : claim.options.filter((o) => this.cache.intersects(o.requirements, requirements));
      if (exact) options = options.filter((o) => fitsOnTop(claim.used, group.requests, o.allocatable));
      if (options.length === 0) continue;
      const source = requirements === claim.requirements && options === claim.options
        ? this.claimSource(claim)
        : scratchSource(claim.hostname, requirements, options, claim.pool.taints);
      const narrowed = decide(pod, topology, r, source);
      if (!narrowed) continue;
      const applied = narrowed.size > 0 ? this.applyNarrowing(narrowed, requirements, options) : { requirements, options };
      if (!applied || !anyHolds(applied.options, claim.used, group.requests)) continue;
      if (exact && !satisfiesMinValues(applied.requirements, applied.options)) continue;
      if (claim.requirements !== applied.requirements || claim.options !== applied.options) claim.domainCache.clear();
      claim.requirements = applied.requirements;
      this.narrow(claim, applied.options);
      addInto(claim.used, group.requests);
      claim.pool.plannedIndex.set(claim.position, plannedFree(claim));
      claim.podKeys.push(podKey(pod));
      record(pod, topology, r, this.claimSource(claim));
      return true;
    }
    return false;
  }

  /** A new claim for one constrained pod: every SKU that holds it, narrowed by its topology. */
  private openOne(group: PodGroup, topology: PodTopology, r: Relaxation): boolean {
    const pod = group.pods[0]!;
    for (const pool of this.pools) {
      if (firstUntoleratedTaint(group.tolerations, pool.taints)) continue;
      for (const term of group.terms) {
        if (this.cache.compatible(pool.requirements, term) !== undefined) continue;
        const requirements = this.cache.intersect(pool.requirements, term);
        const opening = this.openingFor(pool, requirements, group.requests);
        let fits = opening.fits;
        // Limits rarely bind: when even the largest fitting SKU is within them, all are.
        if (pool.remaining && !withinLimits(opening.largestCapacity, pool.remaining)) fits = fits.filter((o) => withinLimits(o.capacity, pool.remaining!));
        if (fits.length === 0) continue;
        const hostname = `planned-${this.planned.length}`;
        const narrowed = decide(pod, topology, r, fits === opening.fits ? opening.source(hostname) : scratchSource(hostname, requirements, fits, pool.taints));
        if (!narrowed) continue;
        const applied = narrowed.size > 0 ? this.applyNarrowing(narrowed, requirements, fits) : { requirements, options: fits };
        if (!applied || !satisfiesMinValues(applied.requirements, applied.options)) continue;
        const used = addInto({}, pool.daemonOverhead);
        addInto(used, group.requests);
        const reservation = pool.limits ? maxCapacity(applied.options, pool.limits) : {};
        if (pool.remaining) for (const name in reservation) pool.remaining[name]! -= reservation[name]!;
        const claim: PlannedClaim = {
          pool, hostname, domainCache: applied.options === opening.fits && applied.requirements === requirements ? new Map(opening.domains) : new Map(),
          requirements: applied.requirements, options: applied.options, used, reservation, podKeys: [podKey(pod)], position: pool.planned.length,
        };
        pool.planned.push(claim);
        pool.plannedIndex.push(plannedFree(claim));
        this.planned.push(claim);
        record(pod, topology, r, this.claimSource(claim));
        return true;
      }
    }
    return false;
  }

  /**
   * What a new claim for a pod shape may launch as, per (pool, requirements, requests): the
   * SKUs that hold one such pod, with their largest capacity and their topology domains.
   * Hundreds of constrained pods of one shape open claims alike, so this is worked out once.
   */
  private readonly openings = new Map<PoolTemplate, Map<Requirements, Map<Resources, Opening>>>();

  private openingFor(pool: PoolTemplate, requirements: Requirements, requests: Resources): Opening {
    let byRequirements = this.openings.get(pool);
    if (!byRequirements) this.openings.set(pool, (byRequirements = new Map()));
    let byRequests = byRequirements.get(requirements);
    if (!byRequests) byRequirements.set(requirements, (byRequests = new Map()));
    let opening = byRequests.get(requests);
    if (!opening) {
      const fits = pool.candidates.filter((o) => this.cache.intersects(o.requirements, requirements) && copiesThatFit(requests, pool.daemonOverhead, o.allocatable) > 0);
      const largestCapacity: Resources = {};
      for (const o of fits) maxInto(largestCapacity, o.capacity);
      const domains = new Map<string, readonly string[] | undefined>();
      const domainsOf = (key: string): readonly string[] | undefined => {
        if (!domains.has(key)) domains.set(key, domainsFor(key, requirements, fits));
        return domains.get(key);
      };
      opening = {
        fits, largestCapacity, domains,
        source: (hostname) => ({ requirements, taints: pool.taints, domains: (key) => (key === LABEL_HOSTNAME ? [hostname] : domainsOf(key)) }),
      };
      byRequests.set(requests, opening);
    }
    return opening;
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

  /** Whether every variant accepts one of the terms (kept on the memo across passes, when there is one). */
  private acceptsAll(variants: readonly Requirements[], terms: readonly Requirements[]): boolean {
    const memo = this.input.memo;
    let known = memo?.accepts.get(variants);
    let answer = known?.get(terms);
    if (answer !== undefined) return answer;
    answer = variants.every((variant) => firstCompatibleTerm(variant, terms, this.cache) !== undefined);
    if (memo) {
      if (!known) memo.accepts.set(variants, (known = new WeakMap()));
      known.set(terms, answer);
    }
    return answer;
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
        if (!this.acceptsAll(claim.variants, group.terms)) continue;
        const count = Math.min(fit, group.pods.length - next);
        // A copy: claim.used may be the memo's (ExistingClaimState.withBound).
        claim.used = addInto({ ...claim.used }, group.requests, count);
        this.touched.add(claim);
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
    if (claim.requirements !== requirements || claim.options !== options) claim.domainCache.clear();
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
    claim.maxAllocatable = undefined;
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
          if (pool.remaining && !withinLimits(option.capacity, pool.remaining)) continue;
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
        const claim: PlannedClaim = {
          pool, hostname: `planned-${this.planned.length}`, domainCache: new Map(), requirements, options, used, reservation, podKeys, position: pool.planned.length,
        };
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
      const pinned = [
        Requirement.in(LABEL_INSTANCE_TYPE, names),
        Requirement.in(LABEL_REGION, [claim.pool.region]),
        Requirement.in(LABEL_CAPACITY_TYPE, [CAPACITY_TYPE_ON_DEMAND]),
      ];
      // Zones differ by region for the same SKUs.
      const zones = this.optionZones(`${claim.pool.region}\u0000${optionsKey}`, claim.options);
      if (zones) pinned.push(zones);
      selectors = claim.requirements.intersect(Requirements.of(pinned)).toSelectors();
      byOptions.set(optionsKey, selectors);
    }
    return selectors.map((r) => (r.values ? { ...r, values: [...r.values] } : { ...r }));
  }

  private readonly zonesByOptions = new Map<string, Requirement | undefined>();

  /**
   * Zonal options: the zones they are offered in (marked zones already left out), so the
   * launch picks one of those; a regional option among them leaves the zone open. Claims
   * share option lists, so once per region and list.
   */
  private optionZones(optionsKey: string, options: readonly Candidate[]): Requirement | undefined {
    if (this.zonesByOptions.has(optionsKey)) return this.zonesByOptions.get(optionsKey);
    const zones = domainsFor(LABEL_ZONE, Requirements.EMPTY, options);
    const requirement = zones ? Requirement.in(LABEL_ZONE, zones) : undefined;
    this.zonesByOptions.set(optionsKey, requirement);
    return requirement;
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

interface Opening {
  fits: Candidate[];
  largestCapacity: Resources;
  domains: Map<string, readonly string[] | undefined>;
  source: (hostname: string) => DomainSource;
}

interface ConstrainedPod {
  topology: PodTopology;
  /** What the pod's volumes require of the node (intersected with each of its terms). */
  volumes: Requirements | undefined;
  /** Why the pod cannot be considered at all. */
  error: string | undefined;
}

/** A planned claim's topology view; reads the claim live, domains cached until it changes. */
/**
 * The claims of one pool closed to one hostname rule, for good (see hostnameRules): a claim
 * found closed links to the next position, and lookups compress the links they follow, like
 * a union-find of "next free slot". Open claims are re-checked each time (they may close).
 */
class ClosedRuns {
  private readonly next: number[] = [];

  constructor(private readonly closed: (claim: PlannedClaim) => boolean) {}

  /** The first position ≥ from whose claim is open to the rule (claims.length if none). */
  firstOpen(claims: readonly PlannedClaim[], from: number): number {
    let p = from;
    while (p < claims.length) {
      const linked = this.next[p];
      if (linked !== undefined) {
        p = linked;
      } else if (this.closed(claims[p]!)) {
        this.next[p] = p + 1;
        p++;
      } else {
        break;
      }
    }
    for (let q = from; q < p;) {
      const linked = this.next[q]!;
      this.next[q] = p;
      q = linked;
    }
    return p;
  }
}

/** The first position ≥ from open to every rule. */
function firstOpenToAll(rules: readonly ClosedRuns[], claims: readonly PlannedClaim[], from: number): number {
  let p = from;
  for (let moved = true; moved;) {
    moved = false;
    for (const rule of rules) {
      const open = rule.firstOpen(claims, p);
      if (open !== p) {
        p = open;
        moved = true;
      }
    }
  }
  return p;
}

class PlannedClaimSource implements DomainSource {
  private readonly hostname: readonly string[];
  constructor(private readonly claim: PlannedClaim) {
    this.hostname = [claim.hostname];
  }
  get requirements(): Requirements {
    return this.claim.requirements;
  }
  get taints(): readonly Taint[] {
    return this.claim.pool.taints;
  }
  domains(key: string): readonly string[] | undefined {
    if (key === LABEL_HOSTNAME) return this.hostname;
    const cache = this.claim.domainCache;
    if (cache.has(key)) return cache.get(key);
    const domains = domainsFor(key, this.claim.requirements, this.claim.options);
    cache.set(key, domains);
    return domains;
  }
}

/** A DomainSource over candidate requirements/options not (yet) a claim's own. */
function scratchSource(hostname: string, requirements: Requirements, options: readonly Candidate[], taints: readonly Taint[]): DomainSource {
  const cache = new Map<string, readonly string[] | undefined>();
  return {
    requirements,
    taints,
    domains: (key) => {
      if (key === LABEL_HOSTNAME) return [hostname];
      if (!cache.has(key)) cache.set(key, domainsFor(key, requirements, options));
      return cache.get(key);
    },
  };
}

/** An existing NodeClaim's topology: its node's name (or its own) as hostname, its labels, else its requirements. */
function inFlightSource(claim: NodeClaim, requirements: Requirements, variants: readonly Requirements[]): DomainSource {
  const hostname = claim.status.nodeName ?? claim.metadata.name;
  return {
    requirements,
    taints: claim.spec.taints,
    domains: (key) => {
      if (key === LABEL_HOSTNAME) return [hostname];
      const label = claim.metadata.labels[key];
      if (label !== undefined) return [label];
      return domainsFor(key, requirements, variants.map((v) => ({ requirements: v })));
    },
  };
}

/** A claim's usage with the pods bound to its node, per node usage version (kept on its state). */
function withBoundOf(state: ExistingClaimState, usage: ReadonlyMap<string, NodeUsage>, nodeName: string | undefined): InFlightClaim['base'] {
  const capacity = state.capacity!;
  const node = nodeName ? usage.get(nodeName) : undefined;
  const version = node?.version ?? 0;
  let withBound = state.withBound;
  if (withBound?.version !== version) {
    const summed: Resources = { ...capacity.baseUsed };
    if (node) addInto(summed, node.used);
    state.withBound = withBound = { version, used: summed, free: indexVector(subtractResources(capacity.allocatable, summed)) };
  }
  return withBound;
}

function hasRequiredAntiAffinity(pod: Pod): boolean {
  return Boolean(pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length);
}

/** Bound to a node and not finished: its requests and rules still hold there. */
function isRunningBound(pod: Pod): boolean {
  return pod.spec.nodeName !== undefined && pod.spec.nodeName !== '' && pod.status.phase !== 'Succeeded' && pod.status.phase !== 'Failed';
}

/** Decides NodeClaims for pending pods. Pure: same input, same output. */
export function schedule(input: SchedulingInput): SchedulingResult {
  return new Scheduler(input).run();
}

/**
 * A NodeClaim's requirements with its labels, per (requirements list, labels) object pair:
 * writers replace a NodeClaim and what they change, never mutate them, and a status write
 * keeps the spec and labels it does not touch (Requirements are immutable). With 1,000
 * NodeClaims parsing their selectors again was most of a pass; per pair, a status write does
 * not parse them again either, and the intersections with each SKU (keyed by the result)
 * are found again.
 */
const requirementsOfClaim = new WeakMap<readonly NodeSelectorRequirement[], WeakMap<Record<string, string>, Requirements>>();

/**
 * a ∩ b, per pair of Requirements objects: a NodeClaim's requirements (above) and an
 * instance type's (cached per type and region) are the same objects pass after pass.
 */
const intersections = new WeakMap<Requirements, WeakMap<Requirements, Requirements>>();

function intersected(a: Requirements, b: Requirements): Requirements {
  let withA = intersections.get(a);
  if (!withA) intersections.set(a, (withA = new WeakMap()));
  let r = withA.get(b);
  if (!r) withA.set(b, (r = a.intersect(b)));
  return r;
}

/** localeCompare's order (the default locale's collation), without building a collator per comparison: 1,000 NodeClaims sorted each pass. */
const byName = new Intl.Collator();

/**
 * NodeClaims by name; `distinct` when no two names compare equal (then the order is the
 * only one, whatever order the input came in).
 */
function sortByName(claims: readonly NodeClaim[]): { list: NodeClaim[]; distinct: boolean } {
  let distinct = true;
  // Equal names end up next to each other, and a sort compares neighbours it orders.
  const list = [...claims].sort((a, b) => {
    const c = byName.compare(a.metadata.name, b.metadata.name);
    if (c === 0) distinct = false;
    return c;
  });
  return { list, distinct };
}

/**
 * The sorted list of this pass from the last pass's (names all distinct): the claims still
 * there in their order, this pass's objects, with the new ones put in by binary search. A
 * collator comparison costs a microsecond, so re-sorting 1,000 NodeClaims whenever one came
 * or went was a visible share of a pass. Undefined (sort afresh) when two names compare equal
 * or the input names one claim twice.
 */
function insertSorted(lastSorted: readonly NodeClaim[], claims: readonly NodeClaim[]): { list: NodeClaim[]; distinct: boolean } | undefined {
  const current = new Map<string, NodeClaim>();
  for (const c of claims) current.set(c.metadata.name, c);
  if (current.size !== claims.length) return undefined;
  const list: NodeClaim[] = [];
  for (const c of lastSorted) {
    const now = current.get(c.metadata.name);
    if (now) {
      list.push(now);
      current.delete(c.metadata.name);
    }
  }
  // Past a few new names a plain sort is as cheap.
  if (current.size > 64) return undefined;
  for (const c of current.values()) {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const cmp = byName.compare(list[mid]!.metadata.name, c.metadata.name);
      if (cmp === 0) return undefined;
      if (cmp < 0) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, c);
  }
  return { list, distinct: true };
}

function claimRequirements(claim: NodeClaim): Requirements {
  let byLabels = requirementsOfClaim.get(claim.spec.requirements);
  if (!byLabels) requirementsOfClaim.set(claim.spec.requirements, (byLabels = new WeakMap()));
  let r = byLabels.get(claim.metadata.labels);
  if (!r) byLabels.set(claim.metadata.labels, (r = Requirements.fromSelectors(claim.spec.requirements).intersect(Requirements.fromLabels(claim.metadata.labels))));
  return r;
}

/**
 * What an existing NodeClaim's derived state depends on besides the claim: its NodeClass's
 * spec (sizes, region), which resources its NodePool limits, and the DaemonSet overhead.
 * Not their resourceVersions: status and annotation writes (node counts, offering marks)
 * bump those pass after pass without changing any of it.
 */
function poolContext(pool: PoolTemplate): string {
  const overhead = Object.keys(pool.daemonOverhead).sort().map((k) => `${k}=${pool.daemonOverhead[k]}`).join(',');
  const limited = pool.limits ? Object.keys(pool.limits).sort().join(',') : '-';
  return `${pool.nodeClass.metadata.name}|${specKey(pool.nodeClass)}|${limited}|${overhead}`;
}

/** A NodeClass's spec as text, per object (a pass reads each NodeClass once per pool). */
const specKeys = new WeakMap<AzureFlexNodeClass, string>();

function specKey(nodeClass: AzureFlexNodeClass): string {
  let key = specKeys.get(nodeClass);
  if (key === undefined) specKeys.set(nodeClass, (key = JSON.stringify(nodeClass.spec)));
  return key;
}

/** Writers replace a NodeClaim and the API server bumps its resourceVersion; one without is known by identity only. */
function sameVersion(state: ExistingClaimState, claim: NodeClaim): boolean {
  const v = state.version;
  const rv = claim.metadata.resourceVersion;
  return v.uid === claim.metadata.uid && v.resourceVersion === rv && (rv !== undefined || v.object === claim);
}

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
