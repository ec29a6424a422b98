/**
 * One disruption pass's view and decisions: the NodePools with their claims sorted out in one
 * loop, and the methods Karpenter applies in order (expiration, drift, emptiness; repair and
 * consolidation in their own files), each recording what it picked and spending the pool's budget.
 */
import type { AzureFlexNodeClass, NodeClaim, NodePool } from '../ports/cluster.js';
import type { NodeClaimPlan } from '../provisioning/scheduler.js';
import { allowedDisruptions, type DisruptionReason } from './budgets.js';
import { canRemoveWithoutReplacement, cheaperReplacement, consolidationClock, consolidationOrder, isConsolidatable, type ConsolidationState } from './consolidation.js';
import { lastPodEvent } from './emptiness.js';
import type { ClaimRecord, ClaimRecords } from './facts.js';
import { isFlexNodePool } from '../provisioning/scheduler.js';
import { durationOrNever } from '../utils/duration.js';

/** Expired and Unhealthy are forceful: not limited by budgets or do-not-disrupt. */
export type DisruptionKind = 'Expired' | 'Unhealthy' | DisruptionReason;

export interface DisruptionDecision {
  nodeClaim: string;
  nodePool: string;
  kind: DisruptionKind;
  detail: string;
  /** Node repair: the Node condition type past its toleration (upstream's metric reason for a repair). */
  repairedCondition?: string;
}

/**
 * A pool's claims, sorted out in the one loop over every claim: the steps after it read only the
 * few claims each concerns (in list order, as a walk over all of them would meet them).
 */
interface PoolClaims {
  claims: ClaimRecord[];
  /** Not being deleted and with an expireAfter deadline. */
  expiring: ClaimRecord[];
  /** Not being deleted and marked as replaced by a cheaper NodeClaim. */
  marked: ClaimRecord[];
  /** Initialized, not being deleted, no do-not-disrupt: graceful disruption may take them. */
  graceful: ClaimRecord[];
  /** Initialized NodeClaims: what budget percentages are taken of (as in Karpenter). */
  total: number;
  /**
   * Initialized NodeClaims already unavailable — being deleted (including by this
   * pass) or with a NotReady node — which use up budget.
   */
  disrupting: number;
}

export interface PoolView extends PoolClaims {
  pool: NodePool;
  nodeClass: AzureFlexNodeClass | undefined;
}

export interface ReplacementIntent {
  view: PoolView;
  candidate: NodeClaim;
  plan: NodeClaimPlan;
}

export interface Consolidation {
  intents: ReplacementIntent[];
  /** Scheduling simulations run. */
  simulations: number;
}

const noClaims = (): PoolClaims => ({ claims: [], expiring: [], marked: [], graceful: [], total: 0, disrupting: 0 });

export class DisruptionPass {
  readonly decisions: DisruptionDecision[] = [];
  readonly deleted = new Set<string>();
  /** Marked claims whose replacement is still coming up. */
  readonly replacing = new Set<string>();
  /** Marked claims whose replacement is gone (or that a do-not-disrupt pod arrived on): unmark them. */
  readonly abandoned: string[] = [];
  /** The claims as listed, in list order. */
  readonly nodeClaims: NodeClaim[];
  readonly views: PoolView[];
  /** A replacement is empty until its candidate's pods move over: never consolidate it while the claim it replaces exists. */
  private readonly replacements = new Set<string>();

  constructor(readonly now: number, observed: readonly ClaimRecord[], nodePools: readonly NodePool[], nodeClasses: readonly AzureFlexNodeClass[]) {
    this.nodeClaims = new Array<NodeClaim>(observed.length);
    const claimsByPool = new Map<string, PoolClaims>();
    for (let i = 0; i < observed.length; i++) {
      const record = observed[i]!;
      this.nodeClaims[i] = record.claim;
      if (!record.deleting) notePodEvents(record, now);
      if (record.replaces !== undefined) this.replacements.add(record.replaces);
      if (record.poolName === undefined) continue;
      let of = claimsByPool.get(record.poolName);
      if (!of) claimsByPool.set(record.poolName, (of = noClaims()));
      sortInto(of, record);
    }
    const classesByName = new Map(nodeClasses.map((c) => [c.metadata.name, c]));
    this.views = nodePools.filter(isFlexNodePool).map((pool): PoolView => ({
      ...(claimsByPool.get(pool.metadata.name) ?? noClaims()),
      pool,
      nodeClass: classesByName.get(pool.spec.template.spec.nodeClassRef.name),
    }));
  }

  decide(view: PoolView, record: ClaimRecord, kind: DisruptionKind, detail: string, repairedCondition?: string): void {
    this.decisions.push({ nodeClaim: record.name, nodePool: view.pool.metadata.name, kind, detail, ...(repairedCondition !== undefined ? { repairedCondition } : {}) });
    this.deleted.add(record.name);
    // Only initialized claims count towards budgets, and a NotReady one already does.
    if (record.facts.initialized && record.ready) view.disrupting++;
  }

  /** What graceful methods may still pick in this pool: not picked, not replaced or replacing. */
  gracefulCandidates(view: PoolView): ClaimRecord[] {
    return view.graceful.filter(({ name }) => !this.deleted.has(name) && !this.replacing.has(name) && !this.replacements.has(name));
  }

  allowance(view: PoolView, reason: DisruptionReason): number {
    return allowedDisruptions(view.pool.spec.disruption.budgets, reason, view.total, view.disrupting, this.now);
  }

  /** expireAfter (src/disruption/expiration.ts): forceful. */
  expire(): void {
    for (const view of this.views) {
      for (const record of view.expiring) {
        if (this.now >= record.facts.expiresAt!) this.decide(view, record, 'Expired', `older than expireAfter ${record.claim.spec.expireAfter}`);
      }
    }
  }

  /** Replacements under way: delete the candidate once its replacement is initialized, or abandon them. */
  finishReplacements(records: ClaimRecords): void {
    for (const view of this.views) {
      for (const record of view.marked) {
        const replacementName = record.replaces!;
        if (this.deleted.has(record.name)) continue;
        const replacement = records.get(replacementName);
        if (!replacement || replacement.deleting || record.doNotDisrupt) {
          this.abandoned.push(record.name);
          continue;
        }
        this.replacing.add(record.name);
        if (replacement.facts.initialized) this.decide(view, record, 'Underutilized', `replaced by cheaper ${replacementName}`);
        else if (record.ready) view.disrupting++; // holds its budget slot meanwhile
      }
    }
  }

  /** Every launched claim's drift (its Drifted condition); the graceful ones are replaced oldest first, within budget. */
  drift(records: ClaimRecords): void {
    for (const view of this.views) {
      const driftKey = records.driftKey(view.pool, view.nodeClass);
      for (const record of view.claims) {
        record.drifted = record.deleting || !record.facts.launched ? undefined : records.driftOf(record, view.pool, view.nodeClass, driftKey);
      }
      const drifted: Array<{ record: ClaimRecord; reason: string }> = [];
      for (const record of this.gracefulCandidates(view)) if (record.drifted !== undefined) drifted.push({ record, reason: record.drifted });
      drifted.sort((a, b) => a.record.claim.metadata.creationTimestamp.localeCompare(b.record.claim.metadata.creationTimestamp) || a.record.claim.metadata.name.localeCompare(b.record.claim.metadata.name));
      for (const { record, reason } of drifted) {
        if (this.allowance(view, 'Drifted') <= 0) break;
        this.decide(view, record, 'Drifted', reason);
      }
    }
  }

  /** Claims with no reschedulable pods for consolidateAfter (both consolidation policies). */
  empty(): void {
    for (const view of this.views) {
      const consolidateAfter = durationOrNever(view.pool.spec.disruption.consolidateAfter);
      // Static NodePools keep their replicas, empty or not: never consolidated.
      if (consolidateAfter === undefined || view.pool.spec.replicas !== undefined) continue;
      const empty = this.gracefulCandidates(view).filter((record) => record.pods.reschedulable === 0 && isConsolidatable(record, consolidateAfter, this.now));
      for (const record of empty) {
        if (this.allowance(view, 'Empty') <= 0) break;
        this.decide(view, record, 'Empty', `empty for ${view.pool.spec.disruption.consolidateAfter}`);
      }
    }
  }

  /**
   * Underutilized (WhenEmptyOrUnderutilized only): claims whose pods all fit on the others are
   * deleted; failing that, one per pool may be replaced by a cheaper new NodeClaim (when
   * `canReplace`). At most `maxSimulations` scheduling simulations.
   */
  consolidate(state: ConsolidationState, price: (claim: NodeClaim) => number, maxSimulations: number, canReplace: boolean, isNodeReady: (claim: NodeClaim) => boolean): Consolidation {
    const intents: ReplacementIntent[] = [];
    let simulations = maxSimulations;
    // Claims removed so far (any reason): their pods must fit elsewhere too.
    const removed = new Set(this.deleted);
    for (const view of this.views) {
      if (view.pool.spec.disruption.consolidationPolicy !== 'WhenEmptyOrUnderutilized' || view.pool.spec.replicas !== undefined) continue;
      const consolidateAfter = durationOrNever(view.pool.spec.disruption.consolidateAfter);
      if (consolidateAfter === undefined) continue;
      const candidates = this.gracefulCandidates(view).filter((r) => isConsolidatable(r, consolidateAfter, this.now));
      const recordsByName = new Map(candidates.map((r) => [r.claim.metadata.name, r]));
      for (const claim of consolidationOrder(candidates.map((r) => r.claim), state.podsByNodeClaim, price)) {
        if (simulations <= 0 || this.allowance(view, 'Underutilized') <= 0) break;
        simulations--;
        const attempt = new Set(removed).add(claim.metadata.name);
        if (canRemoveWithoutReplacement(state, attempt)) {
          removed.add(claim.metadata.name);
          this.decide(view, recordsByName.get(claim.metadata.name)!, 'Underutilized', 'its pods fit on other nodes');
          continue;
        }
        // One replacement per pool per pass, as Karpenter's single-node consolidation.
        if (!canReplace || intents.some((i) => i.view === view)) continue;
        const plan = cheaperReplacement(state, claim, removed, price(claim));
        if (!plan) continue;
        intents.push({ view, candidate: claim, plan });
        removed.add(claim.metadata.name);
        if (isNodeReady(claim)) view.disrupting++;
      }
    }
    return { intents, simulations: maxSimulations - simulations };
  }

  /**
   * The first moment after `now` at which a claim expires, or becomes Consolidatable (its last pod
   * event, else its initialization, consolidateAfter ago): an empty claim may then go, and every
   * claim's Consolidatable condition is written then.
   */
  nextDeadline(): number {
    let due = Number.POSITIVE_INFINITY;
    for (const view of this.views) {
      const consolidateAfter = durationOrNever(view.pool.spec.disruption.consolidateAfter);
      for (const record of view.claims) {
        if (record.deleting) continue;
        const expires = record.facts.expiresAt;
        if (expires !== undefined && expires > this.now) due = Math.min(due, expires);
        const since = consolidationClock(record);
        if (consolidateAfter === undefined || since === undefined || since + consolidateAfter <= this.now) continue;
        due = Math.min(due, since + consolidateAfter);
      }
    }
    return due;
  }
}

/**
 * Pod events (a reschedulable pod arrived or left) on every live claim every pass:
 * consolidateAfter counts from the last one (status.lastPodEventTime, written by the controller).
 */
function notePodEvents(record: ClaimRecord, now: number): void {
  let changed = false;
  if (record.churnPods !== record.pods) {
    changed = record.churnPods !== undefined && record.churnPods.signature !== record.pods.signature;
    record.churnPods = record.pods;
  }
  if (changed || record.lastPodEvent !== record.facts.lastPodEventTime) record.lastPodEvent = lastPodEvent(changed, record.lastPodEvent, record.facts.lastPodEventTime, now);
}

function sortInto(of: PoolClaims, record: ClaimRecord): void {
  of.claims.push(record);
  if (!record.deleting) {
    if (record.facts.expiresAt !== undefined) of.expiring.push(record);
    if (record.replaces !== undefined) of.marked.push(record);
    if (record.facts.initialized && record.doNotDisrupt === undefined) of.graceful.push(record);
  }
  if (record.facts.initialized) {
    of.total++;
    if (record.deleting || !record.ready) of.disrupting++;
  }
}
