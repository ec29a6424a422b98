import { validateNodeClassSpec } from '../apis/nodeclass-validation.js';
import { DurationError, parseDuration } from '../utils/duration.js';
import { parseCron } from '../utils/cron.js';
import { toNodeClass, toNodePool, toPersistentVolume, toPersistentVolumeClaim, toStorageClass } from '../k8s/resources.js';
import type { AzureFlexNodeClass, NodePool, PersistentVolumeClaim } from '../ports/cluster.js';
import { defaultStorageClass } from '../provisioning/volume-topology.js';
import type { ClusterSetup, WorkloadSpec } from './cluster-setup.js';
import { checkManifest } from './crd-validation.js';
import { SnapshotReader } from './snapshot.js';
import { arrayOf, checkMetadata, volumeClaims } from './manifest-pod-spec.js';
import { manifestFiles, manifestItems } from './manifest-files.js';
import { MAX_MANIFEST_PODS, pdbOf, workloadOf } from './manifest-workloads.js';
import { isKnownSku, LIMITS, quantity, ScenarioError, unknownSku } from './scenario.js';
import { LABEL_INSTANCE_TYPE, NODECLASS_GROUP, NODECLASS_KIND } from '../apis/well-known.js';

/**
 * `azflex simulate --manifests`: the YAML a user would `kubectl apply`, checked the way the
 * API server and the controller check it (the CRDs' OpenAPI schemas with defaults and
 * strict field validation, then the controller's own NodeClass validation and conversions),
 * turned into the simulated cluster's starting objects.
 */
/** Built-in kinds that do not change what gets scheduled: accepted and counted, not simulated. */
const IGNORED_KINDS = new Set([
  'Namespace', 'Service', 'ConfigMap', 'ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding',
  'Ingress', 'IngressClass', 'NetworkPolicy', 'HorizontalPodAutoscaler', 'PriorityClass', 'LimitRange', 'ResourceQuota', 'Endpoints', 'EndpointSlice',
  'CustomResourceDefinition', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding',
  'CSIDriver', 'RuntimeClass', 'Lease', 'APIService', 'VolumeSnapshotClass',
]);
const SUPPORTED = [
  'AzureFlexNodeClass', 'NodePool', 'Deployment', 'StatefulSet', 'Job', 'Pod', 'PodDisruptionBudget', 'PersistentVolumeClaim', 'PersistentVolume', 'StorageClass', 'Node', 'NodeClaim',
];
/** The apiVersion the API server serves each simulated built-in kind at (older ones are gone: apps/v1beta1 since 1.16, policy/v1beta1 since 1.25). */
const API_VERSIONS: Record<string, string> = {
  Deployment: 'apps/v1', StatefulSet: 'apps/v1', Job: 'batch/v1', Pod: 'v1', Node: 'v1', PodDisruptionBudget: 'policy/v1', PersistentVolumeClaim: 'v1', PersistentVolume: 'v1', StorageClass: 'storage.k8s.io/v1',
};
/** API groups whose kinds the simulator knows: a kind of theirs that it does not simulate is refused, not ignored. */
const OWN_GROUPS = new Set(['karpenter.sh', 'karpenter.azure.com', NODECLASS_GROUP]);
/**
 * Another project's custom resource (ServiceMonitor, Certificate…): `kubectl apply` takes it
 * when its CRD is installed, and it schedules no pods, so it is ignored. Built-in groups are
 * the core group and the dot-less or `*.k8s.io` ones.
 */
function isOtherCustomResource(apiVersion: string): boolean {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  return group.includes('.') && !group.endsWith('.k8s.io') && !OWN_GROUPS.has(group);
}
/** A NodePool of AKS node auto-provisioning (an AKSNodeClass's): another provisioner's, whose nodes a snapshot brings as existing capacity. */
function isAutoProvisioningPool(o: Raw): boolean {
  const ref = ((((o.spec as Raw | undefined)?.template as Raw | undefined)?.spec as Raw | undefined)?.nodeClassRef ?? {}) as Raw;
  return ref.kind === 'AKSNodeClass' && ref.group === 'karpenter.azure.com';
}

/** The StorageClasses every AKS cluster has (disk classes bind WaitForFirstConsumer): a claim may name them without the manifests defining them. */
const AKS_STORAGE_CLASSES = new Set(['default', 'managed', 'managed-csi', 'managed-csi-premium', 'managed-premium', 'azurefile', 'azurefile-csi', 'azurefile-csi-premium', 'azurefile-premium']);

export interface LoadedManifests extends ClusterSetup {
  files: string[];
  ignored: string[];
  persistentVolumeClaims: string[];
}

type Raw = Record<string, unknown>;

export function loadManifests(paths: readonly string[], opts: { recursive?: boolean } = {}): LoadedManifests {
  const files = manifestFiles(paths, opts.recursive ?? false);
  const load = new ManifestLoad(files);
  for (const { item, where } of manifestItems(files)) load.add(objectOf(item, where), where);
  return load.finish();
}

/**
 * One load's objects as they come, and what can only be checked once all are in: names a
 * StatefulSet's pods take, the StorageClasses and claims that pods and claims name.
 */
class ManifestLoad {
  private readonly storage = { claims: [] as PersistentVolumeClaim[], volumes: [] as NonNullable<ClusterSetup['storage']>['volumes'], classes: [] as NonNullable<ClusterSetup['storage']>['classes'] };
  private readonly setup: LoadedManifests;
  /** Where each object came from, by kind, namespace and name (setup.sources). */
  private readonly sources: Record<string, string> = {};
  private readonly pvcTemplates = new Map<string, string>();
  private readonly storageClassRefs: Array<{ where: string; name: unknown }> = [];
  private readonly statefulSetPods: Array<{ namespace: string; name: string; replicas: number; at: string }> = [];
  private readonly podVolumes: Array<{ where: string; namespace: string; claims: string[] }> = [];
  private readonly snapshot = new SnapshotReader();
  private pods = 0;

  constructor(files: string[]) {
    this.setup = {
      nodeClasses: [], nodePools: [], workloads: [], podDisruptionBudgets: [], storage: this.storage, sources: this.sources, files, ignored: [], persistentVolumeClaims: [],
    };
  }

  /** One object: its apiVersion and metadata checked, its name unique for its kind, then taken by kind. */
  add(o: Raw, where: string): void {
    const kind = o.kind as string;
    const name = (o.metadata as Raw).name as string;
    const at = `${where}: ${kind} ${name}`;
    const served = API_VERSIONS[kind];
    if (served !== undefined && o.apiVersion !== served) throw new ScenarioError(`${at}: no matches for kind "${kind}" in version "${String(o.apiVersion)}" (${kind} is ${served})`);
    checkMetadata(o.metadata as Raw, 'metadata', (path, m) => {
      throw new ScenarioError(`${at}: ${path}: ${m}`);
    });
    const key = `${kind}/${namespaceOf(o, kind, where)}/${name}`;
    if (this.sources[key] !== undefined) throw new ScenarioError(`${at}: duplicate name (also in ${this.sources[key]})`);
    this.sources[key] = where;
    this.addKind(o, kind, name, where, at);
    if (this.setup.nodeClasses.length > LIMITS.nodeClasses) throw new ScenarioError(`${at}: more than ${LIMITS.nodeClasses} AzureFlexNodeClasses`);
    if (this.setup.nodePools.length > LIMITS.nodePools) throw new ScenarioError(`${at}: more than ${LIMITS.nodePools} NodePools`);
  }

  private addKind(o: Raw, kind: string, name: string, where: string, at: string): void {
    const { setup, snapshot } = this;
    switch (kind) {
      case 'AzureFlexNodeClass':
        setup.nodeClasses.push(nodeClassOf(o, at));
        this.sources[`AzureFlexNodeClass/${name}`] = where;
        return;
      case 'NodePool':
        if (isAutoProvisioningPool(o)) setup.ignored.push(`NodePool/${name} (node auto-provisioning's)`);
        else setup.nodePools.push(nodePoolOf(o, at));
        return;
      case 'Node':
        snapshot.node(o, at);
        return;
      case 'NodeClaim':
        if (snapshot.nodeClaim(o, at) === 'ignored') setup.ignored.push(`NodeClaim/${name} (another provisioner's)`);
        return;
      case 'Secret':
        throw new ScenarioError(`${at}: Secrets are refused: they change nothing the simulation schedules, and a file that holds them holds credentials; take them out (docs/simulate.md says how to take a snapshot without them)`);
      case 'PodDisruptionBudget':
        setup.podDisruptionBudgets.push(pdbOf(o, namespaceOf(o, kind), at));
        return;
      case 'PersistentVolumeClaim':
      case 'PersistentVolume':
      case 'StorageClass':
        this.addStorage(o, kind, name, at);
        return;
      case 'Deployment':
      case 'StatefulSet':
      case 'Job':
      case 'Pod':
        this.addPods(o, kind, name, at);
        return;
      default:
        if (IGNORED_KINDS.has(kind) || isOtherCustomResource(String(o.apiVersion))) setup.ignored.push(`${kind}/${name}`);
        else throw new ScenarioError(`${at}: kind ${kind} (${String(o.apiVersion)}) is not simulated: take it out of --manifests (simulated: ${SUPPORTED.join(', ')}; ignored: Services, ConfigMaps, RBAC and other kinds that schedule no pods, and other projects' custom resources)`);
    }
  }

  private addStorage(o: Raw, kind: 'PersistentVolumeClaim' | 'PersistentVolume' | 'StorageClass', name: string, at: string): void {
    const { storage } = this;
    if (kind === 'PersistentVolumeClaim') {
      claimSpecOf(o.spec, `${at}: spec`);
      this.storageClassRefs.push({ where: `${at}: spec.storageClassName`, name: (o.spec as Raw | undefined)?.storageClassName });
      storage.claims.push(toPersistentVolumeClaim({ ...o, metadata: { ...(o.metadata as Raw), namespace: namespaceOf(o, kind) } }));
      this.setup.persistentVolumeClaims.push(`${namespaceOf(o, kind)}/${name}`);
    } else if (kind === 'PersistentVolume') {
      pvOf(o, at);
      storage.volumes.push(toPersistentVolume(o));
    } else {
      storage.classes.push(storageClassOf(o, at));
    }
  }

  /** A workload, or a Pod: one that ended holds nothing, one on a node is a snapshot's bound pod. */
  private addPods(o: Raw, kind: string, name: string, at: string): void {
    const phase = (o.status as Raw | undefined)?.phase;
    if (kind === 'Pod' && (phase === 'Succeeded' || phase === 'Failed')) {
      this.setup.ignored.push(`Pod/${namespaceOf(o, kind)}/${name} (${phase}: holds nothing)`);
      return;
    }
    if (kind === 'Pod' && typeof (o.spec as Raw | undefined)?.nodeName === 'string') {
      if (++this.pods > MAX_MANIFEST_PODS) throw new ScenarioError(`${at}: the manifests ask for more than ${MAX_MANIFEST_PODS} pods`);
      this.snapshot.boundPod(o, namespaceOf(o, kind), at);
      return;
    }
    const w = workloadOf(o, kind, namespaceOf(o, kind), at);
    this.pods += w.replicas;
    if (this.pods > MAX_MANIFEST_PODS) throw new ScenarioError(`${at}: the manifests ask for more than ${MAX_MANIFEST_PODS} pods`);
    this.setup.workloads.push(w);
    const spec = kind === 'Pod' ? (o.spec as Raw) : (((o.spec as Raw).template as Raw | undefined)?.spec as Raw | undefined) ?? {};
    const claims = volumeClaims(spec);
    if (kind === 'StatefulSet') this.addClaimTemplates(o, w, at);
    this.podVolumes.push({ where: at, namespace: w.namespace, claims: kind === 'StatefulSet' ? claims.filter((c) => !this.pvcTemplates.has(`${w.namespace}/${c}`)) : claims });
    if (kind === 'StatefulSet') this.statefulSetPods.push({ namespace: w.namespace, name, replicas: w.replicas, at });
  }

  /**
   * A StatefulSet's volumeClaimTemplates: each replica's claim is a fresh, unbound PVC of the
   * template's class, created with the pod: for volume topology that is what a generic
   * ephemeral volume is.
   */
  private addClaimTemplates(o: Raw, w: WorkloadSpec, at: string): void {
    for (const [i, t] of arrayOf((o.spec as Raw).volumeClaimTemplates).entries()) {
      const tname = String(((t as Raw).metadata as Raw | undefined)?.name);
      claimSpecOf((t as Raw).spec, `${at}: spec.volumeClaimTemplates.${i}.spec`);
      this.storageClassRefs.push({ where: `${at}: spec.volumeClaimTemplates.${i}.spec.storageClassName`, name: ((t as Raw).spec as Raw | undefined)?.storageClassName });
      this.pvcTemplates.set(`${w.namespace}/${tname}`, at);
      const storageClassName = ((t as Raw).spec as Raw | undefined)?.storageClassName;
      w.template.spec.volumes = [
        ...(w.template.spec.volumes ?? []).filter((v) => v.name !== tname),
        { name: tname, ephemeral: typeof storageClassName === 'string' ? { storageClassName } : {} },
      ];
    }
  }

  /** What needs every object: pod names, the StorageClasses and claims named, defaults, the snapshot, the NodePools' NodeClasses. */
  finish(): LoadedManifests {
    const { setup, storage } = this;
    this.checkStatefulSetPodNames();
    const classNames = new Set(storage.classes.map((c) => c.metadata.name));
    for (const ref of this.storageClassRefs) {
      if (typeof ref.name === 'string' && ref.name !== '' && !classNames.has(ref.name) && !AKS_STORAGE_CLASSES.has(ref.name)) {
        throw new ScenarioError(`${ref.where}: StorageClass "${ref.name}" is neither in the manifests nor one AKS has (${[...AKS_STORAGE_CLASSES].join(', ')}); its claims would stay Pending`);
      }
    }
    const pvcs = new Set(setup.persistentVolumeClaims);
    for (const v of this.podVolumes) {
      for (const c of v.claims) if (!pvcs.has(`${v.namespace}/${c}`)) throw new ScenarioError(`${v.where}: volume claims PersistentVolumeClaim "${c}", which is not in the manifests`);
    }
    admitStorage(storage, setup.workloads);
    const existing = this.snapshot.finish(new Set(setup.nodePools.map((p) => p.metadata.name)), new Set(setup.nodeClasses.map((c) => c.metadata.name)));
    if (existing) setup.existing = existing;
    crossCheck(setup);
    return setup;
  }

  /** A Pod named like a StatefulSet's replica: the API server refuses whichever comes second. */
  private checkStatefulSetPodNames(): void {
    for (const sts of this.statefulSetPods) {
      const m = new RegExp(`^${sts.name.replace(/[.]/g, '\\.')}-(\\d+)$`);
      for (const w of this.setup.workloads) {
        const ordinal = m.exec(w.name)?.[1];
        if (w.template.ownerKind === undefined && w.namespace === sts.namespace && ordinal !== undefined && Number(ordinal) < sts.replicas && String(Number(ordinal)) === ordinal) {
          throw new ScenarioError(`${this.sources[`Pod/${w.namespace}/${w.name}`] ?? 'manifests'}: Pod ${w.name}: StatefulSet ${sts.name} (${sts.at.split(': ')[0]}) creates a pod of that name`);
        }
      }
    }
  }
}

/**
 * What the API server's DefaultStorageClass admission does on create: a PVC (or a claim
 * template) naming no class gets the default one, if the manifests define one.
 */
function admitStorage(storage: NonNullable<ClusterSetup['storage']>, workloads: WorkloadSpec[]): void {
  const fallback = defaultStorageClass(storage.classes)?.metadata.name;
  if (!fallback) return;
  for (const c of storage.claims) if (c.spec.storageClassName === undefined && !c.spec.volumeName) c.spec.storageClassName = fallback;
  for (const w of workloads) {
    for (const v of w.template.spec.volumes ?? []) if (v.ephemeral && v.ephemeral.storageClassName === undefined) v.ephemeral.storageClassName = fallback;
  }
}

function storageClassOf(o: Raw, at: string): ReturnType<typeof toStorageClass> {
  if (typeof o.provisioner !== 'string' || o.provisioner === '') throw new ScenarioError(`${at}: provisioner is required`);
  const mode = o.volumeBindingMode;
  if (mode !== undefined && mode !== 'Immediate' && mode !== 'WaitForFirstConsumer') {
    throw new ScenarioError(`${at}: volumeBindingMode: must be Immediate or WaitForFirstConsumer, got ${JSON.stringify(mode)}`);
  }
  return toStorageClass(o);
}

function objectOf(doc: unknown, where: string): Raw {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new ScenarioError(`${where}: a manifest is a mapping with apiVersion, kind and metadata`);
  const o = doc as Raw;
  if (typeof o.apiVersion !== 'string' || typeof o.kind !== 'string') throw new ScenarioError(`${where}: apiVersion and kind are required`);
  const meta = o.metadata as Raw | undefined;
  if (!meta || typeof meta !== 'object' || Array.isArray(meta)) throw new ScenarioError(`${where}: ${o.kind}: metadata is required, a mapping with a name`);
  if (meta.name === undefined) throw new ScenarioError(`${where}: ${o.kind}: metadata.name is required${meta.generateName !== undefined ? ' (kubectl apply does not take generateName)' : ''}`);
  if (typeof meta.name !== 'string') throw new ScenarioError(`${where}: ${o.kind}: metadata.name must be a string, got ${JSON.stringify(meta.name)}`);
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(meta.name) || meta.name.length > 253) throw new ScenarioError(`${where}: ${o.kind} "${meta.name}": metadata.name must be a lower-case DNS name`);
  return o;
}

function namespaceOf(o: Raw, kind: string, where = 'manifests'): string {
  if (kind === 'AzureFlexNodeClass' || kind === 'NodePool' || kind === 'Namespace' || kind.startsWith('Cluster')) return '';
  const ns = (o.metadata as Raw).namespace;
  if (ns !== undefined && (typeof ns !== 'string' || (ns !== '' && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(ns)))) {
    throw new ScenarioError(`${where}: ${kind} ${String((o.metadata as Raw).name)}: metadata.namespace ${JSON.stringify(ns).slice(0, 80)} is not a lower-case DNS label`);
  }
  return typeof ns === 'string' && ns !== '' ? ns : 'default';
}

// --- kinds -----------------------------------------------------------------------------------

function nodeClassOf(o: Raw, at: string): AzureFlexNodeClass {
  const nc = toNodeClass(checkManifest(o, 'AzureFlexNodeClass', at));
  const result = validateNodeClassSpec(nc.spec);
  if (!result.ok) throw new ScenarioError(`${at}: ${result.reason}: ${result.message}`);
  // The NodeClass controller would set Ready after validating; the simulation starts there.
  nc.status = { conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: '' }] };
  return nc;
}

function nodePoolOf(o: Raw, at: string): NodePool {
  const np = toNodePool(checkManifest(o, 'NodePool', at));
  const fail = (path: string, m: string): never => {
    throw new ScenarioError(`${at}: ${path}: ${m}`);
  };
  // Its name is the value of every node's karpenter.sh/nodepool label.
  if (np.metadata.name.length > 63 || np.metadata.name.includes('.')) fail('metadata.name', `"${np.metadata.name.slice(0, 80)}" cannot be a label value (at most 63 characters, no dots), and it is every node's karpenter.sh/nodepool label`);
  const ref = np.spec.template.spec.nodeClassRef;
  if (ref.group !== NODECLASS_GROUP || ref.kind !== NODECLASS_KIND) fail('spec.template.spec.nodeClassRef', `azflex simulates ${NODECLASS_KIND}.${NODECLASS_GROUP} NodePools, not ${ref.kind}.${ref.group}`);
  for (const [k, v] of Object.entries(np.spec.limits ?? {})) quantity(v, k, (m) => fail(`spec.limits.${k}`, m));
  for (const [i, r] of np.spec.template.spec.requirements.entries()) {
    if (r.key === LABEL_INSTANCE_TYPE && r.operator === 'In') for (const sku of r.values ?? []) if (!isKnownSku(sku)) fail(`spec.template.spec.requirements.${i}.values`, unknownSku(sku));
  }
  for (const [path, value] of [['spec.disruption.consolidateAfter', np.spec.disruption.consolidateAfter], ['spec.template.spec.expireAfter', np.spec.template.spec.expireAfter], ['spec.template.spec.terminationGracePeriod', np.spec.template.spec.terminationGracePeriod]] as const) {
    if (value === undefined) continue;
    try {
      parseDuration(value);
    } catch (err) {
      fail(path, err instanceof DurationError ? err.message : String(err));
    }
  }
  for (const [i, b] of np.spec.disruption.budgets.entries()) {
    if (!/^((100|[0-9]{1,2})%|[0-9]+)$/.test(b.nodes)) fail(`spec.disruption.budgets.${i}.nodes`, `"${b.nodes}" is not a node count or a percentage such as "10%"`);
    if (b.schedule !== undefined) {
      try {
        parseCron(b.schedule);
      } catch (err) {
        fail(`spec.disruption.budgets.${i}.schedule`, (err as Error).message);
      }
    }
  }
  return np;
}

/** A claim's spec (a PersistentVolumeClaim's or a StatefulSet's claim template's): size and access modes, as the API server checks them. */
function claimSpecOf(raw: unknown, at: string): void {
  const spec = (raw ?? {}) as Raw;
  const storage = ((spec.resources as Raw | undefined)?.requests as Raw | undefined)?.storage;
  if (typeof storage !== 'string' && typeof storage !== 'number') throw new ScenarioError(`${at}.resources.requests.storage: is required`);
  quantity(String(storage), 'storage', (m) => {
    throw new ScenarioError(`${at}.resources.requests.storage: ${m}`);
  });
  accessModes(spec.accessModes, `${at}.accessModes`);
}

/** A PersistentVolume: its capacity and access modes. */
function pvOf(o: Raw, at: string): void {
  const spec = (o.spec ?? {}) as Raw;
  const storage = (spec.capacity as Raw | undefined)?.storage;
  if (typeof storage !== 'string' && typeof storage !== 'number') throw new ScenarioError(`${at}: spec.capacity.storage: is required`);
  quantity(String(storage), 'storage', (m) => {
    throw new ScenarioError(`${at}: spec.capacity.storage: ${m}`);
  });
  accessModes(spec.accessModes, `${at}: spec.accessModes`);
}

function accessModes(raw: unknown, at: string): void {
  const modes = arrayOf(raw);
  if (modes.length === 0) throw new ScenarioError(`${at}: at least one is required`);
  for (const m of modes) if (!['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'].includes(String(m))) throw new ScenarioError(`${at}: "${String(m)}" is not an access mode`);
}


function crossCheck(setup: ClusterSetup): void {
  const classes = new Set(setup.nodeClasses.map((c) => c.metadata.name));
  for (const np of setup.nodePools) {
    const ref = np.spec.template.spec.nodeClassRef.name;
    if (!classes.has(ref)) {
      throw new ScenarioError(`${setup.sources?.[`NodePool//${np.metadata.name}`] ?? 'manifests'}: NodePool ${np.metadata.name}: spec.template.spec.nodeClassRef.name: no AzureFlexNodeClass named "${ref}" in the manifests`);
    }
  }
  if (setup.nodePools.length === 0) throw new ScenarioError('the manifests have no NodePool: nothing for azflex to provision');
}
