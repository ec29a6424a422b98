import { hostname } from 'node:os';
import type { TokenCredential } from '@azure/core-auth';
import type { Logger } from 'pino';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { instrumentAzure } from '../../azure/instrumented.js';
import { UnavailableOfferings } from '../../azure/offerings.js';
import { SdkAzure } from '../../azure/sdk-adapter.js';
import { CachedBootstrapSource } from '../../azure/userdata/bootstrap.js';
import { resourceSkuCatalog } from '../../azure/resource-skus.js';
import { PriceBook, parsePriceOverrides } from '../../catalog/prices.js';
import { StaticInstanceTypeCatalog, type InstanceTypeCatalog } from '../../catalog/skus.js';
import { DEFAULT_INTERVALS, drainWith, periodicControllers, type PeriodicIntervals } from '../../controllers/periodic.js';
import { parseDuration } from '../../disruption/duration.js';
import { KubeBootstrapSource } from '../../k8s/bootstrap.js';
import { startControllerProcess, type LeaderRuntime, type LeaderRuntimeContext } from '../../k8s/controller-process.js';
import { IN_CLUSTER_SA_DIR, KubeClient, loadKubeConfig } from '../../k8s/client.js';
import { createRedactingLogger } from '../../log/redact.js';
import { createArmMetrics } from '../../metrics/arm.js';
import { refreshClusterGauges } from '../../metrics/cluster-state.js';
import { PROVISIONER_CONTROLLER } from '../../metrics/karpenter.js';
import { refreshActorGauges, runtimeMetricsListener, runtimeMetricsObserver } from '../../metrics/runtime.js';
import { RateLimitedLog } from '../../log/rate-limit.js';
import { LABEL_NODEPOOL } from '../../provisioning/requirements.js';
import { Runtime } from '../../runtime/controller.js';
import { DEFAULT_RUNTIME_CONFIG, type PeriodicController, type RuntimeConfig } from '../../runtime/deps.js';
import { MemoryEventLog } from '../../runtime/event-log.js';
import { RuntimeLiveSource } from '../../live/runtime-source.js';
import { startLiveServer } from '../../live/server.js';
import { CryptoRandom, RealClock } from '../../platform/real-clock.js';
import type { Clock, Random } from '../../ports/clock.js';
import { createUserDataRenderer } from '../../runtime/userdata.js';
import { UsageError } from '../errors.js';
import { integer } from './simulate.js';

interface ControllerFlags {
  clusterName: string;
  kubeconfig?: string;
  context?: string;
  logLevel: string;
  metricsPort: number;
  leaderElect: boolean;
  leaderElectionNamespace: string;
  leaderElectionLease: string;
  leaseDuration: number;
  renewDeadline: number;
  retryPeriod: number;
  armEndpoint?: string;
  armCaFile?: string;
  apiServerEndpoint: string;
  clusterCaFile: string;
  bootstrapTokenSecret: string;
  liveViewPort?: number;
  skuCatalog: 'live' | 'static';
  skuCatalogRefresh: number;
  priceOverrides?: string;
}

function duration(raw: string): number {
  try {
    const ms = parseDuration(raw);
    if (ms === undefined || ms <= 0) throw new Error('not positive');
    return ms;
  } catch {
    throw new InvalidArgumentError(`must be a duration like 15s or 1m, got "${raw}"`);
  }
}

function bool(raw: string): boolean {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new InvalidArgumentError(`must be true or false, got "${raw}"`);
}

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

/**
 * The leader's work as `azflex controller` assembles it: the SDK-backed ARM port with
 * metrics, the lifecycle runtime and Karpenter's periodic controllers. Exported so
 * `azflex dev` runs exactly this assembly against its simulated ARM.
 */
export function controllerRuntimeFactory(o: ControllerRuntimeOptions): (ctx: LeaderRuntimeContext) => LeaderRuntime {
  const { clock, random, userData, eventLog, live, log } = o;
  const wall = o.controllersClock ?? clock;
  // Hooked once per process: a re-elected leader builds a new runtime on the same log.
  let metricsHooked = false;
  return (ctx) => {
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
    if (!metricsHooked) eventLog.subscribe(runtimeMetricsListener(ctx.azflexMetrics, ctx.karpenterMetrics));
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
      eventLog,
      isLeader: ctx.isLeader,
      onControllerError,
      observer: runtimeMetricsObserver(ctx.azflexMetrics, k, log),
      controllers: [
        ...periodicControllers({
          cluster: ctx.cluster, catalog, clock: wall, cloudClock: clock, random, offerings, clusterName: o.clusterName, log, intervals: o.intervals,
          onNodeClaimCreated: (claim) =>
            k.nodeClaimsCreated.inc({ reason: 'provisioned', nodepool: claim.metadata.labels[LABEL_NODEPOOL] ?? '', min_values_relaxed: 'false' }),
          onSchedulingDuration: (seconds) => k.schedulingDuration.observe({ controller: PROVISIONER_CONTROLLER }, seconds),
          // Upstream's labels: lower-case reason, the pool's policy, graceful termination (azflex drains).
          onNodeClaimDisrupted: (d, consolidationPolicy) =>
            k.nodeClaimsDisrupted.inc({ reason: d.kind.toLowerCase(), nodepool: d.nodePool, capacity_type: 'on-demand', consolidation_policy: consolidationPolicy, termination_mode: 'graceful' }),
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
      config: { ...DEFAULT_RUNTIME_CONFIG, ...o.config, clusterName: o.clusterName },
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
    };
  };
}

/**
 * `azflex controller`: the in-cluster process. Informers on the API server, Lease-based
 * leader election (only the leader runs the runtime and writes to ARM), the official Azure
 * SDKs with DefaultAzureCredential (workload identity), metrics and health on one port.
 */
export function register(program: Command): void {
  program
    .command('controller')
    .description('run the controller against a real cluster and real Azure (what the Helm chart deploys)')
    .requiredOption('--cluster-name <name>', 'stamped on every Azure resource azflex creates; must be unique per cluster')
    .option('--kubeconfig <file>', 'kubeconfig (default: $KUBECONFIG, ~/.kube/config, then in-cluster)')
    .option('--context <name>', 'kubeconfig context')
    .addOption(new Option('--log-level <level>').choices(['debug', 'info', 'warn', 'error']).default('info'))
    .option('--metrics-port <port>', '/metrics, /healthz, /readyz', integer('--metrics-port', 1), 8080)
    .option('--leader-elect <bool>', 'run active/standby on a Lease', bool, true)
    .option('--leader-election-namespace <ns>', 'namespace of the Lease', process.env.POD_NAMESPACE ?? 'azflex')
    .option('--leader-election-lease <name>', 'name of the Lease', 'azflex-controller')
    .option('--lease-duration <d>', 'Lease duration', duration, 15_000)
    .option('--renew-deadline <d>', 'give up leadership if not renewed within', duration, 10_000)
    .option('--retry-period <d>', 'Lease poll period', duration, 2_000)
    .option('--arm-endpoint <url>', 'ARM endpoint (default https://management.azure.com; the simulator’s for azflex sim serve-arm)')
    .option('--arm-ca-file <file>', 'extra CA to trust for --arm-endpoint (the simulator’s self-signed CA)')
    .option('--api-server-endpoint <url>', 'API server URL as nodes in other regions reach it (the AKS FQDN)', process.env.AZFLEX_API_SERVER_ENDPOINT ?? '')
    .option('--cluster-ca-file <file>', 'cluster CA for node bootstrap', `${IN_CLUSTER_SA_DIR}/ca.crt`)
    .option('--bootstrap-token-secret <name>', 'Secret (in the leader-election namespace) holding a kubeadm bootstrap token', 'azflex-bootstrap-token')
    .addOption(new Option('--sku-catalog <source>', 'instance types: live from the Resource SKUs API per NodeClass subscription and location, or the built-in static list (offline)').choices(['live', 'static']).default('live'))
    .option('--sku-catalog-refresh <d>', 'how often the Resource SKUs listing of each subscription and location is refreshed', duration, 60 * 60_000)
    .option('--price-overrides <file>', 'YAML/JSON map of VM size to USD/hour, used only to rank sizes (the chart mounts its `prices` value here)')
    .option('--live-view-port <port>', 'serve the read-only live view of the actors on 127.0.0.1:<port> (kubectl port-forward to see it)', integer('--live-view-port', 1))
    .action(async (flags: ControllerFlags) => {
      const prices = flags.priceOverrides ? await readPriceOverrides(flags.priceOverrides) : {};
      const log = createRedactingLogger({ level: flags.logLevel, name: 'azflex' });
      const clock = new RealClock();
      const random = new CryptoRandom();
      const kubeConfig = loadKubeConfig({ ...(flags.kubeconfig ? { file: flags.kubeconfig } : {}), ...(flags.context ? { context: flags.context } : {}) });
      const identity = process.env.POD_NAME ?? hostname();
      const bootstrap = new CachedBootstrapSource(
        new KubeBootstrapSource(new KubeClient(kubeConfig, { userAgent: `azflex/${identity}` }), {
          apiServerEndpoint: flags.apiServerEndpoint || (kubeConfig.getCurrentCluster()?.server ?? ''),
          caCertFile: flags.clusterCaFile,
          namespace: flags.leaderElectionNamespace,
          secretName: flags.bootstrapTokenSecret,
        }),
      );
      const catalog = flags.skuCatalog === 'static' ? new StaticInstanceTypeCatalog() : undefined;
      const userData = createUserDataRenderer(bootstrap);
      // One event log for the process: metrics, debug logs and the live view read it.
      const eventLog = new MemoryEventLog(false);
      eventLog.subscribe((e) => log.debug({ actor: e.actor, kind: e.kind, from: e.from, to: e.to, event: e.event, detail: e.detail }, 'event'));
      const live = new RuntimeLiveSource(`controller ${flags.clusterName} (${identity})`, clock, eventLog);
      if (flags.liveViewPort) {
        const server = await startLiveServer({ source: live, port: flags.liveViewPort });
        log.info({ url: server.url }, 'live view');
      }
      const tlsCa = flags.armCaFile ? (await import('node:fs')).readFileSync(flags.armCaFile) : undefined;
      const proc = await startControllerProcess({
        kubeConfig,
        clock,
        identity,
        namespace: flags.leaderElectionNamespace,
        leaseName: flags.leaderElectionLease,
        leaderElection: flags.leaderElect,
        leaseDurationMs: flags.leaseDuration,
        renewDeadlineMs: flags.renewDeadline,
        retryPeriodMs: flags.retryPeriod,
        metricsPort: flags.metricsPort,
        log: (level, msg) => log[level](msg),
        runtimeFactory: controllerRuntimeFactory({
          clock,
          random,
          ...(catalog ? { catalog } : {}),
          prices,
          catalogRefreshMs: flags.skuCatalogRefresh,
          userData,
          eventLog,
          live,
          log,
          clusterName: flags.clusterName,
          intervals: DEFAULT_INTERVALS,
          ...(flags.armEndpoint ? { armEndpoint: flags.armEndpoint } : {}),
          ...(tlsCa ? { armTlsCa: tlsCa } : {}),
        }),
      });
      log.info({ identity, metricsPort: proc.metricsPort }, 'azflex controller started');
      process.exitCode = await proc.done;
    });
}

async function readPriceOverrides(file: string): Promise<Record<string, number>> {
  const { readFile } = await import('node:fs/promises');
  const { parse } = await import('yaml');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--price-overrides: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  try {
    return parsePriceOverrides(parse(text), file);
  } catch (err) {
    throw new UsageError(`--price-overrides: ${err instanceof Error ? err.message : String(err)}`);
  }
}
