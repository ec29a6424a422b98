/**
 * The NodeClaims a pass plans (Karpenter's nodeclaim.go): adding pods to one, in bulk for a
 * group of identical pods or one at a time under topology, and narrowing its options and
 * requirements to what its pods and their topology allow.
 */
import type { Taint } from '../../ports/cluster.js';
import { addInto, copiesThatFit, fitsOnTop, fitsWithin, type Resources } from '../resources.js';
import { Requirement, Requirements, firstUntoleratedTaint } from '../requirements.js';
import { INDEX_DIMENSIONS, indexVector } from './first-fit-index.js';
import { podKey, type PodGroup } from './pod-groups.js';
import { firstCompatibleTerm, type RequirementsCache } from './requirements-cache.js';
import { EMPTY_TOPOLOGY, decide, domainsFor, record, type DomainSource, type PodTopology, type Relaxation } from './topology.js';
import { LABEL_HOSTNAME } from '../../apis/well-known.js';
import { HostnameRules, firstOpenToAll } from './hostname-rules.js';
import { maxCapacity } from './limits.js';
import type { Candidate, PlannedClaim, PoolTemplate } from './types.js';

export class PlannedClaims {
  /** Every claim planned this pass, in the order they were opened. */
  readonly all: PlannedClaim[] = [];
  private readonly hostnameRules = new HostnameRules();

  constructor(private readonly pools: readonly PoolTemplate[], private readonly cache: RequirementsCache) {}

  /** Takes in a claim just opened, at the end of its pool's index. */
  track(claim: PlannedClaim): void {
    claim.pool.planned.push(claim);
    claim.pool.plannedIndex.push(plannedFree(claim));
    this.all.push(claim);
  }

  /** Constrained pods leave options too small for what their claim now holds; drops them. */
  dropOptionsTooSmall(): void {
    for (const claim of this.all) {
      if (claim.options.some((o) => !fitsWithin(claim.used, o.allocatable))) this.narrow(claim, claim.options.filter((o) => fitsWithin(claim.used, o.allocatable)));
    }
  }

  /**
   * First fit over claims planned before this group started (see NewNodeClaims.open for why), pool
   * by pool in weight order; the index skips claims without room in O(log n).
   */
  placeGroup(group: PodGroup, from: number, plannedBefore: readonly number[]): number {
    let next = from;
    for (let p = 0; p < this.pools.length && next < group.pods.length; p++) {
      const pool = this.pools[p]!;
      const end = plannedBefore[p]!;
      if (end === 0 || firstUntoleratedTaint(group.tolerations, pool.taints, true)) continue;
      if (!firstCompatibleTerm(pool.requirements, group.terms, this.cache)) continue;
      for (let position = pool.plannedIndex.findFirst(group.requestVector, 0, end); position !== -1 && next < group.pods.length;
        position = pool.plannedIndex.findFirst(group.requestVector, position + 1, end)) {
        next += this.addPods(pool.planned[position]!, group, next);
      }
    }
    return next;
  }

  /** Adds as many of group.pods[from..] to a planned claim as fit; returns how many. */
  private addPods(claim: PlannedClaim, group: PodGroup, from: number): number {
    const term = firstCompatibleTerm(claim.requirements, group.terms, this.cache);
    if (!term) return 0;
    const requirements = this.cache.intersect(claim.requirements, term);
    // Two passes without intermediate objects: this runs for every (group, claim) the index
    // proposes, and per-option allocations here were a visible share of GC at 10,000 pods.
    const copiesPerOption = this.copiesScratch(claim.options.length);
    let most = 0;
    for (let i = 0; i < claim.options.length; i++) {
      const option = claim.options[i]!;
      const copies = this.cache.intersects(option.requirements, requirements) ? copiesThatFit(group.requests, claim.used, option.allocatable) : 0;
      copiesPerOption[i] = copies;
      if (copies > most) most = copies;
    }
    if (most === 0) return 0;
    let count = Math.min(most, group.pods.length - from);
    let keepsAll = true;
    for (let i = 0; i < claim.options.length; i++) if (copiesPerOption[i]! < count) keepsAll = false;
    let options = keepsAll ? claim.options : claim.options.filter((_, i) => copiesPerOption[i]! >= count);
    if (!satisfiesMinValues(requirements, options)) {
      ({ count, options } = fewerForMinValues(requirements, claim.options, (i) => copiesPerOption[i]!, count));
      if (count === 0) return 0;
    }
    if (claim.requirements !== requirements || claim.options !== options) claim.domainCache.clear();
    claim.requirements = requirements;
    this.narrow(claim, options);
    addInto(claim.used, group.requests, count);
    claim.pool.plannedIndex.set(claim.position, plannedFree(claim));
    for (let i = 0; i < count; i++) claim.podKeys.push(podKey(group.pods[from + i]!));
    return count;
  }

  /** Replaces a planned claim's options by a subset, returning unneeded limit headroom. */
  narrow(claim: PlannedClaim, options: Candidate[]): void {
    if (options.length === claim.options.length) return;
    claim.options = options;
    claim.maxAllocatable = undefined;
    const limits = claim.pool.limits;
    const remaining = claim.pool.remaining;
    if (!limits || !remaining) return;
    const reservation = maxCapacity(options, limits);
    for (const name in limits) remaining[name]! += (claim.reservation[name] ?? 0) - (reservation[name] ?? 0);
    claim.reservation = reservation;
  }

  /** Places one constrained pod on the first planned claim, pool by pool, that its topology allows. */
  placeOne(group: PodGroup, topology: PodTopology, r: Relaxation): boolean {
    for (const pool of this.pools) {
      if (pool.planned.length === 0 || firstUntoleratedTaint(group.tolerations, pool.taints, true)) continue;
      if (!firstCompatibleTerm(pool.requirements, group.terms, this.cache)) continue;
      const rules = topology === EMPTY_TOPOLOGY ? [] : this.hostnameRules.rulesFor(pool, group.pods[0]!, topology, r);
      // Alternate the two skips until they agree: the index skips claims without room, the
      // rules skip closed ones.
      let from = 0;
      for (;;) {
        const position = pool.plannedIndex.findFirst(group.requestVector, from);
        if (position === -1) break;
        const open = firstOpenToAll(rules, pool.planned, position);
        if (open !== position) {
          from = open;
          continue;
        }
        if (this.addPod(pool.planned[position]!, group, topology, r)) return true;
        from = position + 1;
      }
    }
    return false;
  }

  claimSource(claim: PlannedClaim): DomainSource {
    claim.source ??= new PlannedClaimSource(claim);
    return claim.source;
  }

  /**
   * Narrows requirements and options to what topology decided; undefined when no option is
   * left. Hostname needs no requirement: the claim is its own host.
   */
  applyNarrowing(narrowed: ReadonlyMap<string, string[]>, requirements: Requirements, options: Candidate[]): { requirements: Requirements; options: Candidate[] } | undefined {
    let req = requirements;
    let opts = options;
    for (const [key, values] of narrowed) {
      if (key === LABEL_HOSTNAME) continue;
      req = req.intersect(Requirements.of([Requirement.in(key, values)]));
      opts = this.optionsWith(opts, key, values);
    }
    return opts.length > 0 ? { requirements: req, options: opts } : undefined;
  }

  private readonly narrowedOptions = new Map<readonly Candidate[], Map<string, Candidate[]>>();

  /**
   * Options that may take one of `values` for `key`. They already satisfy everything else,
   * so only that key is checked; claims opened alike narrow alike, so results are shared.
   */
  private optionsWith(options: Candidate[], key: string, values: readonly string[]): Candidate[] {
    let byValues = this.narrowedOptions.get(options);
    if (!byValues) this.narrowedOptions.set(options, (byValues = new Map()));
    const id = `${key}\u0000${values.join('\u0000')}`;
    let out = byValues.get(id);
    if (!out) {
      out = options.filter((o) => {
        const r = o.requirements.get(key);
        return !r || values.some((v) => r.has(v));
      });
      byValues.set(id, out.length === options.length ? options : out);
      out = byValues.get(id)!;
    }
    return out;
  }

  private addPod(claim: PlannedClaim, group: PodGroup, topology: PodTopology, r: Relaxation): boolean {
    const pod = group.pods[0]!;
    // Topology first: it is cheap on the claim's cached domains, and fewer domains (fewer
    // options) can only refuse more, so a refusal here is final.
    if (topology !== EMPTY_TOPOLOGY && !decide(pod, topology, r, this.claimSource(claim))) return false;
    for (const term of group.terms) {
      if (this.cache.compatible(claim.requirements, term) !== undefined) continue;
      const requirements = this.cache.intersect(claim.requirements, term);
      // One pod at a time, options are not filtered by size on every add (that made each
      // placement O(instance types) several times over, the bulk of a diverse run): the
      // options too small for what the claim holds are dropped when the plan is made.
      // Requirements narrow them at once, and minValues needs the exact set each time.
      const exact = hasMinValues(requirements);
      let options = requirements === claim.requirements ? claim.options : claim.options.filter((o) => this.cache.intersects(o.requirements, requirements));
      if (exact) options = options.filter((o) => fitsOnTop(claim.used, group.requests, o.allocatable));
      if (options.length === 0) continue;
      const source = requirements === claim.requirements && options === claim.options
        ? this.claimSource(claim)
        : scratchSource(claim.hostname, requirements, options, claim.pool.taints);
      const narrowed = decide(pod, topology, r, source);
      if (!narrowed) continue;
      const applied = narrowed.size > 0 ? this.applyNarrowing(narrowed, requirements, options) : { requirements, options };
      if (!applied || !anyHolds(applied.options, claim.used, group.requests)) continue;
      if (exact && !satisfiesMinValues(applied.requirements, applied.options)) continue;
      if (claim.requirements !== applied.requirements || claim.options !== applied.options) claim.domainCache.clear();
      claim.requirements = applied.requirements;
      this.narrow(claim, applied.options);
      addInto(claim.used, group.requests);
      claim.pool.plannedIndex.set(claim.position, plannedFree(claim));
      claim.podKeys.push(podKey(pod));
      record(pod, topology, r, this.claimSource(claim));
      return true;
    }
    return false;
  }

  private copies = new Float64Array(16);

  /** A reusable per-option counter array (options lists are short; grown when not). */
  private copiesScratch(length: number): Float64Array {
    if (this.copies.length < length) this.copies = new Float64Array(length * 2);
    return this.copies;
  }
}

/** Whether some option holds used + request; options are cheapest first, so look from the largest. */
export function anyHolds(options: readonly Candidate[], used: Resources, request: Resources): boolean {
  for (let i = options.length - 1; i >= 0; i--) if (fitsOnTop(used, request, options[i]!.allocatable)) return true;
  return false;
}

export function hasMinValues(requirements: Requirements): boolean {
  for (const r of requirements.values()) if (r.minValues !== undefined) return true;
  return false;
}

/**
 * The most pods, fewer than `count`, a claim can take with the options that hold that many
 * still satisfying minValues (Karpenter, adding pods one at a time, stops there and opens
 * another claim); count 0 when not even one pod leaves enough.
 */
export function fewerForMinValues(
  requirements: Requirements, options: readonly Candidate[], copiesOf: (i: number) => number, count: number,
): { count: number; options: Candidate[] } {
  const thresholds = [...new Set(options.map((_, i) => copiesOf(i)))].filter((c) => c > 0 && c < count).sort((a, b) => b - a);
  for (const threshold of thresholds) {
    const kept = options.filter((_, i) => copiesOf(i) >= threshold);
    if (satisfiesMinValues(requirements, kept)) return { count: threshold, options: kept };
  }
  return { count: 0, options: [] };
}

/** karpenter.sh/v1 minValues: enough distinct values of the key must remain among the options. */
export function satisfiesMinValues(requirements: Requirements, options: readonly Candidate[]): boolean {
  for (const r of requirements.values()) {
    if (r.minValues === undefined) continue;
    const distinct = new Set<string>();
    for (const option of options) {
      const value = option.requirements.get(r.key);
      if (value && !value.complement) for (const v of value.values) distinct.add(v);
    }
    if (distinct.size < r.minValues) return false;
  }
  return true;
}

/*
 * Scratch vectors for plannedFree: FirstFitIndex.set copies what it is given, so one set of
 * buffers serves every call (this runs once per placement; fresh arrays showed up as GC).
 */
const FREE_SCRATCH = new Float64Array(INDEX_DIMENSIONS);
const OPTION_SCRATCH = new Float64Array(INDEX_DIMENSIONS);
const USED_SCRATCH = new Float64Array(INDEX_DIMENSIONS);

/**
 * Most room left on any of a planned claim's options, per indexed dimension (a shared
 * buffer): every option carries the same pods, so it is the options' largest allocatable
 * minus what is used, and the largest allocatable is kept until the options change.
 */
export function plannedFree(claim: PlannedClaim): Float64Array {
  const free = FREE_SCRATCH;
  const used = indexVector(claim.used, USED_SCRATCH);
  let largest = claim.maxAllocatable;
  if (!largest) {
    const scratch = OPTION_SCRATCH;
    largest = new Float64Array(INDEX_DIMENSIONS).fill(-Infinity);
    for (const option of claim.options) {
      indexVector(option.allocatable, scratch);
      for (let d = 0; d < INDEX_DIMENSIONS; d++) largest[d] = Math.max(largest[d]!, scratch[d]!);
    }
    claim.maxAllocatable = largest;
  }
  for (let d = 0; d < INDEX_DIMENSIONS; d++) free[d] = largest[d]! - used[d]!;
  return free;
}

/** A planned claim's topology view; reads the claim live, domains cached until it changes. */
class PlannedClaimSource implements DomainSource {
  private readonly hostname: readonly string[];
  constructor(private readonly claim: PlannedClaim) {
    this.hostname = [claim.hostname];
  }
  get requirements(): Requirements {
    return this.claim.requirements;
  }
  get taints(): readonly Taint[] {
    return this.claim.pool.taints;
  }
  domains(key: string): readonly string[] | undefined {
    if (key === LABEL_HOSTNAME) return this.hostname;
    const cache = this.claim.domainCache;
    if (cache.has(key)) return cache.get(key);
    const domains = domainsFor(key, this.claim.requirements, this.claim.options);
    cache.set(key, domains);
    return domains;
  }
}

/** A DomainSource over candidate requirements/options not (yet) a claim's own. */
export function scratchSource(hostname: string, requirements: Requirements, options: readonly Candidate[], taints: readonly Taint[]): DomainSource {
  const cache = new Map<string, readonly string[] | undefined>();
  return {
    requirements,
    taints,
    domains: (key) => {
      if (key === LABEL_HOSTNAME) return [hostname];
      if (!cache.has(key)) cache.set(key, domainsFor(key, requirements, options));
      return cache.get(key);
    },
  };
}
