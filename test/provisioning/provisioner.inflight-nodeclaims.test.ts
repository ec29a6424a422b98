import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { StaticInstanceTypeCatalog } from '../../src/catalog/skus.js';
import { Provisioner } from '../../src/provisioning/provisioner.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { SeededRandom, VirtualClock } from '../../src/sim/virtual-clock.js';
import { T0, makeNodeClass, makeNodePool, makePod } from './fixtures.js';

/**
 * A burst of pods against an informer that lags the API server by longer than the
 * provisioning interval: each reconcile still sees the pods pending and (without in-flight
 * accounting) none of the NodeClaims it just created. Four teams, each with four pods of
 * two H200 GPUs: one Standard_ND96isr_H200_v5 (8 GPUs) per team is exactly enough.
 */
const TEAMS = ['a', 'b', 'c', 'd'];
const GPU_TAINT = { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' as const };

function world(informerLagMs: number) {
  const clock = new VirtualClock(T0);
  const cluster = new FakeCluster(clock, { informerLagMs });
  cluster.putNodeClass(makeNodeClass('eastus2'));
  for (const team of TEAMS) {
    cluster.putNodePool(makeNodePool(`team-${team}`, {
      labels: { team },
      taints: [GPU_TAINT],
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_ND96isr_H200_v5'] }],
    }));
    for (let i = 0; i < 4; i++) {
      cluster.putPod(makePod(`train-${team}-${i}`, {
        requests: { cpu: '8', memory: '64Gi', 'nvidia.com/gpu': '2' },
        nodeSelector: { team },
        tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
      }));
    }
  }
  // The controller started after this world existed: its informers' first LIST shows it all.
  cluster.relistInformers();
  const provisioner = (seed: number) => new Provisioner({
    cluster, catalog: new StaticInstanceTypeCatalog(), clock, random: new SeededRandom(seed),
    isOfferingUnavailable: () => false, clusterName: 'lag', log: pino({ level: 'silent' }),
  });
  const perTeam = (): Record<string, number> => {
    const out: Record<string, number> = Object.fromEntries(TEAMS.map((t) => [t, 0]));
    for (const c of cluster.nodeClaims.values()) out[c.metadata.labels['team']!]!++;
    return out;
  };
  return { clock, cluster, provisioner, perTeam };
}

describe('no duplicate NodeClaims behind a lagging informer', () => {
  it('a burst with a 30 s informer lag and a 10 s provisioning interval: exactly one NodeClaim per pod group', async () => {
    const { clock, provisioner, perTeam } = world(30_000);
    const p = provisioner(1);
    for (let t = 0; t <= 60_000; t += 10_000) {
      await clock.runUntil(T0 + t);
      await p.reconcile();
    }
    expect(perTeam()).toEqual({ a: 1, b: 1, c: 1, d: 1 });
  });

  it('overlapping reconciles (a second one starts before the first returns) create nothing twice', async () => {
    const { provisioner, perTeam } = world(30_000);
    const p = provisioner(2);
    await Promise.all([p.reconcile(), p.reconcile(), p.reconcile()]);
    expect(perTeam()).toEqual({ a: 1, b: 1, c: 1, d: 1 });
  });

  it('restart-safe: a new process trusts its informer\'s first LIST, which shows what the old one created', async () => {
    const { clock, cluster, provisioner, perTeam } = world(30_000);
    await provisioner(3).reconcile();
    await clock.runUntil(T0 + 5_000);
    // The process dies; its memory of in-flight NodeClaims dies with it.
    cluster.relistInformers();
    const restarted = provisioner(4);
    for (let t = 5_000; t <= 60_000; t += 10_000) {
      await clock.runUntil(T0 + t);
      await restarted.reconcile();
    }
    expect(perTeam()).toEqual({ a: 1, b: 1, c: 1, d: 1 });
  });

  it('a NodeClaim deleted before the cache saw it stops counting once the cache is past its creation, not after the TTL', async () => {
    const { clock, cluster, provisioner, perTeam } = world(30_000);
    const p = provisioner(5);
    await p.reconcile();
    const first = [...cluster.nodeClaims.keys()];
    expect(first).toHaveLength(4);
    // Launches that fail fast: deleted a second later, long before the informer shows them.
    await clock.runUntil(T0 + 1_000);
    for (const name of first) await cluster.deleteNodeClaim(name).then(() => cluster.nodeClaims.delete(name));
    for (let t = 10_000; t <= 40_000; t += 10_000) {
      await clock.runUntil(T0 + t);
      await p.reconcile();
      // Until the cache reaches the deletes (t = 31 s), the in-flight claims still hold the pods.
      expect(cluster.nodeClaims.size).toBe(t < 31_000 ? 0 : 4);
    }
    expect(perTeam()).toEqual({ a: 1, b: 1, c: 1, d: 1 });
  });
});
