import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/sim/manifests.js';
import { runSimulation } from '../../src/sim/simulation.js';
import { loadWorld, scenarioOfWorld } from '../../src/sim/world.js';
import type { Pod } from '../../src/ports/cluster.js';

/**
 * Zones and volume topology end to end in the simulator, from the manifests a user applies:
 * a StatefulSet-like database whose disk is a zonal Azure disk in westeurope zone 2, a
 * zone-spread Deployment, a WaitForFirstConsumer claim, and a claim that binds Immediately.
 */
const SUB = '11111111-1111-1111-1111-111111111111';
const subnet = (region: string) => `/subscriptions/${SUB}/resourceGroups/rg-${region}/providers/Microsoft.Network/virtualNetworks/v/subnets/s`;

/** The manifests as one multi-document file, and a two-region world with DSv5 quota, in a fresh directory. */
function writeInputs(docs: object[], name: string): { path: string; worldPath: string } {
  const dir = mkdtempSync(join(tmpdir(), `azflex-${name}-`));
  const path = join(dir, 'all.yaml');
  writeFileSync(path, docs.map((d) => `---\n${stringify(d)}`).join(''));
  const worldPath = join(dir, 'world.yaml');
  writeFileSync(worldPath, stringify({
    name, hours: 1,
    regions: [{ location: 'eastus2', familyQuotaCores: { standardDSv5Family: 200 } }, { location: 'westeurope', familyQuotaCores: { standardDSv5Family: 200 } }],
    subnets: [{ id: subnet('eastus2'), addressPrefix: '10.9.0.0/24' }, { id: subnet('westeurope'), addressPrefix: '10.8.0.0/24' }],
  }));
  return { path, worldPath };
}

const nodeClass = (region: string) => ({
  apiVersion: 'flex.aks.azure.com/v1alpha1', kind: 'AzureFlexNodeClass', metadata: { name: region },
  spec: { subscriptionID: SUB, location: region, resourceGroup: `rg-${region}`, subnetID: subnet(region), imageReference: { publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' } },
});
const nodePool = (region: string, weight: number) => ({
  apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: region },
  spec: {
    weight,
    template: { spec: { nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: region }, requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D8s_v5'] }] } },
  },
});
const deployment = (name: string, replicas: number, spec: Record<string, unknown> = {}, cpu = '3') => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
  spec: {
    replicas, selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu } } }], ...spec } },
  },
});
const claim = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } }, ...spec },
});
const volume = (claimName: string) => ({ volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }] });

describe('zones and volume topology in the simulator (--manifests)', () => {
  it('puts the zonal-disk pod in westeurope zone 2, spreads a Deployment over zones, provisions a WaitForFirstConsumer disk where its pod lands, and an Immediate one in the cluster\'s region', async () => {
    const docs = [
      nodeClass('eastus2'), nodePool('eastus2', 50), nodeClass('westeurope'), nodePool('westeurope', 10),
      { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'managed-csi', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, provisioner: 'disk.csi.azure.com', volumeBindingMode: 'WaitForFirstConsumer' },
      { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'immediate' }, provisioner: 'disk.csi.azure.com' },
      {
        apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-db' },
        spec: {
          capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: 'managed-csi', csi: { driver: 'disk.csi.azure.com', volumeHandle: 'disk-db' },
          nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.disk.csi.azure.com/zone', operator: 'In', values: ['westeurope-2'] }] }] } },
        },
      },
      claim('db-data', { storageClassName: 'managed-csi', volumeName: 'pv-db' }),
      claim('cache-data', {}),
      claim('late-data', { storageClassName: 'immediate' }),
      deployment('db', 1, volume('db-data')),
      deployment('cache', 1, volume('cache-data')),
      deployment('late', 1, volume('late-data')),
      // One replica per D8s_v5: the kube-scheduler only counts zones that have nodes, so with
      // room for two it may stack replicas on the first node to register.
      deployment('api', 3, { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'api' } } }] }, '5'),
    ];
    const { path, worldPath } = writeInputs(docs, 'zones');
    const cluster = loadManifests([path]);
    expect(cluster.storage!.claims.find((c) => c.metadata.name === 'cache-data')!.spec.storageClassName).toBe('managed-csi');
    const { arm, cluster: world, invariantViolations } = await runSimulation({
      scenario: scenarioOfWorld(loadWorld(worldPath), cluster), cluster, seed: 7, strategy: 'machine', hours: 0.5, keepEventLog: false,
    });
    expect(invariantViolations).toEqual([]);
    const pods = [...world.pods.values()];
    const nodeOf = (pod: Pod) => world.nodes.get(pod.spec.nodeName ?? '');
    const app = (name: string) => pods.filter((p) => p.metadata.labels.app === name);

    const db = app('db')[0]!;
    expect(db.status.phase).toBe('Running');
    expect(nodeOf(db)!.metadata.labels).toMatchObject({ 'topology.kubernetes.io/region': 'westeurope', 'topology.kubernetes.io/zone': 'westeurope-2' });
    const vm = arm.currentVms().find((v) => v.name === db.spec.nodeName)!;
    expect(vm).toMatchObject({ location: 'westeurope', zone: '2' });

    // Three replicas, three zones (the kube-scheduler counts the zones that have nodes, so one
    // may take the Immediate disk's westeurope node).
    const apiZones = app('api').map((p) => nodeOf(p)?.metadata.labels['topology.kubernetes.io/zone']);
    expect(new Set(apiZones).size).toBe(3);

    // Every VM in a zoned region is zonal, and its node says which zone.
    for (const v of arm.currentVms()) {
      const node = world.nodes.get(v.name);
      if (node) expect(node.metadata.labels['topology.kubernetes.io/zone']).toBe(`${v.location}-${v.zone}`);
    }

    // The WaitForFirstConsumer claim was provisioned in its pod's zone and bound.
    const cache = app('cache')[0]!;
    expect(cache.status.phase).toBe('Running');
    const bound = world.persistentVolumeClaims.get('default/cache-data')!;
    const pv = world.persistentVolumes.get(bound.spec.volumeName!)!;
    expect(pv.spec.nodeAffinity!.required!.nodeSelectorTerms[0]!.matchExpressions[0]!.values).toEqual([nodeOf(cache)!.metadata.labels['topology.kubernetes.io/zone']]);

    // An Immediate claim is provisioned at once, in a zone of the cluster's region (westeurope
    // by default; the zone follows the claim's name), and its pod follows its disk there.
    const late = app('late')[0]!;
    expect(late.status.phase).toBe('Running');
    const latePv = world.persistentVolumes.get(world.persistentVolumeClaims.get('default/late-data')!.spec.volumeName!)!;
    const lateZone = latePv.spec.nodeAffinity!.required!.nodeSelectorTerms[0]!.matchExpressions[0]!.values![0]!;
    expect(lateZone).toMatch(/^westeurope-[123]$/);
    expect(nodeOf(late)!.metadata.labels['topology.kubernetes.io/zone']).toBe(lateZone);
  });

  it('binds Immediate claims at once: allowedTopologies pick the zone, StatefulSet replicas spread over the region, ZRS and regional disks, and a claim of no provisioner waits', async () => {
    const docs = [
      nodeClass('eastus2'), nodePool('eastus2', 50), nodeClass('westeurope'), nodePool('westeurope', 10),
      {
        apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'eastus2-zone3' }, provisioner: 'disk.csi.azure.com', volumeBindingMode: 'Immediate',
        parameters: { skuName: 'Premium_LRS', location: 'eastus2' },
        allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.disk.csi.azure.com/zone', values: ['eastus2-3'] }] }],
      },
      { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'regional' }, provisioner: 'disk.csi.azure.com', parameters: { location: 'eastus2euap' } },
      { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'static' }, provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: 'Immediate' },
      claim('pinned-data', { storageClassName: 'eastus2-zone3' }),
      claim('regional-data', { storageClassName: 'regional' }),
      claim('static-data', { storageClassName: 'static' }),
      { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'zrs' }, provisioner: 'disk.csi.azure.com', parameters: { skuName: 'Premium_ZRS' } },
      claim('zrs-data', { storageClassName: 'zrs' }),
      deployment('zrs', 1, volume('zrs-data')),
      deployment('pinned', 1, volume('pinned-data')),
      deployment('regional', 1, volume('regional-data')),
      deployment('static', 1, volume('static-data')),
      {
        apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db' },
        spec: {
          replicas: 3, serviceName: 'db', selector: { matchLabels: { app: 'db' } },
          template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'c', image: 'postgres', resources: { requests: { cpu: '5' } }, volumeMounts: [{ name: 'data', mountPath: '/data' }] }] } },
          volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'we', resources: { requests: { storage: '10Gi' } } } }],
        },
      },
      { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'we' }, provisioner: 'disk.csi.azure.com', volumeBindingMode: 'Immediate', parameters: { skuName: 'StandardSSD_LRS' } },
    ];
    const { path, worldPath } = writeInputs(docs, 'immediate');
    const cluster = loadManifests([path]);
    const { cluster: world, invariantViolations } = await runSimulation({
      scenario: scenarioOfWorld(loadWorld(worldPath), cluster), cluster, seed: 3, strategy: 'machine', hours: 0.5, keepEventLog: false,
    });
    expect(invariantViolations).toEqual([]);
    const pods = [...world.pods.values()];
    const app = (name: string) => pods.filter((p) => p.metadata.labels.app === name);
    const zoneOfNode = (pod: Pod) => world.nodes.get(pod.spec.nodeName ?? '')?.metadata.labels['topology.kubernetes.io/zone'];
    const pvOf = (key: string) => world.persistentVolumes.get(world.persistentVolumeClaims.get(key)!.spec.volumeName!)!;
    const zonesOf = (key: string) => pvOf(key).spec.nodeAffinity!.required!.nodeSelectorTerms.map((t) => t.matchExpressions[0]!.values![0]);

    // allowedTopologies name the zone; the pod runs there, in the heavier pool's region.
    expect(zonesOf('default/pinned-data')).toEqual(['eastus2-3']);
    expect(app('pinned')[0]!.status.phase).toBe('Running');
    expect(zoneOfNode(app('pinned')[0]!)).toBe('eastus2-3');

    // Three replicas' claims take successive zones of the cluster's region (the PVC-name hash
    // plus the ordinal, as external-provisioner's preferred topology), and each pod follows its disk.
    const dbZones = app('db').map((p) => {
      expect(p.status.phase).toBe('Running');
      const z = zonesOf(`default/${p.metadata.name}-data`);
      expect(zoneOfNode(p)).toBe(z[0]);
      return z[0];
    });
    expect(new Set(dbZones)).toEqual(new Set(['westeurope-1', 'westeurope-2', 'westeurope-3']));

    // A region without zones gets a regional disk (zone ""): only a node without a zone could
    // use it, and every VM in these regions is zonal, so the pod waits with the reason.
    expect(zonesOf('default/regional-data')).toEqual(['']);
    expect(app('regional')[0]!.spec.nodeName).toBeUndefined();

    // A ZRS disk is reachable from every zone of its region and from nodes without a zone
    // (one node-affinity term each); Karpenter plans for the first term.
    expect(zonesOf('default/zrs-data')).toEqual(['westeurope-1', 'westeurope-2', 'westeurope-3', '']);
    expect(app('zrs')[0]!.status.phase).toBe('Running');
    expect(zoneOfNode(app('zrs')[0]!)).toMatch(/^westeurope-[123]$/);

    // No provisioner: the claim waits for an administrator's PV, and so does its pod.
    expect(world.persistentVolumeClaims.get('default/static-data')!.spec.volumeName).toBeUndefined();
    const waiting = app('static')[0]!;
    expect(waiting.spec.nodeName).toBeUndefined();
    expect(world.events.some((e) => e.involvedObject.name === waiting.metadata.name && e.reason === 'FailedScheduling' && /not bound yet/.test(e.message))).toBe(true);
  });
});
