import type { V1PersistentVolume } from '@kubernetes/client-node';
import { LABEL_DISK_CSI_ZONE } from '../apis/well-known.js';
import { KubeApiError, type KubeClient } from '../k8s/client.js';
import type { RawObject } from '../k8s/cache.js';
import { toPersistentVolumeClaim, toStorageClass } from '../k8s/resources.js';
import { DEFAULT_CLUSTER_LOCATION } from '../sim/scenario.js';
import { bindsImmediately, nodeAffinityTerms, planImmediateVolume } from '../sim/volume-provisioner.js';
import type { StorageClass } from '../ports/cluster.js';
import { DevPoller, type PollerOptions } from './poller.js';

/**
 * The Azure disk CSI driver's external-provisioner, which no binary here ships: a claim that
 * binds Immediately gets a PV pre-bound to it at once, planned by the simulator's own
 * provisioner (src/sim/volume-provisioner.ts: zone from allowedTopologies or the cluster's
 * region). kube-controller-manager's PV controller then binds the pair (and any claim that
 * names a static PV), so kube-scheduler and azflex see a bound PV with node affinity.
 */

interface ClaimObj {
  metadata: { name: string; namespace: string; uid: string; deletionTimestamp?: unknown };
  spec: { volumeName?: string; accessModes?: string[]; volumeMode?: string; resources?: { requests?: { storage?: string } } };
  status?: { phase?: string };
}
interface List<T> {
  items: T[];
}

/** Where the simulated disks live (the dev fake ARM does not hold them). */
const DISK_ID_PREFIX = '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/mc_azflex-dev/providers/Microsoft.Compute/disks/';

export interface DevVolumesOptions extends PollerOptions {
  client: KubeClient;
  /** The AKS cluster's region the disk driver creates disks in. Default westeurope. */
  clusterLocation?: string;
}

export class DevVolumes extends DevPoller {
  constructor(private readonly o: DevVolumesOptions) {
    super('dev.volumes', o);
  }

  async tick(): Promise<void> {
    const c = this.o.client;
    const claims = ((await c.call('list pvcs', (o) => c.core.listPersistentVolumeClaimForAllNamespaces({}, o))) as unknown as List<ClaimObj>).items;
    if (claims.some((cl) => !cl.spec.volumeName)) await this.provisionImmediate(claims);
  }

  /** external-provisioner for each unbound claim whose class binds Immediately: the PV, with the claim as its claimRef. */
  private async provisionImmediate(claims: ClaimObj[]): Promise<void> {
    const c = this.o.client;
    const classList = (await c.call('list storageclasses', (o) => c.storage.listStorageClass({}, o))) as unknown as List<RawObject>;
    const classes = new Map<string, StorageClass>(classList.items.map((raw) => toStorageClass(raw)).map((sc) => [sc.metadata.name, sc]));
    let nodeZones: string[] | undefined;
    for (const claim of claims) {
      if (claim.spec.volumeName || claim.metadata.deletionTimestamp) continue;
      const sc = bindsImmediately(toPersistentVolumeClaim(claim as unknown as RawObject), classes);
      if (!sc) continue;
      nodeZones ??= ((await c.call('list nodes', (o) => c.core.listNode({}, o))) as unknown as List<{ metadata: { labels?: Record<string, string> } }>).items
        .flatMap((n) => n.metadata.labels?.[LABEL_DISK_CSI_ZONE] ?? []);
      const { name, namespace, uid } = claim.metadata;
      const planned = planImmediateVolume({ namespace, name, uid }, sc, { clusterLocation: this.o.clusterLocation ?? DEFAULT_CLUSTER_LOCATION, nodeZones });
      const body = {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: planned.volumeName, annotations: { 'pv.kubernetes.io/provisioned-by': planned.driver } },
        spec: {
          capacity: { storage: claim.spec.resources?.requests?.storage ?? '1Gi' },
          accessModes: claim.spec.accessModes ?? ['ReadWriteOnce'],
          ...(claim.spec.volumeMode ? { volumeMode: claim.spec.volumeMode } : {}),
          persistentVolumeReclaimPolicy: 'Delete',
          storageClassName: sc.metadata.name,
          csi: { driver: planned.driver, volumeHandle: `${DISK_ID_PREFIX}${planned.volumeName}` },
          claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace, name, uid },
          ...(planned.zones ? { nodeAffinity: { required: { nodeSelectorTerms: nodeAffinityTerms(planned.zones) } } } : {}),
        },
      } as unknown as V1PersistentVolume;
      // The name is the claim's uid: a second tick (or a restarted dev) finds it already there.
      await c.call('create pv', (o) => c.core.createPersistentVolume({ body }, o)).catch((e: unknown) => {
        if (!(e instanceof KubeApiError && e.code === 409)) throw e;
      });
    }
  }
}
