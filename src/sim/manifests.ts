import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { validateNodeClassSpec } from '../controllers/nodeclass/validation.js';
import { DurationError, parseDuration } from '../disruption/duration.js';
import { parseCron } from '../disruption/budgets.js';
import { toNodeClass, toNodePool, toPersistentVolume, toPersistentVolumeClaim, toPod, toStorageClass } from '../k8s/resources.js';
import type { AzureFlexNodeClass, NodePool, PersistentVolumeClaim, Pod } from '../ports/cluster.js';
import { fitsWithin, podRequests, resourcesFromList } from '../provisioning/resources.js';
import { defaultStorageClass } from '../provisioning/volume-topology.js';
import { STATIC_INSTANCE_TYPES } from '../catalog/skus.js';
import type { ClusterSetup, PodDisruptionBudgetSpec, WorkloadSpec } from './cluster-setup.js';
import { checkAgainstCrd, type CrdKind } from './crd-validation.js';
import { InputFileError, MAX_INPUT_FILE_BYTES, parseYamlDocuments, readBoundedFile } from './input-files.js';
import { isKnownSku, LIMITS, quantity, ScenarioError, unknownSku } from './scenario.js';
import { LABEL_INSTANCE_TYPE, NODECLASS_GROUP, NODECLASS_KIND } from '../apis/well-known.js';

/**
 * `azflex simulate --manifests`: the YAML a user would `kubectl apply`, checked the way the
 * API server and the controller check it (the CRDs' OpenAPI schemas with defaults and
 * strict field validation, then the controller's own NodeClass validation and conversions),
 * turned into the simulated cluster's starting objects.
 */
export const MAX_MANIFEST_FILES = 1000;
export const MAX_MANIFEST_BYTES = 16 * MAX_INPUT_FILE_BYTES;
export const MAX_MANIFEST_PODS = 100_000;
/** How long a Job's pods run in the simulation (Kubernetes manifests cannot say). */
export const ANNOTATION_RUN_SECONDS = 'simulate.azflex.io/run-seconds';

/** Kinds that do not change what gets scheduled: accepted and counted, not simulated. */
const IGNORED_KINDS = new Set([
  'Namespace', 'Service', 'ConfigMap', 'Secret', 'ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding',
  'Ingress', 'NetworkPolicy', 'HorizontalPodAutoscaler', 'PriorityClass', 'LimitRange', 'ResourceQuota',
]);
const SUPPORTED = [
  'AzureFlexNodeClass', 'NodePool', 'Deployment', 'StatefulSet', 'Job', 'Pod', 'PodDisruptionBudget', 'PersistentVolumeClaim', 'PersistentVolume', 'StorageClass',
];

export interface LoadedManifests extends ClusterSetup {
  files: string[];
  ignored: string[];
  persistentVolumeClaims: string[];
}

type Raw = Record<string, unknown>;

export function loadManifests(paths: readonly string[]): LoadedManifests {
  const files = manifestFiles(paths);
  const storage = { claims: [] as PersistentVolumeClaim[], volumes: [] as NonNullable<ClusterSetup['storage']>['volumes'], classes: [] as NonNullable<ClusterSetup['storage']>['classes'] };
  const setup: LoadedManifests = {
    nodeClasses: [], nodePools: [], workloads: [], podDisruptionBudgets: [], storage, sources: {}, files, ignored: [], persistentVolumeClaims: [],
  };
  const pvcTemplates = new Map<string, string>();
  const podVolumes: Array<{ where: string; namespace: string; claims: string[] }> = [];
  let bytes = 0;
  let pods = 0;
  for (const file of files) {
    const text = readOrThrow(file);
    bytes += text.length;
    if (bytes > MAX_MANIFEST_BYTES) throw new ScenarioError(`${file}: the manifests add up to more than ${MAX_MANIFEST_BYTES} bytes`);
    for (const [d, doc] of parseOrThrow(text, file).entries()) {
      for (const item of listItems(doc)) {
        const where = `${file}${d > 0 ? ` (document ${d + 1})` : ''}`;
        const o = objectOf(item, where);
        const kind = o.kind as string;
        const name = (o.metadata as Raw).name as string;
        const at = `${where}: ${kind} ${name}`;
        const key = `${kind}/${namespaceOf(o, kind, where)}/${name}`;
        if (setup.sources![key] !== undefined) throw new ScenarioError(`${at}: duplicate name (also in ${setup.sources![key]})`);
        setup.sources![key] = where;
        switch (kind) {
          case 'AzureFlexNodeClass':
            setup.nodeClasses.push(nodeClassOf(o, at));
            setup.sources![`AzureFlexNodeClass/${name}`] = where;
            break;
          case 'NodePool':
            setup.nodePools.push(nodePoolOf(o, at));
            break;
          case 'PodDisruptionBudget':
            setup.podDisruptionBudgets.push(pdbOf(o, at));
            break;
          case 'PersistentVolumeClaim':
            pvcOf(o, at);
            storage.claims.push(toPersistentVolumeClaim({ ...o, metadata: { ...(o.metadata as Raw), namespace: namespaceOf(o, kind) } }));
            setup.persistentVolumeClaims.push(`${namespaceOf(o, kind)}/${name}`);
            break;
          case 'PersistentVolume':
            storage.volumes.push(toPersistentVolume(o));
            break;
          case 'StorageClass':
            storage.classes.push(storageClassOf(o, at));
            break;
          case 'Deployment':
          case 'StatefulSet':
          case 'Job':
          case 'Pod': {
            const w = workloadOf(o, kind, at);
            pods += w.replicas;
            if (pods > MAX_MANIFEST_PODS) throw new ScenarioError(`${at}: the manifests ask for more than ${MAX_MANIFEST_PODS} pods`);
            setup.workloads.push(w);
            const spec = kind === 'Pod' ? (o.spec as Raw) : (((o.spec as Raw).template as Raw | undefined)?.spec as Raw | undefined) ?? {};
            const claims = volumeClaims(spec);
            if (kind === 'StatefulSet') {
              for (const t of arrayOf((o.spec as Raw).volumeClaimTemplates)) {
                const tname = String(((t as Raw).metadata as Raw | undefined)?.name);
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
            break;
          }
          default:
            if (IGNORED_KINDS.has(kind)) setup.ignored.push(`${kind}/${name}`);
            else throw new ScenarioError(`${at}: kind ${kind} is not simulated (supported: ${SUPPORTED.join(', ')}; ignored: ${[...IGNORED_KINDS].join(', ')})`);
        }
      }
    }
  }
  const pvcs = new Set(setup.persistentVolumeClaims);
  for (const v of podVolumes) {
    for (const c of v.claims) if (!pvcs.has(`${v.namespace}/${c}`)) throw new ScenarioError(`${v.where}: volume claims PersistentVolumeClaim "${c}", which is not in the manifests`);
  }
  admitStorage(storage, setup.workloads);
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

function manifestFiles(paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    let st;
    try {
      st = statSync(p);
    } catch (err) {
      throw new ScenarioError(`${p}: cannot read manifests (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    if (st.isDirectory()) {
      // Like `kubectl apply -f dir`: the directory's YAML and JSON files, not its subdirectories.
      const names = readdirSync(p).filter((n) => /\.(ya?ml|json)$/i.test(n)).sort();
      for (const n of names) out.push(join(p, n));
    } else out.push(p);
    if (out.length > MAX_MANIFEST_FILES) throw new ScenarioError(`${p}: more than ${MAX_MANIFEST_FILES} manifest files`);
  }
  if (out.length === 0) throw new ScenarioError(`${paths.join(', ')}: no .yaml, .yml or .json manifest files`);
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

/** `kind: List` (what `kubectl get -o yaml` prints) holds objects in `items`. */
function listItems(doc: unknown): unknown[] {
  const o = doc as Raw;
  return o && typeof o === 'object' && o.kind === 'List' && Array.isArray(o.items) ? o.items : [doc];
}

function objectOf(doc: unknown, where: string): Raw {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new ScenarioError(`${where}: a manifest is a mapping with apiVersion, kind and metadata`);
  const o = doc as Raw;
  if (typeof o.apiVersion !== 'string' || typeof o.kind !== 'string') throw new ScenarioError(`${where}: apiVersion and kind are required`);
  const meta = o.metadata as Raw | undefined;
  if (!meta || typeof meta !== 'object' || typeof meta.name !== 'string') throw new ScenarioError(`${where}: ${o.kind}: metadata.name is required`);
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

/** The API server's checks (crd-validation.ts) of a manifest, minus what the server owns. */
function validateCrd(o: Raw, kind: CrdKind, at: string): Raw {
  const copy = structuredClone(o);
  // The API server owns these; a manifest may carry them (from `kubectl get -o yaml`).
  delete copy.status;
  const meta = copy.metadata as Raw;
  for (const k of ['resourceVersion', 'uid', 'creationTimestamp', 'generation', 'managedFields', 'selfLink']) delete meta[k];
  const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = copy;
  const checked = checkAgainstCrd(kind, { apiVersion: copy.apiVersion, kind, metadata: {}, ...rest });
  if (!checked.ok) throw new ScenarioError(`${at}: ${checked.problem}`);
  return { ...checked.object, metadata: meta };
}

// --- kinds -----------------------------------------------------------------------------------

function nodeClassOf(o: Raw, at: string): AzureFlexNodeClass {
  const nc = toNodeClass(validateCrd(o, 'AzureFlexNodeClass', at));
  const result = validateNodeClassSpec(nc.spec);
  if (!result.ok) throw new ScenarioError(`${at}: ${result.reason}: ${result.message}`);
  // The NodeClass controller would set Ready after validating; the simulation starts there.
  nc.status = { conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: '' }] };
  return nc;
}

function nodePoolOf(o: Raw, at: string): NodePool {
  const np = toNodePool(validateCrd(o, 'NodePool', at));
  const fail = (path: string, m: string): never => {
    throw new ScenarioError(`${at}: ${path}: ${m}`);
  };
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
  const tspec = (template.spec ?? {}) as Raw;
  const specPath = kind === 'Pod' ? 'spec' : 'spec.template.spec';
  if (!Array.isArray(tspec.containers) || tspec.containers.length === 0) fail(`${specPath}.containers`, 'at least one container is required');
  checkScheduling(tspec, specPath, fail);
  const owner = POD_OWNER[kind];
  const pod = toPod({ metadata: { ...((template.metadata ?? {}) as Raw), name: meta.name as string, namespace, ...(owner ? { ownerReferences: [{ kind: owner, controller: true }] } : {}) }, spec: tspec });
  for (const c of [...pod.spec.containers, ...pod.spec.initContainers]) {
    for (const [k, v] of Object.entries({ ...c.resources.requests, ...c.resources.limits })) quantity(v, k, (m) => fail(`container ${c.name}: resources.${k}`, m));
  }
  // A pod no VM size could hold would stay pending whatever the world: a mistake, not a rehearsal.
  const requests = podRequests(pod);
  if (!STATIC_INSTANCE_TYPES.some((t) => fitsWithin(requests, resourcesFromList({ cpu: String(t.vcpu), memory: `${t.memoryMiB}Mi`, pods: String(t.maxPods), ...(t.gpuCount ? { 'nvidia.com/gpu': String(t.gpuCount) } : {}) })))) {
    fail(`${specPath}.containers`, `the pod's requests (${Object.entries(requests).map(([k, v]) => `${k} ${v}`).join(', ')}) fit no VM size in the catalog (largest: ${largestSizes()})`);
  }
  const annotations = { ...((meta.annotations ?? {}) as Record<string, string>), ...pod.metadata.annotations };
  let lifetimeSeconds: number | undefined;
  const runFor = annotations[ANNOTATION_RUN_SECONDS];
  if (runFor !== undefined) {
    const n = Number(runFor);
    if (!/^\d+$/.test(String(runFor)) || n < 1 || n > LIMITS.lifetimeSeconds) fail(`metadata.annotations.${ANNOTATION_RUN_SECONDS}`, `must be whole seconds from 1 to ${LIMITS.lifetimeSeconds}, got "${runFor}"`);
    lifetimeSeconds = n;
  } else if (kind === 'Job' && typeof spec.activeDeadlineSeconds === 'number' && spec.activeDeadlineSeconds > 0) {
    lifetimeSeconds = Math.min(spec.activeDeadlineSeconds, LIMITS.lifetimeSeconds);
  }
  return {
    name: meta.name as string,
    namespace,
    template: { ...pod, metadata: { ...pod.metadata, name: '', uid: '' } },
    replicas,
    atSeconds: 0,
    ...(lifetimeSeconds !== undefined ? { lifetimeSeconds } : {}),
    ...(kind === 'StatefulSet' || kind === 'Pod' ? { ordinalNames: true } : {}),
    ...(kind === 'Pod' ? { name: `${String(meta.name)}`, ordinalNames: true } : {}),
  };
}

const SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

/** A workload's label selector, as the API server validates it: required, well-formed, and matching its pod template. */
function checkSelector(raw: unknown, labels: Record<string, string>, fail: (path: string, m: string) => never): void {
  const selector = (raw ?? {}) as Raw;
  const matchLabels = (selector.matchLabels ?? {}) as Record<string, unknown>;
  const expressions = arrayOf(selector.matchExpressions);
  if (Object.keys(matchLabels).length === 0 && expressions.length === 0) fail('spec.selector', 'is required (matchLabels or matchExpressions)');
  for (const [k, v] of Object.entries(matchLabels)) if (labels[k] !== String(v)) fail('spec.template.metadata.labels', `do not match spec.selector (${k}=${String(v)})`);
  for (const [i, e] of expressions.entries()) {
    const x = e as Raw;
    const op = String(x.operator);
    const vals = Array.isArray(x.values) ? x.values.map(String) : [];
    if (!SELECTOR_OPERATORS.includes(op)) fail(`spec.selector.matchExpressions.${i}.operator`, `"${op}" is not ${SELECTOR_OPERATORS.join(', ')}`);
    if ((op === 'In' || op === 'NotIn') && vals.length === 0) fail(`spec.selector.matchExpressions.${i}.values`, `must be non-empty for ${op}`);
    if ((op === 'Exists' || op === 'DoesNotExist') && vals.length > 0) fail(`spec.selector.matchExpressions.${i}.values`, `must be empty for ${op}`);
    const has = Object.hasOwn(labels, String(x.key));
    const ok = op === 'In' ? has && vals.includes(labels[String(x.key)]!) : op === 'NotIn' ? !has || !vals.includes(labels[String(x.key)]!) : op === 'Exists' ? has : !has;
    if (!ok) fail('spec.template.metadata.labels', `do not match spec.selector.matchExpressions.${i}`);
  }
}

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** The core API's validation of tolerations and topology spread, which the controller reads. */
function checkScheduling(spec: Raw, at: string, fail: (path: string, m: string) => never): void {
  for (const [i, t] of arrayOf(spec.tolerations).entries()) {
    const x = t as Raw;
    const op = x.operator ?? 'Equal';
    if (op !== 'Equal' && op !== 'Exists') fail(`${at}.tolerations.${i}.operator`, `"${String(op)}" is not Equal or Exists`);
    if (op === 'Exists' && x.value !== undefined && x.value !== '') fail(`${at}.tolerations.${i}.value`, 'must be empty when operator is Exists');
    if (x.effect !== undefined && x.effect !== '' && !TAINT_EFFECTS.includes(String(x.effect))) fail(`${at}.tolerations.${i}.effect`, `"${String(x.effect)}" is not ${TAINT_EFFECTS.join(', ')}`);
  }
  for (const [i, c] of arrayOf(spec.topologySpreadConstraints).entries()) {
    const x = c as Raw;
    const path = `${at}.topologySpreadConstraints.${i}`;
    if (typeof x.maxSkew !== 'number' || !Number.isInteger(x.maxSkew) || x.maxSkew < 1) fail(`${path}.maxSkew`, `must be a whole number greater than zero, got ${JSON.stringify(x.maxSkew)}`);
    if (typeof x.topologyKey !== 'string' || x.topologyKey === '') fail(`${path}.topologyKey`, 'is required');
    if (x.whenUnsatisfiable !== 'DoNotSchedule' && x.whenUnsatisfiable !== 'ScheduleAnyway') fail(`${path}.whenUnsatisfiable`, `must be DoNotSchedule or ScheduleAnyway, got ${JSON.stringify(x.whenUnsatisfiable)}`);
    if (x.minDomains !== undefined && (typeof x.minDomains !== 'number' || !Number.isInteger(x.minDomains) || x.minDomains < 1)) fail(`${path}.minDomains`, 'must be a whole number greater than zero');
    if (x.minDomains !== undefined && x.whenUnsatisfiable !== 'DoNotSchedule') fail(`${path}.minDomains`, 'goes with whenUnsatisfiable: DoNotSchedule');
  }
}

function largestSizes(): string {
  const most = (f: (t: (typeof STATIC_INSTANCE_TYPES)[number]) => number) => Math.max(...STATIC_INSTANCE_TYPES.map(f));
  return `${most((t) => t.vcpu)} vCPU, ${most((t) => t.memoryMiB) / 1024} GiB, ${most((t) => t.gpuCount)} GPUs`;
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

/** PersistentVolumeClaims are checked (size, access modes) as the API server would; volume topology reads them. */
function pvcOf(o: Raw, at: string): void {
  const spec = (o.spec ?? {}) as Raw;
  const storage = ((spec.resources as Raw | undefined)?.requests as Raw | undefined)?.storage;
  if (typeof storage !== 'string') throw new ScenarioError(`${at}: spec.resources.requests.storage is required`);
  quantity(storage, 'storage', (m) => {
    throw new ScenarioError(`${at}: spec.resources.requests.storage: ${m}`);
  });
  const modes = arrayOf(spec.accessModes);
  if (modes.length === 0) throw new ScenarioError(`${at}: spec.accessModes: at least one is required`);
  for (const m of modes) if (!['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'].includes(String(m))) throw new ScenarioError(`${at}: spec.accessModes: "${String(m)}" is not an access mode`);
}

function volumeClaims(podSpec: Raw): string[] {
  return arrayOf(podSpec.volumes)
    .map((v) => ((v as Raw).persistentVolumeClaim as Raw | undefined)?.claimName)
    .filter((c): c is string => typeof c === 'string');
}

function arrayOf(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
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
