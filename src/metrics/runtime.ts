import { CAPACITY_TYPE_ON_DEMAND, LABEL_CAPACITY_TYPE, LABEL_NODEPOOL, LABEL_ZONE } from '../apis/well-known.js';
import { classifyAzureError } from '../azure/errors.js';
import { isAzureError } from '../ports/azure.js';
import type { Runtime } from '../runtime/runtime.js';
import type { RuntimeObserver } from '../runtime/deps.js';
import type { LogEntry } from '../runtime/event-log.js';
import type { PeriodicControllerDeps } from '../controllers/periodic.js';
import type { NodeClaim } from '../ports/cluster.js';
import {
  CLOUD_PROVIDER_LABEL, LIFECYCLE_CONTROLLER, nodeClaimDisruptedLabels, PROVISIONER_CONTROLLER, snakeCase,
  type AzflexMetrics, type KarpenterMetrics, type NodeClaimDisruptedReason,
} from './karpenter.js';

/** NodeClaims are on-demand only (phase 1): the label's default. */
const CAPACITY_TYPE = CAPACITY_TYPE_ON_DEMAND;
/** NIC reservation starts bounded by this many in flight (one per failed create). */
const MAX_TRACKED_RESERVATIONS = 10_000;

/** A NodeClaim's labels as the controller's cache holds them now (undefined: not cached). */
export type NodeClaimLabels = (name: string) => Readonly<Record<string, string>> | undefined;

/**
 * Turns the runtime's event log into Prometheus metrics: NICs reaped and how long after the
 * failure that reserved them, NodeClaims terminated, nodes created and terminated.
 * Transitions out of `observing` are a restarted controller rebuilding its actors, not
 * events, so they are not counted.
 *
 * `zone` and `capacity_type` are the NodeClaim's labels, as upstream reads them
 * (`topology.kubernetes.io/zone`, written before the VM PUT; absent, so "", for a regional
 * VM). The event log names NodeClaims only, so each transition reads the labels from
 * `labelsOf` and keeps the last ones seen: a deleted NodeClaim is no longer in any cache.
 */
export function runtimeMetricsListener(azflex: AzflexMetrics, karpenter: KarpenterMetrics, labelsOf: NodeClaimLabels = () => undefined): (entry: LogEntry) => void {
  const failedAt = new Map<string, number>();
  /** NodeClaims that had a node while this process watched them (bounded by live NodeClaims). */
  const hadNode = new Set<string>();
  /** When each live NodeClaim actor started terminating (bounded by live NodeClaims). */
  const terminatingAt = new Map<string, number>();
  /** Last labels seen per live NodeClaim actor (bounded by live NodeClaims). */
  const seen = new Map<string, { zone: string; capacityType: string }>();
  const labels = (actor: string, name: string): { zone: string; capacityType: string } => {
    const l = labelsOf(name);
    const last = seen.get(actor);
    if (!l) return last ?? { zone: '', capacityType: CAPACITY_TYPE };
    const now = { zone: l[LABEL_ZONE] ?? last?.zone ?? '', capacityType: l[LABEL_CAPACITY_TYPE] ?? last?.capacityType ?? CAPACITY_TYPE };
    seen.set(actor, now);
    return now;
  };
  return (e) => {
    if (e.kind !== 'transition') return;
    if (e.actor.startsWith('nic/')) {
      if (e.to === 'vm-failed' || (e.to === 'reserved-180s' && !failedAt.has(e.actor))) {
        if (failedAt.size >= MAX_TRACKED_RESERVATIONS) failedAt.clear();
        if (e.from !== 'observing' && e.from !== undefined) failedAt.set(e.actor, e.t);
      }
      if (e.to === 'reaped') {
        azflex.nicsReaped.inc({ reason: e.from === 'deleting' ? 'deleted' : 'cascade' });
        const t = failedAt.get(e.actor);
        if (t !== undefined) azflex.nicReapLatency.observe((e.t - t) / 1000);
        failedAt.delete(e.actor);
      }
      return;
    }
    if (!e.actor.startsWith('nodeclaim/')) return;
    const name = e.actor.slice(e.actor.indexOf('/') + 1);
    const nodepool = nodePoolOf(name);
    const { zone, capacityType } = labels(e.actor, name);
    const restored = e.from === undefined || e.from === 'observing';
    if (e.to === 'registered' && !restored) karpenter.nodesCreated.inc({ nodepool, zone });
    if (e.to === 'registered' || e.to === 'initialized') hadNode.add(e.actor);
    // Deletion starts at deleting-claim (azflex deletes it) or terminating.* (someone else did).
    const terminating = e.to === 'deleting-claim' || (e.to?.startsWith('terminating') ?? false);
    if (terminating && !restored && !terminatingAt.has(e.actor)) terminatingAt.set(e.actor, e.t);
    if (e.to === 'deleted') {
      seen.delete(e.actor);
      const since = terminatingAt.get(e.actor);
      terminatingAt.delete(e.actor);
      if (e.from === undefined) return;
      if (since !== undefined) karpenter.nodeClaimTerminationDuration.observe({ nodepool }, (e.t - since) / 1000);
      karpenter.nodeClaimsTerminated.inc({ nodepool, capacity_type: capacityType, zone });
      if (hadNode.delete(e.actor)) karpenter.nodesTerminated.inc({ nodepool, zone });
    }
  };
}

/** Error categories upstream puts in karpenter_cloudprovider_errors_total{error}. */
export function cloudProviderErrorLabel(error: unknown): string {
  const action = classifyAzureError(error);
  if (action.kind === 'insufficientCapacity') return 'InsufficientCapacityError';
  if (isAzureError(error) && error.code === 'ResourceNotFound') return 'NodeClaimNotFoundError';
  return 'unknown';
}

/**
 * The runtime's effect observer for metrics: cloud-provider calls and errors with upstream's
 * labels, VM create failures by code, SKU and region. `log` gets one info line per failure.
 */
export function runtimeMetricsObserver(
  azflex: AzflexMetrics,
  karpenter: KarpenterMetrics,
  log?: { info(fields: Record<string, unknown>, message: string): void },
  claimOf: (name: string) => NodeClaim | undefined = () => undefined,
): RuntimeObserver {
  return {
    cloudProviderCall: ({ method, nodeClaim, seconds, error }) => {
      const labels = { controller: LIFECYCLE_CONTROLLER, method, provider: CLOUD_PROVIDER_LABEL };
      karpenter.cloudProviderDuration.observe(labels, seconds);
      if (method === 'Delete' && error === undefined) {
        karpenter.instanceTerminationDuration.observe({ nodepool: claimOf(nodeClaim)?.metadata.labels[LABEL_NODEPOOL] ?? nodePoolOf(nodeClaim) }, seconds);
      }
      if (error !== undefined) {
        // Upstream's errors counter names the NodeClaim's NodePool (its karpenter.sh/nodepool label).
        const nodepool = claimOf(nodeClaim)?.metadata.labels[LABEL_NODEPOOL] ?? nodePoolOf(nodeClaim);
        karpenter.cloudProviderErrors.inc({ ...labels, error: cloudProviderErrorLabel(error), nodepool });
      }
    },
    vmCreateFailed: (attempt, error) => {
      const code = isAzureError(error) ? error.code : 'Unknown';
      azflex.vmCreateFailures.inc({ code, sku: attempt.sku, region: attempt.region });
      log?.info({ nodeClaim: attempt.nodeClaim, nodePool: attempt.nodePool, sku: attempt.sku, region: attempt.region, subscription: attempt.subscription, code }, 'VM create failed');
    },
    instanceLost: ({ nodeClaim, nodePool, reason, message }) => {
      const claim = claimOf(nodeClaim);
      karpenter.nodeClaimsDisrupted.inc(nodeClaimDisruptedLabels(reason, claim && { labels: claim.metadata.labels, terminationGracePeriod: claim.spec.terminationGracePeriod }, nodePool));
      log?.info({ nodeClaim, nodePool, reason, detail: message }, 'instance lost; deleting the NodeClaim');
    },
    launchFailed: ({ nodeClaim, nodePool, code, message, nicReservedUntil, insufficientCapacity }) => {
      // Upstream deletes a NodeClaim whose launch met insufficient capacity and counts it disrupted.
      if (insufficientCapacity) {
        const claim = claimOf(nodeClaim);
        karpenter.nodeClaimsDisrupted.inc(nodeClaimDisruptedLabels(
          'insufficient_capacity', claim && { labels: claim.metadata.labels, terminationGracePeriod: claim.spec.terminationGracePeriod }, nodePool,
        ));
      }
      log?.info(
        { nodeClaim, nodePool, code, detail: message, ...(nicReservedUntil !== undefined ? { nicReservedUntil: new Date(nicReservedUntil).toISOString() } : {}) },
        nicReservedUntil !== undefined ? 'launch failed; NIC reserved by ARM, deleting it when the reservation ends' : 'launch failed',
      );
    },
  };
}

/** Gauges that are a function of the live actors: refreshed before each scrape. */
export function refreshActorGauges(runtime: Runtime, azflex: AzflexMetrics): void {
  azflex.nics.reset();
  for (const state of runtime.actorStates().nics.values()) azflex.nics.inc({ state });
  azflex.nicsLeaked.set(runtime.orphanNics());
}

/** NodeClaim names are `<nodepool>-<5 chars>` (Karpenter's convention). */
function nodePoolOf(name: string): string {
  return name.replace(/-[a-z0-9]{5}$/, '');
}

/** Upstream's annotation saying minValues was relaxed to schedule the NodeClaim. */
const ANNOTATION_MIN_VALUES_RELAXED = 'karpenter.sh/nodeclaim-min-values-relaxed';

/** The observers, required; a NodeClaim created is counted from the NodeClaim alone. */
type ControllerObservers = Required<Pick<PeriodicControllerDeps, 'onSchedulingDuration' | 'onUnschedulablePods' | 'onNodeClaimDisrupted' | 'onReplacementCreated' | 'onNodeClaimTimedOut'>> & {
  onNodeClaimCreated: (claim: NodeClaim) => void;
};

/**
 * The periodic controllers' metric observers, with upstream's label values: NodeClaims created
 * (`provisioned`, or `underutilized` for a consolidation replacement), scheduling durations,
 * and NodeClaims disrupted by consolidation, drift, expiry and the liveness timeouts.
 */
export function karpenterControllerMetrics(k: KarpenterMetrics): ControllerObservers {
  const created = (reason: string) => (claim: NodeClaim): void => {
    k.nodeClaimsCreated.inc({
      reason,
      nodepool: claim.metadata.labels[LABEL_NODEPOOL] ?? '',
      min_values_relaxed: claim.metadata.annotations[ANNOTATION_MIN_VALUES_RELAXED] === 'true' ? 'true' : 'false',
    });
  };
  const claimFacts = (claim: NodeClaim | undefined) => claim && { labels: claim.metadata.labels, terminationGracePeriod: claim.spec.terminationGracePeriod };
  return {
    onNodeClaimCreated: created('provisioned'),
    onReplacementCreated: created('underutilized'),
    onSchedulingDuration: (seconds) => k.schedulingDuration.observe({ controller: PROVISIONER_CONTROLLER }, seconds),
    onUnschedulablePods: (count) => k.unschedulablePods.set({ controller: PROVISIONER_CONTROLLER }, count),
    onNodeClaimDisrupted: (d, policy, claim) => {
      const labels = nodeClaimDisruptedLabels(d.kind.toLowerCase() as NodeClaimDisruptedReason, claimFacts(claim), d.nodePool, policy);
      k.nodeClaimsDisrupted.inc(labels);
      // Upstream's per-condition breakdown of repairs (its condition label is the type in snake case).
      if (d.repairedCondition !== undefined) {
        k.nodeClaimsUnhealthyDisrupted.inc({
          condition: snakeCase(d.repairedCondition), nodepool: labels.nodepool, capacity_type: labels.capacity_type, image_id: claim?.status.imageID ?? '', termination_mode: labels.termination_mode,
        });
      }
    },
    onNodeClaimTimedOut: (action, claim) =>
      k.nodeClaimsDisrupted.inc(nodeClaimDisruptedLabels(action.failure === 'LaunchTimeout' ? 'launch_timeout' : 'registration_timeout', claimFacts(claim), action.nodePool ?? '')),
  };
}
