import type { OfferingsCache } from '../azure/offerings.js';
import type { InstanceTypeCatalog } from '../catalog/skus.js';
import { DisruptionController, type DisruptionControllerOptions } from '../disruption/controller.js';
import { LivenessController, type LivenessOptions } from '../lifecycle/nodeclaim/liveness.js';
import { drain } from '../lifecycle/nodeclaim/termination.js';
import type { ClusterPort } from '../ports/cluster.js';
import type { AzurePort } from '../ports/azure.js';
import { ReservationReader } from '../provisioning/reservations.js';
import { QuotaReader, type QuotaReaderOptions } from '../provisioning/quota.js';
import type { Clock, Random } from '../ports/clock.js';
import { Provisioner, type ProvisionerLog, type ProvisionerOptions } from '../provisioning/provisioner.js';
import type { SkuRestrictedCheck } from '../provisioning/settle-marks.js';

/** A periodic controller, run by the runtime on the injected clock (provisioner, disruption, liveness, metrics). */
export interface PeriodicController {
  name: string;
  intervalMs: number;
  reconcile(): Promise<void>;
}

export interface PeriodicIntervals {
  provisionMs: number;
  disruptionMs: number;
  livenessMs: number;
}

export const DEFAULT_INTERVALS: PeriodicIntervals = { provisionMs: 10_000, disruptionMs: 30_000, livenessMs: 30_000 };

export interface PeriodicControllerDeps {
  cluster: ClusterPort;
  catalog: InstanceTypeCatalog;
  clock: Clock;
  /**
   * ARM's time, which stamps unavailable-offering marks (the offerings cache's clock). The
   * same as `clock` in production; `azflex dev` skips ARM's clock ahead of the wall clock.
   */
  cloudClock?: Clock;
  random: Random;
  offerings: OfferingsCache | undefined;
  clusterName: string;
  /** The AKS node resource group (kubernetes.azure.com/cluster on every node); none: no such label. */
  nodeResourceGroup?: string;
  log: ProvisionerLog;
  intervals: PeriodicIntervals;
  /**
   * Lets the simulator stop provisioning and disruption while the world settles (the actors
   * keep going, and so does liveness: it is how a node that never joins gets cleaned up).
   */
  enabled?: () => boolean;
  /** Whether Resource SKUs still restricts a SKU in a region (undefined: unknown); see ProvisionerOptions. */
  skuRestricted?: SkuRestrictedCheck;
  /** NodeClaims (with their pods' events) a provisioning pass creates at once (ProvisionerOptions.createConcurrency; default 1). */
  createConcurrency?: number;
  /** Metrics observers of the provisioner (src/metrics); the simulator leaves them out. */
  onNodeClaimCreated?: ProvisionerOptions['onNodeClaimCreated'];
  onSchedulingDuration?: ProvisionerOptions['onSchedulingDuration'];
  onUnschedulablePods?: ProvisionerOptions['onUnschedulablePods'];
  onNodeClaimDisrupted?: DisruptionControllerOptions['onDisrupted'];
  onReplacementCreated?: DisruptionControllerOptions['onReplacementCreated'];
  onNodeClaimTimedOut?: LivenessOptions['onTimedOut'];
  /** Node repair policies; default the Azure provider's. */
  repairPolicies?: DisruptionControllerOptions['repairPolicies'];
  /** ARM's usages, for quota-aware planning (none: planning learns quota from refusals only). */
  arm?: Pick<AzurePort, 'listUsages' | 'getCapacityReservationGroup'>;
  /** How often usages are read again (default DEFAULT_QUOTA_READ_INTERVAL_MS). */
  quotaReadIntervalMs?: number;
  onQuotaReading?: QuotaReaderOptions['onReading'];
  onQuotaReadFailed?: QuotaReaderOptions['onReadFailed'];
}

/**
 * Karpenter's job for our NodePools, the same set in the controller process and in the
 * simulator: the provisioner (pending pods → NodeClaims), disruption (emptiness,
 * consolidation, drift, expiry within budgets) and liveness (launch/registration timeouts).
 * They only create and delete NodeClaims; the lifecycle machines do the rest.
 */
export function periodicControllers(deps: PeriodicControllerDeps): PeriodicController[] {
  const isOfferingUnavailable = (sku: string, region: string, capacityType: string, zone?: string): boolean =>
    // A reserved offering's room is the reservation reader's to say: no mark rules it out.
    capacityType !== 'reserved' && (deps.offerings?.isUnavailable(sku, region, capacityType === 'spot' ? 'spot' : 'on-demand', zone) ?? false);
  const quota = deps.arm
    ? new QuotaReader({
      arm: deps.arm, clock: deps.cloudClock ?? deps.clock,
      ...(deps.quotaReadIntervalMs !== undefined ? { intervalMs: deps.quotaReadIntervalMs } : {}),
      ...(deps.onQuotaReading ? { onReading: deps.onQuotaReading } : {}),
      ...(deps.onQuotaReadFailed ? { onReadFailed: deps.onQuotaReadFailed } : {}),
    })
    : undefined;
  const reservations = deps.arm ? new ReservationReader({ arm: deps.arm, clock: deps.cloudClock ?? deps.clock }) : undefined;
  const provisioner = new Provisioner({
    cluster: deps.cluster,
    catalog: deps.catalog,
    clock: deps.clock,
    ...(deps.cloudClock ? { cloudClock: deps.cloudClock } : {}),
    random: deps.random,
    isOfferingUnavailable,
    clusterName: deps.clusterName,
    ...(deps.nodeResourceGroup ? { nodeResourceGroup: deps.nodeResourceGroup } : {}),
    log: deps.log,
    offeringMarks: deps.offerings !== undefined,
    ...(quota ? { quota } : {}),
    ...(reservations ? { reservations } : {}),
    ...(deps.offerings ? { liftOffering: (sku: string, region: string) => deps.offerings!.lift(sku, region) } : {}),
    ...(deps.skuRestricted ? { skuRestricted: deps.skuRestricted } : {}),
    ...(deps.createConcurrency !== undefined ? { createConcurrency: deps.createConcurrency } : {}),
    ...(deps.onNodeClaimCreated ? { onNodeClaimCreated: deps.onNodeClaimCreated } : {}),
    ...(deps.onSchedulingDuration ? { onSchedulingDuration: deps.onSchedulingDuration } : {}),
    ...(deps.onUnschedulablePods ? { onUnschedulablePods: deps.onUnschedulablePods } : {}),
  });
  const disruption = new DisruptionController({
    cluster: deps.cluster,
    catalog: deps.catalog,
    clock: deps.clock,
    log: deps.log,
    isOfferingUnavailable,
    random: deps.random,
    ...(deps.nodeResourceGroup ? { nodeResourceGroup: deps.nodeResourceGroup } : {}),
    ...(deps.onNodeClaimDisrupted ? { onDisrupted: deps.onNodeClaimDisrupted } : {}),
    ...(deps.onReplacementCreated ? { onReplacementCreated: deps.onReplacementCreated } : {}),
    ...(deps.repairPolicies ? { repairPolicies: deps.repairPolicies } : {}),
  });
  const liveness = new LivenessController({
    cluster: deps.cluster, clock: deps.clock, log: deps.log,
    ...(deps.onNodeClaimTimedOut ? { onTimedOut: deps.onNodeClaimTimedOut } : {}),
  });
  const enabled = deps.enabled ?? (() => true);
  const when = (run: () => Promise<unknown>) => async (): Promise<void> => {
    if (enabled()) await run();
  };
  return [
    { name: 'provisioner', intervalMs: deps.intervals.provisionMs, reconcile: when(() => provisioner.reconcile()) },
    { name: 'disruption', intervalMs: deps.intervals.disruptionMs, reconcile: when(() => disruption.reconcile()) },
    { name: 'liveness', intervalMs: deps.intervals.livenessMs, reconcile: async () => void (await liveness.reconcile()) },
  ];
}

/** The runtime's drain hook: cordon + evict through the Eviction API until the node is empty. */
export function drainWith(cluster: ClusterPort, clock: Clock): (nodeName: string, deadline: number) => Promise<boolean> {
  return (nodeName, deadline) => drain(cluster, nodeName, { now: clock.now(), gracePeriodDeadline: deadline });
}
