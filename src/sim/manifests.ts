import { existsSync, globSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { validateNodeClassSpec } from '../apis/nodeclass-validation.js';
import { DurationError, parseDuration } from '../utils/duration.js';
import { parseCron } from '../utils/cron.js';
import { toNodeClass, toNodePool, toPersistentVolume, toPersistentVolumeClaim, toStorageClass } from '../k8s/resources.js';
import { toPod } from '../k8s/pod.js';
import type { AzureFlexNodeClass, NodePool, PersistentVolumeClaim, Pod } from '../ports/cluster.js';
import { podRequests } from '../provisioning/resources.js';
import { defaultStorageClass } from '../provisioning/volume-topology.js';
import type { ClusterSetup, PodDisruptionBudgetSpec, WorkloadSpec } from './cluster-setup.js';
import { checkManifest } from './crd-validation.js';
import { SnapshotReader } from './snapshot.js';
import { podTemplateHash } from './pod-names.js';
import { arrayOf, checkMetadata, checkScheduling, checkSelector, podSpecOf, volumeClaims } from './manifest-pod-spec.js';
import { InputFileError, MAX_INPUT_FILE_BYTES, parseYamlDocuments, readBoundedFile } from './input-files.js';
import { fitsNoVmSize, isKnownSku, LIMITS, quantity, ScenarioError, unknownSku } from './scenario.js';
import { LABEL_INSTANCE_TYPE, NODECLASS_GROUP, NODECLASS_KIND } from '../apis/well-known.js';

/**
 * `azflex simulate --manifests`: the YAML a user would `kubectl apply`, checked the way the
 * API server and the controller check it (the CRDs' OpenAPI schemas with defaults and
 * strict field validation, then the controller's own NodeClass validation and conversions),
 * turned into the simulated cluster's starting objects.
 */
export const MAX_MANIFEST_FILES = 1000;
/** All manifests together: parsing runs at about 0.07 s of CPU per MiB, so 8 MiB are refused (or read) within about a second. */
export const MAX_MANIFEST_BYTES = 8 * MAX_INPUT_FILE_BYTES;
export const MAX_MANIFEST_PODS = 100_000;
/** How long a Job's pods run in the simulation (Kubernetes manifests cannot say). */
export const ANNOTATION_RUN_SECONDS = 'simulate.azflex.io/run-seconds';

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
  const storage = { claims: [] as PersistentVolumeClaim[], volumes: [] as NonNullable<ClusterSetup['storage']>['volumes'], classes: [] as NonNullable<ClusterSetup['storage']>['classes'] };
  const setup: LoadedManifests = {
    nodeClasses: [], nodePools: [], workloads: [], podDisruptionBudgets: [], storage, sources: {}, files, ignored: [], persistentVolumeClaims: [],
  };
  const pvcTemplates = new Map<string, string>();
  const storageClassRefs: Array<{ where: string; name: unknown }> = [];
  const statefulSetPods: Array<{ namespace: string; name: string; replicas: number; at: string }> = [];
  const podVolumes: Array<{ where: string; namespace: string; claims: string[] }> = [];
  const snapshot = new SnapshotReader();
  let bytes = 0;
  let pods = 0;
  for (const file of files) {
    const text = readOrThrow(file);
    bytes += text.length;
    if (bytes > MAX_MANIFEST_BYTES) throw new ScenarioError(`${file}: the manifests add up to more than ${MAX_MANIFEST_BYTES} bytes`);
    for (const [d, doc] of parseOrThrow(text, file).entries()) {
      const where = `${file}${d > 0 ? ` (document ${d + 1})` : ''}`;
      if (isKustomization(doc, file)) throw new ScenarioError(`${where}: a kustomization is kustomize's input, not an object to apply (kubectl apply -f refuses it too): pass what \`kubectl kustomize ${dirname(file)}\` prints instead`);
      for (const item of listItems(doc, where)) {
        const o = objectOf(withoutNulls(item), where);
        const kind = o.kind as string;
        const name = (o.metadata as Raw).name as string;
        const at = `${where}: ${kind} ${name}`;
        const served = API_VERSIONS[kind];
        if (served !== undefined && o.apiVersion !== served) throw new ScenarioError(`${at}: no matches for kind "${kind}" in version "${String(o.apiVersion)}" (${kind} is ${served})`);
        checkMetadata(o.metadata as Raw, 'metadata', (path, m) => {
          throw new ScenarioError(`${at}: ${path}: ${m}`);
        });
        const key = `${kind}/${namespaceOf(o, kind, where)}/${name}`;
        if (setup.sources![key] !== undefined) throw new ScenarioError(`${at}: duplicate name (also in ${setup.sources![key]})`);
        setup.sources![key] = where;
        switch (kind) {
          case 'AzureFlexNodeClass':
            setup.nodeClasses.push(nodeClassOf(o, at));
            setup.sources![`AzureFlexNodeClass/${name}`] = where;
            break;
          case 'NodePool':
            if (isAutoProvisioningPool(o)) setup.ignored.push(`NodePool/${name} (node auto-provisioning's)`);
            else setup.nodePools.push(nodePoolOf(o, at));
            break;
          case 'Node':
            snapshot.node(o, at);
            break;
          case 'NodeClaim':
            if (snapshot.nodeClaim(o, at) === 'ignored') setup.ignored.push(`NodeClaim/${name} (another provisioner's)`);
            break;
          case 'Secret':
            throw new ScenarioError(`${at}: Secrets are refused: they change nothing the simulation schedules, and a file that holds them holds credentials; take them out (docs/simulate.md says how to take a snapshot without them)`);
          case 'PodDisruptionBudget':
            setup.podDisruptionBudgets.push(pdbOf(o, at));
            break;
          case 'PersistentVolumeClaim':
            claimSpecOf(o.spec, `${at}: spec`);
            storageClassRefs.push({ where: `${at}: spec.storageClassName`, name: (o.spec as Raw | undefined)?.storageClassName });
            storage.claims.push(toPersistentVolumeClaim({ ...o, metadata: { ...(o.metadata as Raw), namespace: namespaceOf(o, kind) } }));
            setup.persistentVolumeClaims.push(`${namespaceOf(o, kind)}/${name}`);
            break;
          case 'PersistentVolume':
            pvOf(o, at);
            storage.volumes.push(toPersistentVolume(o));
            break;
          case 'StorageClass':
            storage.classes.push(storageClassOf(o, at));
            break;
          case 'Deployment':
          case 'StatefulSet':
          case 'Job':
          case 'Pod': {
            const phase = (o.status as Raw | undefined)?.phase;
            if (kind === 'Pod' && (phase === 'Succeeded' || phase === 'Failed')) {
              setup.ignored.push(`Pod/${namespaceOf(o, kind)}/${name} (${phase}: holds nothing)`);
              break;
            }
            if (kind === 'Pod' && typeof (o.spec as Raw | undefined)?.nodeName === 'string') {
              if (++pods > MAX_MANIFEST_PODS) throw new ScenarioError(`${at}: the manifests ask for more than ${MAX_MANIFEST_PODS} pods`);
              snapshot.boundPod(o, namespaceOf(o, kind), at);
              break;
            }
            const w = workloadOf(o, kind, at);
            pods += w.replicas;
            if (pods > MAX_MANIFEST_PODS) throw new ScenarioError(`${at}: the manifests ask for more than ${MAX_MANIFEST_PODS} pods`);
            setup.workloads.push(w);
            const spec = kind === 'Pod' ? (o.spec as Raw) : (((o.spec as Raw).template as Raw | undefined)?.spec as Raw | undefined) ?? {};
            const claims = volumeClaims(spec);
            if (kind === 'StatefulSet') {
              for (const [i, t] of arrayOf((o.spec as Raw).volumeClaimTemplates).entries()) {
                const tname = String(((t as Raw).metadata as Raw | undefined)?.name);
                claimSpecOf((t as Raw).spec, `${at}: spec.volumeClaimTemplates.${i}.spec`);
                storageClassRefs.push({ where: `${at}: spec.volumeClaimTemplates.${i}.spec.storageClassName`, name: ((t as Raw).spec as Raw | undefined)?.storageClassName });
                pvcTemplates.set(`${w.namespace}/${tname}`, at);
                // Each replica's claim is a fresh, unbound PVC of the template's class, created
                // with the pod: for volume topology that is what a generic ephemeral volume is.
                const storageClassName = ((t as Raw).spec as Raw | undefined)?.storageClassName;
                w.template.spec.volumes = [
                  ...(w.template.spec.volumes ?? []).filter((v) => v.name !== tname),
                  { name: tname, ephemeral: typeof storageClassName === 'string' ? { storageClassName } : {} },
                ];
              }
            }
            podVolumes.push({ where: at, namespace: w.namespace, claims: kind === 'StatefulSet' ? claims.filter((c) => !pvcTemplates.has(`${w.namespace}/${c}`)) : claims });
            if (kind === 'StatefulSet') statefulSetPods.push({ namespace: w.namespace, name, replicas: w.replicas, at });
            break;
          }
          default:
            if (IGNORED_KINDS.has(kind) || isOtherCustomResource(String(o.apiVersion))) setup.ignored.push(`${kind}/${name}`);
            else throw new ScenarioError(`${at}: kind ${kind} (${String(o.apiVersion)}) is not simulated: take it out of --manifests (simulated: ${SUPPORTED.join(', ')}; ignored: Services, ConfigMaps, RBAC and other kinds that schedule no pods, and other projects' custom resources)`);
        }
        if (setup.nodeClasses.length > LIMITS.nodeClasses) throw new ScenarioError(`${at}: more than ${LIMITS.nodeClasses} AzureFlexNodeClasses`);
        if (setup.nodePools.length > LIMITS.nodePools) throw new ScenarioError(`${at}: more than ${LIMITS.nodePools} NodePools`);
      }
    }
  }
  // A Pod named like a StatefulSet's replica: the API server refuses whichever comes second.
  for (const sts of statefulSetPods) {
    const m = new RegExp(`^${sts.name.replace(/[.]/g, '\\.')}-(\\d+)$`);
    for (const w of setup.workloads) {
      const ordinal = m.exec(w.name)?.[1];
      if (w.template.ownerKind === undefined && w.namespace === sts.namespace && ordinal !== undefined && Number(ordinal) < sts.replicas && String(Number(ordinal)) === ordinal) {
        throw new ScenarioError(`${setup.sources?.[`Pod/${w.namespace}/${w.name}`] ?? 'manifests'}: Pod ${w.name}: StatefulSet ${sts.name} (${sts.at.split(': ')[0]}) creates a pod of that name`);
      }
    }
  }
  const classNames = new Set(storage.classes.map((c) => c.metadata.name));
  for (const ref of storageClassRefs) {
    if (typeof ref.name === 'string' && ref.name !== '' && !classNames.has(ref.name) && !AKS_STORAGE_CLASSES.has(ref.name)) {
      throw new ScenarioError(`${ref.where}: StorageClass "${ref.name}" is neither in the manifests nor one AKS has (${[...AKS_STORAGE_CLASSES].join(', ')}); its claims would stay Pending`);
    }
  }
  const pvcs = new Set(setup.persistentVolumeClaims);
  for (const v of podVolumes) {
    for (const c of v.claims) if (!pvcs.has(`${v.namespace}/${c}`)) throw new ScenarioError(`${v.where}: volume claims PersistentVolumeClaim "${c}", which is not in the manifests`);
  }
  admitStorage(storage, setup.workloads);
  const existing = snapshot.finish(new Set(setup.nodePools.map((p) => p.metadata.name)), new Set(setup.nodeClasses.map((c) => c.metadata.name)));
  if (existing) setup.existing = existing;
  crossCheck(setup);
  return setup;
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

/** The extensions `kubectl apply -f <dir>` reads, compared as it compares them (case matters). */
const MANIFEST_EXTENSIONS = new Set(['.json', '.yaml', '.yml']);
/** Directory entries a `-R` walk may look at: a walk of a huge tree is refused quickly instead of taking minutes. */
export const MAX_WALKED_ENTRIES = 100_000;

/**
 * The files `kubectl apply -f <paths> [-R]` reads, in its order: a file named explicitly
 * whatever its extension; a directory's `.json`, `.yaml` and `.yml` files in name order (other
 * files, a README, are left alone), and with `recursive` its subdirectories' too, depth first
 * as they come in that order (not followed through symlinks, as filepath.Walk does not); a path
 * that does not exist as a glob of `*`, `?` and `[...]`. A file reached twice is read once.
 */
function manifestFiles(paths: readonly string[], recursive: boolean): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  let walked = 0;
  let skippedDirectory = false;
  const add = (file: string, given: string): void => {
    let real = file;
    try {
      real = realpathSync(file);
    } catch {
      // Left to the read, which names the problem.
    }
    if (seen.has(real)) return;
    seen.add(real);
    out.push(file);
    if (out.length > MAX_MANIFEST_FILES) throw new ScenarioError(`${given}: more than ${MAX_MANIFEST_FILES} manifest files`);
  };
  const walk = (dir: string, given: string): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch (err) {
      throw new ScenarioError(`${dir}: cannot read manifests (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    walked += entries.length;
    if (walked > MAX_WALKED_ENTRIES) throw new ScenarioError(`${given}: more than ${MAX_WALKED_ENTRIES} files and directories to look through`);
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (recursive) walk(path, given);
        else skippedDirectory = true;
      } else if (MANIFEST_EXTENSIONS.has(extname(e.name))) add(path, given);
    }
  };
  const visit = (p: string, given: string): void => {
    if (p === '') throw new ScenarioError('--manifests "": an empty path');
    let st;
    try {
      st = statSync(p);
    } catch (err) {
      throw new ScenarioError(`${p}: cannot read manifests (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    if (st.isDirectory()) walk(p, given);
    else add(p, given);
  };
  for (const p of paths) {
    if (!existsSync(p) && /[*?[]/.test(p)) {
      if (p.includes('**')) throw new ScenarioError(`${p}: kubectl's patterns match within one directory (*, ?, [...]); for subdirectories pass the directory with -R`);
      const matches = globSync(p).sort();
      if (matches.length === 0) throw new ScenarioError(`${p}: the path does not exist and the pattern matches no file`);
      for (const m of matches) visit(m, p);
    } else visit(p, p);
  }
  if (out.length === 0) throw new ScenarioError(`${paths.join(', ')}: no .yaml, .yml or .json manifest files${skippedDirectory ? ' (pass -R for their subdirectories)' : ''}`);
  return out;
}

function readOrThrow(file: string): string {
  try {
    return readBoundedFile(file);
  } catch (err) {
    if (err instanceof InputFileError) throw new ScenarioError(err.message);
    throw err;
  }
}

function parseOrThrow(text: string, file: string): unknown[] {
  try {
    return parseYamlDocuments(text, file);
  } catch (err) {
    if (err instanceof InputFileError) throw new ScenarioError(err.message);
    throw err;
  }
}

/** `kind: List` (what `kubectl get -o yaml` prints) holds objects in `items` (none when null), Lists inside included. */
function listItems(doc: unknown, where: string): unknown[] {
  const o = doc as Raw;
  if (!o || typeof o !== 'object' || o.kind !== 'List' || Array.isArray(o)) return [doc];
  if (o.items !== undefined && o.items !== null && !Array.isArray(o.items)) throw new ScenarioError(`${where}: List: items must be a list`);
  return arrayOf(o.items).flatMap((item) => listItems(item, where));
}

/**
 * A null field is an absent one, as the API server decodes JSON (`replicas:` with no value
 * gets the default): maps lose their null entries, recursively.
 */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (v === null || typeof v !== 'object') return v;
  const out: Raw = {};
  for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = withoutNulls(x);
  return out;
}

/** kustomize's own file: its kinds, or a document without apiVersion and kind in a file named as kustomize names it. */
function isKustomization(doc: unknown, file: string): boolean {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return false;
  const o = doc as Raw;
  if (typeof o.apiVersion === 'string' && o.apiVersion.startsWith('kustomize.config.k8s.io/')) return true;
  return /^(kustomization\.ya?ml|Kustomization)$/.test(basename(file)) && (o.apiVersion === undefined || o.kind === undefined);
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

const POD_OWNER: Record<string, Pod['ownerKind']> = { Deployment: 'ReplicaSet', StatefulSet: 'StatefulSet', Job: 'Job' };

function workloadOf(o: Raw, kind: string, at: string): WorkloadSpec {
  const meta = o.metadata as Raw;
  const namespace = namespaceOf(o, kind);
  const spec = (o.spec ?? {}) as Raw;
  const fail = (path: string, m: string): never => {
    throw new ScenarioError(`${at}: ${path}: ${m}`);
  };
  const count = (path: string, v: unknown, dflt: number): number => {
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > LIMITS.podsPerWave) fail(path, `must be a whole number from 0 to ${LIMITS.podsPerWave}, got ${JSON.stringify(v)}`);
    return v as number;
  };
  let template: Raw;
  let replicas = 1;
  if (kind === 'Pod') template = { metadata: meta, spec };
  else {
    if (!spec.template || typeof spec.template !== 'object') fail('spec.template', 'is required');
    template = spec.template as Raw;
    if (kind === 'Job') {
      const parallelism = count('spec.parallelism', spec.parallelism, 1);
      replicas = Math.min(parallelism, count('spec.completions', spec.completions, parallelism));
    } else replicas = count('spec.replicas', spec.replicas, 1);
    const labels = ((template.metadata as Raw | undefined)?.labels ?? {}) as Record<string, string>;
    if (kind !== 'Job') checkSelector(spec.selector, labels, fail);
  }
  const specPath = kind === 'Pod' ? 'spec' : 'spec.template.spec';
  if (kind !== 'Pod') checkMetadata(template.metadata as Raw | undefined, 'spec.template.metadata', fail);
  const tspec = podSpecOf(template.spec, specPath, fail);
  template = { ...template, spec: tspec };
  checkScheduling(tspec, specPath, fail);
  const owner = POD_OWNER[kind];
  const pod = toPod({ metadata: { ...((template.metadata ?? {}) as Raw), name: meta.name as string, namespace, ...(owner ? { ownerReferences: [{ kind: owner, controller: true }] } : {}) }, spec: tspec });
  // The labels the controllers add (a ReplicaSet's pod-template-hash, a Job's job-name), and the names they give.
  let podNames: WorkloadSpec['podNames'] = { from: kind === 'Pod' ? 'own' : 'ordinal' };
  if (kind === 'Deployment') {
    const hash = podTemplateHash(template);
    pod.metadata.labels = { ...pod.metadata.labels, 'pod-template-hash': hash };
    podNames = { from: 'generateName', generateName: `${String(meta.name)}-${hash}-` };
  } else if (kind === 'Job') {
    if (String(meta.name).length > 63) fail('metadata.name', `"${String(meta.name).slice(0, 80)}…" is longer than 63 characters, and a Job's name is its pods' job-name label value`);
    pod.metadata.labels = { ...pod.metadata.labels, 'batch.kubernetes.io/job-name': String(meta.name), 'job-name': String(meta.name) };
    podNames = { from: 'generateName', generateName: `${String(meta.name)}-` };
  }
  // A pod no VM size could hold would stay pending whatever the world: a mistake, not a rehearsal.
  const misfit = fitsNoVmSize(podRequests(pod));
  if (misfit) fail(`${specPath}.containers`, misfit);
  const annotations = { ...((meta.annotations ?? {}) as Record<string, string>), ...pod.metadata.annotations };
  let lifetimeSeconds: number | undefined;
  const runFor = annotations[ANNOTATION_RUN_SECONDS];
  if (runFor !== undefined) {
    const n = Number(runFor);
    if (!/^\d+$/.test(String(runFor)) || n < 1 || n > LIMITS.lifetimeSeconds) fail(`metadata.annotations.${ANNOTATION_RUN_SECONDS}`, `must be whole seconds from 1 to ${LIMITS.lifetimeSeconds}, got "${runFor}"`);
    lifetimeSeconds = n;
  } else if (kind === 'Job' && spec.activeDeadlineSeconds !== undefined) {
    const d = spec.activeDeadlineSeconds;
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 1) fail('spec.activeDeadlineSeconds', `must be a whole number of seconds above 0, got ${JSON.stringify(d)}`);
    lifetimeSeconds = Math.min(d as number, LIMITS.lifetimeSeconds);
  }
  if (kind === 'StatefulSet') {
    // Each replica's pod is `<name>-<ordinal>`, its hostname: a DNS label.
    const last = `${String(meta.name)}-${Math.max(0, replicas - 1)}`;
    if (last.length > 63 || last.includes('.')) fail('metadata.name', `a StatefulSet's pods are named "<name>-<ordinal>" and must be DNS labels (at most 63 characters, no dots): "${last.slice(0, 80)}" is not`);
  }
  return {
    name: meta.name as string,
    namespace,
    template: { ...pod, metadata: { ...pod.metadata, name: '', uid: '' } },
    replicas,
    atSeconds: 0,
    ...(lifetimeSeconds !== undefined ? { lifetimeSeconds } : {}),
    podNames,
  };
}

function pdbOf(o: Raw, at: string): PodDisruptionBudgetSpec {
  const spec = (o.spec ?? {}) as Raw;
  const fail = (path: string, m: string): never => {
    throw new ScenarioError(`${at}: ${path}: ${m}`);
  };
  const intOrPercent = (path: string, v: unknown): number | string | undefined => {
    if (v === undefined) return undefined;
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_MANIFEST_PODS) return v;
    if (typeof v === 'string' && /^(100|[0-9]{1,2})%$/.test(v)) return v;
    return fail(path, `must be a whole number or a percentage such as "50%", got ${JSON.stringify(v)}`);
  };
  const minAvailable = intOrPercent('spec.minAvailable', spec.minAvailable);
  const maxUnavailable = intOrPercent('spec.maxUnavailable', spec.maxUnavailable);
  if ((minAvailable === undefined) === (maxUnavailable === undefined)) fail('spec', 'exactly one of minAvailable and maxUnavailable is required');
  const selector = (spec.selector ?? {}) as Raw;
  const matchExpressions = arrayOf(selector.matchExpressions).map((e, i) => {
    const x = e as Raw;
    if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(String(x.operator))) fail(`spec.selector.matchExpressions.${i}.operator`, `"${String(x.operator)}" is not In, NotIn, Exists or DoesNotExist`);
    return { key: String(x.key), operator: x.operator as 'In', values: arrayOf(x.values).map(String) };
  });
  return {
    name: (o.metadata as Raw).name as string,
    namespace: namespaceOf(o, 'PodDisruptionBudget'),
    matchLabels: Object.fromEntries(Object.entries((selector.matchLabels ?? {}) as Raw).map(([k, v]) => [k, String(v)])),
    matchExpressions,
    ...(minAvailable !== undefined ? { minAvailable } : {}),
    ...(maxUnavailable !== undefined ? { maxUnavailable } : {}),
  };
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
