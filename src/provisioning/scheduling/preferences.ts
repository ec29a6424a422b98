/**
 * Preferences and their relaxation (Karpenter's preferences.go): a pod's preferred node
 * affinity terms are tried as requirements, most preferred first, and dropped one by one
 * (with preferred pod (anti-)affinity and soft spreads, topology.ts's relax) until it fits.
 * Last of all, a pod tolerates PreferNoSchedule taints, when some NodePool has one.
 */
import type { NodeAffinityTerm, Toleration } from '../../ports/cluster.js';
import { Requirements } from '../requirements.js';
import type { RequirementsCache } from './requirements-cache.js';
import type { PodGroup } from './pod-groups.js';
import type { PodTopology, Relaxation } from './topology.js';
import type { PoolTemplate } from './types.js';

const PREFER_NO_SCHEDULE: Toleration = { operator: 'Exists', effect: 'PreferNoSchedule' };

export class Preferences {
  private readonly requirements = new Map<NodeAffinityTerm, Requirements>();
  /** Whether the PreferNoSchedule relaxation exists at all (Karpenter adds it only then). */
  private readonly preferNoSchedule: boolean;

  constructor(private readonly cache: RequirementsCache, pools: readonly PoolTemplate[]) {
    this.preferNoSchedule = pools.some((pool) => pool.taints.some((t) => t.effect === 'PreferNoSchedule'));
  }

  /** The pod's terms under a relaxation: each narrowed by the preferred node term it still honours, if any. */
  termsUnder(terms: Requirements[], topology: PodTopology, r: Relaxation): Requirements[] {
    const preference = topology.preferredNode[r.preferredNode];
    return preference ? terms.map((t) => this.cache.intersect(t, this.of(preference))) : terms;
  }

  /** The group tolerating PreferNoSchedule taints, the last relaxation; undefined when it has none left. */
  tolerant(group: PodGroup): PodGroup | undefined {
    if (!this.preferNoSchedule) return undefined;
    if (group.tolerations.some((t) => t.operator === 'Exists' && !t.key && t.effect === 'PreferNoSchedule')) return undefined;
    return { ...group, tolerations: [...group.tolerations, PREFER_NO_SCHEDULE] };
  }

  private of(term: NodeAffinityTerm): Requirements {
    let requirements = this.requirements.get(term);
    if (!requirements) this.requirements.set(term, (requirements = Requirements.fromSelectors(term.matchExpressions)));
    return requirements;
  }
}
