import { describe, expect, it, vi } from 'vitest';
import { StaticInstanceTypeCatalog } from '../../src/catalog/skus.js';
import { ClusterError } from '../../src/ports/cluster.js';
import { SeededRandom, VirtualClock } from '../../src/sim/virtual-clock.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { Provisioner } from '../../src/provisioning/provisioner.js';
import { daemonSetRepresentatives, isProvisionable } from '../../src/provisioning/pods-view.js';
import { nodePoolTemplateHash } from '../../src/provisioning/nodepool-hash.js';
import { isNodeClaimDrifted, nodeClassHash } from '../../src/apis/nodeclass-hash.js';
import { ANNOTATION_OFFERING_MARKS, LABEL_ZONE } from '../../src/apis/well-known.js';
import { GPU_TAINT, GPU_TOLERATION, T0, makeNodeClass, makeNodePool, makePod, silentLog, setPods } from './fixtures.js';

function setup() {
  const clock = new VirtualClock(T0);
  const cluster = new FakeCluster(clock);
  cluster.putNodeClass(makeNodeClass());
  for (const pool of [
    makeNodePool('h200', {
      labels: { gpu: 'h200' }, taints: [GPU_TAINT], startupTaints: [{ key: 'node.cilium.io/agent-not-ready', effect: 'NoExecute' }],
      limits: { 'nvidia.com/gpu': '16' }, expireAfter: '720h',
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_ND96isr_H200_v5'] }],
    }),
    makeNodePool('cpu', { requirements: [{ key: 'karpenter.azure.com/sku-gpu-count', operator: 'In', values: ['0'] }] }),
  ]) cluster.putNodePool(pool);
  const provisioner = new Provisioner({
    cluster, catalog: new StaticInstanceTypeCatalog(), clock, random: new SeededRandom(7),
    isOfferingUnavailable: () => false, clusterName: 'test', log: silentLog, nodeClassHash: (nc) => `hash-of-${nc.metadata.name}`,
  });
  return { cluster, provisioner, clock };
}

/** A NodePool of D8s_v5 only (one 6-CPU pod a node), and a provisioner creating `createConcurrency` NodeClaims at a time. */
function d8World(createConcurrency: number): { cluster: FakeCluster; provisioner: Provisioner } {
  const clock = new VirtualClock(T0);
  const cluster = new FakeCluster(clock);
  cluster.putNodeClass(makeNodeClass());
  cluster.putNodePool(makeNodePool('d8', { requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D8s_v5'] }] }));
  const provisioner = new Provisioner({
    cluster, catalog: new StaticInstanceTypeCatalog(), clock, random: new SeededRandom(7), createConcurrency,
    isOfferingUnavailable: () => false, clusterName: 'test', log: silentLog, nodeClassHash: () => 'h',
  });
  return { cluster, provisioner };
}

const h200Pod = (name: string, gpus = '8') => makePod(name, { requests: { cpu: '8', memory: '64Gi', 'nvidia.com/gpu': gpus }, nodeSelector: { gpu: 'h200' }, tolerations: [GPU_TOLERATION] });

describe('Provisioner', () => {
  it('creates a complete NodeClaim for pending pods', async () => {
    const { cluster, provisioner } = setup();
    setPods(cluster, [h200Pod('train-0')]);
    await provisioner.reconcile();
    const claims = [...cluster.nodeClaims.values()];
    expect(claims).toHaveLength(1);
    const claim = claims[0]!;
    expect(claim.metadata.name).toMatch(/^h200-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(claim.metadata.labels).toMatchObject({ 'karpenter.sh/nodepool': 'h200', gpu: 'h200', 'topology.kubernetes.io/region': 'eastus2' });
    expect(claim.metadata.annotations).toMatchObject({
      'flex.aks.azure.com/nodeclass-hash': 'hash-of-eastus2',
      'karpenter.sh/nodepool-hash': nodePoolTemplateHash(cluster.nodePools.get('h200')!),
    });
    expect(claim.metadata.finalizers).toEqual(['karpenter.sh/termination']);
    // Owned by its NodePool, as upstream's: deleting the NodePool has the garbage collector delete it.
    const pool = cluster.nodePools.get('h200')!;
    expect(pool.metadata.uid).not.toBe('');
    expect(claim.metadata.ownerReferences).toEqual([{ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name: 'h200', uid: pool.metadata.uid, blockOwnerDeletion: true }]);
    expect(claim.spec.requirements).toContainEqual({ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_ND96isr_H200_v5'] });
    expect(claim.spec.resources.requests).toMatchObject({ cpu: '8', memory: '64Gi', 'nvidia.com/gpu': '8', pods: '1' });
    expect(claim.spec.taints).toEqual([GPU_TAINT]);
    expect(claim.spec.startupTaints).toHaveLength(1);
    expect(claim.spec.expireAfter).toBe('720h');
    expect(claim.status).toEqual({ conditions: [] });
    const nominated = cluster.events.filter((e) => e.reason === 'Nominated');
    expect(nominated).toHaveLength(1);
    expect(nominated[0]!.message).toBe(`Pod should schedule on: nodeclaim/${claim.metadata.name}`);
  });

  it('is idempotent across reconciles: pending pods land on the in-flight claim', async () => {
    const { cluster, provisioner } = setup();
    setPods(cluster, [h200Pod('a'), makePod('web', { requests: { cpu: '1', memory: '1Gi' } })]);
    await provisioner.reconcile();
    expect(cluster.nodeClaims.size).toBe(2);
    await provisioner.reconcile();
    expect(cluster.nodeClaims.size).toBe(2);
    expect(provisioner.lastSummary?.result.existingPlacements.flatMap((p) => p.podKeys).sort()).toEqual(['default/a', 'default/web']);
  });

  it('never exceeds the GPU limit and records a FailedScheduling event with the reason', async () => {
    const { cluster, provisioner } = setup();
    setPods(cluster, [h200Pod('a'), h200Pod('b'), h200Pod('c')]);
    await provisioner.reconcile();
    await provisioner.reconcile();
    expect(cluster.nodeClaims.size).toBe(2);
    const failed = cluster.events.filter((e) => e.reason === 'FailedScheduling');
    // One event, not one per reconcile.
    expect(failed).toHaveLength(1);
    expect(failed[0]!.message).toContain('NodePool h200 limit nvidia.com/gpu=16 reached');
    expect(failed[0]!.involvedObject).toMatchObject({ kind: 'Pod', name: 'c', namespace: 'default' });
    const status = cluster.nodePools.get('h200')!.status;
    expect(status.resources?.['nvidia.com/gpu']).toBe('16');
  });

  it('explains pods no SKU can ever hold', async () => {
    const { cluster, provisioner } = setup();
    setPods(cluster, [h200Pod('huge', '16')]);
    await provisioner.reconcile();
    expect(cluster.nodeClaims.size).toBe(0);
    expect(cluster.events[0]!.message).toBe('Failed to schedule pod, no SKU in catalog offers 16 nvidia.com/gpu');
  });

  it('defaults to the NodeClass controller hash so drift detection compares like with like', async () => {
    const { cluster, clock } = setup();
    const provisioner = new Provisioner({
      cluster, catalog: new StaticInstanceTypeCatalog(), clock, random: new SeededRandom(9),
      isOfferingUnavailable: () => false, clusterName: 'test', log: silentLog,
    });
    setPods(cluster, [makePod('web')]);
    await provisioner.reconcile();
    const claim = [...cluster.nodeClaims.values()][0]!;
    expect(claim.metadata.annotations['flex.aks.azure.com/nodeclass-hash']).toBe(nodeClassHash(cluster.nodeClasses.get('eastus2')!));
    expect(claim.metadata.annotations['flex.aks.azure.com/nodeclass-hash-version']).toBe('v1');
    expect(isNodeClaimDrifted(claim, cluster.nodeClasses.get('eastus2')!)).toBe(false);
  });

  it('retries the name on AlreadyExists and survives other create errors', async () => {
    const { cluster, provisioner } = setup();
    setPods(cluster, [h200Pod('a')]);
    vi.spyOn(cluster, 'createNodeClaim').mockRejectedValueOnce(new ClusterError('AlreadyExists', 'taken'));
    await provisioner.reconcile();
    expect(cluster.nodeClaims.size).toBe(1);
    const again = setup();
    setPods(again.cluster, [h200Pod('a')]);
    vi.spyOn(again.cluster, 'createNodeClaim').mockRejectedValueOnce(new ClusterError('ServerError', 'boom'));
    await again.provisioner.reconcile();
    expect(again.cluster.nodeClaims.size).toBe(0);
    await again.provisioner.reconcile();
    expect(again.cluster.nodeClaims.size).toBe(1);
  });

  it('only considers pods the kube-scheduler marked unschedulable', () => {
    expect(isProvisionable(makePod('a'))).toBe(true);
    expect(isProvisionable(makePod('b', { unschedulable: false }))).toBe(false);
    expect(isProvisionable(makePod('c', { nodeName: 'n1' }))).toBe(false);
    expect(isProvisionable(makePod('d', { deletionTimestamp: '2026-01-01T00:00:00Z' }))).toBe(false);
    expect(isProvisionable(makePod('e', { ownerKind: 'DaemonSet' }))).toBe(false);
  });

  it('dedups DaemonSet pods to one per DaemonSet', () => {
    const pods = [
      makePod('cilium-abcde', { ownerKind: 'DaemonSet', nodeName: 'n1' }), makePod('cilium-fghjk', { ownerKind: 'DaemonSet', nodeName: 'n2' }),
      makePod('dcgm-exporter-zzzzz', { ownerKind: 'DaemonSet', nodeName: 'n1' }), makePod('web', {}),
    ];
    expect(daemonSetRepresentatives(pods).map((p) => p.metadata.name)).toEqual(['cilium-abcde', 'dcgm-exporter-zzzzz']);
  });

  it('skips re-planning while neither its inputs nor the offerings it asked about changed', async () => {
    // The simulator's API server: resourceVersions bumped on every write, like a real one.
    const clock = new VirtualClock(T0);
    const cluster = new FakeCluster(clock);
    cluster.putNodeClass(makeNodeClass());
    for (const pool of setup().cluster.nodePools.values()) cluster.putNodePool(pool);
    let unavailable = true;
    const provisioner = new Provisioner({
      cluster, catalog: new StaticInstanceTypeCatalog(), clock, random: new SeededRandom(7),
      isOfferingUnavailable: (sku) => unavailable && sku === 'Standard_ND96isr_H200_v5', clusterName: 'test', log: silentLog,
    });
    cluster.putPod(h200Pod('a'));
    // The first reconcile writes NodePool status (a new input); the second settles.
    await provisioner.reconcile();
    await provisioner.reconcile();
    const first = provisioner.lastSummary;
    expect(first?.createdNodeClaims).toEqual([]);
    await provisioner.reconcile();
    expect(provisioner.lastSummary).toBe(first);
    // A new pod (a write) is a new input.
    cluster.putPod(makePod('web', { requests: { cpu: '1', memory: '1Gi' } }));
    await provisioner.reconcile();
    expect(provisioner.lastSummary).not.toBe(first);
    expect(cluster.nodeClaims.size).toBe(1);
    await provisioner.reconcile();
    await provisioner.reconcile();
    const idle = provisioner.lastSummary;
    await provisioner.reconcile();
    expect(provisioner.lastSummary).toBe(idle);
    // The offering comes back: same objects, a different answer, so it plans again.
    unavailable = false;
    await provisioner.reconcile();
    expect(provisioner.lastSummary).not.toBe(idle);
    expect(cluster.nodeClaims.size).toBe(2);
  });

  it('a zone whose mark expired gets one canary NodeClaim, and no second one while it is in flight (across passes)', async () => {
    const clock = new VirtualClock(T0);
    const cluster = new FakeCluster(clock);
    const mark = { sku: 'Standard_D8s_v5', zone: 'eastus2-2', capacityType: 'on-demand', reason: 'ZonalAllocationFailed', markedAt: T0 - 3_600_000, expiresAt: T0 - 1 };
    cluster.putNodeClass(makeNodeClass('eastus2', 'eastus2', { [ANNOTATION_OFFERING_MARKS]: JSON.stringify([mark]) }));
    // On-demand (also the default): the mark is on-demand's (a pool allowing spot would launch spot, unmarked there).
    cluster.putNodePool(makeNodePool('d8', { requirements: [
      { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D8s_v5'] },
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
    ] }));
    const provisioner = new Provisioner({
      cluster, catalog: new StaticInstanceTypeCatalog(), clock, random: new SeededRandom(7), offeringMarks: true,
      isOfferingUnavailable: () => false, clusterName: 'test', log: silentLog, nodeClassHash: () => 'h',
    });
    const mayLandInZone2 = () => [...cluster.nodeClaims.values()].filter((c) => {
      const zone = c.spec.requirements.find((r) => r.key === LABEL_ZONE && r.operator === 'In');
      return zone === undefined || zone.values!.includes('eastus2-2');
    });
    const big = (name: string) => makePod(name, { requests: { cpu: '6', memory: '8Gi' } });
    setPods(cluster, Array.from({ length: 6 }, (_, i) => big(`w-${i}`)));
    await provisioner.reconcile();
    expect(cluster.nodeClaims.size).toBe(6);
    expect(mayLandInZone2()).toHaveLength(1);
    // More pods in the next pass: the canary has not launched yet, so zone 2 stays out.
    setPods(cluster, [...cluster.pods.values(), ...Array.from({ length: 4 }, (_, i) => big(`x-${i}`))]);
    await clock.runUntil(clock.now() + 10_000);
    await provisioner.reconcile();
    expect(cluster.nodeClaims.size).toBe(10);
    expect(mayLandInZone2()).toHaveLength(1);
  });
  it('counts pods just bound to a Node whose NodeClaim has not recorded it, by the Node\'s labels', async () => {
    const { cluster, provisioner } = setup();
    const node = 'aks-cpu-just-registered';
    cluster.putNode({
      metadata: { name: node, uid: 'n1', labels: { [LABEL_ZONE]: 'eastus2-1', 'kubernetes.io/hostname': node }, annotations: {}, finalizers: [], creationTimestamp: new Date(T0).toISOString() },
      spec: { taints: [] }, status: { capacity: { cpu: '8' }, allocatable: { cpu: '8' }, conditions: [] },
    });
    const spread = { maxSkew: 1, topologyKey: LABEL_ZONE, whenUnsatisfiable: 'DoNotSchedule' as const, labelSelector: { matchLabels: { app: 'web' } } };
    const web = (name: string, nodeName?: string) => {
      const pod = makePod(name, { requests: { cpu: '1', memory: '1Gi' }, ...(nodeName ? { nodeName } : {}) });
      return { ...pod, metadata: { ...pod.metadata, labels: { app: 'web' } }, spec: { ...pod.spec, topologySpreadConstraints: [spread] } };
    };
    setPods(cluster, [web('web-0', node), web('web-1', node), web('web-2'), web('web-3')]);
    await provisioner.reconcile();
    const zones = [...cluster.nodeClaims.values()].flatMap((c) => c.spec.requirements.filter((r) => r.key === LABEL_ZONE).flatMap((r) => r.values ?? []));
    // eastus2-1 holds two replicas already: the new ones go to the other zones.
    expect(zones.sort()).toEqual(['eastus2-2', 'eastus2-3']);
  });

  it('creates a pass\'s NodeClaims and their Nominated events at most createConcurrency at a time, reporting them in plan order', async () => {
    const run = async (createConcurrency: number) => {
      const { cluster, provisioner } = d8World(createConcurrency);
      // Each create and event waits a turn of the event loop, as an API call would.
      let inFlight = 0;
      let peak = 0;
      const slow = <A extends unknown[], R>(fn: (...a: A) => Promise<R>) => async (...a: A): Promise<R> => {
        peak = Math.max(peak, ++inFlight);
        await new Promise((r) => setImmediate(r));
        inFlight--;
        return fn(...a);
      };
      cluster.createNodeClaim = slow(cluster.createNodeClaim.bind(cluster));
      cluster.recordEvent = slow(cluster.recordEvent.bind(cluster));
      setPods(cluster, Array.from({ length: 12 }, (_, i) => makePod(`w-${i}`, { requests: { cpu: '6', memory: '8Gi' } })));
      await provisioner.reconcile();
      // Nominated events go out in the background.
      await vi.waitFor(() => expect(cluster.events.filter((e) => e.reason === 'Nominated')).toHaveLength(12));
      return { peak, created: provisioner.lastSummary!.createdNodeClaims, claims: [...cluster.nodeClaims.keys()], nominated: cluster.events.filter((e) => e.reason === 'Nominated').length };
    };
    const serial = await run(1);
    const parallel = await run(4);
    expect(serial.peak).toBe(1);
    expect(parallel.peak).toBe(4);
    // The same names (drawn in plan order) and every pod nominated, whatever the concurrency.
    expect(serial.created).toHaveLength(12);
    expect(parallel.created).toEqual(serial.created);
    expect(parallel.claims.sort()).toEqual([...serial.created].sort());
    expect(parallel.nominated).toBe(12);
  });

  it('sends a pass\'s Nominated events once all its NodeClaims exist, so events never hold back a create', async () => {
    const { cluster, provisioner } = d8World(4);
    const claimsAtEachEvent: number[] = [];
    const record = cluster.recordEvent.bind(cluster);
    cluster.recordEvent = async (e) => {
      claimsAtEachEvent.push(cluster.nodeClaims.size);
      await record(e);
    };
    setPods(cluster, Array.from({ length: 12 }, (_, i) => makePod(`w-${i}`, { requests: { cpu: '6', memory: '8Gi' } })));
    await provisioner.reconcile();
    // Nominated events go out in the background.
    await vi.waitFor(() => expect(cluster.events.filter((e) => e.reason === 'Nominated')).toHaveLength(12));
    expect(claimsAtEachEvent).toEqual(Array(12).fill(12));
  });

  it('finishes a pass without waiting for its Nominated events, which the next pass would otherwise wait for too', async () => {
    const { cluster, provisioner } = d8World(4);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const record = cluster.recordEvent.bind(cluster);
    cluster.recordEvent = async (e) => {
      await held;
      await record(e);
    };
    setPods(cluster, Array.from({ length: 3 }, (_, i) => makePod(`w-${i}`, { requests: { cpu: '6', memory: '8Gi' } })));
    await provisioner.reconcile();
    expect(cluster.nodeClaims.size).toBe(3);
    expect(cluster.events.filter((e) => e.reason === 'Nominated')).toHaveLength(0);
    release();
    // Nominated events go out in the background.
    await vi.waitFor(() => expect(cluster.events.filter((e) => e.reason === 'Nominated')).toHaveLength(3));
    expect(cluster.events.filter((e) => e.reason === 'Nominated')).toHaveLength(3);
  });
});
