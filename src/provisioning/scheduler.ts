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
 *
 * The parts live in scheduling/, along Karpenter's lines: the NodePools as templates
 * (nodepools.ts), existing NodeClaims (existing-nodes.ts), the claims planned this pass
 * (nodeclaim.ts, new-nodeclaims.ts), topology (topology.ts, cluster-topology.ts, hostname-rules.ts),
 * preferences, the queue, and the messages for pods left pending (explain.ts).
 */
import type { Pod } from '../ports/cluster.js';
import { groupPods, podKey, podRequirementTerms, type PodGroup } from './scheduling/pod-groups.js';
import { RequirementsCache } from './scheduling/requirements-cache.js';
import { clusterLabelValue } from './requirements.js';
import { defaultKubeReserved } from './overhead.js';
import { EMPTY_TOPOLOGY, NO_RELAXATION, describeTopology, relax, type Relaxation } from './scheduling/topology.js';
import { basisOf, type InFlightClaim } from './scheduling/memo.js';
import { buildPools } from './scheduling/nodepools.js';
import { ExistingNodes } from './scheduling/existing-nodes.js';
import { PlannedClaims } from './scheduling/nodeclaim.js';
import { NewNodeClaims } from './scheduling/new-nodeclaims.js';
import { ClusterTopology } from './scheduling/cluster-topology.js';
import { Preferences } from './scheduling/preferences.js';
import { splitPending, untilNoProgress, type ConstrainedPod } from './scheduling/queue.js';
import { Explainer } from './scheduling/explain.js';
import { PlanWriter } from './scheduling/plans.js';
import type { PoolTemplate, SchedulingInput, SchedulingResult, UnschedulablePod } from './scheduling/types.js';

export { podKey, podRequirementTerms };
export { SchedulingMemo } from './scheduling/memo.js';
export { BoundUsage, type NodeUsage } from './scheduling/bound-pods.js';
export { isFlexNodePool, nodePoolRequirements, orderNodePools } from './scheduling/nodepools.js';
export type {
  ExistingPlacement, NodeClaimPlan, SchedulingInput, SchedulingResult, UnschedulablePod,
} from './scheduling/types.js';

class Scheduler {
  private readonly cache = new RequirementsCache();
  private readonly pools: PoolTemplate[];
  private readonly existing: ExistingNodes;
  private readonly inFlight: InFlightClaim[];
  private readonly planned: PlannedClaims;
  private readonly newClaims: NewNodeClaims;
  private readonly topology: ClusterTopology;
  private readonly preferences: Preferences;
  private readonly explainer: Explainer;
  private readonly unschedulable: UnschedulablePod[] = [];

  constructor(private readonly input: SchedulingInput) {
    const cluster = clusterLabelValue(input.nodeResourceGroup);
    const kubeReserved = input.kubeReserved ?? defaultKubeReserved;
    const basis = basisOf(input.instanceTypes, kubeReserved, input.memo);
    this.pools = buildPools(input, this.cache, kubeReserved, cluster);
    this.existing = new ExistingNodes(input, this.pools, this.cache, { typesByName: basis.typesByName, kubeReserved, cluster });
    this.inFlight = this.existing.all;
    this.planned = new PlannedClaims(this.pools, this.cache);
    this.preferences = new Preferences(this.cache, this.pools);
    this.newClaims = new NewNodeClaims(this.pools, this.cache, this.planned);
    this.topology = new ClusterTopology(input, this.pools, this.cache);
    this.explainer = new Explainer(this.pools, this.cache, basis.catalogMax);
  }

  run(): SchedulingResult {
    // Pods topology concerns (or whose volumes pin them) go one by one, most constrained
    // first; the rest keep the bulk path, which topology cannot see.
    const invalid = this.topology.build();
    const { plain, constrained } = splitPending(this.input, this.topology.groups, invalid);
    const queue: Array<{ pod: Pod; group: PodGroup }> = [];
    for (const group of groupPods([...constrained.keys()])) for (const pod of group.pods) queue.push({ pod, group });
    // A pod may need one placed after it (pod affinity to a later pod): retried while others land.
    const left = untilNoProgress(queue, ({ pod, group }) => this.placeConstrained(pod, group, constrained.get(pod)!));
    for (const { item, reason } of left) this.refuse({ ...item.group, pods: [item.pod] }, 0, reason);
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
    for (const { group, from } of limitRefused) this.refuse(group, from, this.explainer.explain(group));
    this.planned.dropOptionsTooSmall();
    const plans = new PlanWriter();
    return {
      nodeClaims: this.planned.all.map((claim) => plans.toPlan(claim)),
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
    if (group.invalid !== undefined) {
      this.refuse(group, from, group.invalid);
      return undefined;
    }
    if (group.terms.length === 0) {
      this.refuse(group, from, 'required node affinity has no term with match expressions');
      return undefined;
    }
    let next = from;
    let last = group;
    // Plain pods have one relaxation only: tolerating PreferNoSchedule taints, last of all.
    for (let g: PodGroup | undefined = group; g && next < group.pods.length; g = this.preferences.tolerant(g)) {
      next = this.placeAll(g, next, retrying);
      last = g;
    }
    if (next === group.pods.length) return undefined;
    if (this.explainer.limitsBlocked(last)) return next;
    this.refuse(last, next, this.explainer.explain(last));
    return undefined;
  }

  /** Existing NodeClaims, then claims planned before, then new ones; returns the first pod not placed. */
  private placeAll(group: PodGroup, from: number, retrying: boolean): number {
    let next = from;
    if (!retrying) next = this.existing.placeGroup(group, next);
    const plannedBefore = this.pools.map((pool) => pool.planned.length);
    if (next < group.pods.length) next = this.planned.placeGroup(group, next, plannedBefore);
    while (next < group.pods.length) {
      const placed = this.newClaims.open(group, next);
      if (placed === 0) return next;
      next += placed;
    }
    return next;
  }

  /**
   * Places one pod under its topology, relaxing preferences the way Karpenter does when it
   * cannot; returns why not when even the last relaxation leaves it nowhere (undefined: placed).
   */
  private placeConstrained(pod: Pod, shape: PodGroup, constrained: ConstrainedPod): string | undefined {
    const { topology, volumes, error } = constrained;
    if (error !== undefined || shape.invalid !== undefined) return error ?? shape.invalid!;
    const baseTerms = volumes ? shape.terms.map((t) => this.cache.intersect(t, volumes)) : shape.terms;
    if (baseTerms.length === 0) return 'required node affinity has no term with match expressions';
    let single: PodGroup = { ...shape, pods: [pod] };
    let r: Relaxation = NO_RELAXATION;
    for (;;) {
      const group: PodGroup = { ...single, terms: this.preferences.termsUnder(baseTerms, topology, r) };
      if (this.existing.placeOne(group, topology, r) || this.planned.placeOne(group, topology, r) || this.newClaims.openOne(group, topology, r)) return undefined;
      const next = relax(topology, r);
      const tolerant = next ? undefined : this.preferences.tolerant(single);
      if (next) r = next;
      else if (tolerant) single = tolerant;
      else return this.whyNot(group, constrained, r);
    }
  }

  /** Why a constrained pod found no place even with every preference relaxed. */
  private whyNot(group: PodGroup, { topology, volumes }: ConstrainedPod, r: Relaxation): string {
    const resources = this.explainer.explain(group);
    const constrained = topology !== EMPTY_TOPOLOGY && this.explainer.someClaimHasRoom(group) && !this.explainer.limitsBlocked(group);
    const reason = constrained ? `no node satisfies ${describeTopology(topology, r)}` : resources;
    // Volumes pin where the node must be; say so, since the pod itself asks for none of it.
    return volumes ? `its volumes require ${volumes.toString()}; ${reason}` : reason;
  }

  private refuse(group: PodGroup, from: number, reason: string): void {
    for (let i = from; i < group.pods.length; i++) this.unschedulable.push({ pod: group.pods[i]!, reason });
  }
}

/** Decides NodeClaims for pending pods. Pure: same input, same output. */
export function schedule(input: SchedulingInput): SchedulingResult {
  return new Scheduler(input).run();
}
