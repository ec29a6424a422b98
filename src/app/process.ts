import { Registry } from 'prom-client';
import { NodeClassStatusController } from '../controllers/nodeclass/status.js';
import { NodeClassTerminationController } from '../controllers/nodeclass/termination.js';
import { NodeTerminationController } from '../controllers/node/termination.js';
import type { PeriodicController } from '../controllers/periodic.js';
import { createAzflexMetrics, createKarpenterMetrics, type AzflexMetrics, type KarpenterMetrics } from '../metrics/karpenter.js';
import { releaseObjectGauges } from '../metrics/cluster-state.js';
import { registerProcessMemoryMetrics } from '../metrics/process-memory.js';
import { startMetricsServer, type MetricsSecurity, type MetricsServer } from '../metrics/server.js';
import type { Clock } from '../ports/clock.js';
import { errorMessage } from '../utils/error-message.js';
import { KubeCluster } from '../k8s/cluster.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type RequestHooks } from '../k8s/client.js';
import { LeaderElector } from '../k8s/leader-election.js';
import { ProvisioningBatcher } from '../provisioning/batcher.js';
import { isProvisionable } from '../provisioning/pods-view.js';
import { Leadership, type LeaderRuntime, type LeaderRuntimeContext } from './leadership.js';
import { installGracefulShutdown, type GracefulShutdown, type SignalSource } from './shutdown.js';

/**
 * The Kubernetes half of `azflex controller`: informers, metrics/health, leader election,
 * the NodeClass controllers, and whatever lifecycle runtime the caller plugs in — started
 * only while this replica leads and stopped the moment it stops leading, so a deposed
 * replica issues no ARM writes. SIGTERM runs the shutdown in the safe order: stop writers,
 * release the lease (the standby takes over at once), stop informers, close the server.
 */

export interface ControllerProcessOptions {
  kubeConfig: KubeConfig;
  /** Request hooks (RBAC audit, fault injection) on every API call, through client-node's middleware. */
  hooks?: RequestHooks[];
  clock: Clock;
  /** This replica's identity (the pod name). */
  identity: string;
  /** Namespace of the leader-election Lease (the release namespace). */
  namespace: string;
  leaseName?: string;
  leaderElection?: boolean;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  metricsPort: number;
  metricsHost?: string;
  /** HTTPS, and TokenReview + SubjectAccessReview for /metrics (controller-runtime's secure serving). */
  metricsSecurity?: MetricsSecurity;
  nodeClassStatusIntervalMs?: number;
  nodeClassTerminationIntervalMs?: number;
  /**
   * /healthz fails when a leader loop has finished no run for its interval plus this
   * (default 5 min: a reconcile waiting out ARM throttling is slow, not stuck).
   */
  loopStallGraceMs?: number;
  /**
   * Server-side watch duration. Each watch ends and reopens within it, which is what tells
   * a quiet informer from a dead one (default 300 s, client-go's reflector minimum).
   */
  watchTimeoutSeconds?: number;
  /** /healthz fails when an informer has not heard from the API server for this long (default 3 watch durations). */
  informerStaleMs?: number;
  runtimeFactory?: (ctx: LeaderRuntimeContext) => LeaderRuntime;
  log?: (level: 'info' | 'warn' | 'error', msg: string) => void;
  /** Defaults to process signals and process.exit. */
  signals?: SignalSource;
  exit?: (code: number) => void;
  shutdownDeadlineMs?: number;
}

export interface ControllerProcess {
  cluster: KubeCluster;
  elector: LeaderElector | undefined;
  registry: Registry;
  metricsPort: number;
  isLeader(): boolean;
  /** Same path as SIGTERM. */
  shutdown(reason: string): Promise<number>;
  readonly done: Promise<number>;
}

const DEFAULT_WATCH_TIMEOUT_SECONDS = 300;
const DEFAULT_LOOP_STALL_GRACE_MS = 5 * 60_000;

export async function startControllerProcess(o: ControllerProcessOptions): Promise<ControllerProcess> {
  const log = o.log ?? (() => undefined);
  const registry = new Registry();
  const karpenterMetrics = createKarpenterMetrics(registry);
  const azflexMetrics = createAzflexMetrics(registry);
  registerProcessMemoryMetrics(registry);
  const client = new KubeClient(o.kubeConfig, { userAgent: `azflex/${o.identity}`, ...(o.hooks ? { hooks: o.hooks } : {}) });
  const watchTimeoutSeconds = o.watchTimeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS;
  const cluster = new KubeCluster({
    client,
    clock: o.clock,
    reportingInstance: o.identity,
    watchTimeoutSeconds,
    onError: (e) => log('warn', `kubernetes: ${errorMessage(e)}`),
  });
  cluster.start();

  const elector = o.leaderElection !== false ? leaderElector(o, client, log) : undefined;
  const isLeader = (): boolean => (elector ? elector.isLeader() : true);
  const leadership = new Leadership({
    cluster,
    clock: o.clock,
    identity: o.identity,
    isLeader,
    controllers: clusterControllers(o, cluster, log),
    ...(o.runtimeFactory ? { runtimeFactory: o.runtimeFactory } : {}),
    context: { registry, karpenterMetrics, azflexMetrics },
    azflexMetrics,
    log,
  });

  const batcher = kickOnClusterChanges(cluster, leadership, o.clock);

  if (elector) followElection(elector, leadership, azflexMetrics, (reason) => log('warn', `${o.identity} lost leadership (${reason}); fencing`));
  else leadership.leadAlone();

  let server: MetricsServer;
  try {
    server = await startHealthServer(o, { registry, karpenterMetrics }, cluster, leadership, watchTimeoutSeconds);
  } catch (e) {
    await elector?.stop({ release: true });
    await cluster.stop();
    throw e;
  }

  const shutdown = installShutdown(o, log, { leadership, elector, batcher, cluster, server });

  return {
    cluster,
    elector,
    registry,
    metricsPort: server.port,
    isLeader,
    shutdown: (reason) => shutdown.trigger(reason),
    done: shutdown.done,
  };
}

type ProcessLog = (level: 'info' | 'warn' | 'error', msg: string) => void;

/**
 * Level-triggered loops, edge-kicked: a NodeClass or NodeClaim change reconciles at once
 * instead of waiting for the next period. Returns the batcher pending pods go through.
 */
function kickOnClusterChanges(cluster: KubeCluster, leadership: Leadership, clock: Clock): ProvisioningBatcher {
  cluster.informers.nodeClasses.onEvent(() => leadership.kick());
  cluster.informers.nodeClaims.onEvent((type) => {
    if (type === 'delete') leadership.kick();
  });
  // Pods turning pending are planned in batches (Karpenter's window), not at the next period.
  const batcher = new ProvisioningBatcher({ clock, fire: () => leadership.kickRuntime('provisioner') });
  cluster.informers.pods.onEvent((type, pod) => {
    if (type !== 'delete' && isProvisionable(pod)) batcher.trigger();
  });
  return batcher;
}

/** What SIGTERM (or shutdown()) stops, in order. */
interface ShutdownParts {
  leadership: Leadership;
  elector: LeaderElector | undefined;
  batcher: ProvisioningBatcher;
  cluster: KubeCluster;
  server: MetricsServer;
}

function installShutdown(o: ControllerProcessOptions, log: ProcessLog, parts: ShutdownParts): GracefulShutdown {
  const { leadership, elector, batcher, cluster, server } = parts;
  return installGracefulShutdown({
    clock: o.clock,
    ...(o.signals ? { signals: o.signals } : {}),
    ...(o.exit ? { exit: o.exit } : {}),
    ...(o.shutdownDeadlineMs !== undefined ? { deadlineMs: o.shutdownDeadlineMs } : {}),
    log: (m) => log('info', m),
    steps: [
      // 1. Fence: stop issuing ARM writes before anything else.
      { name: 'stop-writers', run: () => leadership.stopForGood() },
      // 2. Hand the lease over so the standby need not wait a lease duration.
      { name: 'release-lease', run: async () => void (await elector?.stop({ release: true })) },
      { name: 'stop-informers', run: async () => {
        batcher.stop();
        await cluster.stop();
      } },
      { name: 'close-metrics', run: () => server.close() },
    ],
  });
}

/** Starts and stops the leader's work as the Lease is won and lost. */
function followElection(elector: LeaderElector, leadership: Leadership, metrics: AzflexMetrics, onLost: (reason: string) => void): void {
  elector.onStartedLeading(() => {
    metrics.leaderTransitions.inc();
    leadership.won();
  });
  elector.onLostLeadership((reason) => {
    metrics.leaderTransitions.inc();
    onLost(reason);
    leadership.lost();
  });
  elector.start();
}

function leaderElector(o: ControllerProcessOptions, client: KubeClient, log: ProcessLog): LeaderElector {
  return new LeaderElector({
    client,
    clock: o.clock,
    namespace: o.namespace,
    name: o.leaseName ?? 'azflex-controller',
    identity: o.identity,
    ...(o.leaseDurationMs !== undefined ? { leaseDurationMs: o.leaseDurationMs } : {}),
    ...(o.renewDeadlineMs !== undefined ? { renewDeadlineMs: o.renewDeadlineMs } : {}),
    ...(o.retryPeriodMs !== undefined ? { retryPeriodMs: o.retryPeriodMs } : {}),
    onError: (e) => log('warn', `leader election: ${errorMessage(e)}`),
  });
}

/** The controllers the process runs beside the leader's runtime: NodeClass status and termination, Node termination. */
function clusterControllers(o: ControllerProcessOptions, cluster: KubeCluster, log: ProcessLog): PeriodicController[] {
  return [
    new NodeClassStatusController({
      cluster,
      clock: o.clock,
      ...(o.nodeClassStatusIntervalMs !== undefined ? { intervalMs: o.nodeClassStatusIntervalMs } : {}),
      onError: (e, name) => log('warn', `nodeclass ${name}: ${errorMessage(e)}`),
    }),
    new NodeClassTerminationController({
      cluster,
      clock: o.clock,
      ...(o.nodeClassTerminationIntervalMs !== undefined ? { intervalMs: o.nodeClassTerminationIntervalMs } : {}),
      onError: (e, name) => log('warn', `nodeclass termination ${name}: ${errorMessage(e)}`),
    }),
    new NodeTerminationController({
      cluster,
      onError: (e, name) => log('warn', `node termination ${name}: ${errorMessage(e)}`),
    }),
  ];
}

/** /metrics, and /healthz failing on a stale informer or a stalled leader loop; /readyz once the informers synced. */
function startHealthServer(o: ControllerProcessOptions, metrics: { registry: Registry; karpenterMetrics: KarpenterMetrics }, cluster: KubeCluster, leadership: Leadership, watchTimeoutSeconds: number): Promise<MetricsServer> {
  const informersSynced = (): boolean => Object.values(cluster.informers).every((i: { hasSynced(): boolean }) => i.hasSynced());
  const informerStaleMs = o.informerStaleMs ?? 3 * watchTimeoutSeconds * 1000;
  const stallGraceMs = o.loopStallGraceMs ?? DEFAULT_LOOP_STALL_GRACE_MS;
  return startMetricsServer({
    registry: metrics.registry,
    port: o.metricsPort,
    ...(o.metricsHost !== undefined ? { host: o.metricsHost } : {}),
    ...(o.metricsSecurity ? { secure: o.metricsSecurity } : {}),
    healthChecks: [
      { name: 'informers', check: () => cluster.staleInformers(informerStaleMs).length === 0 },
      { name: 'leader-loops', check: () => !leadership.stalled(stallGraceMs) },
    ],
    readyChecks: [{ name: 'informers-synced', check: informersSynced }],
    scrape: { before: () => leadership.collectMetrics(), after: () => releaseObjectGauges(metrics.karpenterMetrics) },
  });
}
