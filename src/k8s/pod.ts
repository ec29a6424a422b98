import type { Affinity, Container, LabelSelector, Pod, PodAffinityRules, PodAffinityTerm, TopologySpreadConstraint } from '../ports/cluster.js';
import type { RawObject } from './cache.js';
import { toConditions, toMeta, toRequirements } from './resources.js';
import { arr, obj, setOpt, sharedStr, str, strMap, type Dict } from './wire.js';

function toContainers(v: unknown): Container[] {
  return arr(v).map((c) => {
    const o = obj(c);
    const res = obj(o.resources);
    const container: Container = { name: sharedStr(o.name) ?? '', resources: { requests: strMap(res.requests) } };
    if (res.limits !== undefined) container.resources.limits = strMap(res.limits);
    return container;
  });
}

const OWNER_KINDS = new Set(['DaemonSet', 'ReplicaSet', 'Job', 'StatefulSet']);

function toLabelSelector(raw: unknown): LabelSelector | undefined {
  if (raw === undefined || raw === null) return undefined;
  const o = obj(raw);
  const selector: LabelSelector = {};
  if (o.matchLabels !== undefined) selector.matchLabels = strMap(o.matchLabels);
  const expressions = arr(o.matchExpressions).map(obj);
  if (expressions.length > 0) {
    selector.matchExpressions = expressions.map((e) => {
      const op = str(e.operator);
      return {
        key: str(e.key) ?? '',
        operator: op === 'NotIn' || op === 'Exists' || op === 'DoesNotExist' ? op : 'In',
        ...(Array.isArray(e.values) ? { values: e.values.filter((v): v is string => typeof v === 'string') } : {}),
      };
    });
  }
  return selector;
}

function toPodAffinityTerm(raw: unknown): PodAffinityTerm {
  const o = obj(raw);
  const term: PodAffinityTerm = { topologyKey: str(o.topologyKey) ?? '' };
  const selector = toLabelSelector(o.labelSelector);
  if (selector) term.labelSelector = selector;
  const namespaceSelector = toLabelSelector(o.namespaceSelector);
  if (namespaceSelector) term.namespaceSelector = namespaceSelector;
  const strings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);
  const namespaces = strings(o.namespaces);
  if (namespaces) term.namespaces = namespaces;
  const matchLabelKeys = strings(o.matchLabelKeys);
  if (matchLabelKeys) term.matchLabelKeys = matchLabelKeys;
  const mismatchLabelKeys = strings(o.mismatchLabelKeys);
  if (mismatchLabelKeys) term.mismatchLabelKeys = mismatchLabelKeys;
  return term;
}

function toPodAffinityRules(raw: unknown): PodAffinityRules | undefined {
  if (raw === undefined || raw === null) return undefined;
  const o = obj(raw);
  const required = arr(o.requiredDuringSchedulingIgnoredDuringExecution).map(toPodAffinityTerm);
  const preferred = arr(o.preferredDuringSchedulingIgnoredDuringExecution).map(obj).map((w) => ({
    weight: typeof w.weight === 'number' ? w.weight : 1, podAffinityTerm: toPodAffinityTerm(w.podAffinityTerm),
  }));
  if (required.length === 0 && preferred.length === 0) return undefined;
  return {
    ...(required.length > 0 ? { requiredDuringSchedulingIgnoredDuringExecution: required } : {}),
    ...(preferred.length > 0 ? { preferredDuringSchedulingIgnoredDuringExecution: preferred } : {}),
  };
}

/** A pod as the port has it, from its wire form: what scheduling, disruption and the metrics read. */
export function toPod(raw: RawObject): Pod {
  const meta = toMeta(raw.metadata);
  const spec = obj(raw.spec);
  const status = obj(raw.status);
  const phase = str(status.phase);
  const pod: Pod = {
    metadata: { ...meta, namespace: meta.namespace ?? 'default' },
    spec: {
      nodeSelector: strMap(spec.nodeSelector),
      tolerations: arr(spec.tolerations).map(toToleration),
      containers: toContainers(spec.containers),
      initContainers: toContainers(spec.initContainers),
    },
    status: {
      phase: phase === 'Running' || phase === 'Succeeded' || phase === 'Failed' || phase === 'Unknown' ? phase : 'Pending',
      conditions: toConditions(status.conditions),
    },
  };
  setOpt(pod.spec, 'nodeName', sharedStr(spec.nodeName));
  if (spec.overhead !== undefined) pod.spec.overhead = strMap(spec.overhead);
  if (typeof spec.priority === 'number') pod.spec.priority = spec.priority;
  setOpt(pod.spec, 'affinity', toAffinity(obj(spec.affinity)));
  const spread = arr(spec.topologySpreadConstraints).map(obj);
  if (spread.length > 0) pod.spec.topologySpreadConstraints = spread.map(toSpreadConstraint);
  const volumes = arr(spec.volumes).map(obj).filter((v) => str(v.name) !== undefined);
  if (volumes.length > 0) pod.spec.volumes = volumes.map(toVolume);
  setOwners(pod, arr(obj(raw.metadata).ownerReferences).map(obj));
  return pod;
}

function toToleration(t: unknown): Pod['spec']['tolerations'][number] {
  const o = obj(t);
  const tol: Pod['spec']['tolerations'][number] = {};
  const key = sharedStr(o.key);
  if (key !== undefined) tol.key = key;
  const op = str(o.operator);
  if (op === 'Exists' || op === 'Equal') tol.operator = op;
  const value = sharedStr(o.value);
  if (value !== undefined) tol.value = value;
  const effect = str(o.effect);
  if (effect === '' || effect === 'NoSchedule' || effect === 'PreferNoSchedule' || effect === 'NoExecute') tol.effect = effect;
  return tol;
}

function toAffinity(affinity: Dict): Affinity | undefined {
  const required = obj(obj(affinity.nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution);
  const nodeAffinity: NonNullable<Affinity['nodeAffinity']> = {};
  if (Array.isArray(required.nodeSelectorTerms)) {
    nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = {
      nodeSelectorTerms: required.nodeSelectorTerms.map((t) => ({ matchExpressions: toRequirements(obj(t).matchExpressions) })),
    };
  }
  const preferred = arr(obj(affinity.nodeAffinity).preferredDuringSchedulingIgnoredDuringExecution).map(obj);
  if (preferred.length > 0) {
    nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution = preferred.map((p) => ({
      weight: typeof p.weight === 'number' ? p.weight : 1, preference: { matchExpressions: toRequirements(obj(p.preference).matchExpressions) },
    }));
  }
  const podAffinity = toPodAffinityRules(affinity.podAffinity);
  const podAntiAffinity = toPodAffinityRules(affinity.podAntiAffinity);
  if (Object.keys(nodeAffinity).length === 0 && !podAffinity && !podAntiAffinity) return undefined;
  return {
    ...(Object.keys(nodeAffinity).length > 0 ? { nodeAffinity } : {}),
    ...(podAffinity ? { podAffinity } : {}),
    ...(podAntiAffinity ? { podAntiAffinity } : {}),
  };
}

function toSpreadConstraint(c: Dict): TopologySpreadConstraint {
  const out: TopologySpreadConstraint = {
    maxSkew: typeof c.maxSkew === 'number' ? c.maxSkew : 1,
    topologyKey: str(c.topologyKey) ?? '',
    whenUnsatisfiable: c.whenUnsatisfiable === 'ScheduleAnyway' ? 'ScheduleAnyway' : 'DoNotSchedule',
  };
  const selector = toLabelSelector(c.labelSelector);
  if (selector) out.labelSelector = selector;
  if (typeof c.minDomains === 'number') out.minDomains = c.minDomains;
  if (c.nodeAffinityPolicy === 'Honor' || c.nodeAffinityPolicy === 'Ignore') out.nodeAffinityPolicy = c.nodeAffinityPolicy;
  if (c.nodeTaintsPolicy === 'Honor' || c.nodeTaintsPolicy === 'Ignore') out.nodeTaintsPolicy = c.nodeTaintsPolicy;
  if (Array.isArray(c.matchLabelKeys)) out.matchLabelKeys = c.matchLabelKeys.filter((k): k is string => typeof k === 'string');
  return out;
}

function toVolume(v: Dict): NonNullable<Pod['spec']['volumes']>[number] {
  const claimName = str(obj(v.persistentVolumeClaim).claimName);
  const template = v.ephemeral === undefined ? undefined : obj(obj(obj(v.ephemeral).volumeClaimTemplate).spec);
  const storageClassName = template ? str(template.storageClassName) : undefined;
  return {
    name: str(v.name)!,
    ...(claimName ? { persistentVolumeClaim: { claimName } } : {}),
    ...(template ? { ephemeral: storageClassName ? { storageClassName } : {} } : {}),
  };
}

/** ownerKind from the controller reference (the kinds whose pods Karpenter treats specially); owner is the first. */
function setOwners(pod: Pod, owners: Dict[]): void {
  const controller = owners.find((r) => r.controller === true);
  const kind = str(controller?.kind);
  if (kind && OWNER_KINDS.has(kind)) pod.ownerKind = kind as NonNullable<Pod['ownerKind']>;
  const first = owners[0];
  if (first && str(first.kind) && str(first.name)) pod.owner = { apiVersion: sharedStr(first.apiVersion) ?? '', kind: sharedStr(first.kind)!, name: sharedStr(first.name)! };
}
