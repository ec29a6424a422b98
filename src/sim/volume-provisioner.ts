import { LABEL_DISK_CSI_ZONE, LABEL_ZONE } from '../apis/well-known.js';
import { zoneLabel } from '../catalog/skus.js';
import type { NodeAffinityTerm, PersistentVolume, PersistentVolumeClaim, StorageClass } from '../ports/cluster.js';
import { ZONED_REGIONS } from './arm/sku-catalog.js';
import type { FakeCluster } from './cluster.js';

/**
 * The simulated cluster's dynamic provisioning for claims that bind Immediately: what the
 * Azure disk CSI driver's external-provisioner does as soon as such a PVC exists, without
 * waiting for a pod (docs/fidelity.md). The simulator (`SimVolumeProvisioner`) and `azflex
 * dev` (src/dev/volumes.ts) both plan with `planImmediateVolume`, so a pod using such a claim
 * sees a bound PV with the driver's node affinity, which volume topology then follows.
 *
 * external-provisioner (pkg/controller/topology.go, GenerateAccessibilityRequirements, no
 * selected node): requisite = the StorageClass's allowedTopologies flattened, else every
 * topology the cluster's nodes registered; sorted, and preferred = requisite rotated by a
 * hash of the PVC name plus its StatefulSet ordinal, so replicas spread over zones.
 * Azure disk CSI driver (CreateVolume): the disk goes to the class's `location` parameter
 * or the cluster's region; its zone is the first preferred (then requisite) zone of that
 * region, none: a regional disk (zone ""). A ZRS disk is reachable from every zone of the
 * region and from nodes without one. Other provisioners (Azure Files, Blob) are not zonal.
 */

const DISK_PROVISIONERS: ReadonlySet<string> = new Set(['disk.csi.azure.com', 'kubernetes.io/azure-disk']);
/** Static provisioning only: an administrator creates the PVs (the claim waits for one). */
export const NO_PROVISIONER = 'kubernetes.io/no-provisioner';

/** What the provisioner creates for one claim: the PV and where it may be used. */
export interface PlannedVolume {
  volumeName: string;
  /** The CSI driver named in the PV (the class's provisioner, the in-tree name mapped to CSI). */
  driver: string;
  /** Zone values of the PV's node affinity, one term each ("" = a node without a zone); undefined: any node. */
  zones: string[] | undefined;
  /** The region the disk is created in (disk provisioners). */
  location?: string;
}

export interface ClusterTopology {
  /** The AKS cluster's own region (its system nodes; the disk driver's default location). */
  clusterLocation: string;
  /** Zone values nodes registered for the disk driver (`topology.disk.csi.azure.com/zone`). */
  nodeZones: Iterable<string>;
}

/**
 * Whether this claim is one the external-provisioner provisions now: unbound, alive, of a
 * class that binds Immediately and has a dynamic provisioner.
 */
export function bindsImmediately(claim: PersistentVolumeClaim, classes: ReadonlyMap<string, StorageClass>): StorageClass | undefined {
  if (claim.spec.volumeName || claim.metadata.deletionTimestamp || claim.status.phase === 'Lost') return undefined;
  const sc = claim.spec.storageClassName ? classes.get(claim.spec.storageClassName) : undefined;
  return sc && provisionsImmediately(sc) ? sc : undefined;
}

/** Immediate (the API default) with a dynamic provisioner. */
export function provisionsImmediately(sc: StorageClass): boolean {
  return sc.volumeBindingMode !== 'WaitForFirstConsumer' && sc.provisioner !== NO_PROVISIONER;
}

/**
 * The PV for an Immediate claim `namespace/name` (uid: the claim's, for upstream's `pvc-<uid>`
 * names; hashName: the name the zone rotation hashes when the simulator names the claim
 * differently from Kubernetes, as for StatefulSet claims).
 */
export function planImmediateVolume(claim: { namespace: string; name: string; uid?: string; hashName?: string }, sc: StorageClass, cluster: ClusterTopology): PlannedVolume {
  const volumeName = `pvc-${claim.uid || `${claim.namespace}-${claim.name}`}`;
  if (!DISK_PROVISIONERS.has(sc.provisioner)) return { volumeName, driver: sc.provisioner, zones: undefined };
  const params = lowerKeys(sc.parameters ?? {});
  const location = (params.location || cluster.clusterLocation).toLowerCase();
  const sku = (params.skuname ?? params.storageaccounttype ?? '').toLowerCase();
  const driver = 'disk.csi.azure.com';
  if (sku.endsWith('_zrs')) {
    return { volumeName, driver, location, zones: [...regionZones(location), ''] };
  }
  const requisite = [...new Set(allowedZones(sc) ?? aggregatedZones(cluster))].sort();
  const preferred = rotate(requisite, pvcNameOffset(claim.hashName ?? claim.name));
  const zone = preferred.find((z) => z.startsWith(`${location}-`)) ?? '';
  return { volumeName, driver, location, zones: [zone] };
}

/** The PV object (the parts the ClusterPort models) for a planned volume. */
export function plannedVolumeObject(v: PlannedVolume, storageClassName: string): PersistentVolume {
  return {
    metadata: { name: v.volumeName, uid: '', labels: {}, annotations: {}, finalizers: [], creationTimestamp: '' },
    spec: { storageClassName, ...(v.zones ? { nodeAffinity: { required: { nodeSelectorTerms: nodeAffinityTerms(v.zones) } } } : {}) },
  };
}

/** One term per accessible zone, with the driver's own key, as external-provisioner writes them. */
export function nodeAffinityTerms(zones: readonly string[]): NodeAffinityTerm[] {
  return zones.map((z) => ({ matchExpressions: [{ key: LABEL_DISK_CSI_ZONE, operator: 'In', values: [z] }] }));
}

/** The cluster's registered zones: its system nodes across the region's zones, and every node's. */
function aggregatedZones(cluster: ClusterTopology): string[] {
  return [...regionZones(cluster.clusterLocation), ...cluster.nodeZones];
}

/** allowedTopologies flattened to zone values (either zone key); undefined when the class has none. */
function allowedZones(sc: StorageClass): string[] | undefined {
  const terms = sc.allowedTopologies ?? [];
  if (terms.length === 0) return undefined;
  return terms.flatMap((t) => t.matchLabelExpressions.filter((e) => e.key === LABEL_DISK_CSI_ZONE || e.key === LABEL_ZONE).flatMap((e) => e.values));
}

function regionZones(location: string): string[] {
  return ZONED_REGIONS.has(location) ? ['1', '2', '3'].map((z) => zoneLabel(location, z)) : [];
}

function rotate<T>(xs: readonly T[], by: number): T[] {
  if (xs.length === 0) return [];
  const i = by % xs.length;
  return [...xs.slice(i), ...xs.slice(0, i)];
}

/**
 * external-provisioner's getPVCNameHashAndIndexOffset: FNV-1a (32 bit) of the name without
 * a trailing "-<ordinal>", plus the ordinal, so "data-web-0", "data-web-1"… take successive zones.
 */
export function pvcNameOffset(name: string): number {
  const m = /^(.*)-(\d+)$/.exec(name);
  const base = m ? m[1]! : name;
  const index = m ? Number(m[2]!) % 2 ** 32 : 0;
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(base, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return (h + index) >>> 0;
}

function lowerKeys(o: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k.toLowerCase(), v]));
}

/**
 * The simulator's external-provisioner: each tick, every claim that binds Immediately gets its
 * PV and is bound, and so does each pending pod's generic ephemeral volume (and StatefulSet
 * claim template, which the manifests turn into one) whose class binds Immediately, since
 * its claim is created with the pod. Deterministic: the zone follows the claim's name.
 */
export class SimVolumeProvisioner {
  constructor(
    private readonly cluster: FakeCluster,
    private readonly clusterLocation: string,
  ) {}

  tick(): void {
    const classes: ReadonlyMap<string, StorageClass> = this.cluster.storageClasses;
    // Most worlds have no such class: nothing to look at.
    if (![...classes.values()].some(provisionsImmediately)) return;
    let topology: ClusterTopology | undefined;
    const bind = (namespace: string, name: string, sc: StorageClass, existing?: PersistentVolumeClaim, hashName?: string): void => {
      topology ??= { clusterLocation: this.clusterLocation, nodeZones: [...this.cluster.nodes.values()].flatMap((n) => n.metadata.labels[LABEL_DISK_CSI_ZONE] ?? []) };
      const planned = planImmediateVolume({ namespace, name, ...(existing?.metadata.uid ? { uid: existing.metadata.uid } : {}), ...(hashName ? { hashName } : {}) }, sc, topology);
      this.cluster.putStorage({ kind: 'PersistentVolume', value: plannedVolumeObject(planned, sc.metadata.name) });
      const meta = existing?.metadata ?? { name, namespace, uid: '', labels: {}, annotations: {}, finalizers: [], creationTimestamp: '' };
      this.cluster.putStorage({
        kind: 'PersistentVolumeClaim',
        value: { metadata: { ...meta, namespace }, spec: { storageClassName: sc.metadata.name, volumeName: planned.volumeName }, status: { phase: 'Bound' } },
      });
    };
    for (const claim of [...this.cluster.persistentVolumeClaims.values()]) {
      const sc = bindsImmediately(claim, classes);
      if (sc) bind(claim.metadata.namespace, claim.metadata.name, sc, claim);
    }
    for (const pod of this.cluster.pods.values()) {
      if (pod.spec.nodeName) continue;
      for (const v of pod.spec.volumes ?? []) {
        if (!v.ephemeral) continue;
        const name = `${pod.metadata.name}-${v.name}`;
        if (this.cluster.persistentVolumeClaims.has(`${pod.metadata.namespace}/${name}`)) continue;
        const sc = classes.get(v.ephemeral.storageClassName ?? '');
        // The StatefulSet controller names a replica's claim "<template>-<pod>" ("data-db-0").
        if (sc && provisionsImmediately(sc)) bind(pod.metadata.namespace, name, sc, undefined, pod.ownerKind === 'StatefulSet' ? `${v.name}-${pod.metadata.name}` : undefined);
      }
    }
  }
}
