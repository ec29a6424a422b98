import { ALLOCATION_TTL_MAX_SECONDS } from '../../azure/errors.js';
import type { AzureFlexNodeClass, NodeClaim } from '../../ports/cluster.js';
import { allocationTtlSeconds, formatMarks, launchedAfter, mergeMarks, readMarks, type OfferingMark } from '../../provisioning/offering-marks.js';
import { ANNOTATION_OFFERING_MARKS } from '../../apis/well-known.js';
import type { CapacityType } from '../../catalog/offerings.js';
import type { LifecycleScope } from '../scope.js';
import { resourceNamesOf } from '../ownership.js';
import type { LaunchFailure } from './machine.js';

/**
 * The offering marks a launch leaves: an offering that failed for capacity is marked
 * unavailable (in the cache and, so a restart neither forgets it nor floods when it expires,
 * on the NodeClass), and a VM of ours that went away lifts its family's quota marks.
 */

type CapacityFailure = NonNullable<LaunchFailure['capacity']>;

/** Marks the offering a capacity failure hit, in the cache and on the NodeClass. */
export async function markUnavailable(
  s: LifecycleScope, cls: AzureFlexNodeClass, capacity: CapacityFailure, sku: string, capacityType: CapacityType, zone: string | undefined, attemptAt: number | undefined,
): Promise<void> {
  if (!s.deps.offerings) return;
  s.deps.offerings.apply(escalated(s, capacity, cls, sku, capacityType, zone, attemptAt), { sku, region: cls.spec.location, capacityType, ...(zone ? { zone } : {}) });
  await persistMarks(s, cls);
}

/** An allocation failure's TTL, lengthened when the offering's previous mark did not stop this attempt (`allocationTtlSeconds`). */
function escalated(
  s: LifecycleScope, capacity: CapacityFailure, cls: AzureFlexNodeClass, sku: string, capacityType: CapacityType, zone: string | undefined, attemptAt: number | undefined,
): CapacityFailure {
  if (capacity.reason !== 'allocation') return capacity;
  const zonal = zone !== undefined && (capacity.code === 'ZonalAllocationFailed' || capacity.code === 'OverconstrainedZonalAllocationRequest');
  const key = { sku, capacityType, ...(zonal ? { zone } : {}) };
  const w = s.world();
  const vmSizeOf = (c: NodeClaim): string | undefined => w?.vms.get(resourceNamesOf(w, s.deps.config, c.metadata.name).vm)?.vmSize;
  const launchedSince = (at: number): boolean => launchedAfter(w?.nodeClaims.values() ?? [], vmSizeOf, sku, zonal ? zone : undefined, at);
  return { ...capacity, ttlSeconds: allocationTtlSeconds(readMarks(cls), key, attemptAt, launchedSince, capacity.ttlSeconds, ALLOCATION_TTL_MAX_SECONDS) };
}

/** Writes the cache's live marks for the NodeClass's region into its annotation (merged, never shortened). */
async function persistMarks(s: LifecycleScope, cls: AzureFlexNodeClass): Promise<void> {
  const region = cls.spec.location.toLowerCase();
  const live: OfferingMark[] = (s.deps.offerings?.entries() ?? []).filter((e) => e.region === region).map((e) => ({
    sku: e.sku, ...(e.family ? { family: e.family } : {}), ...(e.zone ? { zone: e.zone } : {}), capacityType: e.capacityType, reason: e.reason, markedAt: e.markedAt, expiresAt: e.expiresAt,
  }));
  const value = formatMarks(mergeMarks(readMarks(cls), live));
  if (value === (cls.metadata.annotations[ANNOTATION_OFFERING_MARKS] ?? null)) return;
  await s.deps.cluster.patchNodeClassMetadata(cls.metadata.name, { annotations: { [ANNOTATION_OFFERING_MARKS]: value } });
}

function isQuotaMark(m: OfferingMark): boolean {
  return m.reason === 'OperationNotAllowed' || m.reason === 'QuotaExceeded' || m.reason === 'quota';
}

/** Our VM of this family went away: quota marks for it no longer hold, in the world either. */
export async function dropQuotaMarks(s: LifecycleScope, sku: string, location: string): Promise<void> {
  const it = await s.deps.catalog.get(sku);
  for (const cls of s.world()?.nodeClasses.values() ?? []) {
    if (cls.spec.location.toLowerCase() !== location.toLowerCase()) continue;
    const marks = readMarks(cls);
    const kept = marks.filter((m) => !(isQuotaMark(m) && (m.sku === '*' || m.sku.toLowerCase() === sku.toLowerCase() ||
      (m.family !== undefined && it !== undefined && m.family.toLowerCase() === it.family.toLowerCase()))));
    if (kept.length === marks.length) continue;
    await s.deps.cluster.patchNodeClassMetadata(cls.metadata.name, { annotations: { [ANNOTATION_OFFERING_MARKS]: formatMarks(kept) } });
  }
}
