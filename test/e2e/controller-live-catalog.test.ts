import { afterAll, describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import type { ServedArm } from '../../src/sim/arm/https-face.js';
import { makeNodePool, makePod } from '../provisioning/fixtures.js';
import { serveArmLeader } from './serve-arm-leader.js';

/**
 * The leader's work as production assembles it against `azflex sim serve-arm`
 * (serve-arm-leader.ts): a NodePool that allows any D-series size gets the cheapest D size
 * that fits from the Resource SKUs listing, one the static list lacks.
 */
describe('azflex controller × serve-arm: the catalog comes from the Resource SKUs route', () => {
  let served: ServedArm | undefined;
  afterAll(async () => served?.close());

  it('lists SKUs from the route and launches a D-series size that is not in the static list', async () => {
    const setup = await serveArmLeader({ seed: 5, clusterName: 'catalog-e2e' });
    served = setup.served;
    const { events, cluster, leader } = setup;
    const clock = served.clock;
    const pool = makeNodePool('general', { nodeClassName: 'eastus2', requirements: [{ key: 'karpenter.azure.com/sku-family', operator: 'In', values: ['D'] }, { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] });
    cluster.putNodePool(pool);
    cluster.putPod(makePod('web-0', { requests: { cpu: '3', memory: '6Gi' } }));

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
