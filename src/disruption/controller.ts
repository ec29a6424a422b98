/**
 * The disruption controller: each reconcile decides which NodeClaims to delete, in
 * Karpenter's order, and deletes them (setting deletionTimestamp; the NodeClaim machine
 * drains the node and tears the VM down leak-free).
 *
 *   1. Expired (expireAfter) and Unhealthy (node repair, src/disruption/repair.ts): forceful,
 *      not limited by budgets or do-not-disrupt; repair stops in a NodePool over its breaker.
 *   2. Drifted (NodeClass hash, NodePool template hash, requirements).
 *   3. Empty: no reschedulable pods for consolidateAfter (both consolidation policies).
 *   4. Underutilized (WhenEmptyOrUnderutilized only): pods unchanged for consolidateAfter
 *      and all of them fit on the other NodeClaims — or, failing that, on one new NodeClaim
 *      cheaper than this one. The replacement is created first and the candidate is marked
 *      with flex.aks.azure.com/consolidation-replacement (its node tainted karpenter.sh/disrupted);
 *      a later reconcile deletes it once the replacement is initialized, or unmarks (and
 *      untaints) it if the replacement is gone or a do-not-disrupt pod arrived. The mark lives
 *      on the NodeClaim, so a restart resumes.
 *
 * Each pass also writes what it decided on the NodeClaims as upstream's conditions (Drifted,
 * Consolidatable, DisruptionReason; src/disruption/conditions.ts) and status.lastPodEventTime.
 *
 * Steps 2–4 only touch initialized NodeClaims without karpenter.sh/do-not-disrupt, and each
 * respects the NodePool's budget for its reason; every deletion (of any reason, including
 * NodeClaims already terminating) counts against all of the pool's budgets.
 */
import type { AzureFlexNodeClass, CachedKind, ClusterPort, DisruptionBudget, Node, NodeClaim, NodePool, Pod } from '../ports/cluster.js';
import { randomSuffix, type Clock, type Random } from '../ports/clock.js';
import { nodeClassHash as defaultNodeClassHash } from '../apis/nodeclass-hash.js';
import type { InstanceTypeCatalog } from '../catalog/skus.js';
import { buildNodeClaim } from '../provisioning/nodeclaim-template.js';
import type { ProvisionerLog } from '../provisioning/provisioner.js';
import { daemonSetRepresentatives } from '../provisioning/pods-view.js';
import { isBudgetActive } from './budgets.js';
import { isConsolidatable, type ConsolidationState } from './consolidation.js';
import { VolumeTopology } from '../provisioning/volume-topology.js';
import { durationOrNever } from '../utils/duration.js';
import { disruptionConditionChanges, type WantedDisruptionConditions } from './conditions.js';
import { ClaimRecords, NodeIndex } from './facts.js';
import { ClusterError } from '../ports/cluster.js';
import { PodIndex } from './pod-index.js';
import { DisruptionPass, type Consolidation, type DisruptionDecision, type PoolView, type ReplacementIntent } from './pass.js';
import { AZURE_REPAIR_POLICIES, EVENT_REASON_REPAIR_BLOCKED, UNHEALTHY_THRESHOLD_PERCENT, isTripped, poolHealth, unhealthyCondition, type PoolHealth, type RepairPolicy } from './repair.js';
import { ANNOTATION_CONSOLIDATION_REPLACEMENT, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, TAINT_DISRUPTED } from '../apis/well-known.js';
import { offeringPrice } from '../catalog/offerings.js';
import { CONDITION_DISRUPTION_REASON } from '../lifecycle/nodeclaim/conditions.js';

export interface DisruptionControllerOptions {
  cluster: ClusterPort;
  catalog: InstanceTypeCatalog;
  clock: Clock;
  log: ProvisionerLog;
  isOfferingUnavailable?: (sku: string, region: string, capacityType: string) => boolean;
  /** The AKS node resource group: replacements are simulated with the kubernetes.azure.com/cluster label the provisioner gives nodes. */
  nodeResourceGroup?: string;
  /** Upper bound on consolidation simulations per reconcile (each is one scheduler run). */
  maxConsolidationSimulations?: number;
  /** Needed to name replacement NodeClaims; without it only delete-consolidation runs. */
  random?: Random;
  /** Stamped on replacement NodeClaims; defaults to src/apis/nodeclass-hash.ts. */
  nodeClassHash?: (nodeClass: AzureFlexNodeClass) => string;
  /** Observer (src/metrics): a NodeClaim was deleted for this decision (`claim` as last listed). */
  onDisrupted?: (decision: DisruptionDecision, consolidationPolicy: string, claim: NodeClaim | undefined) => void;
  /** Observer (src/metrics): a consolidation replacement was created (upstream counts it with reason underutilized). */
  onReplacementCreated?: (claim: NodeClaim) => void;
  /** Node repair's policies; default the Azure provider's (Ready False or Unknown for 10 minutes). Empty: no repair. */
  repairPolicies?: readonly RepairPolicy[];
}

const DEFAULT_MAX_SIMULATIONS = 20;

/** The kinds whose every change can change a pass's decisions (NodePools and NodeClasses: only their specs can). */
const WATCHED_KINDS: readonly CachedKind[] = ['nodeClaims', 'nodes', 'pods'];
const NODES = WATCHED_KINDS.indexOf('nodes');
const PODS = WATCHED_KINDS.indexOf('pods');

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
  private readonly records = new ClaimRecords();
  private readonly nodeIndex = new NodeIndex();
  private quiet: QuietPass | undefined;
  /** The pods by node, brought up to date with each pass's list (unless the pods cache shows the same). */
  private readonly podIndex = new PodIndex();
  /** NodePools whose breaker Event was sent, so a steady outage gets one, not one per pass. */
  private readonly repairBlocked = new Set<string>();
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
    this.nodeIndex.update(nodes, versions[NODES]);
    const podsVersion = versions[PODS];
    if (podsVersion === undefined || podsVersion !== this.podIndexVersion) this.podIndex.update(pods);
    this.podIndexVersion = podsVersion;
    const records = this.records;
    // The claims as the pass uses them (paired with their nodes), and by NodePool, in list order.
    const pass = new DisruptionPass(now, records.observeAll(listedNodeClaims, this.nodeIndex, this.podIndex), nodePools, nodeClasses);
    records.endPass();

    pass.expire();
    const repairDue = await this.repair(pass);
    pass.finishReplacements(records);
    pass.drift(records);
    records.retainPools(new Set(nodePools.map((p) => p.metadata.name)));
    pass.empty();
    // Underutilisation only when nothing is pending: pending pods are about to claim the
    // spare capacity the simulation would otherwise count on.
    let consolidation: Consolidation = { intents: [], simulations: 0 };
    if (!this.podIndex.anyProvisionable && pass.views.some((v) => v.pool.spec.disruption.consolidationPolicy === 'WhenEmptyOrUnderutilized')) {
      const state = await this.consolidationState(pass.nodeClaims, { nodePools, nodeClasses, instanceTypes, pods });
      const typesByName = new Map(instanceTypes.map((t) => [t.name, t]));
      const price = (claim: NodeClaim): number => {
        const type = typesByName.get(claim.metadata.labels[LABEL_INSTANCE_TYPE] ?? '');
        return type ? offeringPrice(type, claim.metadata.labels[LABEL_CAPACITY_TYPE]) : 0;
      };
      const isNodeReady = (claim: NodeClaim): boolean => records.get(claim.metadata.name)!.ready;
      consolidation = pass.consolidate(state, price, this.options.maxConsolidationSimulations ?? DEFAULT_MAX_SIMULATIONS, this.options.random !== undefined, isNodeReady);
    }
    const { decisions, abandoned } = pass;
    const { intents } = consolidation;
    if (decisions.length === 0 && abandoned.length === 0 && intents.length === 0 && consolidation.simulations === 0) {
      this.quiet = { versions, specs, dueAt: Math.min(repairDue, pass.nextDeadline()), scheduled: scheduledBudgets(pass.views, now) };
    }
    await this.writeConditions(pass.views, decisions, abandoned, now);
    for (const name of abandoned) await this.unmark(name);
    for (const decision of decisions) await this.delete(decision, pass.nodeClaims);
    for (const intent of intents) await this.launchReplacement(intent, now);
    return decisions;
  }

  /** What the consolidation simulations schedule against: the live claims with their pods (in list order, which tie-breaks follow). */
  private async consolidationState(
    nodeClaims: readonly NodeClaim[],
    listed: Pick<ConsolidationState, 'nodePools' | 'nodeClasses' | 'instanceTypes'> & { pods: readonly Pod[] },
  ): Promise<ConsolidationState> {
    const { pods } = listed;
    // Pods on zonal disks may only move where their volumes can follow (Karpenter's volume topology).
    const volumes = VolumeTopology.needed(pods) ? await this.volumeTopology() : undefined;
    const podsByNode = new Map<string, Pod[]>();
    for (const pod of pods) {
      if (!pod.spec.nodeName) continue;
      let list = podsByNode.get(pod.spec.nodeName);
      if (!list) podsByNode.set(pod.spec.nodeName, (list = []));
      list.push(pod);
    }
    const podsByNodeClaim = new Map(nodeClaims.map((c) => {
      const node = this.records.get(c.metadata.name)!.node;
      return [c.metadata.name, (node && podsByNode.get(node.metadata.name)) ?? []];
    }));
    return {
      nodePools: listed.nodePools,
      nodeClasses: listed.nodeClasses,
      instanceTypes: listed.instanceTypes,
      nodeClaims: nodeClaims.filter((c) => !c.metadata.deletionTimestamp),
      podsByNodeClaim,
      daemonSetPods: daemonSetRepresentatives(pods),
      isOfferingUnavailable: this.options.isOfferingUnavailable ?? (() => false),
      ...(this.options.nodeResourceGroup ? { nodeResourceGroup: this.options.nodeResourceGroup } : {}),
      ...(volumes ? { volumeRequirements: (pod: Pod) => volumes.requirements(pod) } : {}),
    };
  }

  /**
   * Node repair: deletes the NodeClaims whose nodes have been unhealthy past a policy's
   * toleration, unless their pool's breaker holds (one Warning Event on the NodePool while it
   * does). Returns the next toleration to run out (when a quiet pass must look again).
   */
  private async repair(pass: DisruptionPass): Promise<number> {
    const { views, now, deleted } = pass;
    const policies = this.options.repairPolicies ?? AZURE_REPAIR_POLICIES;
    let due = Number.POSITIVE_INFINITY;
    if (policies.length === 0) return due;
    for (const view of views) {
      const name = view.pool.metadata.name;
      let blocked = false;
      let health: PoolHealth | undefined;
      for (const record of view.claims) {
        if (record.deleting || !record.node || deleted.has(record.name)) continue;
        const unhealthy = unhealthyCondition(record.node, policies);
        if (!unhealthy) continue;
        if (unhealthy.dueAt > now) {
          due = Math.min(due, unhealthy.dueAt);
          continue;
        }
        // The pool's nodes as its NodeClaims pair with them (deleting ones included, as upstream counts every node).
        health ??= poolHealth(view.claims.flatMap((r) => (r.node ? [r.node] : [])), policies);
        if (isTripped(health)) {
          blocked = true;
          continue;
        }
        const condition = record.node.status.conditions.find((c) => c.type === unhealthy.conditionType);
        pass.decide(view, record, 'Unhealthy', `node ${record.node.metadata.name} ${unhealthy.conditionType}=${condition?.status ?? ''} past its toleration`, unhealthy.conditionType);
      }
      if (!blocked) {
        this.repairBlocked.delete(name);
        continue;
      }
      if (this.repairBlocked.has(name)) continue;
      const { unhealthy = 0, total = 0 } = health ?? {};
      try {
        await this.options.cluster.recordEvent({
          involvedObject: { kind: 'NodePool', name, uid: view.pool.metadata.uid }, type: 'Warning', reason: EVENT_REASON_REPAIR_BLOCKED,
          message: `more than ${UNHEALTHY_THRESHOLD_PERCENT}% of nodes in nodepool "${name}" are unhealthy (${unhealthy} of ${total}): node repair stopped`,
        });
        this.repairBlocked.add(name);
      } catch (error) {
        this.options.log.warn({ nodePool: name, err: error instanceof Error ? error.message : String(error) }, 'recording NodeRepairBlocked failed');
      }
    }
    return due;
  }

  private isStillQuiet(quiet: QuietPass, versions: ReadonlyArray<string | undefined>, specs: string, now: number): boolean {
    if (now >= quiet.dueAt || specs !== quiet.specs) return false;
    for (let i = 0; i < versions.length; i++) if (versions[i] === undefined || versions[i] !== quiet.versions[i]) return false;
    return quiet.scheduled.every(({ budget, active }) => isBudgetActive(budget, now) === active);
  }

  /**
   * Brings each live claim's Drifted, Consolidatable and DisruptionReason conditions and its
   * lastPodEventTime to what this pass found (src/disruption/conditions.ts), before any claim is
   * deleted: one status write per claim whose conditions change, none on a pass that changes none.
   */
  private async writeConditions(views: readonly PoolView[], decisions: readonly DisruptionDecision[], abandoned: readonly string[], now: number): Promise<void> {
    const picked = new Map(decisions.map((d) => [d.nodeClaim, d.kind]));
    const dropped = new Set(abandoned);
    let nowIso: string | undefined;
    for (const view of views) {
      const consolidateAfter = durationOrNever(view.pool.spec.disruption.consolidateAfter);
      // Static NodePools (spec.replicas) are never consolidated, so upstream never marks their claims.
      const consolidates = consolidateAfter !== undefined && view.pool.spec.replicas === undefined;
      for (const record of view.claims) {
        if (record.deleting) continue;
        const kind = picked.size === 0 ? undefined : picked.get(record.name);
        // The karpenter.sh/disrupted taint goes with a replacement mark, as upstream taints a
        // candidate when its command starts and untaints nodes no command holds (a claim being
        // deleted now gets it from its drain).
        const marked = record.replaces !== undefined && !dropped.has(record.name);
        if (kind === undefined && record.node !== undefined && record.nodeFacts !== undefined && record.nodeFacts.disrupted !== marked) {
          await this.taintDisrupted(record.node, marked);
        }
        const drifted = record.drifted;
        const consolidatable = consolidates && isConsolidatable(record, consolidateAfter, now);
        const disruptionReason = kind === 'Expired' || kind === 'Unhealthy' ? 'unchanged' : kind ?? (marked ? 'Underutilized' : undefined);
        const podEvent = record.lastPodEvent !== undefined && record.lastPodEvent !== record.facts.lastPodEventTime ? record.lastPodEvent : undefined;
        // Looked at already for this version of the claim and the same wants: shown, or sent and not listed yet.
        const rv = record.listed.metadata.resourceVersion;
        const seen = record.conditionsSeen;
        if (rv !== undefined && seen !== undefined && seen.rv === rv && seen.drifted === drifted && seen.consolidatable === consolidatable &&
          seen.disruptionReason === disruptionReason && seen.podEvent === podEvent) continue;
        const wanted: WantedDisruptionConditions = { drifted, consolidatable, disruptionReason };
        const changes = disruptionConditionChanges(record.listed, wanted, (nowIso ??= new Date(now).toISOString()));
        const looked = rv === undefined ? undefined : { rv, drifted, consolidatable, disruptionReason, podEvent };
        if (!changes && podEvent === undefined) {
          record.conditionsSeen = looked;
          continue;
        }
        try {
          await this.options.cluster.patchNodeClaimStatus(record.name, { ...changes, ...(podEvent === undefined ? {} : { lastPodEventTime: new Date(podEvent).toISOString() }) });
          record.conditionsSeen = looked;
        } catch (error) {
          if (error instanceof ClusterError && error.reason === 'NotFound') continue;
          this.options.log.warn({ nodeClaim: record.name, err: error instanceof Error ? error.message : String(error) }, 'writing disruption conditions failed');
        }
      }
    }
  }

  private async taintDisrupted(node: Node, on: boolean): Promise<void> {
    const rest = node.spec.taints.filter((t) => t.key !== TAINT_DISRUPTED.key || t.effect !== TAINT_DISRUPTED.effect);
    try {
      await this.options.cluster.patchNode(node.metadata.name, { taints: on ? [...rest, TAINT_DISRUPTED] : rest });
    } catch (error) {
      if (error instanceof ClusterError && error.reason === 'NotFound') return;
      this.options.log.warn({ node: node.metadata.name, err: error instanceof Error ? error.message : String(error) }, on ? 'tainting a disruption candidate failed' : 'removing a stale disrupted taint failed');
    }
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
      const created = await cluster.createNodeClaim(buildNodeClaim(name, intent.plan, pool, nodeClass, { now, nodeClassHash: this.options.nodeClassHash ?? defaultNodeClassHash }));
      this.options.onReplacementCreated?.(created);
      await cluster.patchNodeClaimMetadata(intent.candidate.metadata.name, { annotations: { [ANNOTATION_CONSOLIDATION_REPLACEMENT]: name } });
      // Picked for disruption (upstream marks the candidate when the command starts); the next passes keep it so.
      const changes = disruptionConditionChanges(intent.candidate, { drifted: undefined, consolidatable: false, disruptionReason: 'Underutilized' }, new Date(now).toISOString());
      const reason = changes?.set.find((c) => c.type === CONDITION_DISRUPTION_REASON);
      if (reason) await cluster.patchNodeClaimStatus(intent.candidate.metadata.name, { set: [reason] });
      const node = this.records.get(intent.candidate.metadata.name)?.node;
      if (node) await this.taintDisrupted(node, true);
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
      this.options.onDisrupted(decision, pool?.spec.disruption.consolidationPolicy ?? '', claim);
    }
    await cluster.recordEvent({
      involvedObject: { kind: 'NodeClaim', name: decision.nodeClaim, ...(claim ? { uid: claim.metadata.uid } : {}) },
      type: 'Normal',
      reason: 'DisruptionTerminating',
      message: `Disrupting NodeClaim: ${decision.kind} (${decision.detail})`,
    }).catch(() => undefined);
  }
}
