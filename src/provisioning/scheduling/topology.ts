/**
 * Pod topology with Karpenter's semantics (pkg/controllers/provisioning/scheduling/topology*.go):
 * topologySpreadConstraints, and required/preferred pod affinity and anti-affinity, each
 * tracked as a topology group that counts matching pods per domain of its topology key.
 *
 * Groups are shared: 500 replicas with the same spread constraint make one group with 500
 * owners, not 500 groups. A node (planned, in flight or existing) exposes the values it may
 * take for a key; placing a pod narrows them to one (a zone, a region, its hostname) so
 * every count is exact and the planned NodeClaim pins what the counts assumed.
 */
import type {
  LabelSelectorRequirement, NodeAffinityTerm, Pod, PodAffinityTerm, Taint, Toleration, TopologySpreadConstraint,
} from '../../ports/cluster.js';
import { compileSelector, selectorKey, type LabelMatcher } from './label-selector.js';
import { Requirements, firstUntoleratedTaint } from '../requirements.js';
import { LABEL_HOSTNAME } from '../../apis/well-known.js';

export type TopologyType = 'spread' | 'affinity' | 'anti-affinity';

/** Karpenter's TopologyNodeFilter: which nodes count for a spread (nodeAffinityPolicy, nodeTaintsPolicy). */
export interface NodeFilter {
  /** OR'ed node requirement terms of the owner (nodeAffinityPolicy: Honor), or undefined (Ignore). */
  terms: readonly Requirements[] | undefined;
  /** The owner's tolerations (nodeTaintsPolicy: Honor), or undefined (Ignore, the default). */
  tolerations: readonly Toleration[] | undefined;
}

export class TopologyGroup {
  /** domain → pods matching the selector there. */
  readonly counts = new Map<string, number>();
  /** domain → pods that own this (anti-affinity) group there: matching pods must stay away. */
  readonly owners = new Map<string, number>();
  total = 0;
  /** Domains a spread may use (set by the scheduler from its NodePools and existing nodes). */
  universe: ReadonlySet<string> | undefined;

  constructor(
    readonly id: string,
    readonly type: TopologyType,
    readonly key: string,
    /** undefined: every namespace. */
    private readonly namespaces: ReadonlySet<string> | undefined,
    private readonly matcher: LabelMatcher,
    readonly maxSkew: number,
    readonly minDomains: number | undefined,
    readonly nodeFilter: NodeFilter | undefined,
    /** Required pod (anti-)affinity; only required anti-affinity keeps other pods away. */
    readonly required: boolean = true,
  ) {}

  selects(pod: Pod): boolean {
    return (this.namespaces === undefined || this.namespaces.has(pod.metadata.namespace)) && this.matcher(pod.metadata.labels);
  }

  /** Whether a pod placed on a node with these requirements/taints counts for the group. */
  countsOn(requirements: Requirements, taints: readonly Taint[]): boolean {
    const filter = this.nodeFilter;
    if (!filter) return true;
    if (filter.terms && !filter.terms.some((t) => requirements.intersects(t) === undefined)) return false;
    if (filter.tolerations && firstUntoleratedTaint(filter.tolerations, taints)) return false;
    return true;
  }

  count(domain: string): number {
    return this.counts.get(domain) ?? 0;
  }

  record(domain: string): void {
    this.counts.set(domain, this.count(domain) + 1);
    this.total++;
  }

  recordOwner(domain: string): void {
    this.owners.set(domain, (this.owners.get(domain) ?? 0) + 1);
  }

  /** Global minimum over the domains the pod may use; hostname always has an empty one to create. */
  minCount(): number {
    if (this.key === LABEL_HOSTNAME) return 0;
    const universe = this.universe ?? new Set<string>();
    if (this.minDomains !== undefined && universe.size < this.minDomains) return 0;
    let min = Infinity;
    for (const domain of universe) min = Math.min(min, this.count(domain));
    return min === Infinity ? 0 : min;
  }
}

export interface PreferredTerm {
  group: TopologyGroup;
  weight: number;
}

/** What topology asks of one pod, and how far its preferences have been relaxed. */
export interface PodTopology {
  spread: TopologyGroup[];
  /** whenUnsatisfiable: ScheduleAnyway, honoured until relaxed. */
  softSpread: TopologyGroup[];
  affinity: TopologyGroup[];
  antiAffinity: TopologyGroup[];
  /** Heaviest first; Karpenter tries them as required and drops the heaviest on failure. */
  preferredAffinity: PreferredTerm[];
  preferredAntiAffinity: PreferredTerm[];
  /** Preferred node affinity terms, heaviest first. */
  preferredNode: NodeAffinityTerm[];
  /** Groups whose selector picks this pod: it counts for them wherever it lands. */
  matching: TopologyGroup[];
  /** Anti-affinity groups whose selector picks this pod: it must avoid their owners. */
  inverse: TopologyGroup[];
}

/** How far a pod's preferences are relaxed (Karpenter's Preferences.Relax order). */
export interface Relaxation {
  preferredAffinity: number;
  preferredAntiAffinity: number;
  preferredNode: number;
  softSpread: boolean;
}

export const NO_RELAXATION: Relaxation = { preferredAffinity: 0, preferredAntiAffinity: 0, preferredNode: 0, softSpread: false };

/** Only what binds: how pods already running are counted (preferences only scored them). */
export function requiredOnly(topology: PodTopology): Relaxation {
  return {
    preferredAffinity: topology.preferredAffinity.length, preferredAntiAffinity: topology.preferredAntiAffinity.length,
    preferredNode: topology.preferredNode.length, softSpread: true,
  };
}

export const EMPTY_TOPOLOGY: PodTopology = Object.freeze({
  spread: [], softSpread: [], affinity: [], antiAffinity: [], preferredAffinity: [], preferredAntiAffinity: [], preferredNode: [],
  matching: [], inverse: [],
}) as PodTopology;

/** The values a node built from these requirements and instance types may take for `key`. */
export function domainsFor(key: string, requirements: Requirements, options: readonly { readonly requirements: Requirements }[]): readonly string[] | undefined {
  const r = requirements.get(key);
  const values = new Set<string>();
  let defined = options.length > 0;
  let previous: ReadonlySet<string> | undefined;
  for (const option of options) {
    const o = option.requirements.get(key);
    if (!o || o.complement) {
      defined = false;
      break;
    }
    // Instance types mostly share a value set object or repeat the last one; skip those.
    if (o.values === previous) continue;
    previous = o.values;
    for (const v of o.values) if (!r || r.has(v)) values.add(v);
  }
  if (defined) return values.size > 0 ? [...values].sort() : undefined;
  if (r && !r.complement && r.values.size > 0) return [...r.values].sort();
  return undefined;
}

/** Short description of what a pod's topology asks, for unschedulable reasons. */
export function describeTopology(topology: PodTopology, r: Relaxation): string {
  const parts: string[] = [];
  for (const g of topology.spread) parts.push(`topology spread on ${g.key} (maxSkew ${g.maxSkew})`);
  if (!r.softSpread) for (const g of topology.softSpread) parts.push(`topology spread on ${g.key} (maxSkew ${g.maxSkew})`);
  for (const g of topology.affinity) parts.push(`pod affinity on ${g.key}`);
  for (const g of topology.antiAffinity) parts.push(`pod anti-affinity on ${g.key}`);
  if (topology.inverse.length > 0) parts.push(`anti-affinity of other pods on ${[...new Set(topology.inverse.map((g) => g.key))].join(', ')}`);
  return parts.length > 0 ? parts.join(', ') : 'no topology constraint';
}

/** The next relaxation, or undefined when nothing is left to relax. */
export function relax(topology: PodTopology, r: Relaxation): Relaxation | undefined {
  if (r.preferredAffinity < topology.preferredAffinity.length) return { ...r, preferredAffinity: r.preferredAffinity + 1 };
  if (r.preferredAntiAffinity < topology.preferredAntiAffinity.length) return { ...r, preferredAntiAffinity: r.preferredAntiAffinity + 1 };
  if (r.preferredNode < topology.preferredNode.length) return { ...r, preferredNode: r.preferredNode + 1 };
  if (!r.softSpread && topology.softSpread.length > 0) return { ...r, softSpread: true };
  return undefined;
}

/** A place a pod may go: the values it may take per topology key, its requirements and taints. */
export interface DomainSource {
  domains(key: string): readonly string[] | undefined;
  readonly requirements: Requirements;
  readonly taints: readonly Taint[];
}

/*
 * decide() runs for every (pod, candidate node) the scheduler tries, tens of thousands of
 * times per run: its helpers are module functions over one scratch state rather than
 * closures, and the result map is only allocated once something narrows.
 */
let scratchNode: DomainSource;
let scratchNarrowed: Map<string, string[]> | undefined;

function current(key: string): readonly string[] | undefined {
  return scratchNarrowed?.get(key) ?? scratchNode.domains(key);
}

function narrow(key: string, values: string[]): void {
  (scratchNarrowed ??= new Map()).set(key, values);
}

function spreadAllows(pod: Pod, group: TopologyGroup): boolean {
  const domains = current(group.key);
  if (!domains) return false; // a node without the key is not eligible for a spread
  const min = group.minCount();
  const self = group.selects(pod) ? 1 : 0;
  let best: string | undefined;
  let bestCount = Infinity;
  for (const domain of domains) {
    const count = group.count(domain) + self;
    if (count - min <= group.maxSkew && (count < bestCount || (count === bestCount && best !== undefined && domain < best))) {
      best = domain;
      bestCount = count;
    }
  }
  if (best === undefined) return false;
  if (domains.length !== 1) narrow(group.key, [best]);
  return true;
}

function affinityAllows(pod: Pod, group: TopologyGroup): boolean {
  const domains = current(group.key);
  if (!domains) return false;
  // With no matching pod anywhere, a self-selecting pod bootstraps the group where it lands.
  if (group.total === 0 && group.selects(pod)) return true;
  const allowed = domains.filter((d) => group.count(d) > 0);
  if (allowed.length === 0) return false;
  if (allowed.length !== domains.length) narrow(group.key, allowed);
  return true;
}

function antiAffinityAllows(group: TopologyGroup, counts: ReadonlyMap<string, number>): boolean {
  const domains = current(group.key);
  if (!domains) return true; // no label, no shared domain
  let allowed: string[] | undefined;
  for (let i = 0; i < domains.length; i++) {
    const taken = (counts.get(domains[i]!) ?? 0) > 0;
    if (taken && !allowed) allowed = domains.slice(0, i);
    else if (!taken && allowed) allowed.push(domains[i]!);
  }
  if (!allowed) return true;
  if (allowed.length === 0) return false;
  narrow(group.key, allowed);
  return true;
}

/** Every key the pod counts or owns for must end single-valued, so the counts are exact. */
function pin(group: TopologyGroup, preferFull: boolean): void {
  const domains = current(group.key);
  if (!domains || domains.length <= 1) return;
  let best = domains[0]!;
  for (const d of domains) {
    const better = preferFull ? group.count(d) > group.count(best) : group.count(d) < group.count(best);
    if (better || (group.count(d) === group.count(best) && d < best)) best = d;
  }
  narrow(group.key, [best]);
}

const NOTHING_NARROWED: ReadonlyMap<string, string[]> = new Map();

/**
 * Where the pod may go on this node: key → the values it must take (one, for every key it
 * counts or owns for), or undefined when topology rules the node out.
 */
export function decide(pod: Pod, topology: PodTopology, r: Relaxation, node: DomainSource): ReadonlyMap<string, string[]> | undefined {
  scratchNode = node;
  scratchNarrowed = undefined;
  for (const group of topology.spread) if (!spreadAllows(pod, group)) return undefined;
  if (!r.softSpread) for (const group of topology.softSpread) if (!spreadAllows(pod, group)) return undefined;
  for (const group of topology.affinity) if (!affinityAllows(pod, group)) return undefined;
  for (let i = r.preferredAffinity; i < topology.preferredAffinity.length; i++) if (!affinityAllows(pod, topology.preferredAffinity[i]!.group)) return undefined;
  for (const group of topology.antiAffinity) if (!antiAffinityAllows(group, group.counts)) return undefined;
  for (let i = r.preferredAntiAffinity; i < topology.preferredAntiAffinity.length; i++) {
    const group = topology.preferredAntiAffinity[i]!.group;
    if (!antiAffinityAllows(group, group.counts)) return undefined;
  }
  // Symmetry: pods whose required anti-affinity selects this one keep it out of their domains.
  for (const group of topology.inverse) if (!antiAffinityAllows(group, group.owners)) return undefined;
  for (const group of topology.affinity) pin(group, true);
  for (let i = r.preferredAffinity; i < topology.preferredAffinity.length; i++) pin(topology.preferredAffinity[i]!.group, true);
  for (const group of topology.spread) pin(group, false);
  if (!r.softSpread) for (const group of topology.softSpread) pin(group, false);
  for (const group of topology.antiAffinity) pin(group, false);
  for (const group of topology.matching) if (group.countsOn(node.requirements, node.taints)) pin(group, false);
  for (const group of topology.inverse) pin(group, false);
  return scratchNarrowed ?? NOTHING_NARROWED;
}

/** Counts a pod placed on a node whose domains are now decided. */
export function record(pod: Pod, topology: PodTopology, r: Relaxation, node: DomainSource): void {
  for (const group of topology.matching) {
    if (!group.countsOn(node.requirements, node.taints)) continue;
    const domains = node.domains(group.key);
    if (domains && domains.length === 1) group.record(domains[0]!);
  }
  for (const group of topology.antiAffinity) {
    const domains = node.domains(group.key);
    if (domains && domains.length === 1) group.recordOwner(domains[0]!);
  }
}

function labelKeyRequirements(pod: Pod, matchLabelKeys: readonly string[] | undefined, mismatchLabelKeys?: readonly string[]): LabelSelectorRequirement[] {
  const out: LabelSelectorRequirement[] = [];
  for (const key of matchLabelKeys ?? []) {
    const value = pod.metadata.labels[key];
    if (value !== undefined) out.push({ key, operator: 'In', values: [value] });
  }
  for (const key of mismatchLabelKeys ?? []) {
    const value = pod.metadata.labels[key];
    if (value !== undefined) out.push({ key, operator: 'NotIn', values: [value] });
  }
  return out;
}

/** Thrown for a constraint that cannot be evaluated; the pod gets it as its reason. */
export class TopologyError extends Error {
  override readonly name = 'TopologyError';
}

/**
 * Every topology group of a scheduling run, deduplicated by what they count. Built from the
 * pending pods and the pods already bound (their anti-affinity binds newcomers too).
 */
export class Topology {
  private readonly groups = new Map<string, TopologyGroup>();
  private readonly byPod = new Map<Pod, PodTopology>();
  private matchingCache = new Map<string, TopologyGroup[]>();
  private finalized = false;

  constructor(private readonly podTerms: (pod: Pod) => Requirements[]) {}

  get size(): number {
    return this.groups.size;
  }

  all(): IterableIterator<TopologyGroup> {
    return this.groups.values();
  }

  /** Registers the pod's own constraints (call for every pod before asking for any PodTopology). */
  add(pod: Pod): void {
    if (this.finalized) throw new Error('Topology: add after use');
    const spec = pod.spec;
    const hasRules = spec.topologySpreadConstraints?.length || spec.affinity?.podAffinity || spec.affinity?.podAntiAffinity ||
      spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.length;
    if (!hasRules) return;
    const topology: PodTopology = {
      spread: [], softSpread: [], affinity: [], antiAffinity: [], preferredAffinity: [], preferredAntiAffinity: [],
      preferredNode: [...(spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [])]
        .sort((a, b) => b.weight - a.weight).map((t) => t.preference),
      matching: [], inverse: [],
    };
    for (const c of spec.topologySpreadConstraints ?? []) {
      const group = this.spreadGroup(pod, c);
      (c.whenUnsatisfiable === 'ScheduleAnyway' ? topology.softSpread : topology.spread).push(group);
    }
    const rules = (type: 'affinity' | 'anti-affinity', required: PodAffinityTerm[] | undefined, preferred: { weight: number; podAffinityTerm: PodAffinityTerm }[] | undefined): void => {
      const mandatory = type === 'affinity' ? topology.affinity : topology.antiAffinity;
      const optional = type === 'affinity' ? topology.preferredAffinity : topology.preferredAntiAffinity;
      for (const term of required ?? []) mandatory.push(this.affinityGroup(pod, type, term, true));
      const weighted = [...(preferred ?? [])].sort((a, b) => b.weight - a.weight);
      for (const w of weighted) optional.push({ group: this.affinityGroup(pod, type, w.podAffinityTerm, false), weight: w.weight });
    };
    rules('affinity', spec.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution, spec.affinity?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution);
    rules('anti-affinity', spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution, spec.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution);
    this.byPod.set(pod, topology);
  }

  /** The pod's topology, or undefined when no group concerns it (the bulk path may take it). */
  of(pod: Pod): PodTopology | undefined {
    this.finalized = true;
    const own = this.byPod.get(pod);
    const matching = this.matching(pod);
    if (!own && matching.length === 0) return undefined;
    const topology = own ?? {
      spread: [], softSpread: [], affinity: [], antiAffinity: [], preferredAffinity: [], preferredAntiAffinity: [], preferredNode: [],
      matching: [], inverse: [],
    };
    topology.matching = matching;
    topology.inverse = matching.filter((g) => g.type === 'anti-affinity' && g.required);
    return topology;
  }

  /** Groups selecting the pod; pods with equal namespace and labels share the answer. */
  matching(pod: Pod): TopologyGroup[] {
    if (this.groups.size === 0) return [];
    let key = pod.metadata.namespace;
    for (const k in pod.metadata.labels) key += `\u0000${k}=${pod.metadata.labels[k]}`;
    let found = this.matchingCache.get(key);
    if (!found) {
      found = [];
      for (const group of this.groups.values()) if (group.selects(pod)) found.push(group);
      this.matchingCache.set(key, found);
    }
    return found;
  }

  private intern(id: string, make: () => TopologyGroup): TopologyGroup {
    let group = this.groups.get(id);
    if (!group) {
      this.groups.set(id, (group = make()));
      this.matchingCache = new Map();
    }
    return group;
  }

  private spreadGroup(pod: Pod, c: TopologySpreadConstraint): TopologyGroup {
    if (!Number.isInteger(c.maxSkew) || c.maxSkew < 1) throw new TopologyError(`topologySpreadConstraints maxSkew must be a positive integer, got ${c.maxSkew}`);
    const extra = labelKeyRequirements(pod, c.matchLabelKeys);
    const honorAffinity = (c.nodeAffinityPolicy ?? 'Honor') === 'Honor';
    const honorTaints = c.nodeTaintsPolicy === 'Honor';
    const terms = honorAffinity ? this.podTerms(pod) : undefined;
    const filterKey = `${honorAffinity ? JSON.stringify([pod.spec.nodeSelector, pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? null]) : '-'}` +
      `|${honorTaints ? JSON.stringify(pod.spec.tolerations) : '-'}`;
    const id = `spread|${c.topologyKey}|${pod.metadata.namespace}|${selectorKey(c.labelSelector, extra)}|${c.maxSkew}|${c.minDomains ?? ''}|${filterKey}`;
    return this.intern(id, () => new TopologyGroup(
      id, 'spread', c.topologyKey, new Set([pod.metadata.namespace]), compileSelector(c.labelSelector, extra), c.maxSkew, c.minDomains,
      { terms, tolerations: honorTaints ? pod.spec.tolerations : undefined },
    ));
  }

  private affinityGroup(pod: Pod, type: 'affinity' | 'anti-affinity', term: PodAffinityTerm, required: boolean): TopologyGroup {
    const ns = term.namespaceSelector;
    if (ns && ((ns.matchExpressions?.length ?? 0) > 0 || Object.keys(ns.matchLabels ?? {}).length > 0)) {
      throw new TopologyError(`pod ${type} namespaceSelector with labels is not supported (namespaces are not read); list namespaces instead`);
    }
    const namespaces = ns ? undefined : new Set(term.namespaces?.length ? term.namespaces : [pod.metadata.namespace]);
    const extra = labelKeyRequirements(pod, term.matchLabelKeys, term.mismatchLabelKeys);
    const id = `${type}|${required ? 'required' : 'preferred'}|${term.topologyKey}|${namespaces ? [...namespaces].sort().join(',') : '*'}|${selectorKey(term.labelSelector, extra)}`;
    return this.intern(id, () => new TopologyGroup(
      id, type, term.topologyKey, namespaces, compileSelector(term.labelSelector, extra), 0, undefined, undefined, required,
    ));
  }
}
