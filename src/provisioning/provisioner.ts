/**
 * The provisioner: pods the kube-scheduler gave up on → NodeClaims for AzureFlexNodeClass
 * NodePools. Each reconcile re-reads the cluster and re-plans from scratch; in-flight
 * NodeClaims absorb the pods they were created for, so repeating a reconcile (or restarting
 * the controller between two) never doubles capacity. NodeClaims it created count from the
 * moment the API server accepts them, even while its informer does not show them yet.
 *
 * A pass, one file per phase: what it reads and whether it must plan (pass-view.ts), the
 * scheduling call (schedule-pass.ts), the launch of NodeClaims (launch.ts), the events on pods
 * (pod-events.ts), then NodePool status (nodepool-status.ts).
 */
import type { AzureFlexNodeClass, ClusterPort, NodeClaim } from '../ports/cluster.js';
import type { Clock, Random } from '../ports/clock.js';
import type { InstanceType, InstanceTypeCatalog } from '../catalog/skus.js';
import type { Resources } from './resources.js';
import { describeShortfall, type QuotaReader } from './quota.js';
import type { ReservationReader } from './reservations.js';
import { OfferingMarks, ProbationMemo } from './offering-marks.js';
import { SchedulingMemo, isFlexNodePool, podKey, type NodeClaimPlan, type SchedulingResult } from './scheduler.js';
import { isProvisioningSupported, type SupportIssue } from './nodepool-support.js';
import { syncNodePoolStatus, type NodePoolStatusInput } from './nodepool-status.js';
import { NodePoolTotals } from './nodepool-totals.js';
import { isStaticNodePool, planStaticCapacity, type StaticCapacityDecision } from './static-capacity.js';
import { nodeClassHash as defaultNodeClassHash } from '../apis/nodeclass-hash.js';
import { PodsViewCache } from './pods-view.js';
import { InFlightNodeClaims } from './in-flight.js';
import { NodeClaimLauncher, type Launch } from './launch.js';
import { PodEvents } from './pod-events.js';
import { settleMarks, type SettleMarksOptions, type SkuRestrictedCheck } from './settle-marks.js';
import { isUsableNodeClass, scheduleIsolated, schedulingInputOf } from './schedule-pass.js';
import {
  OfferingQueries, PlannedInputs, cacheVersions, passKey, passLists, readPassLists, statusKey, unavailableWith,
  type Pass, type PassLists, type UnavailableCheck,
} from './pass-view.js';


/** pino-compatible subset, so the real logger and a test spy both fit. */
export interface ProvisionerLog {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

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

export interface ProvisioningSummary {
  pendingPods: number;
  createdNodeClaims: string[];
  unschedulablePods: number;
  result: SchedulingResult;
}

export class Provisioner {
  private readonly cluster: ClusterPort;
  private readonly catalog: InstanceTypeCatalog;
  private readonly clock: Clock;
  private readonly log: ProvisionerLog;
  private readonly options: ProvisionerOptions;
  private readonly podEvents: PodEvents;
  private readonly launcher: NodeClaimLauncher;
  private readonly marksOptions: SettleMarksOptions;
  private readonly warnedPools = new Map<string, string>();
  private readonly poolTotals = new NodePoolTotals();
  private lastDecision = '';
  private last: ProvisioningSummary | undefined;
  /** Calls that failed and must be retried by the next reconcile (which therefore may not be skipped). */
  private failures = 0;
  /**
   * What the last complete plan read. With its inputs and every offering it asked about
   * unchanged, re-planning would decide the same (nothing to create, the same events already
   * sent), so the reconcile stops there.
   */
  private readonly planned = new PlannedInputs();
  private readonly inFlight: InFlightNodeClaims;
  /** Each existing NodeClaim's scheduling state, rebuilt only when it (or its pool) changed. */
  private readonly memo = new SchedulingMemo();
  private running: Promise<void> | undefined;
  private readonly podsView = new PodsViewCache();
  /** The probation marks the last pass found unproven, and the NodeClaims it looked at (offering-marks.ts). */
  private readonly probation = new ProbationMemo();
  /** What the last NodePool status sync that failed nothing read (pass-view.ts statusKey). */
  private lastStatusKey: string | undefined;

  constructor(options: ProvisionerOptions) {
    this.options = options;
    this.cluster = options.cluster;
    this.catalog = options.catalog;
    this.clock = options.clock;
    this.log = options.log;
    const onFailure = (): void => {
      this.failures++;
    };
    const concurrency = options.createConcurrency ?? 1;
    this.inFlight = new InFlightNodeClaims(options.cluster, options.clock, options.inFlightTtlMs);
    this.podEvents = new PodEvents({ cluster: options.cluster, log: options.log, concurrency, onFailure });
    this.launcher = new NodeClaimLauncher({
      cluster: options.cluster, clock: options.clock, random: options.random, log: options.log, inFlight: this.inFlight,
      nodeClassHash: options.nodeClassHash ?? defaultNodeClassHash, concurrency, onFailure,
      ...(options.onNodeClaimCreated ? { onNodeClaimCreated: options.onNodeClaimCreated } : {}),
    });
    this.marksOptions = {
      cluster: options.cluster, clock: options.clock, probation: this.probation, log: options.log, onFailure,
      ...(options.skuRestricted ? { skuRestricted: options.skuRestricted } : {}),
      ...(options.liftOffering ? { liftOffering: options.liftOffering } : {}),
    };
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

  // Each await below is the pass's own: the phases it calls are synchronous or hand back the
  // promise they wait on, so a pass interleaves with the rest of the process as it always has.
  private async plan(): Promise<void> {
    // Read before the lists: a write landing in between makes the next pass differ, never this one match.
    const versions = cacheVersions(this.cluster);
    const lists = passLists(await readPassLists(this.cluster, this.catalog), (listed) => this.inFlight.withListed(listed));
    const { nodeClasses, nodeClaims, instanceTypes } = lists;
    const marks = this.options.offeringMarks ? OfferingMarks.observe(nodeClasses, nodeClaims, instanceTypes, (this.options.cloudClock ?? this.clock).now()) : undefined;
    if (marks && (await settleMarks(marks, nodeClasses, this.marksOptions))) return; // NodeClasses changed: the next pass reads them
    const quotaClasses = nodeClasses.filter(isUsableNodeClass);
    await this.options.quota?.refresh(quotaClasses, nodeClaims);
    const ledger = this.options.quota?.ledger(quotaClasses, nodeClaims, instanceTypes);
    await this.options.reservations?.refresh(quotaClasses);
    const reserved = this.options.reservations?.ledger(quotaClasses, nodeClaims);
    const unavailableNow = unavailableWith(this.options.isOfferingUnavailable, marks, ledger);
    const key = passKey(versions, lists, reserved);
    if (this.planned.unchanged(key, unavailableNow)) return;
    this.planned.forget();
    const failuresBefore = this.failures;
    const pass = this.openPass(versions, lists, unavailableNow, { marks, ledger, reserved });
    if (pass.pods.pending.length > 0 && pass.dynamicPools.length > 0) {
      pass.result = this.schedule(pass);
      const launched: Array<NodeClaim | undefined> = [];
      await this.launcher.launchEach(pass.result.nodeClaims, pass.launch, launched);
      for (const claim of launched) if (claim) pass.created.push(claim);
      this.podEvents.nominate(launched, pass.result.nodeClaims, pass.pods.pending);
      await this.podEvents.refused(pass.result.unschedulable, ledger?.shortfall ? describeShortfall(ledger.shortfall) : undefined);
    }
    const statics = this.planStatics(pass);
    for (const planned of statics.create) {
      const claim = await this.launcher.launch(planned, pass.launch);
      if (claim) pass.created.push(claim);
    }
    for (const claim of statics.remove) await this.launcher.scaleDown(claim);
    // Pods quota left pending: the reader reads again once own VMs free cores (quota.ts).
    if (ledger) this.options.quota?.planned(ledger.pendingForQuota || (ledger.shortfall !== undefined && pass.result.unschedulable.length > 0));
    this.podEvents.forget(pass.pods.goneUids);
    const sinceStatus = statusKey(pass);
    if (sinceStatus === undefined || sinceStatus !== this.lastStatusKey) {
      const status = await syncNodePoolStatus(this.statusInput(pass));
      this.failures += status.failures;
      this.lastStatusKey = status.failures === 0 ? sinceStatus : undefined;
    }
    // A plan that created nothing and failed nothing would be made again from the same inputs.
    if (this.failures === failuresBefore && pass.created.length === 0 && statics.remove.length === 0 && pass.issues.size === 0) this.planned.remember(key, pass.offerings);
    this.report(pass);
  }

  /** A pass about to plan: the pools it may use, its view of the pods, and what its launches draw on. */
  private openPass(versions: string[] | undefined, lists: PassLists, unavailableNow: UnavailableCheck, limits: Pick<Launch, 'marks' | 'ledger' | 'reserved'>): Pass {
    const offerings = new OfferingQueries(unavailableNow);
    const flexPools = lists.nodePools.filter(isFlexNodePool);
    // A NodePool azflex cannot honour is left out here and explained on its own status.
    const usablePools = flexPools.filter(isProvisioningSupported);
    // Static pools keep their replicas whatever is pending (static-capacity.ts); pods never plan them.
    const dynamicPools = usablePools.filter((p) => !isStaticNodePool(p));
    const pods = this.podsView.of(lists.pods, versions?.[0]);
    const launch: Launch = {
      pools: new Map(flexPools.map((p) => [p.metadata.name, p])), classes: new Map(lists.nodeClasses.map((c) => [c.metadata.name, c])),
      marks: limits.marks, canaries: new Set(), ledger: limits.ledger, reserved: limits.reserved,
    };
    const result: SchedulingResult = { nodeClaims: [], existingPlacements: [], unschedulable: [] };
    return { versions, lists, offerings, usablePools, dynamicPools, pods, launch, created: [], issues: new Map<string, SupportIssue>(), result };
  }

  /** The scheduling call, timed on the clock for the scheduling-duration metric. */
  private schedule(pass: Pass): SchedulingResult {
    const input = schedulingInputOf(pass, {
      memo: this.memo,
      ...(this.options.nodeResourceGroup ? { nodeResourceGroup: this.options.nodeResourceGroup } : {}),
      ...(this.options.kubeReserved ? { kubeReserved: this.options.kubeReserved } : {}),
    });
    const started = this.clock.now();
    const result = scheduleIsolated(input, pass.issues, this.log);
    this.options.onSchedulingDuration?.((this.clock.now() - started) / 1000);
    return result;
  }

  /** Static pools' NodeClaims to create or delete, counting those this pass created. */
  private planStatics(pass: Pass): StaticCapacityDecision {
    const { lists, offerings } = pass;
    return planStaticCapacity({
      nodePools: pass.usablePools, nodeClasses: lists.nodeClasses.filter(isUsableNodeClass), instanceTypes: lists.instanceTypes, nodeClaims: [...lists.nodeClaims, ...pass.created],
      daemonSetPods: pass.pods.daemonSets, isOfferingUnavailable: offerings.isOfferingUnavailable, isZoneUnavailable: offerings.isZoneUnavailable,
      ...(this.options.nodeResourceGroup ? { nodeResourceGroup: this.options.nodeResourceGroup } : {}),
      ...(this.options.kubeReserved ? { kubeReserved: this.options.kubeReserved } : {}),
    });
  }

  private statusInput(pass: Pass): NodePoolStatusInput {
    const { lists } = pass;
    return {
      cluster: this.cluster,
      now: this.clock.now(),
      pools: lists.nodePools.filter(isFlexNodePool),
      nodeClaims: [...lists.nodeClaims, ...pass.created],
      nodeClasses: lists.nodeClasses,
      instanceTypes: lists.instanceTypes,
      passIssues: pass.issues,
      log: this.log,
      warned: this.warnedPools,
      totals: this.poolTotals,
    };
  }

  /** The pass's summary, the unschedulable-pods metric, and a log line when the decision changed. */
  private report(pass: Pass): void {
    const { created, result } = pass;
    const pending = pass.pods.pending;
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
}
