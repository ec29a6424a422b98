import { readFile } from 'node:fs/promises';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import { controllerRuntimeFactory } from '../../src/runtime/leader.js';
import { RuntimeLiveSource } from '../../src/live/runtime-source.js';
import { createAzflexMetrics, createKarpenterMetrics } from '../../src/metrics/karpenter.js';
import { MemoryEventLog } from '../../src/runtime/event-log.js';
import { DEFAULT_RESOURCE_GROUP, DEFAULT_SUBNET_ID, DEFAULT_SUBSCRIPTION_ID, ZERO_LATENCY_MS, defaultFakeArmConfig } from '../../src/sim/arm/defaults.js';
import { serveArm, type ServedArm } from '../../src/sim/arm/https-face.js';
import type { ArmEvent } from '../../src/sim/arm/types.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { renderSimUserData } from '../../src/sim/userdata.js';
import { SeededRandom } from '../../src/sim/virtual-clock.js';
import { fakeCredential } from '../azure/helpers/canned-arm.js';
import { makeNodeClass, makeNodePool, makePod } from '../provisioning/fixtures.js';

/**
 * The leader's work exactly as `azflex controller` assembles it (controllerRuntimeFactory:
 * official SDKs, live catalog, provisioner, lifecycle runtime), against `azflex sim
 * serve-arm` over HTTPS. The cluster is the in-memory one: the point is the ARM side, the
 * API-server side is covered by test/k8s. A NodePool that allows any D-series size gets
 * the cheapest D size that fits from the Resource SKUs listing: one the static list lacks.
 */
describe('azflex controller × serve-arm: the catalog comes from the Resource SKUs route', () => {
  let served: ServedArm | undefined;
  afterAll(async () => served?.close());

  it('lists SKUs from the route and launches a D-series size that is not in the static list', async () => {
    const events: ArmEvent[] = [];
    served = await serveArm({
      host: '127.0.0.1', seed: 5, clockMode: 'manual', lroRetryAfterSeconds: 0,
      scenarioConfig: { ...defaultFakeArmConfig(), latencyMs: ZERO_LATENCY_MS },
      onEvent: (e) => events.push(e),
    });
    const clock = served.clock;
    const cluster = new FakeCluster(clock);
    const nodeClass = makeNodeClass('eastus2');
    nodeClass.spec = { ...nodeClass.spec, subscriptionID: DEFAULT_SUBSCRIPTION_ID, resourceGroup: DEFAULT_RESOURCE_GROUP, subnetID: DEFAULT_SUBNET_ID };
    cluster.nodeClasses.set(nodeClass.metadata.name, nodeClass);
    const pool = makeNodePool('general', { nodeClassName: 'eastus2', requirements: [{ key: 'karpenter.azure.com/sku-family', operator: 'In', values: ['D'] }] });
    cluster.nodePools.set(pool.metadata.name, pool);
    const pod = makePod('web-0', { requests: { cpu: '3', memory: '6Gi' } });
    cluster.pods.set(`default/${pod.metadata.name}`, pod);

    const eventLog = new MemoryEventLog(false);
    const registry = new Registry();
    const leader = controllerRuntimeFactory({
      clock,
      random: new SeededRandom(11),
      userData: (req) => renderSimUserData(req),
      eventLog,
      live: new RuntimeLiveSource('test', clock, eventLog),
      log: pino({ level: 'silent' }),
      clusterName: 'catalog-e2e',
      intervals: { provisionMs: 2_000, disruptionMs: 60_000, livenessMs: 60_000 },
      armEndpoint: served.endpoint,
      armTlsCa: await readFile(served.caCertPath),
      armCredential: fakeCredential,
      config: { resyncMs: 2_000 },
    })({ cluster, isLeader: () => true, registry, karpenterMetrics: createKarpenterMetrics(registry), azflexMetrics: createAzflexMetrics(registry) });

    await leader.start();
    try {
      for (let i = 0; i < 300 && served.arm.currentVms().length === 0; i++) {
        await clock.runUntil(clock.now() + 1_000);
        await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      await leader.stop();
    }
    const vms = served.arm.currentVms();
    expect(vms).toHaveLength(1);
    const size = vms[0]!.vmSize;
    expect(size).toMatch(/^Standard_D\d+/);
    expect(STATIC_INSTANCE_TYPES.map((t) => t.name)).not.toContain(size);
    // 3 CPUs, 6 GiB: the cheapest D size with 4 vCPUs (AMD Dasv5 lists below Intel Dsv5).
    expect(size).toBe('Standard_D4as_v5');
    expect(events.filter((e) => e.op === 'sku.list').length).toBeGreaterThanOrEqual(1);
    const claim = [...cluster.nodeClaims.values()][0]!;
    expect(claim.spec.requirements.find((r) => r.key === 'karpenter.azure.com/sku-family')?.values).toEqual(['D']);
  }, 60_000);
});
