import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

/**
 * A scenario: the world (ARM regions, quota, subnets, faults), the cluster (NodeClasses,
 * NodePools) and the workload (waves of pods) that a simulation runs. Built-in scenarios
 * live in scenarios.ts; users pass their own as YAML or JSON with `--scenario file`.
 */
const requests = z.record(z.string(), z.string());

const Region = z.strictObject({
  subscriptionId: z.string().default('00000000-0000-0000-0000-000000000001'),
  location: z.string(),
  familyQuotaCores: z.record(z.string(), z.number().int().nonnegative()).default({}),
  regionalQuotaCores: z.number().int().nonnegative().optional(),
  unavailableSkus: z.array(z.string()).default([]),
  allocationFailureRate: z.number().min(0).max(1).default(0),
  zonalAllocationFailureRate: z.number().min(0).max(1).default(0),
});

const NodeClass = z.strictObject({
  name: z.string(),
  location: z.string(),
  subscriptionID: z.string().default('00000000-0000-0000-0000-000000000001'),
  resourceGroup: z.string().default('azflex-nodes'),
  /** Subnet name inside the scenario's virtual network; one subnet per NodeClass. */
  subnet: z.string().default('nodes'),
  subnetPrefix: z.string().regex(/^\d+\.\d+\.\d+\.\d+\/\d+$/, 'an IPv4 CIDR such as 10.1.0.0/24').default('10.1.0.0/24'),
  image: z
    .strictObject({ publisher: z.string(), offer: z.string(), sku: z.string(), version: z.string() })
    .default({ publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' }),
});

const NodePool = z.strictObject({
  name: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a DNS label'),
  nodeClass: z.string(),
  instanceTypes: z.array(z.string()).min(1),
  labels: z.record(z.string(), z.string()).default({}),
  taints: z.array(z.strictObject({ key: z.string(), value: z.string().optional(), effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']) })).default([]),
  limits: requests.default({}),
  weight: z.number().int().min(0).max(100).optional(),
  consolidationPolicy: z.enum(['WhenEmpty', 'WhenEmptyOrUnderutilized']).default('WhenEmpty'),
  consolidateAfter: z.string().default('60s'),
  expireAfter: z.string().default('720h'),
  budgets: z.array(z.strictObject({ nodes: z.string(), reasons: z.array(z.enum(['Empty', 'Drifted', 'Underutilized'])).optional() })).default([{ nodes: '10%' }]),
});

/** Same shapes as FakeArm.injectFault and POST /_sim/faults. */
export const ArmFaultSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('quota'), location: z.string(), subscriptionId: z.string().optional(), family: z.string().optional(), cores: z.number().int().nonnegative() }),
  z.strictObject({ kind: z.literal('capacity'), location: z.string(), subscriptionId: z.string().optional(), allocationFailureRate: z.number().min(0).max(1).optional(), zonalAllocationFailureRate: z.number().min(0).max(1).optional() }),
  z.strictObject({ kind: z.literal('throttle'), subscriptionId: z.string().optional(), location: z.string().optional(), bucket: z.enum(['reads', 'writes', 'deletes']).optional(), drain: z.boolean().optional(), enabled: z.boolean().optional() }),
  z.strictObject({ kind: z.literal('transient'), transientFaultRate: z.number().min(0).max(1).optional(), timeoutRate: z.number().min(0).max(1).optional() }),
  z.strictObject({ kind: z.literal('skuUnavailable'), location: z.string(), subscriptionId: z.string().optional(), sku: z.string(), unavailable: z.boolean().optional() }),
]);

const Wave = z.strictObject({
  /** Seconds after the start. */
  at: z.number().nonnegative().default(0),
  count: z.number().int().positive(),
  prefix: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a DNS label'),
  requests: requests,
  nodeSelector: z.record(z.string(), z.string()).default({}),
  tolerations: z.array(z.strictObject({ key: z.string().optional(), operator: z.enum(['Exists', 'Equal']).optional(), value: z.string().optional(), effect: z.enum(['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional() })).default([]),
  /** Seconds a pod lives once Running; absent = until the end. */
  lifetimeSeconds: z.number().positive().optional(),
  /** Re-submit the wave every this many seconds (churn). */
  repeatEverySeconds: z.number().positive().optional(),
});

export const ScenarioSchema = z.strictObject({
  name: z.string(),
  description: z.string().default(''),
  hours: z.number().positive().max(24 * 14),
  clusterName: z.string().default('aks-westeurope'),
  regions: z.array(Region).min(1),
  nodeClasses: z.array(NodeClass).min(1),
  nodePools: z.array(NodePool).min(1),
  workload: z.array(Wave).min(1),
  faults: z
    .strictObject({
      throttling: z.boolean().default(true),
      transientFaultRate: z.number().min(0).max(1).default(0),
      timeoutRate: z.number().min(0).max(1).default(0),
      /** Controller crashes at random await points, spread over the run (the CLI's --restarts overrides). */
      restarts: z.number().int().nonnegative().default(0),
      restartDelaySeconds: z.number().nonnegative().default(30),
      /**
       * Fraction of booted VMs whose node never registers (a failed bootstrap, an expired join
       * token): registration liveness must delete them, leak-free. Real fleets see a few percent.
       */
      nodeNeverJoinsRate: z.number().min(0).max(1).default(0.02),
      /** Scheduled faults: at a time, inject into the fake ARM (same shapes as POST /_sim/faults). */
      schedule: z.array(z.strictObject({ at: z.number().nonnegative(), fault: ArmFaultSchema })).default([]),
    })
    .default({ throttling: true, transientFaultRate: 0, timeoutRate: 0, restarts: 0, restartDelaySeconds: 30, nodeNeverJoinsRate: 0.02, schedule: [] }),
  controller: z
    .strictObject({
      provisionIntervalSeconds: z.number().positive().default(10),
      resyncSeconds: z.number().positive().default(15),
      disruptionIntervalSeconds: z.number().positive().default(30),
      bootSeconds: z.tuple([z.number().nonnegative(), z.number().nonnegative()]).default([120, 300]),
      /** How far the controller's informer cache trails the API server (its reads show the world this long ago). */
      informerLagSeconds: z.number().nonnegative().default(0),
    })
    .default({ provisionIntervalSeconds: 10, resyncSeconds: 15, disruptionIntervalSeconds: 30, bootSeconds: [120, 300], informerLagSeconds: 0 }),
});

export type Scenario = z.output<typeof ScenarioSchema>;
export type ScenarioInput = z.input<typeof ScenarioSchema>;

export class ScenarioError extends Error {
  override readonly name = 'ScenarioError';
}

/** Parses and validates; the message names the file, the field path and what was expected. */
export function parseScenario(raw: unknown, source: string): Scenario {
  const result = ScenarioSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = issue.path.length ? issue.path.join('.') : '(root)';
    throw new ScenarioError(`${source}: ${path}: ${issue.message}`);
  }
  const s = result.data;
  const classes = new Set(s.nodeClasses.map((c) => c.name));
  for (const [i, np] of s.nodePools.entries()) {
    if (!classes.has(np.nodeClass)) throw new ScenarioError(`${source}: nodePools.${i}.nodeClass: no nodeClass named "${np.nodeClass}"`);
  }
  const regions = new Set(s.regions.map((r) => `${r.subscriptionId}/${r.location}`));
  for (const [i, c] of s.nodeClasses.entries()) {
    if (!regions.has(`${c.subscriptionID}/${c.location}`)) {
      throw new ScenarioError(`${source}: nodeClasses.${i}.location: no region "${c.location}" in subscription ${c.subscriptionID}`);
    }
  }
  return s;
}

export function loadScenarioFile(path: string): Scenario {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ScenarioError(`${path}: cannot read scenario file (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let raw: unknown;
  try {
    raw = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ScenarioError(`${path}: not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`);
  }
  return parseScenario(raw, path);
}
