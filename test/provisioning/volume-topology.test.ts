import { describe, expect, it } from 'vitest';
import type { InstanceType } from '../../src/catalog/skus.js';
import { StaticInstanceTypeCatalog } from '../../src/catalog/skus.js';
import type { PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from '../../src/ports/cluster.js';
import { Provisioner } from '../../src/provisioning/provisioner.js';
import { Requirements } from '../../src/provisioning/requirements.js';
import { schedule, type SchedulingInput } from '../../src/provisioning/scheduler.js';
import { VolumeTopology, type StorageObjects } from '../../src/provisioning/volume-topology.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { SeededRandom, VirtualClock } from '../../src/sim/virtual-clock.js';
import { T0, iso, makeNodeClass, makeNodePool, makePod, setPods, silentLog } from './fixtures.js';
import { LABEL_HOSTNAME, LABEL_REGION, LABEL_ZONE } from '../../src/apis/well-known.js';

const TYPES: InstanceType[] = [4, 16].map((vcpu) => ({
  name: `Standard_D${vcpu}s_v5`, family: 'standardDSv5Family', vcpu, memoryMiB: vcpu * 4096, gpuCount: 0, maxPods: 110,
  ephemeralStorageGiB: 128, arch: 'amd64', pricePerHour: 0.048 * vcpu, locations: ['eastus2', 'westeurope'],
  zones: { eastus2: ['eastus2-1', 'eastus2-2', 'eastus2-3'], westeurope: ['westeurope-1', 'westeurope-2', 'westeurope-3'] },
}));

const meta = (name: string, namespace?: string) => ({
  name, uid: `uid-${name}`, labels: {}, annotations: {}, finalizers: [], creationTimestamp: iso(T0), ...(namespace ? { namespace } : {}),
});

const pvc = (name: string, spec: PersistentVolumeClaim['spec'], extra: Partial<PersistentVolumeClaim['metadata']> = {}): PersistentVolumeClaim => ({
  metadata: { ...meta(name, 'default'), namespace: 'default', ...extra }, spec, status: { phase: spec.volumeName ? 'Bound' : 'Pending' },
});

/** A zonal Azure disk as the disk CSI driver provisions it. */
const zonalDisk = (name: string, zone: string, key = 'topology.disk.csi.azure.com/zone'): PersistentVolume => ({
  metadata: meta(name),
  spec: { storageClassName: 'managed-csi', nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key, operator: 'In', values: [zone] }] }] } } },
});

const storageClass = (name: string, mode?: StorageClass['volumeBindingMode'], zones?: string[]): StorageClass => ({
  metadata: meta(name), provisioner: 'disk.csi.azure.com',
  ...(mode ? { volumeBindingMode: mode } : {}),
  ...(zones ? { allowedTopologies: [{ matchLabelExpressions: [{ key: LABEL_ZONE, values: zones }] }] } : {}),
});

const withClaim = (pod: Pod, claimName: string): Pod => ({ ...pod, spec: { ...pod.spec, volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }] } });

const STORAGE: StorageObjects = {
  claims: [
    pvc('data-we2', { storageClassName: 'managed-csi', volumeName: 'pv-we2' }),
    pvc('data-wffc', { storageClassName: 'managed-csi' }),
    pvc('data-wffc-zones', { storageClassName: 'zoned-csi' }),
    pvc('data-immediate', { storageClassName: 'immediate-csi' }),
    pvc('data-noclass', {}),
    pvc('data-deleting', { storageClassName: 'managed-csi' }, { deletionTimestamp: iso(T0) }),
    pvc('data-local', { storageClassName: 'local', volumeName: 'pv-local' }),
  ],
  volumes: [
    zonalDisk('pv-we2', 'westeurope-2'),
    {
      metadata: meta('pv-local'),
      spec: {
        local: true,
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: LABEL_HOSTNAME, operator: 'In', values: ['old-node'] }, { key: LABEL_REGION, operator: 'In', values: ['westeurope'] }] }] } },
      },
    },
  ],
  classes: [
    storageClass('managed-csi', 'WaitForFirstConsumer'),
    storageClass('zoned-csi', 'WaitForFirstConsumer', ['eastus2-3']),
    storageClass('immediate-csi'),
  ],
};

const input = (pods: Pod[], over: Partial<SchedulingInput> = {}): SchedulingInput => {
  const topology = new VolumeTopology(STORAGE);
  return {
    pendingPods: pods,
    nodePools: [makeNodePool('eastus2', { nodeClassName: 'eastus2', weight: 10 }), makeNodePool('westeurope', { nodeClassName: 'westeurope' })],
    nodeClasses: [makeNodeClass('eastus2', 'eastus2'), makeNodeClass('westeurope', 'westeurope')],
    instanceTypes: TYPES, existingNodeClaims: [], daemonSetPods: [], isOfferingUnavailable: () => false,
    volumeRequirements: (pod) => topology.requirements(pod),
    ...over,
  };
};

const where = (plan: { requirements: SchedulingInput['nodePools'][number]['spec']['template']['spec']['requirements'] }) => {
  const r = Requirements.fromSelectors(plan.requirements);
  return { region: [...(r.get(LABEL_REGION)?.values ?? [])], zone: [...(r.get(LABEL_ZONE)?.values ?? [])] };
};

describe('volume topology', () => {
  it('reads a bound zonal disk (CSI zone key normalised), StorageClass topologies, and why a pod must wait', () => {
    const t = new VolumeTopology(STORAGE);
    const pod = (claim: string) => withClaim(makePod(`p-${claim}`), claim);
    expect(t.requirements(pod('data-we2'))).toEqual([{ key: LABEL_ZONE, operator: 'In', values: ['westeurope-2'] }]);
    expect(t.requirements(pod('data-wffc'))).toBeUndefined();
    expect(t.requirements(pod('data-wffc-zones'))).toEqual([{ key: LABEL_ZONE, operator: 'In', values: ['eastus2-3'] }]);
    // A local volume's host cannot be a new node: only its other terms remain.
    expect(t.requirements(pod('data-local'))).toEqual([{ key: LABEL_REGION, operator: 'In', values: ['westeurope'] }]);
    expect(t.requirements(pod('data-immediate'))).toEqual({ error: expect.stringContaining('binds Immediately') });
    expect(t.requirements(pod('data-noclass'))).toEqual({ error: expect.stringContaining('names no storage class') });
    expect(t.requirements(pod('data-deleting'))).toEqual({ error: expect.stringContaining('is being deleted') });
    expect(t.requirements(pod('missing'))).toEqual({ error: 'persistentvolumeclaim "default/missing" not found' });
    expect(t.requirements(makePod('no-volumes'))).toBeUndefined();
    // A generic ephemeral volume whose PVC is not created yet uses its template's class.
    const eph: Pod = { ...makePod('eph'), spec: { ...makePod('eph').spec, volumes: [{ name: 'scratch', ephemeral: { storageClassName: 'zoned-csi' } }] } };
    expect(t.requirements(eph)).toEqual([{ key: LABEL_ZONE, operator: 'In', values: ['eastus2-3'] }]);
    // A regional disk (CSI zone "") needs a node without a zone.
    const regional = new VolumeTopology({ ...STORAGE, claims: [pvc('r', { volumeName: 'pv-r' })], volumes: [zonalDisk('pv-r', '')] });
    expect(regional.requirements(pod('r'))).toEqual([{ key: LABEL_ZONE, operator: 'DoesNotExist' }]);
  });

  it('plans a pod with a westeurope zone-2 disk in westeurope zone 2, never eastus2 (though eastus2 weighs more)', () => {
    const pods = [withClaim(makePod('db-0'), 'data-we2'), makePod('web-0')];
    const result = schedule(input(pods));
    expect(result.unschedulable).toEqual([]);
    const db = result.nodeClaims.find((p) => p.podKeys.includes('default/db-0'))!;
    expect(db.nodePoolName).toBe('westeurope');
    expect(where(db)).toEqual({ region: ['westeurope'], zone: ['westeurope-2'] });
    expect(result.nodeClaims.some((p) => p.podKeys.includes('default/web-0'))).toBe(true);
  });

  it('leaves the pod pending with a reason when no NodePool reaches the disk', () => {
    const result = schedule(input([withClaim(makePod('db-0'), 'data-we2')], {
      nodePools: [makeNodePool('eastus2', { nodeClassName: 'eastus2' })], nodeClasses: [makeNodeClass('eastus2', 'eastus2')],
    }));
    expect(result.nodeClaims).toEqual([]);
    expect(result.unschedulable).toHaveLength(1);
    expect(result.unschedulable[0]!.reason).toMatch(/topology\.kubernetes\.io\/zone/);
  });

  it('places a WaitForFirstConsumer claim within allowedTopologies and holds Immediate ones', () => {
    const result = schedule(input([withClaim(makePod('a'), 'data-wffc-zones'), withClaim(makePod('b'), 'data-immediate'), withClaim(makePod('c'), 'data-wffc')]));
    const a = result.nodeClaims.find((p) => p.podKeys.includes('default/a'))!;
    expect(where(a).zone).toEqual(['eastus2-3']);
    expect(result.nodeClaims.some((p) => p.podKeys.includes('default/c'))).toBe(true);
    expect(result.unschedulable.map((u) => u.pod.metadata.name)).toEqual(['b']);
    expect(result.unschedulable[0]!.reason).toMatch(/not bound yet/);
  });

  it('offers a zonal SKU per zone: a zone marked unavailable is left out of the plan; all zones marked leave it regional (no zone), for a pod that needs none', () => {
    const pods = [makePod('web-0')];
    const pools = { nodePools: [makeNodePool('eastus2', { nodeClassName: 'eastus2' })], nodeClasses: [makeNodeClass('eastus2', 'eastus2')] };
    const one = schedule(input(pods, { ...pools, isZoneUnavailable: (_sku, _region, zone) => zone === 'eastus2-1' }));
    expect(where(one.nodeClaims[0]!).zone).toEqual(['eastus2-2', 'eastus2-3']);
    const all = schedule(input(pods, { ...pools, isZoneUnavailable: () => true }));
    expect(all.nodeClaims).toHaveLength(1);
    expect(where(all.nodeClaims[0]!)).toEqual({ region: ['eastus2'], zone: [] });
    // A pod that needs a zone cannot go regional.
    const zoned = schedule(input([{ ...makePod('web-1'), spec: { ...makePod('web-1').spec, nodeSelector: { 'topology.kubernetes.io/zone': 'eastus2-1' } } }], { ...pools, isZoneUnavailable: () => true }));
    expect(zoned.nodeClaims).toEqual([]);
    expect(zoned.unschedulable).toHaveLength(1);
  });

  it('the provisioner reads PVCs, PVs and StorageClasses and reports a pod it cannot place', async () => {
    const clock = new VirtualClock(T0);
    const cluster = new FakeCluster(clock);
    cluster.putNodeClass(makeNodeClass('eastus2', 'eastus2'));
    cluster.putNodePool(makeNodePool('eastus2', { nodeClassName: 'eastus2' }));
    for (const value of STORAGE.classes) cluster.putStorage({ kind: 'StorageClass', value });
    for (const value of STORAGE.volumes) cluster.putStorage({ kind: 'PersistentVolume', value });
    for (const value of STORAGE.claims) cluster.putStorage({ kind: 'PersistentVolumeClaim', value });
    setPods(cluster, [withClaim(makePod('db-0'), 'data-we2'), withClaim(makePod('db-1'), 'data-immediate')]);
    const provisioner = new Provisioner({
      cluster, catalog: new StaticInstanceTypeCatalog(TYPES), clock, random: new SeededRandom(3),
      isOfferingUnavailable: () => false, clusterName: 'test', log: silentLog,
    });
    await provisioner.reconcile();
    expect(cluster.nodeClaims.size).toBe(0);
    const reasons = cluster.events.filter((e) => e.reason === 'FailedScheduling').map((e) => `${e.involvedObject.name}: ${e.message}`);
    expect(reasons).toHaveLength(2);
    expect(reasons.find((r) => r.startsWith('db-0'))).toMatch(/westeurope-2/);
    expect(reasons.find((r) => r.startsWith('db-1'))).toMatch(/not bound yet/);
    // Once a westeurope NodePool exists, the same pod gets a NodeClaim pinned to the disk's zone.
    cluster.putNodeClass(makeNodeClass('westeurope', 'westeurope'));
    cluster.putNodePool(makeNodePool('westeurope', { nodeClassName: 'westeurope' }));
    await provisioner.reconcile();
    const claims = [...cluster.nodeClaims.values()];
    expect(claims).toHaveLength(1);
    expect(claims[0]!.metadata.labels[LABEL_ZONE]).toBe('westeurope-2');
    expect(claims[0]!.metadata.labels[LABEL_REGION]).toBe('westeurope');
  });
});
