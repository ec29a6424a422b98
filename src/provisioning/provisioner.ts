/**
 * The provisioner: pods the kube-scheduler gave up on → NodeClaims for AzureFlexNodeClass
 * NodePools. Each reconcile re-reads the cluster and re-plans from scratch; in-flight
 * NodeClaims absorb the pods they were created for, so repeating a reconcile (or restarting
 * the controller between two) never doubles capacity. NodeClaims it created count from the
 * moment the API server accepts them, even while its informer does not show them yet.
 */
import type {
  AzureFlexNodeClass, CachedKind, ClusterPort, KubeEvent, NodeClaim, NodePool, Pod,
} from '../ports/cluster.js';
import { ClusterError } from '../ports/cluster.js';
import { randomSuffix, type Clock, type Random } from '../ports/clock.js';
import type { InstanceType, InstanceTypeCatalog } from '../catalog/skus.js';
import type { Resources } from './resources.js';
import { describeShortfall, type QuotaLedger, type QuotaReader } from './quota.js';
import { oneCanaryEach, withinQuota, withinReservations } from './plan-limits.js';
import type { ReservationLedger, ReservationReader } from './reservations.js';
import { OfferingMarks, ProbationMemo, formatMarks, markKey, readMarks, type OfferingMark } from './offering-marks.js';
import {
  SchedulingMemo, isFlexNodePool, podKey, schedule, type NodeClaimPlan, type SchedulingInput, type SchedulingResult,
} from './scheduler.js';
import { isProvisioningSupported, type SupportIssue } from './nodepool-support.js';
import { syncNodePoolStatus } from './nodepool-status.js';
import { NodePoolTotals } from './nodepool-totals.js';
import { isStaticNodePool, planStaticCapacity } from './static-capacity.js';
import { nodeClassHash as defaultNodeClassHash } from '../apis/nodeclass-hash.js';
import { inputsKey } from './inputs-key.js';
import { VolumeTopology, type VolumeRequirements } from './volume-topology.js';
import { PodsViewTracker, type PodsView } from './pods-view.js';
import { ANNOTATION_OFFERING_MARKS, CAPACITY_TYPE_ON_DEMAND, LABEL_NODEPOOL } from '../apis/well-known.js';
import { buildNodeClaim } from './nodeclaim-template.js';
import { BackgroundQueue, forEachBounded } from '../utils/bounded.js';

export const EVENT_REASON_FAILED_SCHEDULING = 'FailedScheduling';
export const EVENT_REASON_NOMINATED = 'Nominated';
/** Quota ruled an offering out for a pod that stays pending: which quota, where, limit, usage and request. */
export const EVENT_REASON_INSUFFICIENT_QUOTA = 'InsufficientQuota';

/** Each pod event's message: a fixed prefix per reason, then what varies (the NodeClaim, why the pod was refused). */
const EVENT_MESSAGE_PREFIX: Readonly<Record<string, string>> = {
  [EVENT_REASON_NOMINATED]: 'Pod should schedule on: nodeclaim/',
  [EVENT_REASON_FAILED_SCHEDULING]: 'Failed to schedule pod, ',
};

/** pino-compatible subset, so the real logger and a test spy both fit. */
export interface ProvisionerLog {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export type SkuRestrictedCheck = (q: { sku: string; region: string; zone?: string; subscriptionID: string; markedAt: number }) => boolean | undefined;

export interface ProvisionerOptions {
  cluster: ClusterPort;
  catalog: InstanceTypeCatalog;
  clock: Clock;
  /** The clock unavailable-offering marks are stamped on (ARM's); defaults to `clock`. */
  cloudClock?: Clock;
  random: Random;
  /** With a zone: whether that zone's offering is blocked (zonal allocation failures mark one zone). */
  isOfferingUnavailable: (sku: string, region: string, capacityType: string, zone?: string) => boolean;
  clusterName: string;
  /** The AKS node resource group, whose label value every node carries as kubernetes.azure.com/cluster. */
  nodeResourceGroup?: string;
  log: ProvisionerLog;
  /**
   * Hash of the NodeClass fields that drift a node (image, subnet, location, …), stamped on
   * each NodeClaim as flex.aks.azure.com/nodeclass-hash. Defaults to the NodeClass
   * controller's (src/apis/nodeclass-hash.ts), which drift detection compares against.
   */
  nodeClassHash?: (nodeClass: AzureFlexNodeClass) => string;
  /** Optional override of the kube-reserved model (defaults to the AKS formula). */
  kubeReserved?: (instanceType: InstanceType, maxPods: number) => Resources;
  /** How long a created NodeClaim the informer does not show yet still counts (default IN_FLIGHT_TTL_MS). */
  inFlightTtlMs?: number;
  /**
   * Honour the unavailable-offering marks kept on NodeClasses (offering-marks.ts): live marks
   * block, expired ones admit one canary NodeClaim per offering until a launch proves it.
   * On wherever the offerings cache is (off only to measure what the cache saves).
   */
  offeringMarks?: boolean;
  /**
   * Whether Resource SKUs still restricts a SKU for a subscription in a region (a cheap read of
   * the catalog's last listing), answered only from a listing newer than the mark
   * (`markedAt`); undefined when unknown. A SkuNotAvailable mark whose restriction is gone is
   * not held for its 23 h but put on probation at once.
   */
  skuRestricted?: SkuRestrictedCheck;
  /** Drops the in-memory marks of a SKU in a region (the cache behind isOfferingUnavailable). */
  liftOffering?: (sku: string, region: string) => void;
  /** Quota-aware planning (quota.ts): no plan into an offering whose quota cannot hold its VM. */
  quota?: QuotaReader;
  /** Capacity reservations (reservations.ts): the `reserved` capacity type where a NodeClass's reservation has room. */
  reservations?: ReservationReader;
  /**
   * How many of a pass's NodeClaims (each with its pods' Nominated events) are created at once,
   * and how many pods' FailedScheduling events are sent at once (default 1: one after another).
   * A burst of 1,000 pods is 100 creates and 1,000 events; one at a time they take as many
   * API round trips in a row.
   */
  createConcurrency?: number;
  /** Observers (src/metrics): a NodeClaim created, and how long a scheduling pass took on the clock. */
  onNodeClaimCreated?: (claim: NodeClaim, plan: NodeClaimPlan) => void;
  onSchedulingDuration?: (seconds: number) => void;
  /** Observer (src/metrics): a planning pass ended with this many pending pods no NodePool can take. */
  onUnschedulablePods?: (count: number) => void;
}

/**
 * Bound on how long a NodeClaim this provisioner created counts as in flight while its
 * informer does not show it. Watch latency is seconds at worst; a claim still unseen after
 * this was deleted before the cache saw it, and its pods are planned again.
 */
export const IN_FLIGHT_TTL_MS = 2 * 60_000;

export interface ProvisioningSummary {
  pendingPods: number;
  createdNodeClaims: string[];
  unschedulablePods: number;
  result: SchedulingResult;
}

/** What a provisioning pass reads; their cache versions together say whether anything it read changed. */
const PLANNED_KINDS: readonly CachedKind[] = [
  'pods', 'nodePools', 'nodeClasses', 'nodeClaims', 'persistentVolumeClaims', 'persistentVolumes', 'storageClasses',
];

const MAX_NAME_ATTEMPTS = 3;

/** What a pass launches NodeClaims with: pools and classes by name, the marks, the canaries already taken, the quota left. */
interface Launch {
  pools: ReadonlyMap<string, NodePool>;
  classes: ReadonlyMap<string, AzureFlexNodeClass>;
  marks: OfferingMarks | undefined;
  canaries: Set<string>;
  ledger: QuotaLedger | undefined;
  reserved: ReservationLedger | undefined;
}
/** Bounded memory of events already sent, so a pod stuck for hours gets one event per reason. */
const MAX_REMEMBERED_EVENTS = 50_000;

export class Provisioner {
  private readonly cluster: ClusterPort;
  private readonly catalog: InstanceTypeCatalog;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly log: ProvisionerLog;
  private readonly options: ProvisionerOptions;
  /**
   * Pod uid → reason → what the message last sent said after its reason's fixed prefix (by
   * uid, so forgetting a pod is one delete). The part that varies is kept, not the message: a
   * pass with 2,000 pods still refused compares each one's reason string (one per pod group)
   * without building its message.
   */
  private readonly sentEvents = new Map<string, Map<string, string>>();
  private sentEventCount = 0;
  /** Nominated events in flight, createConcurrency at a time. */
  private readonly events: BackgroundQueue;
  private readonly warnedPools = new Map<string, string>();
  private readonly poolTotals = new NodePoolTotals();
  private lastDecision = '';
  private last: ProvisioningSummary | undefined;
  /**
   * What the last complete plan read: its inputs' fingerprint and every offering it asked
   * about. With both unchanged, re-planning would decide the same (nothing to create, the
   * same events already sent), so the reconcile stops there.
   */
  /** Calls that failed and must be retried by the next reconcile (which therefore may not be skipped). */
  private failures = 0;
  private lastInputs: { key: string; offerings: Array<[sku: string, region: string, capacityType: string, unavailable: boolean, zone?: string]> } | undefined;
  /**
   * NodeClaims this process created that the informer has not shown yet (Karpenter's
   * in-flight / nominated capacity): counted as existing, so pods they absorb are not
   * planned twice when the cache lags. Memory only, and that is safe: a restarted process
   * starts from its informers' first LIST, which shows everything created before.
   */
  private readonly inFlight = new Map<string, { claim: NodeClaim; createdAt: number }>();
  /** Each existing NodeClaim's scheduling state, rebuilt only when it (or its pool) changed. */
  private readonly memo = new SchedulingMemo();
  private running: Promise<void> | undefined;
  private lastPods: { version: string; view: PodsView } | undefined;
  private readonly podsTracker = new PodsViewTracker();
  /** The probation marks the last pass found unproven, and the NodeClaims it looked at (offering-marks.ts). */
  private readonly probation = new ProbationMemo();
  /** What the last NodePool status sync that failed nothing read (see plan). */
  private lastStatusKey: string | undefined;

  constructor(options: ProvisionerOptions) {
    this.options = options;
    this.cluster = options.cluster;
    this.catalog = options.catalog;
    this.clock = options.clock;
    this.random = options.random;
    this.log = options.log;
    this.events = new BackgroundQueue(options.createConcurrency ?? 1);
  }

  /** What the most recent reconcile decided (for tests, metrics and the simulator's log). */
  get lastSummary(): ProvisioningSummary | undefined {
    return this.last;
  }

  /** One plan at a time: a call while one runs joins it (two overlapping plans would both create). */
  reconcile(): Promise<void> {
    this.running ??= this.plan().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async plan(): Promise<void> {
    // Read before the lists: a write landing in between makes the next pass differ, never this one match.
    const versions = this.cacheVersions();
    const [pods, nodes, nodePools, nodeClasses, listedNodeClaims, instanceTypes, claims, volumes, classes] = await Promise.all([
      this.cluster.listPods(),
      this.cluster.listNodes(),
      this.cluster.listNodePools(),
      this.cluster.listNodeClasses(),
      this.cluster.listNodeClaims(),
      this.catalog.list(),
      this.cluster.listPersistentVolumeClaims(),
      this.cluster.listPersistentVolumes(),
      this.cluster.listStorageClasses(),
    ]);
    const nodeClaims = this.withInFlight(listedNodeClaims);
    const marks = this.options.offeringMarks ? OfferingMarks.observe(nodeClasses, nodeClaims, instanceTypes, (this.options.cloudClock ?? this.clock).now()) : undefined;
    if (marks && (await this.settleMarks(marks, nodeClasses))) return; // NodeClasses changed: the next pass reads them
    const quotaClasses = nodeClasses.filter(isUsableNodeClass);
    await this.options.quota?.refresh(quotaClasses, nodeClaims);
    const ledger = this.options.quota?.ledger(quotaClasses, nodeClaims, instanceTypes);
    await this.options.reservations?.refresh(quotaClasses);
    const reserved = this.options.reservations?.ledger(quotaClasses, nodeClaims);
    const unavailableNow = (sku: string, region: string, type: string, zone?: string): boolean =>
      this.options.isOfferingUnavailable(sku, region, type, zone) || (marks?.isUnavailable(sku, region, type, zone) ?? false) ||
      (ledger?.blocks(sku, region, type) ?? false);
    // With the caches' versions, only what they do not cover is fingerprinted: NodeClaims
    // created here that the cache does not show yet, and the catalog.
    const key = versions !== undefined
      ? `${versions.join(',')}|${inputsKey(instanceTypes, nodeClaims.slice(listedNodeClaims.length))}`
      : inputsKey(pods, nodePools, nodeClasses, nodeClaims, instanceTypes, claims, volumes, classes);
    // Free reservation slots come from ARM, not the inputs: other counts plan differently.
    const fullKey = reserved ? `${key}|${reserved.fingerprint()}` : key;
    const seen = this.lastInputs;
    if (seen?.key === fullKey && seen.offerings.every(([sku, region, type, was, zone]) => unavailableNow(sku, region, type, zone) === was)) return;
    this.lastInputs = undefined;
    const offerings: Array<[string, string, string, boolean, string?]> = [];
    const failuresBefore = this.failures;
    const isOfferingUnavailable = (sku: string, region: string, type: string): boolean => {
      const unavailable = unavailableNow(sku, region, type);
      offerings.push([sku, region, type, unavailable]);
      return unavailable;
    };
    const isZoneUnavailable = (sku: string, region: string, zone: string, capacityType: string): boolean => {
      const unavailable = unavailableNow(sku, region, capacityType, zone);
      offerings.push([sku, region, capacityType, unavailable, zone]);
      return unavailable;
    };
    const flexPools = nodePools.filter(isFlexNodePool);
    // A NodePool azflex cannot honour is left out here and explained on its own status.
    const usablePools = flexPools.filter(isProvisioningSupported);
    // Static pools keep their replicas whatever is pending (static-capacity.ts); pods never plan them.
    const dynamicPools = usablePools.filter((p) => !isStaticNodePool(p));
    const fromPods = this.podsView(pods, versions?.[0]);
    const { pending } = fromPods;
    const created: NodeClaim[] = [];
    const passIssues = new Map<string, SupportIssue>();
    const launch: Launch = { pools: new Map(flexPools.map((p) => [p.metadata.name, p])), classes: new Map(nodeClasses.map((c) => [c.metadata.name, c])), marks, canaries: new Set(), ledger, reserved };
    let result: SchedulingResult = { nodeClaims: [], existingPlacements: [], unschedulable: [] };
    if (pending.length > 0 && dynamicPools.length > 0) {
      const input: SchedulingInput = {
        pendingPods: pending,
        nodePools: dynamicPools,
        nodeClasses: nodeClasses.filter(isUsableNodeClass),
        instanceTypes,
        existingNodeClaims: nodeClaims,
        boundPods: fromPods.bound,
        // Where bound pods run, also before their NodeClaim records status.nodeName. Not part of
        // the skip key: Node writes are mostly heartbeats, and a pod binding changes the pods.
        nodes,
        daemonSetPods: fromPods.daemonSets,
        isOfferingUnavailable,
        isZoneUnavailable,
        ...(reserved ? { isReservable: (nodeClassName: string, sku: string) => reserved.offers(nodeClassName, sku) } : {}),
        memo: this.memo,
        ...(this.options.nodeResourceGroup ? { nodeResourceGroup: this.options.nodeResourceGroup } : {}),
        ...(VolumeTopology.needed(pending) ? { volumeRequirements: volumeRequirementsOf(new VolumeTopology({ claims, volumes, classes })) } : {}),
        ...(this.options.kubeReserved ? { kubeReserved: this.options.kubeReserved } : {}),
      };
      const started = this.clock.now();
      result = this.scheduleIsolated(input, passIssues);
      this.options.onSchedulingDuration?.((this.clock.now() - started) / 1000);
      // In plan order: `created` lists them so whatever the concurrency.
      const launched: Array<NodeClaim | undefined> = [];
      const concurrency = this.options.createConcurrency ?? 1;
      await forEachBounded(result.nodeClaims.map((planned, i) => ({ planned, i })), concurrency, async ({ planned, i }) => {
        launched[i] = await this.launchPlan(planned, launch);
      });
      for (const claim of launched) if (claim) created.push(claim);
      // Nominations go out in the background once every NodeClaim exists, as Karpenter publishes
      // them: a pass's ten events a NodeClaim would hold back its later creates and the next pass.
      const podsByKey = new Map(pending.map((p) => [podKey(p), p]));
      launched.forEach((claim, i) => {
        for (const key of claim ? result.nodeClaims[i]!.podKeys : []) {
          const pod = podsByKey.get(key);
          if (pod && !this.alreadySent(pod, EVENT_REASON_NOMINATED, claim!.metadata.name)) this.events.push(() => this.recordPodEvent(pod, 'Normal', EVENT_REASON_NOMINATED, claim!.metadata.name));
        }
      });
      const short = ledger?.shortfall ? describeShortfall(ledger.shortfall) : undefined;
      await forEachBounded(result.unschedulable, concurrency, async ({ pod, reason }) => {
        if (!this.alreadySent(pod, EVENT_REASON_FAILED_SCHEDULING, reason)) await this.recordPodEvent(pod, 'Warning', EVENT_REASON_FAILED_SCHEDULING, reason);
        if (short && !this.alreadySent(pod, EVENT_REASON_INSUFFICIENT_QUOTA, short)) await this.recordPodEvent(pod, 'Warning', EVENT_REASON_INSUFFICIENT_QUOTA, short);
      });
    }
    const statics = planStaticCapacity({
      nodePools: usablePools, nodeClasses: nodeClasses.filter(isUsableNodeClass), instanceTypes, nodeClaims: [...nodeClaims, ...created],
      daemonSetPods: fromPods.daemonSets, isOfferingUnavailable, isZoneUnavailable,
      ...(this.options.nodeResourceGroup ? { nodeResourceGroup: this.options.nodeResourceGroup } : {}),
      ...(this.options.kubeReserved ? { kubeReserved: this.options.kubeReserved } : {}),
    });
    for (const planned of statics.create) {
      const claim = await this.launchPlan(planned, launch);
      if (claim) created.push(claim);
    }
    for (const claim of statics.remove) await this.scaleDown(claim);
    // Pods quota left pending: the reader reads again once own VMs free cores (quota.ts).
    if (ledger) this.options.quota?.planned(ledger.pendingForQuota || (ledger.shortfall !== undefined && result.unschedulable.length > 0));
    // Events are only ever sent for pending pods: what is remembered for a pod goes when it stops being one.
    this.forgetEvents(fromPods.goneUids);
    // NodePool status reads NodePools, NodeClasses, NodeClaims and the catalog, not pods: a
    // pass where only pods moved would compute what the last sync wrote (or found) again.
    const statusKey = versions !== undefined && created.length === 0 && passIssues.size === 0
      ? `${versions[PLANNED_KINDS.indexOf('nodePools')]},${versions[PLANNED_KINDS.indexOf('nodeClasses')]},${versions[PLANNED_KINDS.indexOf('nodeClaims')]}|${inputsKey(instanceTypes, nodeClaims.slice(listedNodeClaims.length))}`
      : undefined;
    if (statusKey === undefined || statusKey !== this.lastStatusKey) {
      const status = await syncNodePoolStatus({
        cluster: this.cluster,
        now: this.clock.now(),
        pools: flexPools,
        nodeClaims: [...nodeClaims, ...created],
        nodeClasses,
        instanceTypes,
        passIssues,
        log: this.log,
        warned: this.warnedPools,
        totals: this.poolTotals,
      });
      this.failures += status.failures;
      this.lastStatusKey = status.failures === 0 ? statusKey : undefined;
    }
    // A plan that created nothing and failed nothing would be made again from the same inputs.
    if (this.failures === failuresBefore && created.length === 0 && statics.remove.length === 0 && passIssues.size === 0) this.lastInputs = { key: fullKey, offerings };
    this.last = { pendingPods: pending.length, createdNodeClaims: created.map((c) => c.metadata.name), unschedulablePods: result.unschedulable.length, result };
    this.options.onUnschedulablePods?.(result.unschedulable.length);
    // Logged when the decision changed, not on every pass with the same stuck pods.
    const decision = `${pending.length}|${created.length}|${result.unschedulable.map((u) => `${podKey(u.pod)}:${u.reason}`).join(',')}`;
    if (created.length > 0 || (result.unschedulable.length > 0 && decision !== this.lastDecision)) {
      this.log.info(
        { cluster: this.options.clusterName, pending: pending.length, created: created.map((c) => c.metadata.name), unschedulable: result.unschedulable.length },
        'provisioning decisions',
      );
    }
    this.lastDecision = decision;
  }

  /** Every cache's version (pods first), or undefined when the port cannot say for one of them. */
  private cacheVersions(): string[] | undefined {
    if (!this.cluster.cacheVersion) return undefined;
    const out: string[] = [];
    for (const kind of PLANNED_KINDS) {
      const v = this.cluster.cacheVersion(kind);
      if (v === undefined) return undefined;
      out.push(v);
    }
    return out;
  }

  /**
   * What a pass reads of the pods, kept while the pod cache's version is the same: a fleet
   * holds 10,000 pods, and most passes that plan at all do so because NodeClaims changed.
   */
  private podsView(pods: readonly Pod[], version: string | undefined): PodsView & { goneUids: readonly string[] } {
    const kept = this.lastPods;
    if (version !== undefined && kept?.version === version) return { ...kept.view, goneUids: [] };
    const { goneUids, ...view } = this.podsTracker.update(pods);
    this.lastPods = version === undefined ? undefined : { version, view };
    return { ...view, goneUids };
  }

  /**
   * One NodePool must never stop the others: if a pass throws, each pool is tried alone,
   * the ones that throw are left out (and explained on their status), and the rest are
   * scheduled together.
   */
  private scheduleIsolated(input: SchedulingInput, issues: Map<string, SupportIssue>): SchedulingResult {
    try {
      return schedule(input);
    } catch (error) {
      const good: NodePool[] = [];
      for (const pool of input.nodePools) {
        try {
          schedule({ ...input, nodePools: [pool] });
          good.push(pool);
        } catch (poolError) {
          const message = poolError instanceof Error ? poolError.message : String(poolError);
          issues.set(pool.metadata.name, { reason: 'SchedulingFailed', message: `scheduling for this NodePool failed: ${message}` });
          this.log.error({ nodePool: pool.metadata.name, err: message }, 'scheduling failed for NodePool; leaving it out of this pass');
        }
      }
      if (good.length === input.nodePools.length) throw error;
      return good.length > 0 ? schedule({ ...input, nodePools: good }) : { nodeClaims: [], existingPlacements: [], unschedulable: [] };
    }
  }

  /**
   * The informer's NodeClaims plus the ones created here that it does not show yet. One
   * stops counting once the cache shows it, once the cache has applied events past its
   * creation without holding it (it was deleted: a launch that failed fast), or after the
   * TTL when the port cannot say how far its cache is.
   */
  private withInFlight(listed: NodeClaim[]): NodeClaim[] {
    if (this.inFlight.size === 0) return listed;
    const now = this.clock.now();
    const ttl = this.options.inFlightTtlMs ?? IN_FLIGHT_TTL_MS;
    const seenThrough = this.cluster.seenThrough?.('nodeClaims');
    const shown = new Set(listed.map((c) => c.metadata.name));
    const unseen: NodeClaim[] = [];
    for (const [name, { claim, createdAt }] of this.inFlight) {
      if (shown.has(name) || now - createdAt > ttl || resourceVersionReached(seenThrough, claim.metadata.resourceVersion)) this.inFlight.delete(name);
      else unseen.push(claim);
    }
    return unseen.length > 0 ? [...listed, ...unseen] : listed;
  }

  /** Creates a plan's NodeClaim, first narrowing it to one canary per offering on probation (offering-marks.ts). */
  private async launchPlan(planned: NodeClaimPlan, launch: Launch): Promise<NodeClaim | undefined> {
    const nodeClass = launch.classes.get(planned.nodeClassName)!;
    const canary = launch.marks ? oneCanaryEach(planned, nodeClass.spec.location, launch.marks, launch.canaries) : planned;
    // Dropped: its only offerings are canaries another NodeClaim of this pass already is, or its quota is spent.
    const reservedPlan = canary && launch.reserved ? withinReservations(canary, nodeClass, launch.reserved) : canary;
    const plan = reservedPlan && launch.ledger ? withinQuota(reservedPlan, nodeClass, launch.ledger) : reservedPlan;
    if (!plan) return undefined;
    const claim = await this.createNodeClaim(plan, launch.pools.get(plan.nodePoolName)!, launch.classes.get(plan.nodeClassName)!);
    if (claim) this.inFlight.set(claim.metadata.name, { claim, createdAt: this.clock.now() });
    return claim;
  }

  /** A static pool's NodeClaim above its replicas: deleted, and drained by termination like any other. */
  private async scaleDown(claim: NodeClaim): Promise<void> {
    try {
      await this.cluster.deleteNodeClaim(claim.metadata.name);
      this.log.info({ nodeClaim: claim.metadata.name, nodePool: claim.metadata.labels[LABEL_NODEPOOL] }, 'deleted NodeClaim above its static NodePool replicas');
    } catch (error) {
      if (error instanceof ClusterError && error.reason === 'NotFound') return;
      this.failures++;
      this.log.error({ nodeClaim: claim.metadata.name, err: error instanceof Error ? error.message : String(error) }, 'deleting NodeClaim above replicas failed');
    }
  }

  buildNodeClaim(name: string, plan: NodeClaimPlan, nodePool: NodePool, nodeClass: AzureFlexNodeClass): NodeClaim {
    return buildNodeClaim(name, plan, nodePool, nodeClass, { now: this.clock.now(), nodeClassHash: this.options.nodeClassHash ?? defaultNodeClassHash });
  }

  private async createNodeClaim(plan: NodeClaimPlan, nodePool: NodePool, nodeClass: AzureFlexNodeClass): Promise<NodeClaim | undefined> {
    for (let attempt = 0; attempt < MAX_NAME_ATTEMPTS; attempt++) {
      const name = `${nodePool.metadata.name}-${randomSuffix(this.random)}`;
      try {
        const created = await this.cluster.createNodeClaim(this.buildNodeClaim(name, plan, nodePool, nodeClass));
        this.options.onNodeClaimCreated?.(created, plan);
        this.log.info(
          { nodeClaim: name, nodePool: plan.nodePoolName, instanceType: plan.instanceType.name, options: plan.instanceTypeOptions.length, pods: plan.podKeys.length },
          'created NodeClaim',
        );
        return created;
      } catch (error) {
        if (error instanceof ClusterError && error.reason === 'AlreadyExists') continue;
        // Leave it for the next reconcile: the pods are still pending and will be re-planned.
        this.failures++;
        this.log.error({ nodeClaim: name, err: error instanceof Error ? error.message : String(error) }, 'creating NodeClaim failed');
        return undefined;
      }
    }
    this.failures++;
    this.log.error({ nodePool: plan.nodePoolName }, 'no free NodeClaim name after retries');
    return undefined;
  }

  /**
   * Keeps the marks on NodeClasses true: a probation mark a launch has proven wrong goes, and
   * a SkuNotAvailable mark whose Resource SKUs restriction is gone goes on probation now.
   * Returns whether it changed anything.
   */
  private async settleMarks(marks: OfferingMarks, nodeClasses: readonly AzureFlexNodeClass[]): Promise<boolean> {
    const updates = new Map<string, OfferingMark[]>();
    const current = (name: string): OfferingMark[] => updates.get(name) ?? readMarks(nodeClasses.find((c) => c.metadata.name === name)!);
    for (const [nodeClass, proven] of marks.proven(this.probation)) {
      const keys = new Set(proven.map(markKey));
      updates.set(nodeClass, current(nodeClass).filter((m) => !keys.has(markKey(m))));
    }
    const now = this.clock.now();
    for (const { region, nodeClass, mark } of marks.skuNotAvailable()) {
      const subscriptionID = nodeClasses.find((c) => c.metadata.name === nodeClass)?.spec.subscriptionID ?? '';
      if (this.options.skuRestricted?.({ sku: mark.sku, region, ...(mark.zone ? { zone: mark.zone } : {}), subscriptionID, markedAt: mark.markedAt }) !== false) continue;
      this.options.liftOffering?.(mark.sku, region);
      updates.set(nodeClass, current(nodeClass).map((m) => (markKey(m) === markKey(mark) ? { ...m, expiresAt: now } : m)));
      this.log.info({ sku: mark.sku, region }, 'SkuNotAvailable no longer restricted: offering on probation');
    }
    for (const [name, list] of updates) {
      try {
        await this.cluster.patchNodeClassMetadata(name, { annotations: { [ANNOTATION_OFFERING_MARKS]: formatMarks(list) } });
      } catch (error) {
        this.failures++;
        this.log.warn({ nodeClass: name, err: error instanceof Error ? error.message : String(error) }, 'updating offering marks failed');
      }
    }
    return updates.size > 0;
  }

  /** Whether this pod's last event for the reason said the same (checked before awaiting anything). */
  private alreadySent(pod: Pod, reason: string, detail: string): boolean {
    return this.sentEvents.get(pod.metadata.uid)?.get(reason) === detail;
  }

  /** Sends `reason`'s message with `detail` (EVENT_MESSAGE_PREFIX) unless the pod's last one for it said the same. */
  private async recordPodEvent(pod: Pod, type: KubeEvent['type'], reason: string, detail: string): Promise<void> {
    const uid = pod.metadata.uid;
    if (this.alreadySent(pod, reason, detail)) return;
    const message = `${EVENT_MESSAGE_PREFIX[reason] ?? ''}${detail}`;
    if (this.sentEventCount >= MAX_REMEMBERED_EVENTS) {
      this.sentEvents.clear();
      this.sentEventCount = 0;
    }
    let sent = this.sentEvents.get(uid);
    if (!sent) this.sentEvents.set(uid, (sent = new Map()));
    if (!sent.has(reason)) this.sentEventCount++;
    sent.set(reason, detail);
    try {
      await this.cluster.recordEvent({
        involvedObject: { kind: 'Pod', name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid },
        type, reason, message,
      });
    } catch (error) {
      // Events are best effort; forget it so the next reconcile tries again.
      const remembered = this.sentEvents.get(uid);
      if (remembered?.delete(reason)) {
        this.sentEventCount--;
        if (remembered.size === 0) this.sentEvents.delete(uid);
      }
      this.failures++;
      this.log.warn({ pod: podKey(pod), err: error instanceof Error ? error.message : String(error) }, 'recording event failed');
    }
  }

  private forgetEvents(uids: readonly string[]): void {
    if (this.sentEvents.size === 0) return;
    for (const uid of uids) {
      const sent = this.sentEvents.get(uid);
      if (!sent) continue;
      this.sentEventCount -= sent.size;
      this.sentEvents.delete(uid);
    }
  }
}

/**
 * resourceVersions are etcd revisions (decimal integers) on every API server; compared only
 * to tell whether a cache got past a write. Anything else counts as not reached.
 */
function resourceVersionReached(seenThrough: string | undefined, created: string | undefined): boolean {
  if (seenThrough === undefined || created === undefined || !/^\d+$/.test(seenThrough) || !/^\d+$/.test(created)) return false;
  return BigInt(seenThrough) >= BigInt(created);
}

/** One answer per pod per pass (the scheduler may ask more than once). */
function volumeRequirementsOf(topology: VolumeTopology): (pod: Pod) => VolumeRequirements {
  const seen = new Map<Pod, VolumeRequirements>();
  return (pod) => {
    if (!seen.has(pod)) seen.set(pod, topology.requirements(pod));
    return seen.get(pod);
  };
}

function isUsableNodeClass(nodeClass: AzureFlexNodeClass): boolean {
  if (nodeClass.metadata.deletionTimestamp) return false;
  // Unknown readiness is allowed: a fresh NodeClass has no conditions yet.
  return !nodeClass.status.conditions.some((c) => c.type === 'Ready' && c.status === 'False');
}

export { claimCapacity } from './nodepool-totals.js';
