import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { CachedBootstrapSource, DEFAULT_BOOTSTRAP_REFRESH_MS } from '../azure/userdata/bootstrap.js';
import type { NodeAgentPin } from '../azure/userdata/index.js';
import { KubeBootstrapSource, type KubeBootstrapOptions } from '../k8s/bootstrap.js';
import { KubeClient } from '../k8s/client.js';
import { RuntimeLiveSource } from '../live/runtime-source.js';
import { startLiveServer } from '../live/server.js';
import { secrets } from '../log/redact.js';
import type { Clock } from '../ports/clock.js';
import { MemoryEventLog } from '../runtime/event-log.js';
import { createUserDataRenderer } from '../lifecycle/nodeclaim/userdata.js';
import { leaderRuntimeFactory, type LeaderRuntimeOptions } from './leader-runtime.js';
import { startControllerProcess, type ControllerProcess, type ControllerProcessOptions } from './process.js';

/**
 * One azflex replica, the same for `azflex controller` (production.ts) and the controller
 * `azflex dev` runs in-process (dev.ts): node bootstrap from the cluster's bootstrap-token
 * Secret, one event log that debug logs, metrics and the live view read, and the controller
 * process with the leader's work plugged in.
 */
export interface ReplicaOptions {
  kubeConfig: KubeConfig;
  /** This replica's identity (the pod name). */
  identity: string;
  /** The process's clock: Lease, informers, NodeClass loops. */
  clock: Clock;
  log: Logger;
  bootstrap: KubeBootstrapOptions;
  /** The node agent every VM's cloud-init downloads, pinned by version and sha256. */
  nodeAgent: NodeAgentPin;
  /** The live view's title and clock (the runtime's: in `azflex dev`, the simulated cloud's). */
  live: { title: string; clock: Clock; port?: number };
  process: Omit<ControllerProcessOptions, 'kubeConfig' | 'clock' | 'identity' | 'log' | 'runtimeFactory'>;
  leader: Omit<LeaderRuntimeOptions, 'userData' | 'eventLog' | 'live' | 'log'>;
}

export async function startReplica(o: ReplicaOptions): Promise<ControllerProcess> {
  const { log, identity } = o;
  // Re-read on the process clock, so a rotated token reaches the next VM without a restart.
  const bootstrap = new CachedBootstrapSource(new KubeBootstrapSource(new KubeClient(o.kubeConfig, { userAgent: `azflex/${identity}` }), o.bootstrap), secrets, {
    clock: o.clock,
    maxAgeMs: DEFAULT_BOOTSTRAP_REFRESH_MS,
  });
  // One event log for the process: metrics, debug logs and the live view read it.
  const eventLog = new MemoryEventLog(false);
  eventLog.subscribe((e) => log.debug({ actor: e.actor, kind: e.kind, from: e.from, to: e.to, event: e.event, detail: e.detail }, 'event'));
  const live = new RuntimeLiveSource(o.live.title, o.live.clock, eventLog);
  if (o.live.port) {
    const server = await startLiveServer({ source: live, port: o.live.port, clusterName: o.leader.clusterName });
    log.info({ url: server.url }, 'live view');
  }
  return startControllerProcess({
    ...o.process,
    kubeConfig: o.kubeConfig,
    clock: o.clock,
    identity,
    log: (level, msg) => log[level](msg),
    runtimeFactory: leaderRuntimeFactory({ ...o.leader, userData: createUserDataRenderer(bootstrap, o.nodeAgent), eventLog, live, log }),
  });
}
