import type { TokenCredential } from '@azure/core-auth';
import type { Logger } from 'pino';
import { instrumentAzure } from '../azure/instrumented.js';
import { createArmMetrics } from '../azure/metrics.js';
import { UnavailableOfferings } from '../azure/offerings.js';
import { SdkAzure } from '../azure/sdk-adapter.js';
import { resourceSkuCatalog } from '../azure/resource-skus.js';
import { PriceBook, type PriceOverrides } from '../catalog/prices.js';
import { restrictedSince, type InstanceTypeCatalog } from '../catalog/skus.js';
import { drainWith, periodicControllers, type PeriodicController, type PeriodicIntervals } from '../controllers/periodic.js';
import type { RuntimeLiveSource } from '../live/runtime-source.js';
import { RateLimitedLog } from '../log/rate-limit.js';
import { refreshClusterGauges } from '../metrics/cluster-state.js';
import { recordQuotaHeadroom, type KarpenterMetrics } from '../metrics/karpenter.js';
import { karpenterControllerMetrics, refreshActorGauges, runtimeMetricsListener, runtimeMetricsObserver } from '../metrics/runtime.js';
import type { Clock, Random } from '../ports/clock.js';
import { Runtime } from '../runtime/runtime.js';
import { DEFAULT_RUNTIME_CONFIG, type RuntimeConfig } from '../runtime/deps.js';
import type { MemoryEventLog } from '../runtime/event-log.js';
import type { createUserDataRenderer } from '../lifecycle/nodeclaim/userdata.js';
import { errorMessage } from '../utils/error-message.js';
import type { LeaderRuntime, LeaderRuntimeContext } from './leadership.js';
import type { RepairPolicy } from '../disruption/repair.js';

/**
 * The leader's work: what a replica runs while it holds the Lease (the SDK-backed ARM port
 * with metrics, the live SKU catalog, the lifecycle runtime and Karpenter's periodic
 * controllers). replica.ts plugs it into the controller process for both `azflex controller`
 * and `azflex dev`, so dev runs exactly the production assembly.
 */

export interface LeaderRuntimeOptions {
  /** The runtime's clock (ARM LRO polls, NIC reservation timers, the offerings cache). */
  clock: Clock;
  /**
   * Provisioner, disruption, liveness and drain compare against API-server timestamps; they
   * need wall time. Default: `clock`. (`azflex dev` runs the runtime on the simulated cloud's
   * skippable clock and these on the real one.)
   */
  controllersClock?: Clock;
  random: Random;
  /** Default: the live catalog from the Resource SKUs API (`azflex dev` and tests may pass the static one). */
  catalog?: InstanceTypeCatalog;
  /** Live catalog: price overrides (SKU → USD/hour) and refresh interval. */
  prices?: PriceOverrides;
  catalogRefreshMs?: number;
  userData: ReturnType<typeof createUserDataRenderer>;
  eventLog: MemoryEventLog;
  live: RuntimeLiveSource;
  log: Logger;
  clusterName: string;
  /** The AKS node resource group (MC_…): nodes carry it as kubernetes.azure.com/cluster. */
  nodeResourceGroup?: string;
  /** Node repair policies; default the Azure provider's. */
  repairPolicies?: readonly RepairPolicy[];
  intervals: PeriodicIntervals;
  armEndpoint?: string;
  armTlsCa?: Buffer;
  /** Default: DefaultAzureCredential (workload identity); `azflex dev` passes a fixed token. */
  armCredential?: TokenCredential;
  /** Runtime config overrides (`azflex dev` shortens resync). */
  config?: Partial<RuntimeConfig>;
}

/**
 * The runtime schedules its controllers on its own clock. When that clock can jump (the
 * simulated cloud's, skipped ahead by minutes), every interval in the jump would fire at
 * once: a burst of provisioner runs faster than the informers see their NodeClaims. Paced
 * on wall time, a jump runs each controller once.
 */
function paced(c: PeriodicController, wall: Clock): PeriodicController {
  let last = Number.NEGATIVE_INFINITY;
  return {
    ...c,
    reconcile: async () => {
      const now = wall.now();
      if (now - last < c.intervalMs / 2) return;
      last = now;
      await c.reconcile();
    },
  };
}

/**
 * NodeClaims a provisioning pass creates at once against the API server (Karpenter creates a
 * pass's NodeClaims in parallel too): a burst of 1,000 pods is about 100 creates and 1,000
 * Nominated events, which one at a time take as many round trips in a row.
 */
const CREATE_CONCURRENCY = 16;

/** Gauges derived from cluster state and the actors are recomputed this often (informer cache reads only). */
const METRICS_REFRESH_MS = 5_000;

/** A periodic controller that keeps failing logs at error level once a minute, with a count. */
function reconcileErrorReporter(k: KarpenterMetrics, log: Logger, wall: Clock): (controller: string, err: unknown) => void {
  const errors = new RateLimitedLog(log, wall, 60_000);
  return (controller, err) => {
    k.reconcileErrors.inc({ controller });
    errors.write('error', controller, { controller, err: errorMessage(err) }, 'reconcile failed');
  };
}

/**
 * The actor gauges, as one more periodic controller. The gauges derived from cluster state
 * (a series per node and per pod: tens of thousands in a large cluster) are filled only for
 * a scrape instead (`collectMetrics`), and freed after it.
 */
function gaugeRefresher(runtime: () => Runtime, ctx: LeaderRuntimeContext): PeriodicController {
  return {
    name: 'metrics',
    intervalMs: METRICS_REFRESH_MS,
    reconcile: async (): Promise<void> => refreshActorGauges(runtime(), ctx.azflexMetrics),
  };
}

/** The leader's work, built anew each time this replica wins the Lease. */
export function leaderRuntimeFactory(o: LeaderRuntimeOptions): (ctx: LeaderRuntimeContext) => LeaderRuntime {
  const { clock, random, userData, eventLog, live, log } = o;
  const wall = o.controllersClock ?? clock;
  // Hooked once per process: a re-elected leader builds a new runtime on the same log.
  let metricsHooked = false;
  let cluster: LeaderRuntimeContext['cluster'] | undefined;
  return (ctx) => {
    cluster = ctx.cluster;
    const sdk = new SdkAzure({
      clock,
      ...(o.armEndpoint ? { endpoint: o.armEndpoint } : {}),
      ...(o.armTlsCa ? { tlsCa: o.armTlsCa } : {}),
      ...(o.armCredential ? { credential: o.armCredential } : {}),
    });
    const arm = instrumentAzure(sdk, createArmMetrics(ctx.registry), clock);
    const catalog = o.catalog ?? resourceSkuCatalog({
      clock, log, prices: new PriceBook(o.prices),
      compute: (sub) => sdk.computeClient(sub),
      nodeClasses: () => ctx.cluster.listNodeClasses(),
      ...(o.catalogRefreshMs !== undefined ? { refreshMs: o.catalogRefreshMs } : {}),
    });
    const offerings = new UnavailableOfferings(clock);
    if (!metricsHooked) eventLog.subscribe(runtimeMetricsListener(ctx.azflexMetrics, ctx.karpenterMetrics, (name) => cluster?.cachedNodeClaim?.(name)?.metadata.labels));
    metricsHooked = true;
    const k = ctx.karpenterMetrics;
    const runtime: Runtime = new Runtime({
      arm,
      cluster: ctx.cluster,
      clock,
      random,
      catalog,
      offerings,
      userData,
      drain: drainWith(ctx.cluster, wall),
      statusClock: wall,
      eventLog,
      isLeader: ctx.isLeader,
      onControllerError: reconcileErrorReporter(k, log, wall),
      observer: runtimeMetricsObserver(ctx.azflexMetrics, k, log, (name) => cluster?.cachedNodeClaim?.(name)),
      controllers: [
        ...periodicControllers({
          cluster: ctx.cluster, catalog, clock: wall, cloudClock: clock, random, offerings, clusterName: o.clusterName, log, intervals: o.intervals,
          arm, createConcurrency: CREATE_CONCURRENCY,
          onQuotaReading: (target, reading) => recordQuotaHeadroom(ctx.azflexMetrics.quotaHeadroom, target, reading.usages),
          onQuotaReadFailed: (target, err) => log.warn({ ...target, err: String(err) }, 'usages read failed: planning without quota until a read succeeds'),
          ...(o.nodeResourceGroup ? { nodeResourceGroup: o.nodeResourceGroup } : {}),
          ...(o.repairPolicies ? { repairPolicies: o.repairPolicies } : {}),
          // SkuNotAvailable marks are re-checked against the newest Resource SKUs listing.
          skuRestricted: ({ sku, region, zone, subscriptionID, markedAt }) => restrictedSince(catalog, sku, { subscriptionID, location: region }, markedAt, zone),
          ...karpenterControllerMetrics(k),
        }).map((c) => (wall === clock ? c : paced(c, wall))),
        gaugeRefresher(() => runtime, ctx),
      ],
      config: { ...DEFAULT_RUNTIME_CONFIG, ...o.config, clusterName: o.clusterName, ...(o.nodeResourceGroup ? { nodeResourceGroup: o.nodeResourceGroup } : {}) },
    });
    return {
      start: () => {
        live.attach(runtime);
        return runtime.start();
      },
      stop: () => {
        live.attach(undefined);
        runtime.stop();
      },
      stalledLoops: (graceMs) => runtime.stalledLoops(graceMs),
      kick: (loop) => runtime.kick(loop),
      collectMetrics: () => refreshClusterGauges(ctx.cluster, catalog, ctx.karpenterMetrics, ctx.azflexMetrics, wall.now()),
    };
  };
}
