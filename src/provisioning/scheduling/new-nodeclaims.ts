/**
 * New NodeClaims (Karpenter's scheduler.go, adding a NodeClaim from a template): the first
 * NodePool by weight that can take a pod opens a claim, sized for the lowest price per pod.
 */
import { addInto, copiesThatFit, maxInto, type Resources } from '../resources.js';
import { type Requirements, firstUntoleratedTaint } from '../requirements.js';
import { podKey, type PodGroup } from './pod-groups.js';
import type { RequirementsCache } from './requirements-cache.js';
import { decide, domainsFor, record, type DomainSource, type PodTopology, type Relaxation } from './topology.js';
import { LABEL_HOSTNAME } from '../../apis/well-known.js';
import { maxCapacity, withinLimits } from './limits.js';
import { fewerForMinValues, satisfiesMinValues, scratchSource, type PlannedClaims } from './nodeclaim.js';
import type { Candidate, PlannedClaim, PoolTemplate } from './types.js';

export class NewNodeClaims {
  constructor(
    private readonly pools: readonly PoolTemplate[],
    private readonly cache: RequirementsCache,
    private readonly planned: PlannedClaims,
  ) {}

  /**
   * Opens one new claim for group.pods[from..] on the first NodePool (by weight) that can
   * take the pod, and returns how many pods it holds (0 when no pool can). The claim is sized
   * for the lowest price per pod placed, so 2 one-GPU pods get two 1-GPU VMs rather than an
   * 8-GPU one; later pods of the same group go to further new claims instead of stretching
   * this one onto a pricier SKU.
   */
  open(group: PodGroup, from: number): number {
    const left = group.pods.length - from;
    for (const pool of this.pools) {
      if (firstUntoleratedTaint(group.tolerations, pool.taints, true)) continue;
      for (const term of group.terms) {
        if (this.cache.compatible(pool.requirements, term) !== undefined) continue;
        const requirements = this.cache.intersect(pool.requirements, term);
        const fits: Array<{ option: Candidate; copies: number }> = [];
        for (const option of pool.candidates) {
          if (!this.cache.intersects(option.requirements, requirements)) continue;
          if (pool.remaining && !withinLimits(option.capacity, pool.remaining)) continue;
          const copies = copiesThatFit(group.requests, pool.daemonOverhead, option.allocatable);
          if (copies > 0) fits.push({ option, copies });
        }
        if (fits.length === 0) continue;
        let bestCount = 0;
        let bestPricePerPod = Infinity;
        for (const { option, copies } of fits) {
          const count = Math.min(copies, left);
          const pricePerPod = option.instanceType.pricePerHour / count;
          if (pricePerPod < bestPricePerPod || (pricePerPod === bestPricePerPod && count > bestCount)) {
            bestPricePerPod = pricePerPod;
            bestCount = count;
          }
        }
        let count = bestCount;
        let options = fits.filter((f) => f.copies >= count).map((f) => f.option);
        if (!satisfiesMinValues(requirements, options)) {
          // Fewer pods keep more options: as many as still leave minValues' choice of types.
          ({ count, options } = fewerForMinValues(requirements, fits.map((f) => f.option), (i) => fits[i]!.copies, count));
          if (count === 0) continue;
        }
        const used = addInto({}, pool.daemonOverhead);
        addInto(used, group.requests, count);
        const reservation = pool.limits ? maxCapacity(options, pool.limits) : {};
        if (pool.remaining) for (const name in reservation) pool.remaining[name]! -= reservation[name]!;
        const podKeys: string[] = new Array<string>(count);
        for (let i = 0; i < count; i++) podKeys[i] = podKey(group.pods[from + i]!);
        const claim: PlannedClaim = {
          pool, hostname: `planned-${this.planned.all.length}`, domainCache: new Map(), requirements, options, used, reservation, podKeys, position: pool.planned.length,
        };
        this.planned.track(claim);
        return count;
      }
    }
    return 0;
  }

  /** A new claim for one constrained pod: every SKU that holds it, narrowed by its topology. */
  openOne(group: PodGroup, topology: PodTopology, r: Relaxation): boolean {
    const pod = group.pods[0]!;
    for (const pool of this.pools) {
      if (firstUntoleratedTaint(group.tolerations, pool.taints, true)) continue;
      for (const term of group.terms) {
        if (this.cache.compatible(pool.requirements, term) !== undefined) continue;
        const requirements = this.cache.intersect(pool.requirements, term);
        const opening = this.openingFor(pool, requirements, group.requests);
        let fits = opening.fits;
        // Limits rarely bind: when even the largest fitting SKU is within them, all are.
        if (pool.remaining && !withinLimits(opening.largestCapacity, pool.remaining)) fits = fits.filter((o) => withinLimits(o.capacity, pool.remaining!));
        if (fits.length === 0) continue;
        const hostname = `planned-${this.planned.all.length}`;
        const narrowed = decide(pod, topology, r, fits === opening.fits ? opening.source(hostname) : scratchSource(hostname, requirements, fits, pool.taints));
        if (!narrowed) continue;
        const applied = narrowed.size > 0 ? this.planned.applyNarrowing(narrowed, requirements, fits) : { requirements, options: fits };
        if (!applied || !satisfiesMinValues(applied.requirements, applied.options)) continue;
        const used = addInto({}, pool.daemonOverhead);
        addInto(used, group.requests);
        const reservation = pool.limits ? maxCapacity(applied.options, pool.limits) : {};
        if (pool.remaining) for (const name in reservation) pool.remaining[name]! -= reservation[name]!;
        const claim: PlannedClaim = {
          pool, hostname, domainCache: applied.options === opening.fits && applied.requirements === requirements ? new Map(opening.domains) : new Map(),
          requirements: applied.requirements, options: applied.options, used, reservation, podKeys: [podKey(pod)], position: pool.planned.length,
        };
        this.planned.track(claim);
        record(pod, topology, r, this.planned.claimSource(claim));
        return true;
      }
    }
    return false;
  }

  /**
   * What a new claim for a pod shape may launch as, per (pool, requirements, requests): the
   * SKUs that hold one such pod, with their largest capacity and their topology domains.
   * Hundreds of constrained pods of one shape open claims alike, so this is worked out once.
   */
  private readonly openings = new Map<PoolTemplate, Map<Requirements, Map<Resources, Opening>>>();

  private openingFor(pool: PoolTemplate, requirements: Requirements, requests: Resources): Opening {
    let byRequirements = this.openings.get(pool);
    if (!byRequirements) this.openings.set(pool, (byRequirements = new Map()));
    let byRequests = byRequirements.get(requirements);
    if (!byRequests) byRequirements.set(requirements, (byRequests = new Map()));
    let opening = byRequests.get(requests);
    if (!opening) {
      const fits = pool.candidates.filter((o) => this.cache.intersects(o.requirements, requirements) && copiesThatFit(requests, pool.daemonOverhead, o.allocatable) > 0);
      const largestCapacity: Resources = {};
      for (const o of fits) maxInto(largestCapacity, o.capacity);
      const domains = new Map<string, readonly string[] | undefined>();
      const domainsOf = (key: string): readonly string[] | undefined => {
        if (!domains.has(key)) domains.set(key, domainsFor(key, requirements, fits));
        return domains.get(key);
      };
      opening = {
        fits, largestCapacity, domains,
        source: (hostname) => ({ requirements, taints: pool.taints, domains: (key) => (key === LABEL_HOSTNAME ? [hostname] : domainsOf(key)) }),
      };
      byRequests.set(requests, opening);
    }
    return opening;
  }
}

interface Opening {
  fits: Candidate[];
  largestCapacity: Resources;
  domains: Map<string, readonly string[] | undefined>;
  source: (hostname: string) => DomainSource;
}
