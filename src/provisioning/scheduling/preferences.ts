/**
 * Preferences and their relaxation (Karpenter's preferences.go): a pod's preferred node
 * affinity terms are tried as requirements, most preferred first, and dropped one by one
 * (with preferred pod (anti-)affinity and soft spreads, topology.ts's relax) until it fits.
 */
import type { NodeAffinityTerm } from '../../ports/cluster.js';
import { Requirements } from '../requirements.js';
import type { RequirementsCache } from '../requirements-cache.js';
import type { PodTopology, Relaxation } from '../topology.js';

export class Preferences {
  private readonly requirements = new Map<NodeAffinityTerm, Requirements>();

  constructor(private readonly cache: RequirementsCache) {}

  /** The pod's terms under a relaxation: each narrowed by the preferred node term it still honours, if any. */
  termsUnder(terms: Requirements[], topology: PodTopology, r: Relaxation): Requirements[] {
    const preference = topology.preferredNode[r.preferredNode];
    return preference ? terms.map((t) => this.cache.intersect(t, this.of(preference))) : terms;
  }

  private of(term: NodeAffinityTerm): Requirements {
    let requirements = this.requirements.get(term);
    if (!requirements) this.requirements.set(term, (requirements = Requirements.fromSelectors(term.matchExpressions)));
    return requirements;
  }
}
