import { describe, expect, it } from 'vitest';
import { StaticInstanceTypeCatalog } from '../../src/catalog/skus.js';
import { Provisioner } from '../../src/provisioning/provisioner.js';
import { desiredReplicas } from '../../src/provisioning/static-capacity.js';
import { DEFAULT_QUOTA_READ_INTERVAL_MS } from '../../src/provisioning/quota.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { SeededRandom, VirtualClock } from '../../src/sim/virtual-clock.js';
import { parseScenario } from '../../src/sim/scenario.js';
import { runSimulation, SIM_EPOCH_MS, type SimulationWorld } from '../../src/sim/simulation.js';
import type { NodePool } from '../../src/ports/cluster.js';
import { T0, iso, makeNodeClaim, makeNodeClass, makeNodePool, silentLog } from './fixtures.js';

const H200 = 'Standard_ND96isr_H200_v5';
const H200_FAMILY = 'standardNDSH200v5Family';
const D8 = { key: 'node.kubernetes.io/instance-type', operator: 'In' as const, values: ['Standard_D8s_v5'] };

function setup(pool: NodePool, unavailable: (sku: string) => boolean = () => false) {
  const clock = new VirtualClock(T0);
  const cluster = new FakeCluster(clock);
  cluster.putNodeClass(makeNodeClass());
  cluster.putNodePool(pool);
  const provisioner = new Provisioner({
    cluster, catalog: new StaticInstanceTypeCatalog(), clock, random: new SeededRandom(7),
    isOfferingUnavailable: (sku) => unavailable(sku), clusterName: 'test', log: silentLog,
  });
  return { cluster, provisioner };
}

function staticPool(replicas: number, limits: Record<string, string> = {}): NodePool {
  const pool = makeNodePool('keep', { requirements: [D8], limits });
  pool.spec.replicas = replicas;
  return pool;
}

const claimsOf = (cluster: FakeCluster) => [...cluster.nodeClaims.values()].filter((c) => !c.metadata.deletionTimestamp);

describe('static capacity', () => {
  it('keeps replicas NodeClaims with no pod pending, and a second pass adds none', async () => {
    const { cluster, provisioner } = setup(staticPool(3));
    await provisioner.reconcile();
    expect(claimsOf(cluster)).toHaveLength(3);
    for (const c of claimsOf(cluster)) {
      expect(c.metadata.labels['karpenter.sh/nodepool']).toBe('keep');
      expect(c.spec.requirements.find((r) => r.key === 'node.kubernetes.io/instance-type')?.values).toEqual(['Standard_D8s_v5']);
    }
    await provisioner.reconcile();
    expect(claimsOf(cluster)).toHaveLength(3);
  });

  it('limits.nodes caps the replicas', async () => {
    expect(desiredReplicas(staticPool(5, { nodes: '2' }))).toBe(2);
    const { cluster, provisioner } = setup(staticPool(5, { nodes: '2' }));
    await provisioner.reconcile();
    expect(claimsOf(cluster)).toHaveLength(2);
  });

  it('plans nothing while every offering is marked: it waits rather than churns', async () => {
    const { cluster, provisioner } = setup(staticPool(2), () => true);
    await provisioner.reconcile();
    expect(claimsOf(cluster)).toHaveLength(0);
  });

  it('scales down by deleting NodeClaims without a node first, then the newest', async () => {
    const { cluster, provisioner } = setup(staticPool(1));
    cluster.putNodeClaim(makeNodeClaim('old', { nodePool: 'keep', launchedAs: 'Standard_D8s_v5', nodeName: 'n-old', creationTimestamp: iso(T0 - 7200_000) }));
    cluster.putNodeClaim(makeNodeClaim('new', { nodePool: 'keep', launchedAs: 'Standard_D8s_v5', nodeName: 'n-new', creationTimestamp: iso(T0 - 3600_000) }));
    cluster.putNodeClaim(makeNodeClaim('booting', { nodePool: 'keep', launchedAs: 'Standard_D8s_v5', creationTimestamp: iso(T0 - 7200_000) }));
    await provisioner.reconcile();
    expect(claimsOf(cluster).map((c) => c.metadata.name)).toEqual(['old']);
  });
});

/** Samples every 10 simulated seconds: each pool's Ready nodes, and every NodeClaim's life. */
function watch(w: SimulationWorld, ready: Array<{ at: number; perPool: Record<string, number> }>, claims: Map<string, { pool: string; created: number; deleted?: number }>): void {
  const tick = (): void => {
    const perPool: Record<string, number> = {};
    for (const n of w.cluster.nodes.values()) {
      const pool = n.metadata.labels['karpenter.sh/nodepool'];
      if (pool && n.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True')) perPool[pool] = (perPool[pool] ?? 0) + 1;
    }
    ready.push({ at: w.clock.now() - SIM_EPOCH_MS, perPool });
    for (const c of w.cluster.nodeClaims.values()) {
      const entry = claims.get(c.metadata.name) ?? { pool: c.metadata.labels['karpenter.sh/nodepool']!, created: Date.parse(c.metadata.creationTimestamp) - SIM_EPOCH_MS };
      if (c.metadata.deletionTimestamp && entry.deleted === undefined) entry.deleted = Date.parse(c.metadata.deletionTimestamp) - SIM_EPOCH_MS;
      claims.set(c.metadata.name, entry);
    }
    w.clock.setTimer(10_000, tick);
  };
  w.clock.setTimer(10_000, tick);
}

const HOUR = 3600;
const CUT = 1 * HOUR;
const BACK = 3 * HOUR;

/** The seed's keepalive: two static H200 pools, two per region; the first region loses its nodes and its quota for 2 h. */
function keepaliveWorld() {
  return parseScenario({
    name: 'static-keepalive',
    hours: 4.5,
    regions: [
      { location: 'eastus2', regionalQuotaCores: 1000, familyQuotaCores: { [H200_FAMILY]: 96 * 2 } },
      { location: 'eastus2euap', regionalQuotaCores: 1000, familyQuotaCores: { [H200_FAMILY]: 96 * 2 } },
    ],
    nodeClasses: [
      { name: 'eastus2', location: 'eastus2', subnetPrefix: '10.1.0.0/24' },
      { name: 'eastus2euap', location: 'eastus2euap', resourceGroup: 'azflex-nodes-euap', subnet: 'euap', subnetPrefix: '10.2.0.0/24' },
    ],
    nodePools: [
      { name: 'h200-eastus2', nodeClass: 'eastus2', instanceTypes: [H200], replicas: 2, taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] },
      { name: 'h200-euap', nodeClass: 'eastus2euap', instanceTypes: [H200], replicas: 2, taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] },
    ],
    workload: [{ count: 1, prefix: 'web', requests: { cpu: '1', memory: '1Gi' } }],
    faults: {
      nodeNeverJoinsRate: 0,
      schedule: [
        { at: CUT, fault: { kind: 'quota', location: 'eastus2', family: H200_FAMILY, cores: 0 } },
        // The VMs go too (a host failure): the pool must replace them while the quota is 0.
        { at: CUT + 60, fault: { kind: 'vmAction', location: 'eastus2', sku: H200, action: 'delete', fraction: 1 } },
        { at: BACK, fault: { kind: 'quota', location: 'eastus2', family: H200_FAMILY, cores: 96 * 2 } },
      ],
    },
  }, 'test');
}

describe('static keepalive world', () => {
  for (const restarts of [0, 5, 25]) {
    it(`no churn while the quota is gone, both regions back to 2 Ready nodes, 0 leaks (restarts ${restarts})`, async () => {
      const ready: Array<{ at: number; perPool: Record<string, number> }> = [];
      const claims = new Map<string, { pool: string; created: number; deleted?: number }>();
      let watched = false;
      const { result } = await runSimulation({
        scenario: keepaliveWorld(), seed: 11, strategy: 'machine', keepEventLog: false, restarts,
        // Cluster, ARM and clock outlive a restart: one watcher on the first incarnation sees the whole run.
        onWorld: (w) => {
          if (watched) return;
          watched = true;
          watch(w, ready, claims);
        },
      });
      expect(result.restarts).toBe(restarts);
      expect(result.leakedNics + result.leakedVms + result.leakedDisks).toBe(0);

      // Before the cut both regions hold 2 Ready nodes.
      const beforeCut = ready.filter((s) => s.at > CUT - 600 && s.at < CUT);
      for (const s of beforeCut) expect(s.perPool).toMatchObject({ 'h200-eastus2': 2, 'h200-euap': 2 });
      // The second region is undisturbed: 2 Ready from its first boot to the end, its NodeClaims never replaced.
      const euapUp = ready.find((s) => s.perPool['h200-euap'] === 2)!.at;
      for (const s of ready.filter((x) => x.at >= euapUp)) expect(s.perPool['h200-euap']).toBe(2);
      expect([...claims.values()].filter((c) => c.pool === 'h200-euap')).toHaveLength(2);

      // While the quota is 0: the lost replicas are tried once each when the VMs go (nothing is
      // marked yet), then one canary each time the 1 h quota mark expires, never two in flight.
      const first = [...claims.values()].filter((c) => c.pool === 'h200-eastus2' && c.created >= CUT * 1000 && c.created < BACK * 1000).sort((x, y) => x.created - y.created);
      expect(first.length).toBeLessThanOrEqual(2 + (BACK - CUT) / HOUR);
      const canaries = first.filter((c) => c.created > first[0]!.created + 60_000);
      for (const c of canaries) {
        const overlapping = first.filter((o) => o !== c && o.created <= c.created && (o.deleted ?? Infinity) > c.created);
        expect(overlapping).toEqual([]);
      }
      // No healthy node deleted to retry: the first region's NodeClaims from before the cut went only with their VMs.
      for (const c of [...claims.values()].filter((x) => x.pool === 'h200-eastus2' && x.created < CUT * 1000)) {
        expect(c.deleted === undefined || c.deleted >= (CUT + 60) * 1000).toBe(true);
      }

      // Usages are readable in this world: the pool plans from quota and sends no doomed create
      // while it is 0 (the bound above is for a world that must learn quota from refusals).
      expect(first).toEqual([]);
      // After the quota returns: 2 Ready again within one usages read interval, a provisioning
      // interval and a boot.
      const back = ready.find((x) => x.at >= BACK * 1000 && x.perPool['h200-eastus2'] === 2);
      expect(back).toBeDefined();
      expect(back!.at - BACK * 1000).toBeLessThanOrEqual(DEFAULT_QUOTA_READ_INTERVAL_MS + (10 + 300) * 1000);
      expect(ready.at(-1)!.perPool).toMatchObject({ 'h200-eastus2': 2, 'h200-euap': 2 });
    }, 600_000);
  }
});
