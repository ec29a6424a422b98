import type { TokenCredential } from '@azure/core-auth';
import type { Logger } from 'pino';
import { instrumentAzure } from '../azure/instrumented.js';
import { UnavailableOfferings } from '../azure/offerings.js';
import { SdkAzure } from '../azure/sdk-adapter.js';
import { resourceSkuCatalog } from '../azure/resource-skus.js';
import { PriceBook } from '../catalog/prices.js';
import { restrictedSince, type InstanceTypeCatalog } from '../catalog/skus.js';
import { drainWith, periodicControllers, type PeriodicIntervals } from '../controllers/periodic.js';
import type { LeaderRuntime, LeaderRuntimeContext } from '../k8s/controller-process.js';
import type { RuntimeLiveSource } from '../live/runtime-source.js';
import { RateLimitedLog } from '../log/rate-limit.js';
import { createArmMetrics } from '../metrics/arm.js';
import { refreshClusterGauges } from '../metrics/cluster-state.js';
import { karpenterControllerMetrics, refreshActorGauges, runtimeMetricsListener, runtimeMetricsObserver } from '../metrics/runtime.js';
import type { Clock, Random } from '../ports/clock.js';
import { Runtime } from './runtime.js';
import { DEFAULT_RUNTIME_CONFIG, type PeriodicController, type RuntimeConfig } from './deps.js';
import type { MemoryEventLog } from './event-log.js';
import type { createUserDataRenderer } from '../lifecycle/nodeclaim/userdata.js';

/**
 * The leader's work: what a replica runs while it holds the Lease (the SDK-backed ARM port
 * with metrics, the live SKU catalog, the lifecycle runtime and Karpenter's periodic
 * controllers). `azflex controller` (src/k8s/controller-main.ts) and `azflex dev` both plug
 * this into the controller process, so dev runs exactly the production assembly.
 */

export interface ControllerRuntimeOptions {
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
  prices?: Record<string, number>;
  catalogRefreshMs?: number;
  userData: ReturnType<typeof createUserDataRenderer>;
  eventLog: MemoryEventLog;
  live: RuntimeLiveSource;
  log: Logger;
  clusterName: string;
  /** The AKS node resource group (MC_…): nodes carry it as kubernetes.azure.com/cluster. */
  nodeResourceGroup?: string;
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

/** Gauges derived from cluster state and the actors are recomputed this often (informer cache reads only). */
const METRICS_REFRESH_MS = 5_000;

/** The leader's work as `azflex controller` assembles it, built anew each time this replica wins the Lease. */
export function controllerRuntimeFactory(o: ControllerRuntimeOptions): (ctx: LeaderRuntimeContext) => LeaderRuntime {
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
    // A periodic controller that keeps failing logs at error level once a minute, with a count.
    const errors = new RateLimitedLog(log, wall, 60_000);
    const onControllerError = (controller: string, err: unknown): void => {
      k.reconcileErrors.inc({ controller });
      errors.write('error', controller, { controller, err: err instanceof Error ? err.message : String(err) }, 'reconcile failed');
    };
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
      onControllerError,
      observer: runtimeMetricsObserver(ctx.azflexMetrics, k, log, (name) => cluster?.cachedNodeClaim?.(name)),
      controllers: [
        ...periodicControllers({
          cluster: ctx.cluster, catalog, clock: wall, cloudClock: clock, random, offerings, clusterName: o.clusterName, log, intervals: o.intervals,
          ...(o.nodeResourceGroup ? { nodeResourceGroup: o.nodeResourceGroup } : {}),
          // SkuNotAvailable marks are re-checked against the newest Resource SKUs listing.
          skuRestricted: ({ sku, region, zone, subscriptionID, markedAt }) => restrictedSince(catalog, sku, { subscriptionID, location: region }, markedAt, zone),
          ...karpenterControllerMetrics(k),
        }).map((c) => (wall === clock ? c : paced(c, wall))),
        {
          name: 'metrics',
          intervalMs: METRICS_REFRESH_MS,
          reconcile: async (): Promise<void> => {
            refreshActorGauges(runtime, ctx.azflexMetrics);
            await refreshClusterGauges(ctx.cluster, catalog, k, ctx.azflexMetrics, wall.now());
          },
        },
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
    };
  };
}
