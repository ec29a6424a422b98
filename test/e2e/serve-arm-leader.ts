import { readFile } from 'node:fs/promises';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { LeaderRuntime } from '../../src/app/leadership.js';
import { RuntimeLiveSource } from '../../src/live/runtime-source.js';
import { createAzflexMetrics, createKarpenterMetrics } from '../../src/metrics/karpenter.js';
import { MemoryEventLog } from '../../src/runtime/event-log.js';
import { leaderRuntimeFactory } from '../../src/app/leader-runtime.js';
import { DEFAULT_RESOURCE_GROUP, DEFAULT_SUBNET_ID, DEFAULT_SUBSCRIPTION_ID, ZERO_LATENCY_MS, defaultFakeArmConfig } from '../../src/sim/arm/defaults.js';
import { serveArm, type ServedArm } from '../../src/sim/arm/https-face.js';
import type { ArmEvent } from '../../src/sim/arm/types.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { renderSimUserData } from '../../src/sim/userdata.js';
import { SeededRandom } from '../../src/sim/virtual-clock.js';
import { fakeCredential } from '../azure/helpers/canned-arm.js';
import { makeNodeClass } from '../provisioning/fixtures.js';

export interface ServeArmLeader {
  served: ServedArm;
  /** Every ARM call and fault the served ARM reports. */
  events: ArmEvent[];
  /** The in-memory API server, with NodeClass "eastus2" pointing at the served ARM's subnet. */
  cluster: FakeCluster;
  leader: LeaderRuntime;
}

/**
 * The leader's work exactly as `azflex controller` assembles it (leaderRuntimeFactory:
 * official SDKs, live catalog, provisioner, lifecycle runtime) against `azflex sim serve-arm`
 * over HTTPS on a manual clock. The cluster is the in-memory one: these tests are about the
 * ARM side; the API-server side is covered by test/k8s. Not started.
 */
export async function serveArmLeader(o: { seed: number; clusterName: string; catalogRefreshMs?: number }): Promise<ServeArmLeader> {
  const events: ArmEvent[] = [];
  const served = await serveArm({
    host: '127.0.0.1', seed: o.seed, clockMode: 'manual', lroRetryAfterSeconds: 0,
    scenarioConfig: { ...defaultFakeArmConfig(), latencyMs: ZERO_LATENCY_MS },
    onEvent: (e) => events.push(e),
  });
  const clock = served.clock;
  const cluster = new FakeCluster(clock);
  const nodeClass = makeNodeClass('eastus2');
  cluster.putNodeClass({ ...nodeClass, spec: { ...nodeClass.spec, subscriptionID: DEFAULT_SUBSCRIPTION_ID, resourceGroup: DEFAULT_RESOURCE_GROUP, subnetID: DEFAULT_SUBNET_ID } });
  const eventLog = new MemoryEventLog(false);
  const registry = new Registry();
  const leader = leaderRuntimeFactory({
    clock,
    random: new SeededRandom(o.seed),
    userData: (req) => renderSimUserData(req),
    eventLog,
    live: new RuntimeLiveSource('test', clock, eventLog),
    log: pino({ level: 'silent' }),
    clusterName: o.clusterName,
    intervals: { provisionMs: 2_000, disruptionMs: 60_000, livenessMs: 60_000 },
    ...(o.catalogRefreshMs !== undefined ? { catalogRefreshMs: o.catalogRefreshMs } : {}),
    armEndpoint: served.endpoint,
    armTlsCa: await readFile(served.caCertPath),
    armCredential: fakeCredential,
    config: { resyncMs: 2_000 },
  })({ cluster, isLeader: () => true, registry, karpenterMetrics: createKarpenterMetrics(registry), azflexMetrics: createAzflexMetrics(registry) });
  return { served, events, cluster, leader };
}
