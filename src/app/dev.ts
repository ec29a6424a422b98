import type { TokenCredential } from '@azure/core-auth';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { PeriodicIntervals } from '../controllers/periodic.js';
import { CryptoRandom, RealClock } from '../platform/real-clock.js';
import type { Clock } from '../ports/clock.js';
import type { RuntimeConfig } from '../runtime/deps.js';
import { withAzureRepairPolicies, type RepairPolicy } from '../disruption/repair.js';
import type { ControllerProcess } from './process.js';
import { startReplica } from './replica.js';
import { SIM_NODE_AGENT } from '../sim/userdata.js';
import type { SignalSource } from './shutdown.js';

export const DEV_CLUSTER_NAME = 'azflex-dev';

/** Short enough that a human watching `kubectl get nodeclaims -w` is not kept waiting. */
export const DEV_INTERVALS: PeriodicIntervals = { provisionMs: 2_000, disruptionMs: 5_000, livenessMs: 5_000 };
/** Orphans (a create cut off by a controller restart) are reaped after a minute, not five. */
export const DEV_RUNTIME_CONFIG: Partial<RuntimeConfig> = { resyncMs: 3_000, orphanGraceMs: 60_000 };

/** Signals belong to the `azflex dev` command, which stops the whole environment. */
const NO_SIGNALS: SignalSource = { on: () => undefined, off: () => undefined };

/** The fake ARM accepts any bearer token; DefaultAzureCredential would look for a real login. */
function simArmCredential(clock: Clock): TokenCredential {
  return { getToken: async () => ({ token: 'azflex-dev', expiresOnTimestamp: clock.now() + 24 * 3600_000 }) };
}

export interface DevControllerOptions {
  kubeConfig: KubeConfig;
  identity: string;
  /** Its --cluster-name: DEV_CLUSTER_NAME unless two dev clusters share the fake ARM. */
  clusterName?: string;
  log: Logger;
  /** The API server as nodes reach it, and the PEM file of its CA (for the nodes' user data). */
  apiServer: { endpoint: string; caCertFile: string };
  /** Namespace of the Lease and of the bootstrap-token Secret `bootstrapSecret`. */
  namespace: string;
  bootstrapSecret: string;
  /** The fake ARM over HTTPS: its endpoint, the CA to trust for it, and its clock. */
  arm: { endpoint: string; tlsCa: Buffer; clock: Clock };
  intervals?: PeriodicIntervals;
  runtimeConfig?: Partial<RuntimeConfig>;
  /** Node repair policies besides the Azure provider's (`--repair-policies`). */
  repairPolicies?: readonly RepairPolicy[];
}

/**
 * The controller `azflex dev` runs in-process: the production replica against the fake ARM,
 * with a short lease so a replacement takes over quickly, and no signal handling of its own.
 */
export async function startDevController(o: DevControllerOptions): Promise<ControllerProcess> {
  const clock = new RealClock();
  const log = o.log.child({ controller: o.identity });
  return startReplica({
    kubeConfig: o.kubeConfig,
    identity: o.identity,
    clock,
    log,
    bootstrap: { apiServerEndpoint: o.apiServer.endpoint, caCertFile: o.apiServer.caCertFile, namespace: o.namespace, secretName: o.bootstrapSecret },
    nodeAgent: SIM_NODE_AGENT,
    live: { title: `dev ${o.identity}`, clock: o.arm.clock },
    process: {
      namespace: o.namespace,
      leaderElection: true,
      // Short lease: a controller that died without releasing it is replaced quickly.
      leaseDurationMs: 6_000,
      renewDeadlineMs: 4_000,
      retryPeriodMs: 1_000,
      metricsPort: 0,
      metricsHost: '127.0.0.1',
      signals: NO_SIGNALS,
      exit: () => undefined,
    },
    leader: {
      // The runtime lives on the simulated cloud's clock (ARM's, moving with wall time):
      // POST /_sim/clock/advance skips ARM's 180 s NIC reservation and the runtime's wait
      // for it together. Leader election, informers and the Karpenter-side controllers
      // (which compare with API-server timestamps) stay on the real clock.
      clock: o.arm.clock,
      controllersClock: clock,
      random: new CryptoRandom(),
      clusterName: o.clusterName ?? DEV_CLUSTER_NAME,
      intervals: o.intervals ?? DEV_INTERVALS,
      armEndpoint: o.arm.endpoint,
      armTlsCa: o.arm.tlsCa,
      armCredential: simArmCredential(clock),
      config: { ...DEV_RUNTIME_CONFIG, ...o.runtimeConfig },
      ...(o.repairPolicies?.length ? { repairPolicies: withAzureRepairPolicies(o.repairPolicies) } : {}),
    },
  });
}
