/**
 * The cores of this controller's own creates that a usages reading does not count yet: a
 * NodeClaim whose VM PUT was not sent yet, or was sent after the reading. When the PUT went
 * out is the VM attempt time the launch writes to the NodeClaim before it: in the world, so a
 * restarted controller counts the same, and a VM created before the reading is never counted
 * twice, however late its NodeClaim shows it launched (a crash between the PUT and the status
 * write). A NodeClaim whose launch failed holds nothing. A NodeClaim that may launch as several
 * sizes holds the largest of each family.
 */
import type { NodeClaim } from '../ports/cluster.js';
import type { InstanceType } from '../catalog/skus.js';
import { Requirements } from './requirements.js';
import { CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE } from '../apis/well-known.js';
import { vmAttemptAt } from '../apis/vm-attempt.js';

export interface InFlightCores {
  regional: number;
  /** By lowercased family name. */
  families: Map<string, number>;
  /** Spot VMs hold low-priority cores only. */
  lowPriority: number;
}

/**
 * The capacity types a NodeClaim may still launch as: its label once the launch chose, else
 * its requirement (on-demand when it names none). One allowing both counts in both quotas.
 */
function capacityTypesOf(claim: NodeClaim): { regular: boolean; spot: boolean } {
  const labelled = claim.metadata.labels[LABEL_CAPACITY_TYPE];
  // A reserved VM runs on cores its reservation already holds: it takes no more quota.
  if (labelled !== undefined) return { regular: labelled !== CAPACITY_TYPE_SPOT && labelled !== CAPACITY_TYPE_RESERVED, spot: labelled === CAPACITY_TYPE_SPOT };
  const r = Requirements.fromSelectors(claim.spec.requirements).get(LABEL_CAPACITY_TYPE);
  if (!r) return { regular: true, spot: false };
  return { regular: r.has(CAPACITY_TYPE_ON_DEMAND) || r.has(CAPACITY_TYPE_RESERVED), spot: r.has(CAPACITY_TYPE_SPOT) };
}

function countsAfter(claim: NodeClaim, readAt: number): boolean {
  const launched = claim.status.conditions.find((c) => c.type === 'Launched');
  if (launched?.status === 'False') return false;
  const attemptAt = vmAttemptAt(claim);
  if (attemptAt !== undefined) return attemptAt >= readAt;
  // No attempt recorded: not sent yet, unless it launched (a NodeClaim from before the attempt time was written).
  if (!claim.status.providerID) return true;
  return launched?.status === 'True' && Date.parse(launched.lastTransitionTime) >= readAt;
}

/**
 * Whether a reading taken at `readAt` counts the NodeClaim's VM in its usage: its PUT went out
 * before the reading, its launch did not fail, and it holds quota (a reserved VM's cores are
 * its reservation's). Once such a NodeClaim is gone, its VM is deleted and the reading is high.
 */
export function countedByReading(claim: NodeClaim, readAt: number): boolean {
  if (claim.status.conditions.some((c) => c.type === 'Launched' && c.status === 'False')) return false;
  const { regular, spot } = capacityTypesOf(claim);
  return (regular || spot) && !countsAfter(claim, readAt);
}

function sizesOf(claim: NodeClaim): string[] {
  const launched = claim.metadata.labels[LABEL_INSTANCE_TYPE];
  if (launched) return [launched];
  return [...(Requirements.fromSelectors(claim.spec.requirements).get(LABEL_INSTANCE_TYPE)?.values ?? [])];
}

export function inFlightCores(claims: readonly NodeClaim[], instanceTypes: readonly InstanceType[], readAt: number): InFlightCores {
  const types = new Map(instanceTypes.map((t) => [t.name.toLowerCase(), t]));
  const out: InFlightCores = { regional: 0, families: new Map(), lowPriority: 0 };
  for (const claim of claims) {
    if (!countsAfter(claim, readAt)) continue;
    const byFamily = new Map<string, number>();
    let largest = 0;
    for (const size of sizesOf(claim)) {
      const t = types.get(size.toLowerCase());
      if (!t) continue;
      const family = t.family.toLowerCase();
      byFamily.set(family, Math.max(byFamily.get(family) ?? 0, t.vcpu));
      largest = Math.max(largest, t.vcpu);
    }
    const { regular, spot } = capacityTypesOf(claim);
    if (spot) out.lowPriority += largest;
    if (!regular) continue;
    for (const [family, cores] of byFamily) out.families.set(family, (out.families.get(family) ?? 0) + cores);
    out.regional += largest;
  }
  return out;
}
