import type { ClusterPort } from '../ports/cluster.js';
import { Registry } from 'prom-client';
import { NodeClassStatusController } from '../controllers/nodeclass/status.js';
import { NodeClassTerminationController } from '../controllers/nodeclass/termination.js';
import { NodeTerminationController } from '../controllers/node/termination.js';
import { createAzflexMetrics, createKarpenterMetrics, type AzflexMetrics, type KarpenterMetrics } from '../metrics/karpenter.js';
import { startMetricsServer, type MetricsSecurity, type MetricsServer } from '../metrics/server.js';
import type { Clock } from '../ports/clock.js';
import { PeriodicLoop } from '../runtime/loop.js';
import { KubeCluster } from './cluster.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type RequestHooks } from './client.js';
import { LeaderElector } from './leader-election.js';
import { installGracefulShutdown, type GracefulShutdown, type SignalSource } from './shutdown.js';

/**
 * The Kubernetes half of `azflex controller`: informers, metrics/health, leader election,
 * the NodeClass controllers, and whatever lifecycle runtime the caller plugs in — started
 * only while this replica leads and stopped the moment it stops leading, so a deposed
 * replica issues no ARM writes. SIGTERM runs the shutdown in the safe order: stop writers,
 * release the lease (the standby takes over at once), stop informers, close the server.
 */

/** What the caller's lifecycle runtime must offer (src/runtime's Runtime fits). */
export interface LeaderRuntime {
  start(): Promise<void>;
  stop(): void | Promise<void>;
  /** Names of its periodic loops with no finished run for their interval + `graceMs` (for /healthz). */
  stalledLoops?(graceMs: number): string[];
}

export interface LeaderRuntimeContext {
  /** The informer-backed KubeCluster in production; any ClusterPort for the leader's work. */
  cluster: ClusterPort;
  /** Fencing check to call right before every ARM write. */
  isLeader: () => boolean;
  registry: Registry;
  karpenterMetrics: KarpenterMetrics;
  azflexMetrics: AzflexMetrics;
}

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
  const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
  const registry = new Registry();
  const karpenterMetrics = createKarpenterMetrics(registry);
  const azflexMetrics = createAzflexMetrics(registry);
  const client = new KubeClient(o.kubeConfig, { userAgent: `azflex/${o.identity}`, ...(o.hooks ? { hooks: o.hooks } : {}) });
  const watchTimeoutSeconds = o.watchTimeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS;
  const cluster = new KubeCluster({
    client,
    clock: o.clock,
    reportingInstance: o.identity,
    watchTimeoutSeconds,
    onError: (e) => log('warn', `kubernetes: ${errorText(e)}`),
  });
  cluster.start();

  const useElection = o.leaderElection !== false;
  const elector = useElection
    ? new LeaderElector({
        client,
        clock: o.clock,
        namespace: o.namespace,
        name: o.leaseName ?? 'azflex-controller',
        identity: o.identity,
        ...(o.leaseDurationMs !== undefined ? { leaseDurationMs: o.leaseDurationMs } : {}),
        ...(o.renewDeadlineMs !== undefined ? { renewDeadlineMs: o.renewDeadlineMs } : {}),
        ...(o.retryPeriodMs !== undefined ? { retryPeriodMs: o.retryPeriodMs } : {}),
        onError: (e) => log('warn', `leader election: ${errorText(e)}`),
      })
    : undefined;
  const isLeader = (): boolean => (elector ? elector.isLeader() : true);

  const status = new NodeClassStatusController({
    cluster,
    clock: o.clock,
    ...(o.nodeClassStatusIntervalMs !== undefined ? { intervalMs: o.nodeClassStatusIntervalMs } : {}),
    onError: (e, name) => log('warn', `nodeclass ${name}: ${errorText(e)}`),
  });
  const termination = new NodeClassTerminationController({
    cluster,
    clock: o.clock,
    ...(o.nodeClassTerminationIntervalMs !== undefined ? { intervalMs: o.nodeClassTerminationIntervalMs } : {}),
    onError: (e, name) => log('warn', `nodeclass termination ${name}: ${errorText(e)}`),
  });
  const nodeTermination = new NodeTerminationController({
    cluster,
    onError: (e, name) => log('warn', `node termination ${name}: ${errorText(e)}`),
  });

  // Everything that writes runs only between onStartedLeading and onLostLeadership.
  let loops: PeriodicLoop[] = [];
  let runtime: LeaderRuntime | undefined;
  let leading: Promise<void> = Promise.resolve();
  let shuttingDown = false;

  const lead = async (): Promise<void> => {
    await cluster.waitForSync();
    // A lease won while shutting down must not start writers after they were stopped.
    if (!isLeader() || shuttingDown) return;
    azflexMetrics.isLeader.set(1);
    const loopError = (e: unknown): void => log('error', errorText(e));
    const guarded = (fn: () => Promise<void>) => async (): Promise<void> => {
      if (isLeader()) await fn();
    };
    const loop = (name: string, intervalMs: number, run: () => Promise<void>): PeriodicLoop =>
      new PeriodicLoop({ name, clock: o.clock, intervalMs, run: guarded(run), onError: loopError, initialDelayMs: 0 }).start();
    loops = [
      loop(status.name, status.intervalMs, () => status.reconcile()),
      loop(termination.name, termination.intervalMs, () => termination.reconcile()),
      loop(nodeTermination.name, nodeTermination.intervalMs, () => nodeTermination.reconcile()),
    ];
    if (o.runtimeFactory) {
      runtime = o.runtimeFactory({ cluster, isLeader, registry, karpenterMetrics, azflexMetrics });
      await runtime.start();
    }
    log('info', `${o.identity} is leading`);
  };

  const follow = async (): Promise<void> => {
    azflexMetrics.isLeader.set(0);
    await Promise.all(loops.splice(0).map((loop) => loop.stop()));
    const r = runtime;
    runtime = undefined;
    if (r) await r.stop();
  };

  // Level-triggered loops, edge-kicked: a NodeClass or NodeClaim change reconciles at once
  // instead of waiting for the next period.
  const kickAll = (): void => {
    for (const loop of loops) loop.kick();
  };
  cluster.informers.nodeClasses.onEvent(kickAll);
  cluster.informers.nodeClaims.onEvent((type) => {
    if (type === 'delete') kickAll();
  });

  if (elector) {
    elector.onStartedLeading(() => {
      azflexMetrics.leaderTransitions.inc();
      leading = leading.then(lead).catch((e: unknown) => log('error', `starting leader work: ${errorText(e)}`));
    });
    elector.onLostLeadership((reason) => {
      azflexMetrics.leaderTransitions.inc();
      log('warn', `${o.identity} lost leadership (${reason}); fencing`);
      leading = leading.then(follow).catch((e: unknown) => log('error', `stopping leader work: ${errorText(e)}`));
    });
    elector.start();
  } else {
    leading = lead();
  }

  const informersSynced = (): boolean => Object.values(cluster.informers).every((i: { hasSynced(): boolean }) => i.hasSynced());
  const informerStaleMs = o.informerStaleMs ?? 3 * watchTimeoutSeconds * 1000;
  const stallGraceMs = o.loopStallGraceMs ?? DEFAULT_LOOP_STALL_GRACE_MS;
  // A standby runs no loops: only the leader's work can stall.
  const leaderLoopsProgressing = (): boolean =>
    !loops.some((l) => l.stalled(l.progress().intervalMs + stallGraceMs)) && (runtime?.stalledLoops?.(stallGraceMs) ?? []).length === 0;
  let server: MetricsServer;
  try {
    server = await startMetricsServer({
      registry,
      port: o.metricsPort,
      ...(o.metricsHost !== undefined ? { host: o.metricsHost } : {}),
      ...(o.metricsSecurity ? { secure: o.metricsSecurity } : {}),
      healthChecks: [
        { name: 'informers', check: () => cluster.staleInformers(informerStaleMs).length === 0 },
        { name: 'leader-loops', check: leaderLoopsProgressing },
      ],
      readyChecks: [{ name: 'informers-synced', check: informersSynced }],
    });
  } catch (e) {
    await elector?.stop({ release: true });
    await cluster.stop();
    throw e;
  }

  const shutdown: GracefulShutdown = installGracefulShutdown({
    clock: o.clock,
    ...(o.signals ? { signals: o.signals } : {}),
    ...(o.exit ? { exit: o.exit } : {}),
    ...(o.shutdownDeadlineMs !== undefined ? { deadlineMs: o.shutdownDeadlineMs } : {}),
    log: (m) => log('info', m),
    steps: [
      // 1. Fence: stop issuing ARM writes before anything else.
      {
        name: 'stop-writers',
        run: async () => {
          shuttingDown = true;
          await leading.then(follow);
        },
      },
      // 2. Hand the lease over so the standby need not wait a lease duration.
      { name: 'release-lease', run: async () => void (await elector?.stop({ release: true })) },
      { name: 'stop-informers', run: () => cluster.stop() },
      { name: 'close-metrics', run: () => server.close() },
    ],
  });

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
