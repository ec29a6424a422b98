/**
 * What limits a planned NodeClaim before it is created: one canary per offering on probation
 * (offering-marks.ts), and only the sizes its quota can hold (quota.ts).
 */
import type { AzureFlexNodeClass } from '../ports/cluster.js';
import type { QuotaLedger } from './quota.js';
import type { ReservationLedger } from './reservations.js';
import type { NodeClaimPlan } from './scheduling/types.js';
import type { OfferingMarks } from './offering-marks.js';
import {
  CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_RESERVED, LABEL_CAPACITY_RESERVATION_ID, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_PLACEMENT_SCOPE,
  LABEL_ZONE, PLACEMENT_SCOPE_REGIONAL,
} from '../apis/well-known.js';
import { cheapestOffering } from '../catalog/offerings.js';
import type { InstanceType } from '../catalog/skus.js';

/**
 * A plan limited to one canary per offering on probation: the first plan of the pass that may
 * launch it keeps it, later ones lose it (and are dropped if nothing else is left: their pods
 * are planned again once the canary has launched or failed).
 */
export function oneCanaryEach(plan: NodeClaimPlan, region: string, marks: OfferingMarks, canaries: Set<string>): NodeClaimPlan | undefined {
  const zonal = oneZonalCanaryEach(plan, region, marks, canaries);
  if (zonal === undefined) return undefined;
  plan = zonal;
  const types = planCapacityTypes(plan);
  // The offering the launch would try for each size: its cheapest capacity type the plan allows.
  const offeringOf = (it: InstanceType): string => cheapestOffering(it, (ct) => types.has(ct))?.capacityType ?? CAPACITY_TYPE_ON_DEMAND;
  const probation = plan.instanceTypeOptions.filter((it) => marks.onProbation(it.name, region, offeringOf(it)));
  if (probation.length === 0) return plan;
  const canary = (it: InstanceType): string => `${region}/${offeringOf(it)}/${it.name}`;
  const taken = probation.filter((it) => canaries.has(canary(it)));
  for (const it of probation) canaries.add(canary(it));
  if (taken.length === 0) return plan;
  const drop = new Set(taken.map((it) => it.name));
  return keepSizes(plan, (name) => !drop.has(name));
}

/** The plan with only the sizes `keep` admits; undefined when none is left. */
function keepSizes(plan: NodeClaimPlan, keep: (name: string) => boolean): NodeClaimPlan | undefined {
  if (plan.instanceTypeOptions.every((it) => keep(it.name))) return plan;
  const options = plan.instanceTypeOptions.filter((it) => keep(it.name));
  if (options.length === 0) return undefined;
  return {
    ...plan,
    instanceType: options[0]!,
    instanceTypeOptions: options,
    requirements: plan.requirements.map((r) => (r.key === LABEL_INSTANCE_TYPE && r.operator === 'In' ? { ...r, values: r.values!.filter((v) => keep(v)) } : r)),
  };
}

/**
 * A plan that may launch as reserved takes a free reservation slot (the first of its sizes,
 * cheapest first, whose reservation its zones admit): it is then pinned to that size, the
 * reservation's zone (or regional placement), reserved and the reservation's id, and names the
 * group. Without a slot left it loses reserved and keeps the NodePool's other capacity types
 * (dropped when it has none: its pods are planned again next pass, where the reservation is no
 * longer offered).
 */
export function withinReservations(plan: NodeClaimPlan, nodeClass: AzureFlexNodeClass, ledger: ReservationLedger): NodeClaimPlan | undefined {
  const types = planCapacityTypes(plan);
  if (!types.has(CAPACITY_TYPE_RESERVED)) return plan;
  const zoneReq = plan.requirements.find((r) => r.key === LABEL_ZONE && r.operator === 'In');
  // A regional reservation holds only VMs that name no zone: a plan whose pods narrowed its zones cannot use it.
  const unnarrowed = (sku: string): boolean => {
    const all = plan.instanceTypeOptions.find((it) => it.name === sku)?.zones?.[nodeClass.spec.location] ?? [];
    return !zoneReq || all.every((z) => zoneReq.values!.includes(z));
  };
  const slot = ledger.take(nodeClass.metadata.name, plan.instanceTypeOptions.map((it) => it.name), (sku, zone) => (zone === undefined ? unnarrowed(sku) : !zoneReq || zoneReq.values!.includes(zone)));
  if (!slot) {
    const rest = [...types].filter((t) => t !== CAPACITY_TYPE_RESERVED);
    if (rest.length === 0) return undefined;
    return { ...plan, requirements: plan.requirements.map((r) => (r.key === LABEL_CAPACITY_TYPE && r.operator === 'In' ? { ...r, values: rest } : r)) };
  }
  const sized = keepSizes(plan, (name) => name.toLowerCase() === slot.sku.toLowerCase())!;
  const pinned = new Set([LABEL_CAPACITY_TYPE, LABEL_CAPACITY_RESERVATION_ID, LABEL_ZONE, LABEL_PLACEMENT_SCOPE]);
  const requirements = [
    ...sized.requirements.filter((r) => !pinned.has(r.key)),
    { key: LABEL_CAPACITY_TYPE, operator: 'In' as const, values: [CAPACITY_TYPE_RESERVED] },
    { key: LABEL_CAPACITY_RESERVATION_ID, operator: 'In' as const, values: [slot.reservationId] },
    slot.zone !== undefined
      ? { key: LABEL_ZONE, operator: 'In' as const, values: [slot.zone] }
      : { key: LABEL_PLACEMENT_SCOPE, operator: 'In' as const, values: [PLACEMENT_SCOPE_REGIONAL] },
  ];
  return { ...sized, requirements, capacityReservationGroupId: slot.groupId };
}

/**
 * The plan with only the sizes the NodeClass's quota can hold (their cores then taken from
 * the pass's ledger); undefined when none fits: its pods are planned again next pass, where
 * this NodeClaim's absence and the in-flight ones steer them to another offering.
 */
export function withinQuota(plan: NodeClaimPlan, nodeClass: AzureFlexNodeClass, ledger: QuotaLedger): NodeClaimPlan | undefined {
  // A reserved VM runs on cores its reservation already holds.
  if (plan.capacityReservationGroupId !== undefined) return plan;
  const fitting = new Set(ledger.admit(nodeClass.spec.subscriptionID, nodeClass.spec.location, plan.instanceTypeOptions.map((it) => it.name), planCapacityTypes(plan)));
  const kept = keepSizes(plan, (name) => fitting.has(name));
  if (!kept) ledger.pendingForQuota = true;
  return kept;
}

/**
 * The same rule per zone: a zone on probation (an expired zone mark of one of the plan's
 * SKUs) stays in the first plan of the pass that may land there; later plans lose that zone
 * from their zone requirement, and are dropped if no zone is left.
 */
function oneZonalCanaryEach(plan: NodeClaimPlan, region: string, marks: OfferingMarks, canaries: Set<string>): NodeClaimPlan | undefined {
  const zoneReq = plan.requirements.find((r) => r.key === LABEL_ZONE && r.operator === 'In');
  if (!zoneReq?.values?.length) return plan;
  const types = planCapacityTypes(plan);
  const probation = zoneReq.values.filter((z) => plan.instanceTypeOptions.some((it) => {
    const ct = cheapestOffering(it, (t) => types.has(t))?.capacityType ?? CAPACITY_TYPE_ON_DEMAND;
    return marks.onProbation(it.name, region, ct, z) && !marks.onProbation(it.name, region, ct);
  }));
  if (probation.length === 0) return plan;
  const taken = new Set(probation.filter((z) => canaries.has(`${region}/zone/${z}`)));
  for (const z of probation) canaries.add(`${region}/zone/${z}`);
  if (taken.size === 0) return plan;
  const zones = zoneReq.values.filter((z) => !taken.has(z));
  if (zones.length === 0) return undefined;
  return { ...plan, requirements: plan.requirements.map((r) => (r === zoneReq ? { ...r, values: zones } : r)) };
}

/** The capacity types a plan's NodeClaim may launch as (its requirement; on-demand when it names none). */
export function planCapacityTypes(plan: NodeClaimPlan): ReadonlySet<string> {
  const r = plan.requirements.find((x) => x.key === LABEL_CAPACITY_TYPE && x.operator === 'In');
  return new Set(r?.values ?? [CAPACITY_TYPE_ON_DEMAND]);
}
