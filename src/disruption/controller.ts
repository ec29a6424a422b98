/**
 * The disruption controller: each reconcile decides which NodeClaims to delete, in
 * Karpenter's order, and deletes them (setting deletionTimestamp; the NodeClaim machine
 * drains the node and tears the VM down leak-free).
 *
 *   1. Expired (expireAfter): forceful, not limited by budgets or do-not-disrupt.
 *   2. Drifted (NodeClass hash, NodePool template hash, requirements).
 *   3. Empty: no reschedulable pods for consolidateAfter (both consolidation policies).
 *   4. Underutilized (WhenEmptyOrUnderutilized only): pods unchanged for consolidateAfter
 *      and all of them fit on the other NodeClaims — or, failing that, on one new NodeClaim
 *      cheaper than this one. The replacement is created first and the candidate is marked
 *      with flex.aks.azure.com/consolidation-replacement; a later reconcile deletes it once
 *      the replacement is initialized, or unmarks it if the replacement is gone or a
 *      do-not-disrupt pod arrived. The mark lives on the NodeClaim, so a restart resumes.
 *
 * Steps 2–4 only touch initialized NodeClaims without karpenter.sh/do-not-disrupt, and each
 * respects the NodePool's budget for its reason; every deletion (of any reason, including
 * NodeClaims already terminating) counts against all of the pool's budgets.
 */
import type { AzureFlexNodeClass, CachedKind, ClusterPort, DisruptionBudget, Node, NodeClaim, NodePool, Pod } from '../ports/cluster.js';
import { randomSuffix, type Clock, type Random } from '../ports/clock.js';
import { nodeClassHash as defaultNodeClassHash } from '../controllers/nodeclass/hash.js';
import type { InstanceType, InstanceTypeCatalog } from '../catalog/skus.js';
import { isFlexNodePool } from '../provisioning/scheduler.js';
import { buildNodeClaim, daemonSetRepresentatives, isProvisionable, type ProvisionerLog } from '../provisioning/provisioner.js';
import type { NodeClaimPlan } from '../provisioning/scheduler.js';
import { allowedDisruptions, isBudgetActive, type DisruptionReason } from './budgets.js';
import { canRemoveWithoutReplacement, cheaperReplacement, consolidationOrder, type ConsolidationState } from './consolidation.js';
import { VolumeTopology } from '../provisioning/volume-topology.js';
import { durationOrNever } from './duration.js';
import { PodChurnTracker } from './emptiness.js';
import { DisruptionFacts, type NodeClaimFacts, type PodSetFacts } from './facts.js';
import { PodIndex } from './pod-index.js';
import { ANNOTATION_CONSOLIDATION_REPLACEMENT, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL } from '../apis/well-known.js';

export type DisruptionKind = 'Expired' | DisruptionReason;

export interface DisruptionDecision {
  nodeClaim: string;
  nodePool: string;
  kind: DisruptionKind;
  detail: string;
}

export interface DisruptionControllerOptions {
  cluster: ClusterPort;
  catalog: InstanceTypeCatalog;
  clock: Clock;
  log: ProvisionerLog;
  isOfferingUnavailable?: (sku: string, region: string, capacityType: string) => boolean;
  /** Upper bound on consolidation simulations per reconcile (each is one scheduler run). */
  maxConsolidationSimulations?: number;
  /** Needed to name replacement NodeClaims; without it only delete-consolidation runs. */
  random?: Random;
  /** Stamped on replacement NodeClaims; defaults to src/controllers/nodeclass/hash.ts. */
  nodeClassHash?: (nodeClass: AzureFlexNodeClass) => string;
  /** Observer (src/metrics): a NodeClaim was deleted for this decision. */
  onDisrupted?: (decision: DisruptionDecision, consolidationPolicy: string) => void;
}

interface Consolidation {
  intents: ReplacementIntent[];
  /** Scheduling simulations run. */
  simulations: number;
}

interface ReplacementIntent {
  view: PoolView;
  candidate: NodeClaim;
  plan: NodeClaimPlan;
}

const DEFAULT_MAX_SIMULATIONS = 20;

/** The kinds whose every change can change a pass's decisions (NodePools and NodeClasses: only their specs can). */
const WATCHED_KINDS: readonly CachedKind[] = ['nodeClaims', 'nodes', 'pods'];

interface PoolView {
  pool: NodePool;
  nodeClass: AzureFlexNodeClass | undefined;
  claims: NodeClaim[];
  /** Initialized NodeClaims: what budget percentages are taken of (as in Karpenter). */
  total: number;
  /**
   * Initialized NodeClaims already unavailable — being deleted (including by this
   * reconcile) or with a NotReady node — which use up budget.
   */
  disrupting: number;
}

/** One NodeClaim in this pass: its node and (cached) facts. */
interface ClaimView {
  node: Node | undefined;
  /** Its node is Ready. */
  ready: boolean;
  facts: NodeClaimFacts;
  pods: PodSetFacts;
  /** Why voluntary disruption is blocked (karpenter.sh/do-not-disrupt), if it is. */
  doNotDisrupt: string | undefined;
}

/**
 * A pass that decided nothing, launched nothing and simulated no consolidation, and what its
 * outcome depended on: while none of it changes, another pass would decide the same nothing,
 * so it is skipped (most passes of a settled cluster).
 */
interface QuietPass {
  /** ClusterPort.cacheVersion of each watched kind before the pass listed them. */
  versions: ReadonlyArray<string | undefined>;
  /** NodePool and NodeClass names and specs (their status changes often and decides nothing). */
  specs: string;
  /** The earliest expireAfter or consolidateAfter deadline still ahead of the pass. */
  dueAt: number;
  /** The pools' scheduled budgets, and whether each was active. */
  scheduled: ReadonlyArray<{ budget: DisruptionBudget; active: boolean }>;
}

function specsOf(nodePools: readonly NodePool[], nodeClasses: readonly AzureFlexNodeClass[]): string {
  return JSON.stringify([nodePools.map((p) => [p.metadata.name, p.spec]), nodeClasses.map((c) => [c.metadata.name, c.spec])]);
}

function scheduledBudgets(views: readonly PoolView[], now: number): QuietPass['scheduled'] {
  const out: Array<{ budget: DisruptionBudget; active: boolean }> = [];
  for (const view of views) for (const budget of view.pool.spec.disruption.budgets ?? []) if (budget.schedule !== undefined) out.push({ budget, active: isBudgetActive(budget, now) });
  return out;
}

export class DisruptionController {
  private readonly churn = new PodChurnTracker();
  private readonly facts = new DisruptionFacts();
  private quiet: QuietPass | undefined;
  /** The pods by node, brought up to date with each pass's list (unless the pods cache shows the same). */
  private readonly podIndex = new PodIndex();
  private podIndexVersion: string | undefined;

  constructor(private readonly options: DisruptionControllerOptions) {}

  async reconcile(): Promise<DisruptionDecision[]> {
    const { cluster, clock } = this.options;
    const now = clock.now();
    // Read before listing: a write in between makes the next pass look again, never skip it.
    const versions = WATCHED_KINDS.map((kind) => cluster.cacheVersion?.(kind));
    const [nodePools, nodeClasses] = await Promise.all([cluster.listNodePools(), cluster.listNodeClasses()]);
    const specs = specsOf(nodePools, nodeClasses);
    if (this.quiet && this.isStillQuiet(this.quiet, versions, specs, now)) return [];
    this.quiet = undefined;
    const [listedNodeClaims, nodes, pods, instanceTypes] = await Promise.all([
      cluster.listNodeClaims(), cluster.listNodes(), cluster.listPods(), this.options.catalog.list(),
    ]);
    const facts = this.facts;
    const nodesByName = new Map<string, Node>();
    // A NodeClaim's node by name once its status says so, by providerID before (Karpenter's
    // cluster state pairs them by providerID): a node that just registered already has pods
    // bound while the NodeClaim's status.nodeName is not written yet.
    const nodesByProviderId = new Map<string, Node>();
    for (const n of nodes) {
      nodesByName.set(n.metadata.name, n);
      const providerId = facts.node(n).providerId;
      if (providerId) nodesByProviderId.set(providerId, n);
    }
    const nodeOf = (claim: NodeClaim): Node | undefined =>
      claim.status.nodeName ? nodesByName.get(claim.status.nodeName) : claim.status.providerID ? nodesByProviderId.get(claim.status.providerID.toLowerCase()) : undefined;
    // The simulation places pods by node name (hostname anti-affinity, bound pods): give every paired claim its node's.
    const nodeClaims = listedNodeClaims.map((claim) => {
      const node = claim.status.nodeName ? undefined : nodeOf(claim);
      return node ? { ...claim, status: { ...claim.status, nodeName: node.metadata.name } } : claim;
    });
    const podsVersion = versions[WATCHED_KINDS.indexOf('pods')];
    if (podsVersion === undefined || podsVersion !== this.podIndexVersion) this.podIndex.update(pods);
    this.podIndexVersion = podsVersion;
    const podIndex = this.podIndex;
    const views = new Map<string, ClaimView>();
    for (const claim of nodeClaims) {
      const node = nodeOf(claim);
      const nodeFacts = node && facts.node(node);
      const claimFacts = facts.nodeClaim(claim);
      const podFacts = facts.podSet(node?.metadata.name ?? '', node && podIndex.onNode(node.metadata.name));
      views.set(claim.metadata.name, {
        node,
        ready: nodeFacts?.ready ?? false,
        facts: claimFacts,
        pods: podFacts,
        doNotDisrupt: claimFacts.doNotDisrupt ?? nodeFacts?.doNotDisrupt ?? podFacts.doNotDisrupt,
      });
    }
    facts.endPass();
    const viewOf = (claim: NodeClaim): ClaimView => views.get(claim.metadata.name)!;
    this.churn.retain(new Set(views.keys()));

    const classesByName = new Map(nodeClasses.map((c) => [c.metadata.name, c]));
    const isNodeReady = (claim: NodeClaim): boolean => viewOf(claim).ready;
    const isInitialized = (claim: NodeClaim): boolean => viewOf(claim).facts.initialized;
    const claimsByPool = new Map<string, NodeClaim[]>();
    for (const claim of nodeClaims) {
      const poolName = claim.metadata.labels[LABEL_NODEPOOL];
      if (poolName === undefined) continue;
      let list = claimsByPool.get(poolName);
      if (!list) claimsByPool.set(poolName, (list = []));
      list.push(claim);
    }
    const poolViews = nodePools.filter(isFlexNodePool).map((pool): PoolView => {
      const claims = claimsByPool.get(pool.metadata.name) ?? [];
      let total = 0;
      let disrupting = 0;
      for (const c of claims) {
        if (!isInitialized(c)) continue;
        total++;
        if (c.metadata.deletionTimestamp !== undefined || !isNodeReady(c)) disrupting++;
      }
      return { pool, nodeClass: classesByName.get(pool.spec.template.spec.nodeClassRef.name), claims, total, disrupting };
    });

    const decisions: DisruptionDecision[] = [];
    const deleted = new Set<string>();
    const decide = (view: PoolView, claim: NodeClaim, kind: DisruptionKind, detail: string): void => {
      decisions.push({ nodeClaim: claim.metadata.name, nodePool: view.pool.metadata.name, kind, detail });
      deleted.add(claim.metadata.name);
      // Only initialized claims count towards budgets, and a NotReady one already does.
      if (isInitialized(claim) && isNodeReady(claim)) view.disrupting++;
    };

    // Track pod churn for every live claim every reconcile, so consolidateAfter measures
    // continuous stability rather than time since some earlier look.
    const stableSince = new Map<string, number>();
    for (const claim of nodeClaims) {
      if (claim.metadata.deletionTimestamp) continue;
      stableSince.set(claim.metadata.name, this.churn.observe(claim.metadata.name, viewOf(claim).pods.signature, now));
    }

    for (const view of poolViews) {
      for (const claim of view.claims) {
        const at = viewOf(claim).facts.expiresAt;
        if (!claim.metadata.deletionTimestamp && at !== undefined && now >= at) decide(view, claim, 'Expired', `older than expireAfter ${claim.spec.expireAfter}`);
      }
    }

    // Replacements under way: finish (delete the candidate) or abandon them.
    const claimsByName = new Map(nodeClaims.map((c) => [c.metadata.name, c]));
    const replacing = new Set<string>();
    const abandoned: string[] = [];
    // A replacement is empty until its candidate's pods move over: never consolidate it
    // while the claim it replaces still exists.
    const replacements = new Set<string>();
    for (const claim of nodeClaims) {
      const target = claim.metadata.annotations[ANNOTATION_CONSOLIDATION_REPLACEMENT];
      if (target !== undefined) replacements.add(target);
    }
    for (const view of poolViews) {
      for (const claim of view.claims) {
        const replacementName = claim.metadata.annotations[ANNOTATION_CONSOLIDATION_REPLACEMENT];
        if (replacementName === undefined || claim.metadata.deletionTimestamp || deleted.has(claim.metadata.name)) continue;
        const replacement = claimsByName.get(replacementName);
        if (!replacement || replacement.metadata.deletionTimestamp || viewOf(claim).doNotDisrupt) {
          abandoned.push(claim.metadata.name);
          continue;
        }
        replacing.add(claim.metadata.name);
        if (isInitialized(replacement)) decide(view, claim, 'Underutilized', `replaced by cheaper ${replacementName}`);
        else if (isNodeReady(claim)) view.disrupting++; // holds its budget slot meanwhile
      }
    }

    const gracefulCandidates = (view: PoolView): NodeClaim[] =>
      view.claims.filter((claim) => {
        const name = claim.metadata.name;
        if (claim.metadata.deletionTimestamp || deleted.has(name) || replacing.has(name) || replacements.has(name)) return false;
        const claimView = viewOf(claim);
        return claimView.facts.initialized && claimView.doNotDisrupt === undefined;
      });
    const allowance = (view: PoolView, reason: DisruptionReason): number =>
      allowedDisruptions(view.pool.spec.disruption.budgets, reason, view.total, view.disrupting, now);

    for (const view of poolViews) {
      const drifted = gracefulCandidates(view)
        .map((claim) => ({ claim, reason: facts.driftOf(claim, view.pool, view.nodeClass) }))
        .filter((d) => d.reason !== undefined)
        .sort((a, b) => a.claim.metadata.creationTimestamp.localeCompare(b.claim.metadata.creationTimestamp) || a.claim.metadata.name.localeCompare(b.claim.metadata.name));
      for (const { claim, reason } of drifted) {
        if (allowance(view, 'Drifted') <= 0) break;
        decide(view, claim, 'Drifted', reason!);
      }
    }

    for (const view of poolViews) {
      const consolidateAfter = durationOrNever(view.pool.spec.disruption.consolidateAfter);
      if (consolidateAfter === undefined) continue;
      const empty = gracefulCandidates(view).filter((claim) =>
        viewOf(claim).pods.reschedulable === 0 && now - (stableSince.get(claim.metadata.name) ?? now) >= consolidateAfter);
      for (const claim of empty) {
        if (allowance(view, 'Empty') <= 0) break;
        decide(view, claim, 'Empty', `empty for ${view.pool.spec.disruption.consolidateAfter}`);
      }
    }

    // Underutilisation only when nothing is pending: pending pods are about to claim the
    // spare capacity the simulation would otherwise count on.
    let consolidation: Consolidation = { intents: [], simulations: 0 };
    if (!podIndex.anyProvisionable && poolViews.some((v) => v.pool.spec.disruption.consolidationPolicy === 'WhenEmptyOrUnderutilized')) {
      // Pods on zonal disks may only move where their volumes can follow (Karpenter's volume topology).
      const volumes = VolumeTopology.needed(pods) ? await this.volumeTopology() : undefined;
      // In the list's order, which the scheduling simulation's tie-breaks follow.
      const podsByNode = new Map<string, Pod[]>();
      for (const pod of pods) {
        if (!pod.spec.nodeName) continue;
        let list = podsByNode.get(pod.spec.nodeName);
        if (!list) podsByNode.set(pod.spec.nodeName, (list = []));
        list.push(pod);
      }
      const podsByClaim = new Map(nodeClaims.map((c) => {
        const node = viewOf(c).node;
        return [c.metadata.name, (node && podsByNode.get(node.metadata.name)) ?? []];
      }));
      consolidation = this.consolidateUnderutilized(poolViews, { nodeClaims, nodePools, nodeClasses, instanceTypes, pods, podsByClaim, stableSince, now, deleted, decide, gracefulCandidates, allowance, isNodeReady, volumes });
    }
    const { intents } = consolidation;

    if (decisions.length === 0 && abandoned.length === 0 && intents.length === 0 && consolidation.simulations === 0) {
      this.quiet = { versions, specs, dueAt: nextDeadline(poolViews, viewOf, stableSince, now), scheduled: scheduledBudgets(poolViews, now) };
    }
    for (const name of abandoned) await this.unmark(name);
    for (const decision of decisions) await this.delete(decision, nodeClaims);
    for (const intent of intents) await this.launchReplacement(intent, now);
    return decisions;
  }

  private isStillQuiet(quiet: QuietPass, versions: ReadonlyArray<string | undefined>, specs: string, now: number): boolean {
    if (now >= quiet.dueAt || specs !== quiet.specs) return false;
    for (let i = 0; i < versions.length; i++) if (versions[i] === undefined || versions[i] !== quiet.versions[i]) return false;
    return quiet.scheduled.every(({ budget, active }) => isBudgetActive(budget, now) === active);
  }

  private async unmark(name: string): Promise<void> {
    try {
      await this.options.cluster.patchNodeClaimMetadata(name, { annotations: { [ANNOTATION_CONSOLIDATION_REPLACEMENT]: null } });
    } catch (error) {
      this.options.log.warn({ nodeClaim: name, err: error instanceof Error ? error.message : String(error) }, 'clearing replacement mark failed');
    }
  }

  /** Creates the replacement, then marks the candidate (so a crash between leaves only an extra empty node, which emptiness removes). */
  private async launchReplacement(intent: ReplacementIntent, now: number): Promise<void> {
    const { cluster, log } = this.options;
    const nodePool = intent.view.pool.metadata.name === intent.plan.nodePoolName ? intent.view.pool : undefined;
    const pool = nodePool ?? (await cluster.listNodePools()).find((p) => p.metadata.name === intent.plan.nodePoolName);
    const nodeClass = (await cluster.listNodeClasses()).find((c) => c.metadata.name === intent.plan.nodeClassName);
    if (!pool || !nodeClass || !this.options.random) return;
    const name = `${pool.metadata.name}-${randomSuffix(this.options.random)}`;
    try {
      await cluster.createNodeClaim(buildNodeClaim(name, intent.plan, pool, nodeClass, { now, nodeClassHash: this.options.nodeClassHash ?? defaultNodeClassHash }));
      await cluster.patchNodeClaimMetadata(intent.candidate.metadata.name, { annotations: { [ANNOTATION_CONSOLIDATION_REPLACEMENT]: name } });
    } catch (error) {
      log.warn({ nodeClaim: intent.candidate.metadata.name, err: error instanceof Error ? error.message : String(error) }, 'launching consolidation replacement failed');
      return;
    }
    log.info({ nodeClaim: intent.candidate.metadata.name, replacement: name, instanceType: intent.plan.instanceType.name }, 'replacing underutilized NodeClaim with a cheaper one');
    await cluster.recordEvent({
      involvedObject: { kind: 'NodeClaim', name: intent.candidate.metadata.name, uid: intent.candidate.metadata.uid },
      type: 'Normal',
      reason: 'DisruptionLaunching',
      message: `Launching NodeClaim ${name} (${intent.plan.instanceType.name}) to replace this underutilized node`,
    }).catch(() => undefined);
  }

  private async volumeTopology(): Promise<VolumeTopology> {
    const { cluster } = this.options;
    const [claims, volumes, classes] = await Promise.all([cluster.listPersistentVolumeClaims(), cluster.listPersistentVolumes(), cluster.listStorageClasses()]);
    return new VolumeTopology({ claims, volumes, classes });
  }

  private consolidateUnderutilized(
    views: PoolView[],
    ctx: {
      nodeClaims: NodeClaim[]; nodePools: NodePool[]; nodeClasses: AzureFlexNodeClass[]; instanceTypes: InstanceType[]; pods: Pod[];
      podsByClaim: Map<string, Pod[]>; stableSince: Map<string, number>; now: number; deleted: Set<string>; volumes: VolumeTopology | undefined;
      decide: (view: PoolView, claim: NodeClaim, kind: DisruptionKind, detail: string) => void;
      gracefulCandidates: (view: PoolView) => NodeClaim[];
      allowance: (view: PoolView, reason: DisruptionReason) => number;
      isNodeReady: (claim: NodeClaim) => boolean;
    },
  ): Consolidation {
    const intents: ReplacementIntent[] = [];
    const typesByName = new Map(ctx.instanceTypes.map((t) => [t.name, t]));
    const price = (claim: NodeClaim): number => typesByName.get(claim.metadata.labels[LABEL_INSTANCE_TYPE] ?? '')?.pricePerHour ?? 0;
    const state: ConsolidationState = {
      nodePools: ctx.nodePools,
      nodeClasses: ctx.nodeClasses,
      instanceTypes: ctx.instanceTypes,
      nodeClaims: ctx.nodeClaims.filter((c) => !c.metadata.deletionTimestamp),
      podsByNodeClaim: ctx.podsByClaim,
      daemonSetPods: daemonSetRepresentatives(ctx.pods),
      isOfferingUnavailable: this.options.isOfferingUnavailable ?? (() => false),
      ...(ctx.volumes ? { volumeRequirements: (pod: Pod) => ctx.volumes!.requirements(pod) } : {}),
    };
    const maxSimulations = this.options.maxConsolidationSimulations ?? DEFAULT_MAX_SIMULATIONS;
    let simulations = maxSimulations;
    // Claims removed so far (any reason): their pods must fit elsewhere too.
    const removed = new Set(ctx.deleted);
    for (const view of views) {
      if (view.pool.spec.disruption.consolidationPolicy !== 'WhenEmptyOrUnderutilized') continue;
      const consolidateAfter = durationOrNever(view.pool.spec.disruption.consolidateAfter);
      if (consolidateAfter === undefined) continue;
      const candidates = ctx.gracefulCandidates(view).filter((c) => ctx.now - (ctx.stableSince.get(c.metadata.name) ?? ctx.now) >= consolidateAfter);
      for (const claim of consolidationOrder(candidates, ctx.podsByClaim, price)) {
        if (simulations <= 0 || ctx.allowance(view, 'Underutilized') <= 0) break;
        simulations--;
        const attempt = new Set(removed).add(claim.metadata.name);
        if (canRemoveWithoutReplacement(state, attempt)) {
          removed.add(claim.metadata.name);
          ctx.decide(view, claim, 'Underutilized', 'its pods fit on other nodes');
          continue;
        }
        // One replacement per pool per reconcile, as Karpenter's single-node consolidation.
        if (!this.options.random || intents.some((i) => i.view === view)) continue;
        const plan = cheaperReplacement(state, claim, removed, price(claim));
        if (!plan) continue;
        intents.push({ view, candidate: claim, plan });
        removed.add(claim.metadata.name);
        if (ctx.isNodeReady(claim)) view.disrupting++;
      }
    }
    return { intents, simulations: maxSimulations - simulations };
  }

  private async delete(decision: DisruptionDecision, nodeClaims: readonly NodeClaim[]): Promise<void> {
    const { cluster, log } = this.options;
    const claim = nodeClaims.find((c) => c.metadata.name === decision.nodeClaim);
    try {
      await cluster.deleteNodeClaim(decision.nodeClaim);
    } catch (error) {
      log.warn({ nodeClaim: decision.nodeClaim, err: error instanceof Error ? error.message : String(error) }, 'disruption delete failed');
      return;
    }
    log.info({ nodeClaim: decision.nodeClaim, nodePool: decision.nodePool, reason: decision.kind, detail: decision.detail }, 'disrupting NodeClaim');
    if (this.options.onDisrupted) {
      const pool = (await cluster.listNodePools()).find((p) => p.metadata.name === decision.nodePool);
      this.options.onDisrupted(decision, pool?.spec.disruption.consolidationPolicy ?? '');
    }
    await cluster.recordEvent({
      involvedObject: { kind: 'NodeClaim', name: decision.nodeClaim, ...(claim ? { uid: claim.metadata.uid } : {}) },
      type: 'Normal',
      reason: 'DisruptionTerminating',
      message: `Disrupting NodeClaim: ${decision.kind} (${decision.detail})`,
    }).catch(() => undefined);
  }
}

/**
 * The first moment after `now` at which a claim expires, or has been stable for its pool's
 * consolidateAfter while it could be consolidated: an empty claim, or any claim of a pool
 * that consolidates underutilized nodes (a busy claim of a WhenEmpty pool has no such deadline).
 */
function nextDeadline(views: readonly PoolView[], viewOf: (claim: NodeClaim) => ClaimView, stableSince: ReadonlyMap<string, number>, now: number): number {
  let due = Number.POSITIVE_INFINITY;
  for (const view of views) {
    const consolidateAfter = durationOrNever(view.pool.spec.disruption.consolidateAfter);
    const underutilized = view.pool.spec.disruption.consolidationPolicy === 'WhenEmptyOrUnderutilized';
    for (const claim of view.claims) {
      if (claim.metadata.deletionTimestamp) continue;
      const claimView = viewOf(claim);
      const expires = claimView.facts.expiresAt;
      if (expires !== undefined && expires > now) due = Math.min(due, expires);
      const since = stableSince.get(claim.metadata.name);
      if (consolidateAfter === undefined || since === undefined || since + consolidateAfter <= now) continue;
      if (underutilized || claimView.pods.reschedulable === 0) due = Math.min(due, since + consolidateAfter);
    }
  }
  return due;
}
