import { afterAll, describe, expect, it } from 'vitest';
import { readMarks, type OfferingMark } from '../../src/provisioning/offering-marks.js';
import type { ServedArm } from '../../src/sim/arm/https-face.js';
import { makeNodePool, makePod } from '../provisioning/fixtures.js';
import { serveArmLeader } from './serve-arm-leader.js';

const SKU = 'Standard_D4as_v5';
const REFRESH_MS = 10 * 60_000;

/**
 * A SkuNotAvailable mark on a NodeClass is re-checked against Resource SKUs, through the
 * leader's work as production assembles it against `azflex sim serve-arm`
 * (serve-arm-leader.ts): the mark stays while no listing newer than it
 * exists, stays when a newer listing still restricts the SKU, and goes on probation (one
 * canary launches, then the mark is removed) once a newer listing shows the SKU
 * unrestricted, instead of being held for 23 h.
 */
describe('azflex controller × serve-arm: SkuNotAvailable marks follow the live Resource SKUs listing', () => {
  let served: ServedArm | undefined;
  afterAll(async () => served?.close());

  it('clears a mark once a listing newer than the mark shows the SKU unrestricted', async () => {
    const setup = await serveArmLeader({ seed: 7, clusterName: 'marks-e2e', catalogRefreshMs: REFRESH_MS });
    served = setup.served;
    const { events, cluster, leader } = setup;
    const arm = served.arm;
    const clock = served.clock;
    cluster.putNodePool(makeNodePool('d4as', { nodeClassName: 'eastus2', requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: [SKU] }] }));

    const listings = (): number[] => events.filter((e) => e.op === 'sku.list').map((e) => e.t);
    const mark = (): OfferingMark | undefined => readMarks(cluster.nodeClasses.get('eastus2')!).find((m) => m.sku.toLowerCase() === SKU.toLowerCase());
    const vmsOf = (): string[] => arm.currentVms().filter((v) => v.provisioningState === 'Succeeded').map((v) => v.vmSize);
    const until = async (what: string, done: () => boolean, maxMs: number): Promise<void> => {
      const end = clock.now() + maxMs;
      while (!done()) {
        if (clock.now() >= end) throw new Error(`${what}: not within ${maxMs / 1000} s of virtual time`);
        await clock.runUntil(clock.now() + 1_000);
        await new Promise((r) => setTimeout(r, 2));
      }
    };

    await leader.start();
    try {
      // The catalog lists the SKU unrestricted; then ARM starts refusing it (the listing is now stale).
      await until('first Resource SKUs listing', () => listings().length > 0, 60_000);
      arm.injectFault({ kind: 'skuUnavailable', location: 'eastus2', sku: SKU });
      cluster.putPod(makePod('web-0', { requests: { cpu: '3', memory: '6Gi' } }));
      await until('a SkuNotAvailable mark on the NodeClass', () => mark()?.reason === 'SkuNotAvailable', 120_000);
      const marked = mark()!;
      expect(marked.expiresAt - marked.markedAt).toBeGreaterThan(20 * 3_600_000);
      expect(Math.max(...listings())).toBeLessThan(marked.markedAt);

      // A listing newer than the mark that still restricts the SKU: the mark stays live.
      const before = listings().length;
      await until('a listing newer than the mark', () => listings().length > before, REFRESH_MS + 60_000);
      await clock.runUntil(clock.now() + 10_000);
      expect(mark()!.expiresAt).toBe(marked.expiresAt);

      // ARM offers the SKU again, but the newest listing predates that: the mark stays ...
      arm.injectFault({ kind: 'skuUnavailable', location: 'eastus2', sku: SKU, unavailable: false });
      await clock.runUntil(clock.now() + 60_000);
      expect(mark()?.expiresAt).toBe(marked.expiresAt);
      expect(vmsOf()).toEqual([]);
      // ... until a listing shows it unrestricted: probation at once, one canary launches, and the launch removes the mark.
      const seen = listings().length;
      await until('the next listing', () => listings().length > seen, REFRESH_MS + 60_000);
      const listedAt = clock.now();
      await until('a VM of the SKU launched and the mark removed', () => vmsOf().includes(SKU) && mark() === undefined, 10 * 60_000);
      expect(clock.now() - listedAt).toBeLessThan(5 * 60_000);
      expect(cluster.stats.nodeClaimsCreated).toBe(2);
    } finally {
      await leader.stop();
    }
  });
});
