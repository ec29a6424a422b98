/**
 * Pending pods grouped by shape. Pods from one Deployment or Job are identical for
 * scheduling purposes, so the scheduler places a group in bulk instead of pod by pod.
 * Grouping hashes the fields that matter (32-bit FNV-1a) and confirms with a structural
 * comparison; neither allocates, which matters because at 10,000 pods building string keys
 * was the largest source of garbage.
 */
import type { NodeSelectorRequirement, Pod } from '../../ports/cluster.js';
import { RESOURCE_CPU, RESOURCE_GPU, RESOURCE_MEMORY, podRequests, type Resources } from '../resources.js';
import { Requirements } from '../requirements.js';
import { indexVector } from './first-fit-index.js';

export interface PodGroup {
  pods: Pod[];
  requests: Resources;
  /** requests in FirstFitIndex dimension order. */
  requestVector: Float64Array;
  /** OR'ed requirement alternatives, shared between groups with the same placement. */
  terms: Requirements[];
  tolerations: Pod['spec']['tolerations'];
  /** Set when the pod cannot be considered at all (e.g. an unparseable quantity). */
  invalid: string | undefined;
}

/** "namespace/name", the key plans and placements use. */
export function podKey(pod: Pod): string {
  return `${pod.metadata.namespace}/${pod.metadata.name}`;
}

/** The OR'ed alternatives a pod accepts: nodeSelector ∩ each required affinity term. */
export function podRequirementTerms(pod: Pod): Requirements[] {
  const selector = Requirements.fromLabels(pod.spec.nodeSelector);
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms) return [selector];
  // A term without expressions matches no node (core/v1 semantics), so it is dropped.
  return terms.filter((t) => t.matchExpressions.length > 0).map((t) => selector.intersect(Requirements.fromSelectors(t.matchExpressions)));
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function hashString(hash: number, value: string): number {
  let h = hash;
  for (let i = 0; i < value.length; i++) h = Math.imul(h ^ value.charCodeAt(i), FNV_PRIME);
  return Math.imul(h ^ 0xff, FNV_PRIME);
}

function hashList(hash: number, list: Record<string, string> | undefined): number {
  let h = Math.imul(hash ^ 0xfe, FNV_PRIME);
  if (!list) return h;
  for (const name in list) h = hashString(hashString(h, name), list[name]!);
  return h;
}

function hashSelectors(hash: number, selectors: readonly NodeSelectorRequirement[]): number {
  let h = hash;
  for (const r of selectors) {
    h = hashString(hashString(h, r.key), r.operator);
    for (const v of r.values ?? []) h = hashString(h, v);
  }
  return h;
}

function requestsHash(pod: Pod): number {
  let h = FNV_OFFSET;
  for (const c of pod.spec.containers) h = hashList(h, c.resources.requests);
  h = Math.imul(h ^ 0xfd, FNV_PRIME);
  for (const c of pod.spec.initContainers) h = hashList(h, c.resources.requests);
  return hashList(h, pod.spec.overhead) >>> 0;
}

function placementHash(pod: Pod): number {
  let h = hashList(FNV_OFFSET, pod.spec.nodeSelector);
  for (const t of pod.spec.tolerations) {
    h = hashString(hashString(hashString(hashString(h, t.key ?? ''), t.operator ?? ''), t.value ?? ''), t.effect ?? '');
  }
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms) for (const term of terms) h = hashSelectors(Math.imul(h ^ 0xfc, FNV_PRIME), term.matchExpressions);
  return h >>> 0;
}

function sameList(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  if (a === b) return true;
  if (!a || !b) return (!a || Object.keys(a).length === 0) && (!b || Object.keys(b).length === 0);
  let count = 0;
  for (const name in a) {
    if (a[name] !== b[name]) return false;
    count++;
  }
  for (const name in b) if (count-- <= 0 || !(name in a)) return false;
  return count === 0;
}

function sameSelectors(a: readonly NodeSelectorRequirement[], b: readonly NodeSelectorRequirement[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.key !== y.key || x.operator !== y.operator || x.minValues !== y.minValues) return false;
    const xv = x.values ?? [];
    const yv = y.values ?? [];
    if (xv.length !== yv.length) return false;
    for (let j = 0; j < xv.length; j++) if (xv[j] !== yv[j]) return false;
  }
  return true;
}

function sameContainers(a: Pod['spec']['containers'], b: Pod['spec']['containers']): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameList(a[i]!.resources.requests, b[i]!.resources.requests)) return false;
  return true;
}

/** Same requests (containers, init containers, overhead); placement compared separately. */
function sameRequests(a: Pod, b: Pod): boolean {
  return sameContainers(a.spec.containers, b.spec.containers) && sameContainers(a.spec.initContainers, b.spec.initContainers) &&
    sameList(a.spec.overhead, b.spec.overhead);
}

/** Same nodeSelector, tolerations and required node affinity: the pods can go to the same places. */
function samePlacement(a: Pod, b: Pod): boolean {
  if (!sameList(a.spec.nodeSelector, b.spec.nodeSelector)) return false;
  const at = a.spec.tolerations;
  const bt = b.spec.tolerations;
  if (at.length !== bt.length) return false;
  for (let i = 0; i < at.length; i++) {
    const x = at[i]!;
    const y = bt[i]!;
    if (x.key !== y.key || x.operator !== y.operator || x.value !== y.value || x.effect !== y.effect) return false;
  }
  const aTerms = a.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  const bTerms = b.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!aTerms || !bTerms) return aTerms === bTerms;
  if (aTerms.length !== bTerms.length) return false;
  for (let i = 0; i < aTerms.length; i++) if (!sameSelectors(aTerms[i]!.matchExpressions, bTerms[i]!.matchExpressions)) return false;
  return true;
}

/** Sort key for first-fit decreasing: GPUs are the scarcest, then cpu, then memory. */
function compareGroupsDecreasing(a: PodGroup, b: PodGroup): number {
  return (
    (b.requests[RESOURCE_GPU] ?? 0) - (a.requests[RESOURCE_GPU] ?? 0) ||
    (b.requests[RESOURCE_CPU] ?? 0) - (a.requests[RESOURCE_CPU] ?? 0) ||
    (b.requests[RESOURCE_MEMORY] ?? 0) - (a.requests[RESOURCE_MEMORY] ?? 0)
  );
}

/**
 * Each pod's two hashes, per spec object (they read nothing else; writers replace the spec
 * they change, and a controller's pods share their template's until one is bound): the
 * provisioner groups the same pending pods pass after pass, thousands of them while a fleet
 * ramps up.
 */
const hashes = new WeakMap<Pod['spec'], { placement: number; hash: number }>();

function hashesOf(pod: Pod): { placement: number; hash: number } {
  let h = hashes.get(pod.spec);
  if (!h) {
    const placement = placementHash(pod);
    hashes.set(pod.spec, (h = { placement, hash: (Math.imul(requestsHash(pod), FNV_PRIME) ^ placement) >>> 0 }));
  }
  return h;
}

/**
 * A pod's requirement terms, per spec object like its hashes (they read only the spec): the
 * same pending pods bring the same terms pass after pass, so answers kept against them
 * (SchedulingMemo.accepts) are found again. Never written: Requirements are immutable.
 */
const termsBySpec = new WeakMap<Pod['spec'], Requirements[]>();

function termsOf(pod: Pod): Requirements[] {
  let terms = termsBySpec.get(pod.spec);
  if (!terms) termsBySpec.set(pod.spec, (terms = podRequirementTerms(pod)));
  return terms;
}

/** Groups pods by shape, largest first (first-fit decreasing order). */
export function groupPods(pods: readonly Pod[]): PodGroup[] {
  const groups: PodGroup[] = [];
  const byHash = new Map<number, PodGroup[]>();
  // Pods with different requests but the same placement share Requirements objects, so every
  // memoised intersection/compatibility answer is reused across them.
  const byPlacement = new Map<number, PodGroup[]>();
  for (const pod of pods) {
    const { placement, hash } = hashesOf(pod);
    let bucket = byHash.get(hash);
    if (!bucket) byHash.set(hash, (bucket = []));
    // A loop, not find(): a closure per pod was most of what grouping 2,000 pending pods allocated.
    let existing: PodGroup | undefined;
    for (const g of bucket) {
      if (sameRequests(g.pods[0]!, pod) && samePlacement(g.pods[0]!, pod)) {
        existing = g;
        break;
      }
    }
    if (existing) {
      existing.pods.push(pod);
      continue;
    }
    let requests: Resources;
    let invalid: string | undefined;
    try {
      requests = podRequests(pod);
    } catch (error) {
      requests = {};
      invalid = `invalid resource requests: ${error instanceof Error ? error.message : String(error)}`;
    }
    let placed = byPlacement.get(placement);
    if (!placed) byPlacement.set(placement, (placed = []));
    const samePlace = placed.find((g) => samePlacement(g.pods[0]!, pod));
    const terms = samePlace ? samePlace.terms : termsOf(pod);
    const group: PodGroup = { pods: [pod], requests, requestVector: indexVector(requests), terms, tolerations: pod.spec.tolerations, invalid };
    if (!samePlace) placed.push(group);
    bucket.push(group);
    groups.push(group);
  }
  // Stable sort: equal shapes keep arrival order, so results are deterministic.
  return groups.sort(compareGroupsDecreasing);
}
