/**
 * Volume topology: the node requirements a pending pod's volumes impose, with Karpenter
 * core's semantics (pkg/controllers/provisioning/scheduling/volumetopology.go), read from
 * the cluster's PVCs, PVs and StorageClasses:
 *  - a PVC bound to a PV: the PV's required node affinity (its first term: terms are OR'ed
 *    and a NodeClaim is planned for one of them). A zonal Azure disk carries
 *    `topology.disk.csi.azure.com/zone In [westeurope-2]`, so its pod only gets a node in
 *    that zone, hence that region. Local and hostPath volumes drop their hostname pin: a new
 *    node can never be the old host.
 *  - an unbound PVC whose StorageClass binds on first consumer: the class's
 *    allowedTopologies (first term), since the volume will be provisioned where the pod lands;
 *  - an unbound PVC that binds Immediately (the default), a missing PVC, PV or StorageClass,
 *    a PVC being deleted or Lost: the pod waits, with that reason (kube-scheduler waits too).
 * The requirements narrow where the pod's NodeClaim may go; they are not the pod's own
 * affinity, so topology spread still counts the pod by what it declares.
 */
import type {
  NodeSelectorRequirement, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass, Volume,
} from '../ports/cluster.js';
import { ANNOTATION_DEFAULT_STORAGE_CLASS, LABEL_DISK_CSI_ZONE, LABEL_HOSTNAME, LABEL_REGION, LABEL_ZONE } from '../apis/well-known.js';

/** What volume topology reads: the cluster's PVCs, PVs and StorageClasses. */
export interface StorageObjects {
  claims: readonly PersistentVolumeClaim[];
  volumes: readonly PersistentVolume[];
  classes: readonly StorageClass[];
}

/** The pod's requirements, a reason it must wait, or undefined when its volumes pin nothing. */
export type VolumeRequirements = NodeSelectorRequirement[] | { error: string } | undefined;

/**
 * Keys that name the same domain as a well-known label: the Azure disk CSI driver's zone key
 * (the Azure provider normalizes it to the zone label the same way) and the deprecated
 * failure-domain labels (Karpenter's NormalizedLabels).
 */
const NORMALIZED_KEYS: Readonly<Record<string, string>> = {
  [LABEL_DISK_CSI_ZONE]: LABEL_ZONE,
  'failure-domain.beta.kubernetes.io/zone': LABEL_ZONE,
  'failure-domain.beta.kubernetes.io/region': LABEL_REGION,
};

export class VolumeTopology {
  private readonly claims: Map<string, PersistentVolumeClaim>;
  private readonly volumes: Map<string, PersistentVolume>;
  private readonly classes: Map<string, StorageClass>;

  constructor(storage: StorageObjects) {
    this.claims = new Map(storage.claims.map((c) => [`${c.metadata.namespace}/${c.metadata.name}`, c]));
    this.volumes = new Map(storage.volumes.map((v) => [v.metadata.name, v]));
    this.classes = new Map(storage.classes.map((c) => [c.metadata.name, c]));
  }

  /** Whether any pod could have volume requirements (no PVC-backed volume anywhere: skip the work). */
  static needed(pods: readonly Pod[]): boolean {
    return pods.some((p) => p.spec.volumes?.some((v) => v.persistentVolumeClaim || v.ephemeral));
  }

  requirements(pod: Pod): VolumeRequirements {
    let out: NodeSelectorRequirement[] | undefined;
    for (const volume of pod.spec.volumes ?? []) {
      const r = this.ofVolume(pod, volume);
      if (r === undefined) continue;
      if ('error' in r) return r;
      (out ??= []).push(...r);
    }
    return out;
  }

  private ofVolume(pod: Pod, volume: Volume): VolumeRequirements {
    let claimName: string;
    if (volume.persistentVolumeClaim) claimName = volume.persistentVolumeClaim.claimName;
    else if (volume.ephemeral) {
      // A running pod's ephemeral volume is deleted with it: it pins no replacement.
      if (pod.spec.nodeName) return undefined;
      claimName = `${pod.metadata.name}-${volume.name}`;
    } else return undefined;
    const ref = `${pod.metadata.namespace}/${claimName}`;
    const claim = this.claims.get(ref);
    if (!claim) {
      // The ephemeral-volume controller creates the PVC right after the pod, from its template.
      if (volume.ephemeral) return this.ofStorageClass(ref, volume.ephemeral.storageClassName);
      return { error: `persistentvolumeclaim "${ref}" not found` };
    }
    if (claim.metadata.deletionTimestamp) return { error: `persistentvolumeclaim "${ref}" is being deleted` };
    if (claim.status.phase === 'Lost') return { error: `persistentvolumeclaim "${ref}" is bound to a persistentvolume that no longer exists` };
    if (claim.spec.volumeName) return this.ofVolumeName(ref, claim.spec.volumeName);
    return this.ofStorageClass(ref, claim.spec.storageClassName);
  }

  private ofVolumeName(ref: string, volumeName: string): VolumeRequirements {
    const pv = this.volumes.get(volumeName);
    if (!pv) return { error: `persistentvolume "${volumeName}" of persistentvolumeclaim "${ref}" not found` };
    if (pv.metadata.deletionTimestamp) return { error: `persistentvolume "${volumeName}" of persistentvolumeclaim "${ref}" is being deleted` };
    const first = pv.spec.nodeAffinity?.required?.nodeSelectorTerms[0];
    if (!first) return undefined;
    const dropHost = pv.spec.local === true || pv.spec.hostPath === true;
    const out = first.matchExpressions.filter((r) => !(dropHost && r.key === LABEL_HOSTNAME)).map(normalize);
    return out.length > 0 ? out : undefined;
  }

  private ofStorageClass(ref: string, storageClassName: string | undefined): VolumeRequirements {
    if (!storageClassName) return { error: `unbound persistentvolumeclaim "${ref}" names no storage class` };
    const sc = this.classes.get(storageClassName);
    if (!sc) return { error: `storageclass "${storageClassName}" of persistentvolumeclaim "${ref}" not found` };
    // Immediate is the API default: the volume is provisioned without regard to the pod, so
    // where the pod may run is unknown until it is bound.
    if (sc.volumeBindingMode !== 'WaitForFirstConsumer') {
      return { error: `persistentvolumeclaim "${ref}" is not bound yet (storageclass "${storageClassName}" binds Immediately); waiting for its volume` };
    }
    const first = sc.allowedTopologies?.[0];
    if (!first || first.matchLabelExpressions.length === 0) return undefined;
    return first.matchLabelExpressions.map((e) => normalize({ key: e.key, operator: 'In', values: [...e.values] }));
  }
}

/**
 * Maps alternative zone/region keys onto the well-known ones. The disk CSI driver writes
 * zone "" for a regional (non-zonal) disk: that is a node without a zone label.
 */
function normalize(r: NodeSelectorRequirement): NodeSelectorRequirement {
  const key = NORMALIZED_KEYS[r.key] ?? r.key;
  if (key === LABEL_ZONE && r.operator === 'In' && r.values?.includes('')) {
    const zones = r.values.filter((v) => v !== '');
    // A disk usable both with and without a zone cannot be said as one requirement: prefer zonal nodes.
    return zones.length === 0 ? { key, operator: 'DoesNotExist' } : { key, operator: 'In', values: zones };
  }
  return key === r.key ? r : { ...r, key };
}

/** The default StorageClass, as the DefaultStorageClass admission plugin picks it for a PVC without one. */
export function defaultStorageClass(classes: readonly StorageClass[]): StorageClass | undefined {
  const defaults = classes.filter((c) => c.metadata.annotations[ANNOTATION_DEFAULT_STORAGE_CLASS] === 'true');
  // Several defaults: the API server takes the newest.
  return defaults.sort((a, b) => b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp) || a.metadata.name.localeCompare(b.metadata.name))[0];
}
