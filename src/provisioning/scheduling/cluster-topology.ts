/**
 * The cluster's topology as a pass starts (Karpenter's NewTopology): the groups of the
 * pending pods' spreads and (anti-)affinities, the running pods' required anti-affinity, the
 * bound pods counted where they run, and the domains each spread may use.
 */
import type { Node, Pod } from '../../ports/cluster.js';
import { Requirements, firstUntoleratedTaint } from '../requirements.js';
import { podRequirementTerms } from './pod-groups.js';
import type { RequirementsCache } from './requirements-cache.js';
import { Topology, TopologyError, record, requiredOnly, type DomainSource } from './topology.js';
import { LABEL_HOSTNAME } from '../../apis/well-known.js';
import { hasRequiredAntiAffinity, isRunningBound } from './bound-pods.js';
import type { PoolTemplate, SchedulingInput } from './types.js';

export class ClusterTopology {
  readonly groups = new Topology((pod) => podRequirementTerms(pod));
  /** Running pods with required anti-affinity, and the copy their rules were registered as. */
  private readonly boundRules = new Map<Pod, Pod>();

  constructor(
    private readonly input: SchedulingInput,
    private readonly pools: readonly PoolTemplate[],
    private readonly cache: RequirementsCache,
  ) {}

  /**
   * Registers every group and counts the running pods; returns the pending pods whose own
   * constraints are invalid, with why.
   */
  build(): Map<Pod, string> {
    const invalid = this.addPending();
    this.addBoundAntiAffinity();
    // Without a single topology group no bound pod has a topology to record (Topology.of).
    if (this.groups.size > 0) {
      const bound = (this.input.boundPods ?? []).filter(isRunningBound);
      this.setUniverses(bound);
      this.recordBound(bound);
    }
    return invalid;
  }

  /** Registers the pending pods' own constraints; returns those whose constraints are invalid, with why. */
  private addPending(): Map<Pod, string> {
    const invalid = new Map<Pod, string>();
    for (const pod of this.input.pendingPods) {
      try {
        this.groups.add(pod);
      } catch (error) {
        if (!(error instanceof TopologyError)) throw error;
        invalid.set(pod, error.message);
      }
    }
    return invalid;
  }

  /**
   * Only a running pod's required anti-affinity binds newcomers; its other rules are history.
   * The rules are registered on a copy that holds only them, and the pod is recorded through
   * that copy, so its node becomes a domain its group's owners keep others out of.
   */
  private addBoundAntiAffinity(): void {
    for (const pod of this.boundWithAntiAffinity()) {
      const rules: Pod = { ...pod, spec: { ...pod.spec, topologySpreadConstraints: [], affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: pod.spec.affinity!.podAntiAffinity!.requiredDuringSchedulingIgnoredDuringExecution } } } };
      try {
        this.groups.add(rules);
        this.boundRules.set(pod, rules);
      } catch (error) {
        if (!(error instanceof TopologyError)) throw error;
      }
    }
  }

  /** The running bound pods with required anti-affinity, in list order (the memo's bound usage keeps them from pass to pass). */
  private boundWithAntiAffinity(): readonly Pod[] {
    const memo = this.input.memo;
    // buildInFlight brought memo.bound to this pass's bound pods.
    if (memo) return memo.bound.withAntiAffinity();
    return (this.input.boundPods ?? []).filter((pod) => hasRequiredAntiAffinity(pod) && isRunningBound(pod));
  }

  /** Counts the bound pods in the topology groups that select them. */
  private recordBound(bound: readonly Pod[]): void {
    for (const pod of bound) {
      const topology = this.groups.of(this.boundRules.get(pod) ?? pod);
      if (topology) record(pod, topology, requiredOnly(topology), this.nodeSource(pod.spec.nodeName!));
    }
  }

  /** Domains each spread may use: what the NodePools can launch for its owner, plus existing nodes. */
  private setUniverses(bound: readonly Pod[]): void {
    for (const group of this.groups.all()) {
      if (group.type !== 'spread' || group.key === LABEL_HOSTNAME) continue;
      const values = new Set<string>();
      for (const pool of this.pools) {
        const filter = group.nodeFilter;
        if (filter?.tolerations && firstUntoleratedTaint(filter.tolerations, pool.taints)) continue;
        const scopes = filter?.terms
          ? filter.terms.filter((t) => this.cache.compatible(pool.requirements, t) === undefined).map((t) => this.cache.intersect(pool.requirements, t))
          : [pool.requirements];
        for (const scope of scopes) for (const v of this.launchableDomains(pool, scope, group.key)) values.add(v);
      }
      for (const pod of bound) {
        const source = this.nodeSource(pod.spec.nodeName!);
        if (!group.countsOn(source.requirements, source.taints)) continue;
        for (const v of source.domains(group.key) ?? []) values.add(v);
      }
      group.universe = values;
    }
  }

  private readonly launchable = new Map<PoolTemplate, Map<Requirements, Map<string, ReadonlySet<string>>>>();

  /** Values of `key` some SKU of the pool can launch with under `scope` (spreads share scopes). */
  private launchableDomains(pool: PoolTemplate, scope: Requirements, key: string): ReadonlySet<string> {
    let byScope = this.launchable.get(pool);
    if (!byScope) this.launchable.set(pool, (byScope = new Map()));
    let byKey = byScope.get(scope);
    if (!byKey) byScope.set(scope, (byKey = new Map()));
    let values = byKey.get(key);
    if (!values) {
      const out = new Set<string>();
      const r = scope.get(key);
      let previous: ReadonlySet<string> | undefined;
      for (const candidate of pool.candidates) {
        const o = candidate.requirements.get(key);
        if (!o || o.complement || o.values === previous || !this.cache.intersects(candidate.requirements, scope)) continue;
        previous = o.values;
        for (const v of o.values) if (!r || r.has(v)) out.add(v);
      }
      if (out.size === 0 && r && !r.complement) for (const v of r.values) out.add(v);
      byKey.set(key, (values = out));
    }
    return values;
  }

  private readonly nodeSources = new Map<string, DomainSource>();
  private nodesByName: Map<string, Node> | undefined;

  /** Topology view of an existing node, from its labels (or its NodeClaim's, before it is listed). */
  private nodeSource(nodeName: string): DomainSource {
    let source = this.nodeSources.get(nodeName);
    if (source) return source;
    this.nodesByName ??= new Map((this.input.nodes ?? []).map((n) => [n.metadata.name, n]));
    const node = this.nodesByName.get(nodeName);
    const claim = node ? undefined : this.input.existingNodeClaims.find((c) => c.status.nodeName === nodeName);
    const labels: Record<string, string> = { ...(node?.metadata.labels ?? claim?.metadata.labels ?? {}) };
    labels[LABEL_HOSTNAME] ??= nodeName;
    const requirements = Requirements.fromLabels(labels);
    source = {
      requirements,
      taints: node?.spec.taints ?? claim?.spec.taints ?? [],
      domains: (key) => (labels[key] !== undefined ? [labels[key]] : undefined),
    };
    this.nodeSources.set(nodeName, source);
    return source;
  }
}
