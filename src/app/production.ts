import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { NodeArch } from '../azure/userdata/node-agent.js';
import { StaticInstanceTypeCatalog } from '../catalog/skus.js';
import type { PriceOverrides } from '../catalog/prices.js';
import { DEFAULT_INTERVALS } from '../controllers/periodic.js';
import { KubeClient, loadKubeConfig } from '../k8s/client.js';
import { createRedactingLogger } from '../log/redact.js';
import { metricsSecurity } from '../metrics/tls.js';
import { CryptoRandom, RealClock } from '../platform/real-clock.js';
import type { ControllerProcess } from './process.js';
import { startReplica } from './replica.js';
import { withAzureRepairPolicies, type RepairPolicy } from '../disruption/repair.js';

/**
 * `azflex controller` as the chart deploys it: one replica (replica.ts) on the real clock,
 * the official Azure SDKs and the live SKU catalog, wired from its settings.
 */
export interface ControllerSettings {
  clusterName: string;
  /** The AKS cluster's node resource group (MC_…), for the kubernetes.azure.com/cluster node label; none: no such label. */
  nodeResourceGroup?: string;
  /** Node repair policies besides the Azure provider's (src/disruption/repair.ts). */
  repairPolicies?: RepairPolicy[];
  kubeconfig?: string;
  context?: string;
  logLevel: string;
  metricsPort: number;
  /** Serve /metrics over HTTPS to authenticated, authorized scrapers only (probes stay open). */
  metricsSecure: boolean;
  /** tls.crt and tls.key for the secure metrics endpoint; none: a self-signed pair made at start. */
  metricsCertDir?: string;
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
  /** aks-flex-node release tag, its tarballs' sha256 per architecture, and an optional mirror. */
  nodeAgentVersion: string;
  nodeAgentSha256: Partial<Record<NodeArch, string>>;
  nodeAgentUrl?: string;
  liveViewPort?: number;
  skuCatalog: 'live' | 'static';
  skuCatalogRefreshMs: number;
  /** VM size → USD/hour, used only to rank sizes. */
  prices: PriceOverrides;
  /** POD_NAME (this replica's identity). Default: process.env. */
  env?: NodeJS.ProcessEnv;
}

export async function runController(s: ControllerSettings): Promise<ControllerProcess> {
  const env = s.env ?? process.env;
  const log = createRedactingLogger({ level: s.logLevel, name: 'azflex' });
  const clock = new RealClock();
  const kubeConfig = loadKubeConfig({ ...(s.kubeconfig ? { file: s.kubeconfig } : {}), ...(s.context ? { context: s.context } : {}) });
  const identity = env.POD_NAME ?? hostname();
  const armTlsCa = s.armCaFile ? readFileSync(s.armCaFile) : undefined;
  const nodeAgent = { version: s.nodeAgentVersion, sha256: s.nodeAgentSha256, ...(s.nodeAgentUrl ? { baseUrl: s.nodeAgentUrl } : {}) };
  if (Object.keys(nodeAgent.sha256).length === 0) log.warn('no --node-agent-sha256: no VM can be created until the node agent is pinned (chart value nodeAgent.sha256)');
  const proc = await startReplica({
    kubeConfig,
    identity,
    clock,
    log,
    bootstrap: {
      apiServerEndpoint: s.apiServerEndpoint || (kubeConfig.getCurrentCluster()?.server ?? ''),
      caCertFile: s.clusterCaFile,
      namespace: s.leaderElectionNamespace,
      secretName: s.bootstrapTokenSecret,
    },
    nodeAgent,
    live: { title: `controller ${s.clusterName} (${identity})`, clock, ...(s.liveViewPort ? { port: s.liveViewPort } : {}) },
    process: {
      namespace: s.leaderElectionNamespace,
      leaseName: s.leaderElectionLease,
      leaderElection: s.leaderElect,
      leaseDurationMs: s.leaseDurationMs,
      renewDeadlineMs: s.renewDeadlineMs,
      retryPeriodMs: s.retryPeriodMs,
      metricsPort: s.metricsPort,
      ...(s.metricsSecure ? { metricsSecurity: await metricsSecurity(s.metricsCertDir, new KubeClient(kubeConfig, { userAgent: `azflex/${identity}` }), clock) } : {}),
    },
    leader: {
      clock,
      random: new CryptoRandom(),
      ...(s.skuCatalog === 'static' ? { catalog: new StaticInstanceTypeCatalog() } : {}),
      prices: s.prices,
      catalogRefreshMs: s.skuCatalogRefreshMs,
      clusterName: s.clusterName,
      ...(s.nodeResourceGroup ? { nodeResourceGroup: s.nodeResourceGroup } : {}),
      ...(s.repairPolicies?.length ? { repairPolicies: withAzureRepairPolicies(s.repairPolicies) } : {}),
      intervals: DEFAULT_INTERVALS,
      ...(s.armEndpoint ? { armEndpoint: s.armEndpoint } : {}),
      ...(armTlsCa ? { armTlsCa } : {}),
    },
  });
  log.info({ identity, metricsPort: proc.metricsPort }, 'azflex controller started');
  return proc;
}
