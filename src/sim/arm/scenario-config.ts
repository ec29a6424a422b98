import { z } from 'zod';
import type { FakeArmConfig } from './types.js';

/**
 * The fake ARM's configuration as `azflex sim serve-arm --scenario file` (and `azflex dev`)
 * take it: a FakeArmConfig in JSON or YAML. Every number is bounded like a scenario's, so a
 * careless file cannot make a served request wait for years or a loop spin without end.
 */
const ms = z.number().nonnegative().max(3_600_000);
const range = z.strictObject({ min: ms, max: ms }).refine((r) => r.max >= r.min, 'max must be >= min');
const rate = z.number().min(0).max(1);
const seconds = z.number().nonnegative().max(3600);
const cores = z.number().nonnegative().max(10_000_000).int();
/** Spot evictions per running Spot VM and hour (the scenario format's bound). */
const evictionRate = z.number().min(0).max(60);

/**
 * Capacity reservation groups of a region: a zonal group (with `zones`) holds reservations in
 * its zones, a regional group reservations without one (each size once per group, as ARM has it).
 */
export const CapacityReservationGroupsSchema = z
  .array(
    z
      .strictObject({
        resourceGroup: z.string().min(1).max(90),
        name: z.string().min(1).max(80),
        zones: z.array(z.string().min(1).max(8)).min(1).max(3).optional(),
        reservations: z
          .array(z.strictObject({ name: z.string().min(1).max(80), sku: z.string().min(1).max(128), zone: z.string().min(1).max(8).optional(), quantity: z.number().int().nonnegative().max(1000) }))
          .min(1)
          .max(100),
      })
      .refine((g) => g.reservations.every((r) => (g.zones === undefined ? r.zone === undefined : r.zone !== undefined && g.zones.includes(r.zone))), 'a zonal group\'s reservations each name one of its zones, a regional group\'s none')
      .refine((g) => new Set(g.reservations.map((r) => `${r.sku.toLowerCase()}|${r.zone ?? ''}`)).size === g.reservations.length, 'one reservation per size (and zone) in a group'),
  )
  .max(100);

const FakeArmConfigSchema: z.ZodType<FakeArmConfig> = z.strictObject({
  regions: z
    .array(
      z.strictObject({
        subscriptionId: z.string().min(1).max(64),
        location: z.string().min(1).max(64),
        familyQuotaCores: z.record(z.string().max(128), cores),
        regionalQuotaCores: cores.optional(),
        lowPriorityQuotaCores: cores.optional(),
        unavailableSkus: z.array(z.string().max(128)).max(1000).optional(),
        allocationFailureRate: rate.optional(),
        zonalAllocationFailureRate: rate.optional(),
        overconstrainedAllocationFailureRate: rate.optional(),
        spotEvictionRatePerHour: evictionRate.optional(),
        spotEvictionRatePerHourBySku: z.record(z.string().max(128), evictionRate).optional(),
        capacityReservationGroups: CapacityReservationGroupsSchema.optional(),
      }),
    )
    .min(1)
    .max(100),
  subnets: z.array(z.strictObject({ id: z.string().startsWith('/subscriptions/').max(1024), addressPrefix: z.string().max(64) })).max(1000),
  latencyMs: z
    .strictObject({
      read: range, nicPut: range, nicDelete: range, nicDeleteOperation: range, vmPut: range, vmCreate: range, vmCreateFailure: range,
      vmDelete: range, gpuVmDelete: range, diskDelete: range,
    })
    .partial()
    .optional(),
  throttling: z.boolean().optional(),
  transientFaultRate: rate.optional(),
  timeoutRate: rate.optional(),
  timeoutAfterEffectRate: rate.optional(),
  reservationSeconds: seconds.optional(),
  reservation: z
    .strictObject({ seconds: seconds.optional(), jitterSeconds: seconds.optional(), startDelaySeconds: seconds.optional(), from: z.enum(['attempt', 'completion']).optional() })
    .optional(),
  failedVmRecords: z.boolean().optional(),
  cascadeDeletesReservedNic: z.boolean().optional(),
  listPageSize: z.number().int().positive().max(10_000).optional(),
  listLagSeconds: z.strictObject({ appearSeconds: seconds.optional(), disappearSeconds: seconds.optional() }).optional(),
  immutableVmProperties: z.boolean().optional(),
  computeThrottling: z
    .union([
      z.boolean(),
      z
        .array(
          z.strictObject({
            name: z.string().min(1).max(128),
            ops: z.array(z.enum(['vm.put', 'vm.get', 'vm.delete', 'vm.list'])).max(4),
            limit: z.number().int().positive().max(1_000_000),
            windowSeconds: z.number().min(1).max(86_400),
          }),
        )
        .max(100),
    ])
    .optional(),
  defaultQuota: z.strictObject({ familyCores: cores.optional(), gpuFamilyCores: cores.optional(), regionalCores: cores.optional(), lowPriorityCores: cores.optional() }).optional(),
  resourceGroups: z.array(z.strictObject({ subscriptionId: z.string().min(1).max(64), name: z.string().min(1).max(90), location: z.string().max(64).optional() })).max(1000).optional(),
  requireResourceGroups: z.boolean().optional(),
  validateApiVersions: z.boolean().optional(),
  usages: z.strictObject({ readable: z.boolean().optional(), lagSeconds: seconds.optional() }).optional(),
});

export class ScenarioConfigError extends Error {
  override readonly name = 'ScenarioConfigError';
}

export function parseFakeArmConfig(value: unknown, source: string): FakeArmConfig {
  const parsed = FakeArmConfigSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ScenarioConfigError(`${source}: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid'}`);
  }
  return parsed.data;
}
