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
  it('puts the zonal-disk pod in westeurope zone 2, spreads a Deployment over zones, provisions a WaitForFirstConsumer disk where its pod lands, and holds an Immediate claim', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'azflex-zones-'));
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
    const path = join(dir, 'all.yaml');
    writeFileSync(path, docs.map((d) => `---\n${stringify(d)}`).join(''));
    const worldPath = join(dir, 'world.yaml');
    writeFileSync(worldPath, stringify({
      name: 'zones', hours: 1,
      regions: [{ location: 'eastus2', familyQuotaCores: { standardDSv5Family: 200 } }, { location: 'westeurope', familyQuotaCores: { standardDSv5Family: 200 } }],
      subnets: [{ id: subnet('eastus2'), addressPrefix: '10.9.0.0/24' }, { id: subnet('westeurope'), addressPrefix: '10.8.0.0/24' }],
    }));
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

    // Three replicas, three zones of the heavier pool's region.
    const apiZones = app('api').map((p) => nodeOf(p)?.metadata.labels['topology.kubernetes.io/zone']);
    expect(new Set(apiZones)).toEqual(new Set(['eastus2-1', 'eastus2-2', 'eastus2-3']));

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

    // An Immediate claim nobody bound keeps its pod pending, with the reason on the pod.
    const late = app('late')[0]!;
    expect(late.spec.nodeName).toBeUndefined();
    expect(world.events.some((e) => e.involvedObject.name === late.metadata.name && e.reason === 'FailedScheduling' && /not bound yet/.test(e.message))).toBe(true);
  });
});
