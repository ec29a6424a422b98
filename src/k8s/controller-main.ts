import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { CachedBootstrapSource } from '../azure/userdata/bootstrap.js';
import { StaticInstanceTypeCatalog } from '../catalog/skus.js';
import { DEFAULT_INTERVALS } from '../controllers/periodic.js';
import { RuntimeLiveSource } from '../live/runtime-source.js';
import { startLiveServer } from '../live/server.js';
import { createRedactingLogger } from '../log/redact.js';
import { CryptoRandom, RealClock } from '../platform/real-clock.js';
import { MemoryEventLog } from '../runtime/event-log.js';
import { controllerRuntimeFactory } from '../runtime/leader.js';
import { createUserDataRenderer } from '../lifecycle/nodeclaim/userdata.js';
import { KubeBootstrapSource } from './bootstrap.js';
import { KubeClient, loadKubeConfig } from './client.js';
import { startControllerProcess, type ControllerProcess } from './controller-process.js';

/**
 * `azflex controller` as the chart deploys it: everything production wires from its
 * settings. Informers and Lease election (controller-process.ts), node bootstrap from the
 * cluster's bootstrap-token Secret, the leader's work (src/runtime/leader.ts) on the
 * official Azure SDKs, the live SKU catalog, metrics/health and the optional live view.
 */
export interface ControllerSettings {
  clusterName: string;
  /** The AKS cluster's node resource group (MC_…), for the kubernetes.azure.com/cluster node label; none: no such label. */
  nodeResourceGroup?: string;
  kubeconfig?: string;
  context?: string;
  logLevel: string;
  metricsPort: number;
  leaderElect: boolean;
  leaderElectionNamespace: string;
  leaderElectionLease: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  armEndpoint?: string;
  armCaFile?: string;
  /** The API server as nodes in other regions reach it; default: the kubeconfig's server. */
  apiServerEndpoint?: string;
  clusterCaFile: string;
  bootstrapTokenSecret: string;
  liveViewPort?: number;
  skuCatalog: 'live' | 'static';
  skuCatalogRefreshMs: number;
  /** VM size → USD/hour, used only to rank sizes. */
  prices: Record<string, number>;
  /** POD_NAME (this replica's identity). Default: process.env. */
  env?: NodeJS.ProcessEnv;
}

export async function runController(s: ControllerSettings): Promise<ControllerProcess> {
  const env = s.env ?? process.env;
  const log = createRedactingLogger({ level: s.logLevel, name: 'azflex' });
  const clock = new RealClock();
  const random = new CryptoRandom();
  const kubeConfig = loadKubeConfig({ ...(s.kubeconfig ? { file: s.kubeconfig } : {}), ...(s.context ? { context: s.context } : {}) });
  const identity = env.POD_NAME ?? hostname();
  const bootstrap = new CachedBootstrapSource(
    new KubeBootstrapSource(new KubeClient(kubeConfig, { userAgent: `azflex/${identity}` }), {
      apiServerEndpoint: s.apiServerEndpoint || (kubeConfig.getCurrentCluster()?.server ?? ''),
      caCertFile: s.clusterCaFile,
      namespace: s.leaderElectionNamespace,
      secretName: s.bootstrapTokenSecret,
    }),
  );
  // One event log for the process: metrics, debug logs and the live view read it.
  const eventLog = new MemoryEventLog(false);
  eventLog.subscribe((e) => log.debug({ actor: e.actor, kind: e.kind, from: e.from, to: e.to, event: e.event, detail: e.detail }, 'event'));
  const live = new RuntimeLiveSource(`controller ${s.clusterName} (${identity})`, clock, eventLog);
  if (s.liveViewPort) {
    const server = await startLiveServer({ source: live, port: s.liveViewPort });
    log.info({ url: server.url }, 'live view');
  }
  const armTlsCa = s.armCaFile ? readFileSync(s.armCaFile) : undefined;
  const proc = await startControllerProcess({
    kubeConfig,
    clock,
    identity,
    namespace: s.leaderElectionNamespace,
    leaseName: s.leaderElectionLease,
    leaderElection: s.leaderElect,
    leaseDurationMs: s.leaseDurationMs,
    renewDeadlineMs: s.renewDeadlineMs,
    retryPeriodMs: s.retryPeriodMs,
    metricsPort: s.metricsPort,
    log: (level, msg) => log[level](msg),
    runtimeFactory: controllerRuntimeFactory({
      clock,
      random,
      ...(s.skuCatalog === 'static' ? { catalog: new StaticInstanceTypeCatalog() } : {}),
      prices: s.prices,
      catalogRefreshMs: s.skuCatalogRefreshMs,
      userData: createUserDataRenderer(bootstrap),
      eventLog,
      live,
      log,
      clusterName: s.clusterName,
      ...(s.nodeResourceGroup ? { nodeResourceGroup: s.nodeResourceGroup } : {}),
      intervals: DEFAULT_INTERVALS,
      ...(s.armEndpoint ? { armEndpoint: s.armEndpoint } : {}),
      ...(armTlsCa ? { armTlsCa } : {}),
    }),
  });
  log.info({ identity, metricsPort: proc.metricsPort }, 'azflex controller started');
  return proc;
}
