import { toPod } from '../k8s/pod.js';
import type { Pod } from '../ports/cluster.js';
import { podRequests } from '../provisioning/resources.js';
import type { PodDisruptionBudgetSpec, WorkloadSpec } from './cluster-setup.js';
import { arrayOf, checkMetadata, checkScheduling, checkSelector, podSpecOf } from './manifest-pod-spec.js';
import { podTemplateHash } from './pod-names.js';
import { fitsNoVmSize, LIMITS, ScenarioError } from './scenario.js';

/**
 * The workload kinds of `azflex simulate --manifests` (Deployment, StatefulSet, Job, a bare
 * Pod) and PodDisruptionBudgets, checked as the API server checks them and turned into the
 * simulation's workloads: the pod each replica gets, how many, how long they run.
 */
export const MAX_MANIFEST_PODS = 100_000;
/** How long a Job's pods run in the simulation (Kubernetes manifests cannot say). */
export const ANNOTATION_RUN_SECONDS = 'simulate.azflex.io/run-seconds';

type Raw = Record<string, unknown>;
type Fail = (path: string, m: string) => never;

const POD_OWNER: Record<string, Pod['ownerKind']> = { Deployment: 'ReplicaSet', StatefulSet: 'StatefulSet', Job: 'Job' };

/** A workload object (its namespace already checked) as the simulation's workload; errors name `at` and the field. */
export function workloadOf(o: Raw, kind: string, namespace: string, at: string): WorkloadSpec {
  const meta = o.metadata as Raw;
  const spec = (o.spec ?? {}) as Raw;
  const fail: Fail = (path, m) => {
    throw new ScenarioError(`${at}: ${path}: ${m}`);
  };
  const { template: raw, replicas } = templateAndReplicas(kind, meta, spec, fail);
  const specPath = kind === 'Pod' ? 'spec' : 'spec.template.spec';
  if (kind !== 'Pod') checkMetadata(raw.metadata as Raw | undefined, 'spec.template.metadata', fail);
  const tspec = podSpecOf(raw.spec, specPath, fail);
  const template = { ...raw, spec: tspec };
  checkScheduling(tspec, specPath, fail);
  const { pod, podNames } = replicaPod(kind, meta, namespace, template, fail);
  // A pod no VM size could hold would stay pending whatever the world: a mistake, not a rehearsal.
  const misfit = fitsNoVmSize(podRequests(pod));
  if (misfit) fail(`${specPath}.containers`, misfit);
  const lifetimeSeconds = lifetimeOf(kind, { ...((meta.annotations ?? {}) as Record<string, string>), ...pod.metadata.annotations }, spec, fail);
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

/** The pod template (a bare Pod is its own) and how many replicas run at once; a controller's selector must match its template. */
function templateAndReplicas(kind: string, meta: Raw, spec: Raw, fail: Fail): { template: Raw; replicas: number } {
  if (kind === 'Pod') return { template: { metadata: meta, spec }, replicas: 1 };
  const count = (path: string, v: unknown, dflt: number): number => {
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > LIMITS.podsPerWave) fail(path, `must be a whole number from 0 to ${LIMITS.podsPerWave}, got ${JSON.stringify(v)}`);
    return v as number;
  };
  if (!spec.template || typeof spec.template !== 'object') fail('spec.template', 'is required');
  const template = spec.template as Raw;
  let replicas: number;
  if (kind === 'Job') {
    const parallelism = count('spec.parallelism', spec.parallelism, 1);
    replicas = Math.min(parallelism, count('spec.completions', spec.completions, parallelism));
  } else replicas = count('spec.replicas', spec.replicas, 1);
  const labels = ((template.metadata as Raw | undefined)?.labels ?? {}) as Record<string, string>;
  if (kind !== 'Job') checkSelector(spec.selector, labels, fail);
  return { template, replicas };
}

/** Each replica's pod, with the labels its controller adds (a ReplicaSet's pod-template-hash, a Job's job-name) and the names it gives. */
function replicaPod(kind: string, meta: Raw, namespace: string, template: Raw, fail: Fail): { pod: Pod; podNames: WorkloadSpec['podNames'] } {
  const owner = POD_OWNER[kind];
  const pod = toPod({ metadata: { ...((template.metadata ?? {}) as Raw), name: meta.name as string, namespace, ...(owner ? { ownerReferences: [{ kind: owner, controller: true }] } : {}) }, spec: template.spec });
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
  return { pod, podNames };
}

/** How long each pod runs: the run-seconds annotation, else a Job's activeDeadlineSeconds (capped); undefined is for ever. */
function lifetimeOf(kind: string, annotations: Record<string, string>, spec: Raw, fail: Fail): number | undefined {
  const runFor = annotations[ANNOTATION_RUN_SECONDS];
  if (runFor !== undefined) {
    const n = Number(runFor);
    if (!/^\d+$/.test(String(runFor)) || n < 1 || n > LIMITS.lifetimeSeconds) fail(`metadata.annotations.${ANNOTATION_RUN_SECONDS}`, `must be whole seconds from 1 to ${LIMITS.lifetimeSeconds}, got "${runFor}"`);
    return n;
  }
  if (kind === 'Job' && spec.activeDeadlineSeconds !== undefined) {
    const d = spec.activeDeadlineSeconds;
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 1) fail('spec.activeDeadlineSeconds', `must be a whole number of seconds above 0, got ${JSON.stringify(d)}`);
    return Math.min(d as number, LIMITS.lifetimeSeconds);
  }
  return undefined;
}

/** A PodDisruptionBudget (its namespace already checked): exactly one of minAvailable and maxUnavailable, and its selector. */
export function pdbOf(o: Raw, namespace: string, at: string): PodDisruptionBudgetSpec {
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
    namespace,
    matchLabels: Object.fromEntries(Object.entries((selector.matchLabels ?? {}) as Raw).map(([k, v]) => [k, String(v)])),
    matchExpressions,
    ...(minAvailable !== undefined ? { minAvailable } : {}),
    ...(maxUnavailable !== undefined ? { maxUnavailable } : {}),
  };
}
