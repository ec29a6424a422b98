import { z } from 'zod';
import { parseQuantity } from '../provisioning/resources.js';
import { labelProblem, quantity, wholeQuantity } from './scenario.js';

/**
 * The API server's checks of a workload in `azflex simulate --manifests`: its label selector
 * against its pod template, the pod spec's shape, resources and scheduling fields, metadata.
 * One error names the field path; the caller prefixes the file and object.
 */
type Raw = Record<string, unknown>;

const SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

/** A workload's label selector, as the API server validates it: required, well-formed, and matching its pod template. */
export function checkSelector(raw: unknown, labels: Record<string, string>, fail: (path: string, m: string) => never): void {
  const selector = (raw ?? {}) as Raw;
  const matchLabels = stringMap(selector.matchLabels, 'spec.selector.matchLabels', fail);
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

const quantityValue = z.union([z.string(), z.number()]);
const resourceList = z.record(z.string(), quantityValue);
const ContainerShape = z.looseObject({
  name: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label (lower-case letters, digits, -)').max(63),
  image: z.string().min(1),
  resources: z.looseObject({ requests: resourceList.optional(), limits: resourceList.optional() }).optional(),
});
const NodeSelectorRequirementShape = z.looseObject({ key: z.string().min(1), operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']), values: z.array(z.string()).optional() });
/** The parts of a pod spec the simulation reads, with the core API's types; other fields pass untouched. */
const PodSpecShape = z.looseObject({
  containers: z.array(ContainerShape).min(1),
  initContainers: z.array(ContainerShape).optional(),
  nodeSelector: z.record(z.string(), z.string()).optional(),
  tolerations: z.array(z.looseObject({ key: z.string().optional(), operator: z.string().optional(), value: z.string().optional(), effect: z.string().optional(), tolerationSeconds: z.number().int().optional() })).optional(),
  affinity: z
    .looseObject({
      nodeAffinity: z
        .looseObject({ requiredDuringSchedulingIgnoredDuringExecution: z.looseObject({ nodeSelectorTerms: z.array(z.looseObject({ matchExpressions: z.array(NodeSelectorRequirementShape).optional() })).min(1) }).optional() })
        .optional(),
    })
    .optional(),
  topologySpreadConstraints: z.array(z.looseObject({})).optional(),
  volumes: z.array(z.looseObject({ name: z.string().min(1) })).optional(),
  overhead: resourceList.optional(),
  priority: z.number().int().optional(),
});

/** Standard resource names, or a domain-qualified extended resource such as nvidia.com/gpu. */
const RESOURCE_NAME = /^(cpu|memory|ephemeral-storage|hugepages-[0-9]+[KMGTPE]i?|([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)+[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const OVERCOMMITTABLE = new Set(['cpu', 'memory', 'ephemeral-storage']);

/**
 * A pod spec as the API server checks and defaults it: the shapes the simulation reads,
 * container names unique, resource names and quantities valid, extended resources (GPUs)
 * whole and with requests equal to limits, requests at most limits, and requests that are
 * absent defaulted to the limits (so a GPU given only in `limits` is requested).
 */
export function podSpecOf(raw: unknown, specPath: string, fail: (path: string, m: string) => never): Raw {
  const parsed = PodSpecShape.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return fail([specPath, ...issue.path.map(String)].join('.'), issue.message);
  }
  const spec = structuredClone(parsed.data) as Raw & z.output<typeof PodSpecShape>;
  const names = new Set<string>();
  for (const [group, list] of [['containers', spec.containers], ['initContainers', spec.initContainers ?? []]] as const) {
    for (const [i, c] of list.entries()) {
      const at = `${specPath}.${group}.${i}`;
      if (names.has(c.name)) fail(`${at}.name`, `duplicate container name "${c.name}"`);
      names.add(c.name);
      const requests = { ...(c.resources?.requests ?? {}) };
      const limits = c.resources?.limits ?? {};
      for (const [k, v] of Object.entries(limits)) if (requests[k] === undefined) requests[k] = v;
      for (const [where, list2] of [['requests', requests], ['limits', limits]] as const) {
        for (const [k, v] of Object.entries(list2)) {
          if (!RESOURCE_NAME.test(k)) fail(`${at}.resources.${where}.${k}`, `"${k}" is not a standard resource (cpu, memory, ephemeral-storage, hugepages-<size>) nor a domain-qualified one such as nvidia.com/gpu`);
          quantity(String(v), k, (m) => fail(`${at}.resources.${where}.${k}`, m));
          if (!OVERCOMMITTABLE.has(k) && !k.startsWith('hugepages-') && !wholeQuantity(String(v))) fail(`${at}.resources.${where}.${k}`, `"${String(v)}" must be a whole number (${k} is not divisible)`);
        }
      }
      for (const [k, v] of Object.entries(requests)) {
        const limit = limits[k];
        if (limit === undefined) {
          if (!OVERCOMMITTABLE.has(k)) fail(`${at}.resources.limits.${k}`, `is required: ${k} cannot be overcommitted, so it goes in limits (requests default to them)`);
          continue;
        }
        const [r, l] = [parseQuantity(String(v), k), parseQuantity(String(limit), k)];
        if (!OVERCOMMITTABLE.has(k) && r !== l) fail(`${at}.resources.requests.${k}`, `${String(v)} must equal the limit ${String(limit)} (${k} cannot be overcommitted)`);
        if (r > l) fail(`${at}.resources.requests.${k}`, `${String(v)} must be at most the ${k} limit of ${String(limit)}`);
      }
      if (c.resources) c.resources = { ...c.resources, requests: Object.fromEntries(Object.entries(requests).map(([k, v]) => [k, String(v)])) };
      else if (Object.keys(requests).length > 0) c.resources = { requests };
    }
  }
  for (const [t, term] of (spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []).entries()) {
    for (const [i, e] of (term.matchExpressions ?? []).entries()) {
      const at = `${specPath}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.${t}.matchExpressions.${i}.values`;
      const n = e.values?.length ?? 0;
      if ((e.operator === 'In' || e.operator === 'NotIn') && n === 0) fail(at, `must be non-empty for ${e.operator}`);
      if ((e.operator === 'Exists' || e.operator === 'DoesNotExist') && n > 0) fail(at, `must be empty for ${e.operator}`);
      if ((e.operator === 'Gt' || e.operator === 'Lt') && (n !== 1 || !/^-?\d+$/.test(e.values![0]!))) fail(at, `must be one integer for ${e.operator}`);
    }
  }
  return spec;
}

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** The core API's validation of tolerations and topology spread, which the controller reads. */
export function checkScheduling(spec: Raw, at: string, fail: (path: string, m: string) => never): void {
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

/** Labels and annotations are maps of strings (the API server cannot decode `on: true` into one), labels with the label syntax. */
export function checkMetadata(meta: Raw | undefined, path: string, fail: (path: string, m: string) => never): void {
  if (!meta) return;
  stringMap(meta.annotations, `${path}.annotations`, fail);
  const labels = stringMap(meta.labels, `${path}.labels`, fail);
  for (const [k, v] of Object.entries(labels)) {
    const problem = labelProblem(k, v);
    if (problem) fail(`${path}.labels.${k}`, problem);
  }
}

/** A map of strings, or absent. */
export function stringMap(v: unknown, path: string, fail: (path: string, m: string) => never): Record<string, string> {
  if (v === undefined) return {};
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return fail(path, `must be a map of strings, got ${JSON.stringify(v).slice(0, 60)}`);
  for (const [k, x] of Object.entries(v)) if (typeof x !== 'string') fail(`${path}.${k}`, `must be a string, got ${JSON.stringify(x).slice(0, 60)} (quote it)`);
  return v as Record<string, string>;
}

export function volumeClaims(podSpec: Raw): string[] {
  return arrayOf(podSpec.volumes)
    .map((v) => ((v as Raw).persistentVolumeClaim as Raw | undefined)?.claimName)
    .filter((c): c is string => typeof c === 'string');
}

export function arrayOf(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
