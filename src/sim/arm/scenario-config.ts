import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { defaultFakeArmConfig } from './defaults.js';
import type { FakeArmConfig } from './types.js';

/**
 * Loads the fake ARM's configuration for `azflex sim serve-arm --scenario`: the name
 * `default` or a path to a JSON file holding a FakeArmConfig. (When the scenario module
 * lands, named scenarios will resolve there; this keeps the HTTPS face usable until then.)
 */
const range = z.object({ min: z.number().nonnegative(), max: z.number().nonnegative() }).refine((r) => r.max >= r.min, 'max must be >= min');
const rate = z.number().min(0).max(1);

const FakeArmConfigSchema: z.ZodType<FakeArmConfig> = z.object({
  regions: z
    .array(
      z.object({
        subscriptionId: z.string().min(1),
        location: z.string().min(1),
        familyQuotaCores: z.record(z.string(), z.number().int().nonnegative()),
        regionalQuotaCores: z.number().int().nonnegative().optional(),
        unavailableSkus: z.array(z.string()).optional(),
        allocationFailureRate: rate.optional(),
        zonalAllocationFailureRate: rate.optional(),
        overconstrainedAllocationFailureRate: rate.optional(),
      }),
    )
    .min(1),
  subnets: z.array(z.object({ id: z.string().startsWith('/subscriptions/'), addressPrefix: z.string() })),
  latencyMs: z
    .object({
      read: range, nicPut: range, nicDelete: range, nicDeleteOperation: range, vmPut: range, vmCreate: range, vmCreateFailure: range,
      vmDelete: range, gpuVmDelete: range, diskDelete: range,
    })
    .partial()
    .optional(),
  throttling: z.boolean().optional(),
  transientFaultRate: rate.optional(),
  timeoutRate: rate.optional(),
  timeoutAfterEffectRate: rate.optional(),
  reservationSeconds: z.number().nonnegative().optional(),
  reservation: z
    .object({ seconds: z.number().nonnegative().optional(), jitterSeconds: z.number().nonnegative().optional(), startDelaySeconds: z.number().nonnegative().optional(), from: z.enum(['attempt', 'completion']).optional() })
    .optional(),
  failedVmRecords: z.boolean().optional(),
  cascadeDeletesReservedNic: z.boolean().optional(),
  listPageSize: z.number().int().positive().optional(),
  listLagSeconds: z.object({ appearSeconds: z.number().nonnegative().optional(), disappearSeconds: z.number().nonnegative().optional() }).optional(),
  immutableVmProperties: z.boolean().optional(),
  computeThrottling: z
    .union([
      z.boolean(),
      z.array(z.object({ name: z.string().min(1), ops: z.array(z.enum(['vm.put', 'vm.get', 'vm.delete', 'vm.list'])), limit: z.number().int().positive(), windowSeconds: z.number().positive() })),
    ])
    .optional(),
  defaultQuota: z.object({ familyCores: z.number().int().nonnegative().optional(), gpuFamilyCores: z.number().int().nonnegative().optional(), regionalCores: z.number().int().nonnegative().optional() }).optional(),
  resourceGroups: z.array(z.object({ subscriptionId: z.string().min(1), name: z.string().min(1), location: z.string().optional() })).optional(),
  requireResourceGroups: z.boolean().optional(),
  validateApiVersions: z.boolean().optional(),
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

export async function loadFakeArmConfig(scenario: string): Promise<FakeArmConfig> {
  if (scenario === 'default') return defaultFakeArmConfig();
  let text: string;
  try {
    text = await readFile(scenario, 'utf8');
  } catch (err) {
    throw new ScenarioConfigError(`scenario '${scenario}' is neither 'default' nor a readable JSON file (${err instanceof Error ? err.message : String(err)})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch (err) {
    throw new ScenarioConfigError(`${scenario}: not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  return parseFakeArmConfig(json, scenario);
}
