/**
 * Why a pod cannot be placed, in words a user can act on: the catalog, then each NodePool's
 * verdict (taints, requirements, limits, minValues, unavailable offerings, sizes).
 */
import { copiesThatFit, formatQuantity, type Resources } from '../resources.js';
import { firstUntoleratedTaint, formatTaint } from '../requirements.js';
import type { PodGroup } from './pod-groups.js';
import type { RequirementsCache } from './requirements-cache.js';
import { CAPACITY_TYPE_ON_DEMAND, NODECLASS_KIND } from '../../apis/well-known.js';
import { capacityForLimits } from './limits.js';
import type { Candidate, PoolTemplate } from './types.js';

export class Explainer {
  constructor(
    private readonly pools: readonly PoolTemplate[],
    private readonly cache: RequirementsCache,
    /** Largest capacity per resource across the whole catalog, for "no SKU offers" messages. */
    private readonly catalogMax: Readonly<Resources>,
  ) {}

  /** Whether some pool could take the group if only its limits allowed. */
  limitsBlocked(group: PodGroup): boolean {
    return this.pools.some((pool) => pool.remaining !== undefined && this.poolVerdict(pool, group).limited);
  }

  /** Why no pool can take the group: the catalog-wide reason if there is one, else per pool. */
  explain(group: PodGroup): string {
    for (const name in group.requests) {
      const amount = group.requests[name]!;
      if (amount > 0 && amount > (this.catalogMax[name] ?? 0)) return `no SKU in catalog offers ${describeAmount(name, amount)}`;
    }
    if (this.pools.length === 0) return `no NodePool references a ready ${NODECLASS_KIND}`;
    return this.pools.map((pool) => this.poolVerdict(pool, group).reason).join('; ');
  }

  private poolVerdict(pool: PoolTemplate, group: PodGroup): { reason: string; limited: boolean } {
    const taint = firstUntoleratedTaint(group.tolerations, pool.taints, true);
    if (taint) return { reason: `NodePool ${pool.name}: did not tolerate taint ${formatTaint(taint)}`, limited: false };
    let incompatibility: string | undefined;
    const matching = new Set<Candidate>();
    const matchingUnavailable = new Set<Candidate>();
    for (const term of group.terms) {
      const why = this.cache.compatible(pool.requirements, term);
      if (why !== undefined) {
        incompatibility ??= why;
        continue;
      }
      const requirements = this.cache.intersect(pool.requirements, term);
      for (const option of pool.candidates) if (this.cache.intersects(option.requirements, requirements)) matching.add(option);
      for (const option of pool.unavailable) if (this.cache.intersects(option.requirements, requirements)) matchingUnavailable.add(option);
    }
    if (incompatibility !== undefined && matching.size === 0 && matchingUnavailable.size === 0) {
      return { reason: `NodePool ${pool.name}: incompatible requirements, ${incompatibility}`, limited: false };
    }
    const fits = (c: Candidate): boolean => copiesThatFit(group.requests, pool.daemonOverhead, c.allocatable) > 0;
    const fitting = [...matching].filter(fits);
    if (fitting.length > 0 && pool.limits && pool.remaining) {
      // Every fitting SKU exceeds some limit (else a claim would have been opened); name the
      // limit the cheapest one hits.
      const capacity = capacityForLimits(fitting[0]!.capacity, pool.limits);
      for (const name in pool.limits) {
        if ((capacity[name] ?? 0) > pool.remaining[name]!) {
          return { reason: `NodePool ${pool.name} limit ${name}=${formatQuantity(pool.limits[name]!, name)} reached`, limited: true };
        }
      }
    }
    if (fitting.length > 0) return { reason: `NodePool ${pool.name}: no set of instance types satisfies minValues`, limited: false };
    const blocked = [...matchingUnavailable].filter(fits).map((c) => c.instanceType.name);
    if (blocked.length > 0) {
      return { reason: `NodePool ${pool.name}: offerings unavailable (${blocked.join(', ')} ${CAPACITY_TYPE_ON_DEMAND} in ${pool.region})`, limited: false };
    }
    if (matching.size === 0) return { reason: `NodePool ${pool.name}: no instance type in ${pool.region} matches the requirements`, limited: false };
    // Name the requests no matching SKU can meet on its own; if each can be met but never all
    // at once, name them all.
    const names = Object.keys(group.requests).sort();
    const short = names.filter((name) => ![...matching].some((c) => (c.allocatable[name] ?? 0) - (pool.daemonOverhead[name] ?? 0) >= group.requests[name]!));
    const listed = (short.length > 0 ? short : names).map((name) => describeAmount(name, group.requests[name]!)).join(', ');
    return { reason: `NodePool ${pool.name}: no instance type in ${pool.region} matching the requirements has room for ${listed}`, limited: false };
  }

  /** Whether resources alone would allow the pod somewhere (so topology is what refused it). */
  someClaimHasRoom(group: PodGroup): boolean {
    return this.pools.some((pool) => !firstUntoleratedTaint(group.tolerations, pool.taints, true) && group.terms.some((term) =>
      this.cache.compatible(pool.requirements, term) === undefined &&
      pool.candidates.some((c) => this.cache.intersects(c.requirements, this.cache.intersect(pool.requirements, term)) &&
        copiesThatFit(group.requests, pool.daemonOverhead, c.allocatable) > 0)));
  }
}

/** Deterministic formatting of a resource amount for messages: "16 nvidia.com/gpu". */
function describeAmount(name: string, amount: number): string {
  return `${formatQuantity(amount, name)} ${name}`;
}
