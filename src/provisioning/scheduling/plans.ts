/**
 * A planned claim as the NodeClaim to create (Karpenter's NodeClaim.ToNodeClaim): its
 * requirements pinned to the options' instance types, region, capacity type and zones.
 */
import type { NodeSelectorRequirement } from '../../ports/cluster.js';
import { resourcesToList } from '../resources.js';
import { Requirement, Requirements, aksPriorityOf } from '../requirements.js';
import { domainsFor } from './topology.js';
import { AKS_LABEL_PRIORITY, AKS_LABEL_SCALESET_PRIORITY, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_REGION, LABEL_ZONE } from '../../apis/well-known.js';
import type { Candidate, NodeClaimPlan, PlannedClaim } from './types.js';

export class PlanWriter {
  /**
   * Selectors per (claim requirements, options): most planned claims share both, so each
   * distinct pair is intersected and sorted once; plans get their own copies.
   */
  private readonly selectorCache = new Map<Requirements, Map<string, NodeSelectorRequirement[]>>();

  private planSelectors(claim: PlannedClaim): NodeSelectorRequirement[] {
    const names = claim.options.map((o) => o.instanceType.name);
    const optionsKey = names.join('\u0000');
    let byOptions = this.selectorCache.get(claim.requirements);
    if (!byOptions) this.selectorCache.set(claim.requirements, (byOptions = new Map()));
    let selectors = byOptions.get(optionsKey);
    if (!selectors) {
      const pinned = [
        Requirement.in(LABEL_INSTANCE_TYPE, names),
        Requirement.in(LABEL_REGION, [claim.pool.region]),
      ];
      // The capacity types the options still offer (marks took out the refused ones); the
      // launch picks the cheapest available among them (src/lifecycle/nodeclaim/launch.ts).
      // AKS's priority labels follow the capacity type: a pod asking scalesetpriority=regular rules spot out.
      const capacityTypes = domainsFor(LABEL_CAPACITY_TYPE, Requirements.EMPTY, claim.options)
        ?.filter((ct) => [AKS_LABEL_SCALESET_PRIORITY, AKS_LABEL_PRIORITY].every((key) => claim.requirements.get(key)?.has(aksPriorityOf(ct)) ?? true));
      if (capacityTypes) pinned.push(Requirement.in(LABEL_CAPACITY_TYPE, capacityTypes));
      // Zones differ by region for the same SKUs.
      const zones = this.optionZones(`${claim.pool.region}\u0000${optionsKey}`, claim.options);
      if (zones) pinned.push(zones);
      selectors = claim.requirements.intersect(Requirements.of(pinned)).toSelectors();
      byOptions.set(optionsKey, selectors);
    }
    return selectors.map((r) => (r.values ? { ...r, values: [...r.values] } : { ...r }));
  }

  private readonly zonesByOptions = new Map<string, Requirement | undefined>();

  /**
   * Zonal options: the zones they are offered in (marked zones already left out), so the
   * launch picks one of those; a regional option among them leaves the zone open. Claims
   * share option lists, so once per region and list.
   */
  private optionZones(optionsKey: string, options: readonly Candidate[]): Requirement | undefined {
    if (this.zonesByOptions.has(optionsKey)) return this.zonesByOptions.get(optionsKey);
    const zones = domainsFor(LABEL_ZONE, Requirements.EMPTY, options);
    const requirement = zones ? Requirement.in(LABEL_ZONE, zones) : undefined;
    this.zonesByOptions.set(optionsKey, requirement);
    return requirement;
  }

  toPlan(claim: PlannedClaim): NodeClaimPlan {
    return {
      nodePoolName: claim.pool.name,
      nodeClassName: claim.pool.nodeClass.metadata.name,
      instanceType: claim.options[0]!.instanceType,
      instanceTypeOptions: claim.options.map((o) => o.instanceType),
      requirements: this.planSelectors(claim),
      requests: resourcesToList(claim.used),
      podKeys: claim.podKeys,
    };
  }
}
