import { z } from 'zod';
import { STATIC_INSTANCE_TYPES } from '../catalog/skus.js';
import { COMPUTE_THROTTLE_POLICIES } from './arm/defaults.js';
import { CapacityReservationGroupsSchema } from './arm/scenario-config.js';
import { DurationError, parseDuration } from '../utils/duration.js';
import { fitsWithin, parseQuantity, resourcesFromList, type Resources } from '../provisioning/resources.js';
import { InputFileError, parseYamlDocuments, readBoundedFile } from './input-files.js';
import { BootstrapTokenSchema } from './bootstrap-token.js';

/**
 * A scenario: the world (ARM regions, quota, subnets, faults), the cluster (NodeClasses,
 * NodePools) and the workload (waves of pods) that a simulation runs. Built-in scenarios
 * live in scenarios.ts; users pass their own as YAML or JSON with `--scenario file`, or
 * the world alone (world.ts) with their own manifests.
 *
 * Every number has a bound (documented in README's "Bounds" table) so a careless or
 * hostile file cannot hang the simulator or exhaust memory.
 */
export const LIMITS = {
  hours: 24 * 14,
  /** Controller periods: at least 1 s (1e-9 s would never let virtual time advance). */
  intervalSeconds: [1, 3600],
  restarts: 1000,
  restartDelaySeconds: 3600,
  quotaCores: 10_000_000,
  /** Pods per wave or workload, and in the whole run. */
  podsPerWave: 100_000,
  repeatEverySeconds: 60,
  lifetimeSeconds: 30 * 24 * 3600,
  bootSeconds: 3600,
  regions: 100,
  nodeClasses: 100,
  nodePools: 100,
  waves: 1000,
  faults: 10_000,
  subnetPrefixBits: [16, 29],
  /** Spot evictions per running Spot VM and hour: at most one a minute on average. */
  spotEvictionRatePerHour: 60,
  nameLength: 63,
} as const;

const seconds = (max: number) => z.number().finite().nonnegative().max(max);
// max before int: zod's int check alone would name its own bound (2^53) rather than ours.
const cores = z.number().nonnegative().max(LIMITS.quotaCores).int();
const rate = z.number().min(0).max(1);
const evictionRate = z.number().min(0).max(LIMITS.spotEvictionRatePerHour);
const dnsLabel = z.string().max(LIMITS.nameLength).regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a DNS label (lower-case letters, digits, -)');
const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const subscriptionId = z.string().regex(GUID, 'a subscription GUID');
const location = z.string().max(64).regex(/^[a-z0-9]+$/, 'a lower-case Azure region name such as eastus2');
export const clusterLocation = location;
/** The region of the AKS cluster azflex runs in (its control plane and system nodes), unless a scenario or world says otherwise. */
export const DEFAULT_CLUSTER_LOCATION = 'westeurope';
const requests = z.record(z.string().max(253), z.string().max(64));

export const DEFAULT_SUBNET_PREFIX = '10.1.0.0/24';

/** An IPv4 CIDR Azure accepts for a subnet: /16 (we cap the large end) to /29, network-aligned. */
export const subnetCidr = z.string().superRefine((raw, ctx) => {
  const problem = cidrProblem(raw);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export function cidrProblem(raw: string): string | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(raw);
  if (!m) return `"${raw}" is not an IPv4 CIDR such as 10.1.0.0/24`;
  // "010" reads as octal to some tools and decimal to others: Azure refuses the ambiguity.
  if (m.slice(1, 6).some((part) => /^0\d/.test(part))) return `"${raw}" has a leading zero in a number`;
  const octets = m.slice(1, 5).map(Number);
  if (octets.some((o) => o > 255)) return `"${raw}" is not a valid IPv4 address`;
  const bits = Number(m[5]);
  const [lo, hi] = LIMITS.subnetPrefixBits;
  if (bits < lo || bits > hi) return `"${raw}": prefix length /${bits} is outside /${lo}../${hi} (Azure's smallest subnet is /29)`;
  const ip = ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;
  const hostBits = 32 - bits;
  if ((ip & (2 ** hostBits - 1)) !== 0) return `"${raw}" has host bits set (Azure requires the network address)`;
  return undefined;
}

/** First and last address of a valid CIDR, as numbers. */
function cidrRange(cidr: string): [number, number] {
  const [ip, bits] = cidr.split('/') as [string, string];
  const start = ip.split('.').reduce((a, o) => a * 256 + Number(o), 0);
  return [start, start + 2 ** (32 - Number(bits)) - 1];
}

/** The virtual network part of an ARM subnet id (lower-case), so subnets of one VNet can be compared. */
function vnetOf(subnetId: string): string {
  return subnetId.toLowerCase().replace(/\/subnets\/[^/]+$/, '');
}

/** Azure refuses subnets whose ranges overlap inside one virtual network (NetcfgSubnetRangesOverlap). */
function checkSubnetOverlap(subnets: ReadonlyArray<{ id: string; addressPrefix: string; path: string }>, fail: (path: string, message: string) => never): void {
  for (const [i, a] of subnets.entries()) {
    const [a0, a1] = cidrRange(a.addressPrefix);
    for (const b of subnets.slice(0, i)) {
      if (vnetOf(a.id) !== vnetOf(b.id) || a.id.toLowerCase() === b.id.toLowerCase()) continue;
      const [b0, b1] = cidrRange(b.addressPrefix);
      if (a0 <= b1 && b0 <= a1) fail(a.path, `${a.addressPrefix} overlaps ${b.addressPrefix} (${b.path}) in the same virtual network`);
    }
  }
}

/**
 * NodeClasses that name one subnet describe one subnet: the same address range (a scenario's
 * subnet is made from its NodeClasses' `subnetPrefix`, so two ranges would leave one silently
 * unused). And the scenario's virtual network of a subscription and resource group is in one
 * region, as every Azure VNet is: ARM refuses a NIC whose subnet is in another region
 * (InvalidResourceReference, "make sure ... that both resources are in the same region",
 * https://github.com/fortinet/azure-templates/issues/58).
 */
function checkSharedNetworks(classes: Scenario['nodeClasses'], fail: (path: string, message: string) => never): void {
  const subnets = new Map<string, number>();
  const vnets = new Map<string, number>();
  for (const [i, c] of classes.entries()) {
    const id = scenarioSubnetId(c);
    const vnet = vnetOf(id);
    const j = vnets.get(vnet);
    if (j !== undefined && classes[j]!.location !== c.location) {
      fail(`nodeClasses.${i}.location`, `${c.location}, but nodeClasses.${j} puts this NodeClass's virtual network (subscription ${c.subscriptionID}, resource group ${c.resourceGroup}) in ${classes[j]!.location}: a virtual network and its subnets are in one region (give this NodeClass its own resourceGroup)`);
    }
    if (j === undefined) vnets.set(vnet, i);
    const k = subnets.get(id.toLowerCase());
    if (k !== undefined && classes[k]!.subnetPrefix !== c.subnetPrefix) {
      fail(`nodeClasses.${i}.subnetPrefix`, `${c.subnetPrefix} differs from ${classes[k]!.subnetPrefix} (nodeClasses.${k}) for the same subnet "${c.subnet}" (an absent subnetPrefix is ${DEFAULT_SUBNET_PREFIX}): one subnet has one address range`);
    }
    if (k === undefined) subnets.set(id.toLowerCase(), i);
  }
}

export const RegionSchema = z.strictObject({
  subscriptionId: subscriptionId.default('00000000-0000-0000-0000-000000000001'),
  location,
  /** Families not named get arm.defaultQuota: finite, and 0 for GPU families (NC/ND/NG/NV) unless granted here. */
  familyQuotaCores: z.record(z.string().max(128), cores).default({}),
  /** Total Regional vCPUs; absent = arm.defaultQuota.regionalCores. */
  regionalQuotaCores: cores.optional(),
  /** Total Regional Low-priority vCPUs, the one quota Spot VMs use; absent = arm.defaultQuota.lowPriorityCores. */
  lowPriorityQuotaCores: cores.optional(),
  unavailableSkus: z.array(z.string().max(128)).max(1000).default([]),
  allocationFailureRate: rate.default(0),
  zonalAllocationFailureRate: rate.default(0),
  overconstrainedAllocationFailureRate: rate.default(0),
  /** Spot evictions per running Spot VM and hour (Azure publishes no rate: 0 unless a scenario says). */
  spotEvictionRatePerHour: evictionRate.default(0),
  /** The same per VM size, overriding spotEvictionRatePerHour for it. */
  spotEvictionRatePerHourBySku: z.record(z.string().max(128), evictionRate).default({}),
  /** On-demand capacity reservation groups of the subscription here: each reservation holds a quantity of one size (in a zone of a zonal group) and its quota from the start. */
  capacityReservationGroups: CapacityReservationGroupsSchema.optional(),
});

/**
 * How the fake ARM behaves. Every default is what real ARM does (docs/fidelity.md has the
 * source of each); a knob exists so a scenario can also show a world that differs.
 */
export const ArmBehaviourSchema = z.strictObject({
  /** Async allocation failures leave a VM in provisioningState Failed holding its NIC and OS disk (false: ARM rolls the VM back). */
  failedVmRecords: z.boolean().default(true),
  /** A VM delete (deleteOption Delete) also deletes a NIC still inside its reservation (false: the NIC is only detached). */
  cascadeDeletesReservedNic: z.boolean().default(false),
  /** The NIC reservation a VM PUT takes: length, extra uniform jitter, a later start, and whether the create's outcome restarts it. */
  reservation: z
    .strictObject({
      seconds: seconds(3600).default(180),
      jitterSeconds: seconds(3600).default(0),
      startDelaySeconds: seconds(3600).default(0),
      from: z.enum(['attempt', 'completion']).default('attempt'),
    })
    .default({ seconds: 180, jitterSeconds: 0, startDelaySeconds: 0, from: 'attempt' }),
  /** The usages API: readable (false: 403, a role without usages/read) and how long held cores take to show in it. */
  usages: z
    .strictObject({ readable: z.boolean().default(true), lagSeconds: seconds(3600).default(0) })
    .default({ readable: true, lagSeconds: 0 }),
  /** Items per list page (a nextLink beyond). */
  listPageSize: z.number().int().positive().max(10_000).default(100),
  /** Lists trail the resources: a new one appears, a deleted one disappears, this much later (GET is current). */
  listLagSeconds: z
    .strictObject({ appearSeconds: seconds(3600).default(5), disappearSeconds: seconds(3600).default(5) })
    .default({ appearSeconds: 5, disappearSeconds: 5 }),
  /** 409 PropertyChangeNotAllowed on a VM re-PUT that changes osProfile, networkProfile, storageProfile, size or priority. */
  immutableVmProperties: z.boolean().default(true),
  /** Compute RP throttling policies (PutVM3Min/30Min, DeleteVM…, LowCostGet…, HighCostGet…) with Retry-After up to 20 min. */
  computeThrottling: z.boolean().default(true),
  /** Quotas for families and regions the scenario does not name. */
  defaultQuota: z
    .strictObject({
      familyCores: cores.default(100),
      gpuFamilyCores: cores.default(0),
      regionalCores: cores.default(100),
      lowPriorityCores: cores.default(100),
    })
    .default({ familyCores: 100, gpuFamilyCores: 0, regionalCores: 100, lowPriorityCores: 100 }),
  /** A PUT/GET/list into a resource group that does not exist gets 404 ResourceGroupNotFound (the NodeClasses' groups exist). */
  requireResourceGroups: z.boolean().default(true),
  /** 400 InvalidApiVersionParameter / NoRegisteredProviderFound for api-versions ARM does not serve. */
  validateApiVersions: z.boolean().default(true),
});
export type ArmBehaviour = z.output<typeof ArmBehaviourSchema>;

const NodeClass = z.strictObject({
  name: dnsLabel,
  location,
  subscriptionID: subscriptionId.default('00000000-0000-0000-0000-000000000001'),
  resourceGroup: z.string().max(90).regex(/^[-\w._()]+$/, 'an Azure resource group name').default('azflex-nodes'),
  /** Subnet name inside the scenario's virtual network; one subnet per NodeClass. */
  subnet: z.string().max(80).regex(/^[\w][-\w.]*$/, 'an Azure subnet name').default('nodes'),
  subnetPrefix: subnetCidr.default(DEFAULT_SUBNET_PREFIX),
  image: z
    .strictObject({ publisher: z.string().min(1).max(128), offer: z.string().min(1).max(128), sku: z.string().min(1).max(128), version: z.string().min(1).max(64) })
    .default({ publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' }),
  /** Names of capacity reservation groups its region declares (regions[].capacityReservationGroups). */
  capacityReservationGroups: z.array(z.string().min(1).max(80)).max(100).optional(),
});

const NodePool = z.strictObject({
  name: dnsLabel,
  nodeClass: z.string(),
  instanceTypes: z.array(z.string().max(128)).min(1).max(1000),
  labels: z.record(z.string().max(317), z.string().max(63)).default({}),
  taints: z.array(z.strictObject({ key: z.string().min(1).max(317), value: z.string().max(63).optional(), effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']) })).max(100).default([]),
  limits: requests.default({}),
  weight: z.number().int().min(0).max(100).optional(),
  /** karpenter.sh/capacity-type In these (the launch takes the cheapest available: reserved, then spot, then on-demand at equal price). */
  capacityTypes: z.array(z.enum(['on-demand', 'spot', 'reserved'])).min(1).max(3).default(['on-demand']),
  /** Static capacity: keep this many nodes whatever is pending (NodePool spec.replicas). */
  replicas: z.number().int().min(0).max(LIMITS.nodePools * 100).optional(),
  consolidationPolicy: z.enum(['WhenEmpty', 'WhenEmptyOrUnderutilized']).default('WhenEmpty'),
  consolidateAfter: z.string().max(64).default('60s'),
  expireAfter: z.string().max(64).default('720h'),
  budgets: z
    .array(z.strictObject({ nodes: z.string().regex(/^((100|[0-9]{1,2})%|[0-9]+)$/, 'a node count or a percentage such as "10%"'), reasons: z.array(z.enum(['Empty', 'Drifted', 'Underutilized'])).optional() }))
    .max(50)
    .default([{ nodes: '10%' }]),
})
  // Upstream's CRD rules for static NodePools, so a scenario cannot hold a pool the API server refuses.
  .refine((p) => p.replicas === undefined || p.weight === undefined, { message: "'weight' is not supported on static NodePools (replicas set)", path: ['weight'] })
  .refine((p) => p.replicas === undefined || Object.keys(p.limits).every((k) => k === 'nodes'), { message: "only 'limits.nodes' is supported on static NodePools (replicas set)", path: ['limits'] });

/** Same shapes as FakeArm.injectFault and POST /_sim/faults. */
export const ArmFaultSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('quota'), location, subscriptionId: subscriptionId.optional(), family: z.string().max(128).optional(), cores }),
  z.strictObject({ kind: z.literal('capacity'), location, subscriptionId: subscriptionId.optional(), allocationFailureRate: rate.optional(), zonalAllocationFailureRate: rate.optional(), overconstrainedAllocationFailureRate: rate.optional() }),
  /** Exhausts Compute RP throttling policies (all, or `policy`, e.g. PutVM30Min): the next matching call gets 429 with a long Retry-After. */
  z.strictObject({ kind: z.literal('computeThrottle'), location, subscriptionId: subscriptionId.optional(), policy: z.string().max(128).optional() }),
  z.strictObject({ kind: z.literal('throttle'), subscriptionId: subscriptionId.optional(), location: location.optional(), bucket: z.enum(['reads', 'writes', 'deletes']).optional(), drain: z.boolean().optional(), enabled: z.boolean().optional() }),
  z.strictObject({ kind: z.literal('transient'), transientFaultRate: rate.optional(), timeoutRate: rate.optional() }),
  z.strictObject({ kind: z.literal('skuUnavailable'), location, subscriptionId: subscriptionId.optional(), sku: z.string().max(128), unavailable: z.boolean().optional() }),
  z.strictObject({ kind: z.literal('spotCapacity'), location, subscriptionId: subscriptionId.optional(), sku: z.string().max(128).optional(), available: z.boolean() }),
  z
    .strictObject({ kind: z.literal('spotEviction'), location, subscriptionId: subscriptionId.optional(), sku: z.string().max(128).optional(), evictFraction: rate.optional(), ratePerHour: evictionRate.optional() })
    .refine((f) => f.evictFraction !== undefined || f.ratePerHour !== undefined, 'a spotEviction fault needs evictFraction or ratePerHour'),
  z.strictObject({ kind: z.literal('vmAction'), location, subscriptionId: subscriptionId.optional(), sku: z.string().max(128).optional(), action: z.enum(['deallocate', 'powerOff', 'delete']), fraction: rate }),
]);

const Wave = z.strictObject({
  /** Seconds after the start. */
  at: seconds(LIMITS.hours * 3600).default(0),
  count: z.number().int().positive().max(LIMITS.podsPerWave),
  prefix: dnsLabel,
  requests: requests,
  nodeSelector: z.record(z.string().max(317), z.string().max(63)).default({}),
  tolerations: z.array(z.strictObject({ key: z.string().optional(), operator: z.enum(['Exists', 'Equal']).optional(), value: z.string().optional(), effect: z.enum(['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional() })).max(100).default([]),
  /** Seconds a pod lives once Running; absent = until the end. */
  lifetimeSeconds: z.number().finite().min(1).max(LIMITS.lifetimeSeconds).optional(),
  /** Re-submit the wave every this many seconds (churn); at least a minute. */
  repeatEverySeconds: z.number().finite().min(LIMITS.repeatEverySeconds).max(LIMITS.hours * 3600).optional(),
});

export const FaultsSchema = z
  .strictObject({
    throttling: z.boolean().default(true),
    transientFaultRate: rate.default(0),
    timeoutRate: rate.default(0),
    /** Controller crashes at random await points, spread over the run (the CLI's --restarts overrides). */
    restarts: z.number().int().nonnegative().max(LIMITS.restarts).default(0),
    restartDelaySeconds: seconds(LIMITS.restartDelaySeconds).default(30),
    /**
     * Fraction of booted VMs whose node never registers (a failed bootstrap, an expired join
     * token): registration liveness must delete them, leak-free. Real fleets see a few percent.
     */
    nodeNeverJoinsRate: rate.default(0.02),
    /** Nodes turning unhealthy for good at a time (src/sim/node-health.ts): what node repair is for. */
    unhealthyNodes: z
      .array(z.strictObject({
        at: seconds(LIMITS.hours * 3600),
        nodePool: dnsLabel.optional(),
        fraction: rate,
        condition: z.strictObject({ type: z.string().min(1).max(316), status: z.enum(['True', 'False', 'Unknown']) }).default({ type: 'Ready', status: 'False' }),
      }))
      .max(LIMITS.faults)
      .optional(),
    /** Scheduled faults: at a time (seconds), inject into the fake ARM (same shapes as POST /_sim/faults). */
    schedule: z.array(z.strictObject({ at: seconds(LIMITS.hours * 3600), fault: ArmFaultSchema })).max(LIMITS.faults).default([]),
  })
  .default({ throttling: true, transientFaultRate: 0, timeoutRate: 0, restarts: 0, restartDelaySeconds: 30, nodeNeverJoinsRate: 0.02, schedule: [] });

const interval = (d: number) => z.number().finite().min(LIMITS.intervalSeconds[0]).max(LIMITS.intervalSeconds[1]).default(d);

export const ControllerSchema = z
  .strictObject({
    provisionIntervalSeconds: interval(10),
    resyncSeconds: interval(15),
    disruptionIntervalSeconds: interval(30),
    /** A booting VM's Node registers after a uniform draw in [min, max] seconds. */
    bootSeconds: z.tuple([seconds(LIMITS.bootSeconds), seconds(LIMITS.bootSeconds)]).refine(([a, b]) => a <= b, 'bootSeconds must be [min, max] with min ≤ max').default([120, 300]),
    /** How far the controller's informer cache trails the API server (its reads show the world this long ago). */
    informerLagSeconds: seconds(LIMITS.intervalSeconds[1]).default(0),
    /** Creates under the first version's names (`azflex-<nodeclaim>`, nothing of the cluster): a controller not yet upgraded. */
    legacyNames: z.boolean().default(false),
  })
  .default({ provisionIntervalSeconds: 10, resyncSeconds: 15, disruptionIntervalSeconds: 30, bootSeconds: [120, 300], informerLagSeconds: 0, legacyNames: false });

/**
 * A second cluster sharing the subscriptions and resource groups (as teams share a GPU quota
 * pool): its own controller, API server, kubelet and a copy of the workload, against the same
 * ARM. Its controller draws the same NodeClaim names as this one's, so every name collides.
 */
export const NeighbourSchema = z.strictObject({
  clusterName: z.string().min(1).max(LIMITS.nameLength),
  /** Its controller creates under the first version's names (see controller.legacyNames). */
  legacyNames: z.boolean().default(false),
});

/** Subnet sizes by ARM subnet id (a NodeClass's subnetID); others get `defaultSubnetPrefix`. */
export const SubnetsSchema = z
  .array(z.strictObject({ id: z.string().max(1024).regex(/^\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\/Microsoft\.Network\/virtualNetworks\/[^/]+\/subnets\/[^/]+$/i, 'an ARM subnet id'), addressPrefix: subnetCidr }))
  .max(1000)
  .default([]);

export const ScenarioSchema = z.strictObject({
  name: z.string().min(1).max(LIMITS.nameLength * 2),
  description: z.string().max(10_000).default(''),
  hours: z.number().positive().max(LIMITS.hours),
  clusterName: z.string().min(1).max(LIMITS.nameLength).default('aks-westeurope'),
  /** The AKS cluster's own region: where the disk CSI driver creates disks that bind Immediately. */
  clusterLocation: location.default(DEFAULT_CLUSTER_LOCATION),
  regions: z.array(RegionSchema).min(1).max(LIMITS.regions),
  nodeClasses: z.array(NodeClass).min(1).max(LIMITS.nodeClasses),
  nodePools: z.array(NodePool).min(1).max(LIMITS.nodePools),
  workload: z.array(Wave).min(1).max(LIMITS.waves),
  subnets: SubnetsSchema,
  arm: ArmBehaviourSchema.default(ArmBehaviourSchema.parse({})),
  defaultSubnetPrefix: subnetCidr.default(DEFAULT_SUBNET_PREFIX),
  faults: FaultsSchema,
  controller: ControllerSchema,
  /** A bootstrap token that expires and rotates (bootstrap-token.ts); absent: one token that never does. */
  bootstrapToken: BootstrapTokenSchema.optional(),
  neighbour: NeighbourSchema.optional(),
}).refine((s) => s.neighbour === undefined || s.neighbour.clusterName !== s.clusterName, { message: 'neighbour.clusterName must differ from clusterName', path: ['neighbour', 'clusterName'] });

export type Scenario = z.output<typeof ScenarioSchema>;
export type ScenarioInput = z.input<typeof ScenarioSchema>;

export class ScenarioError extends Error {
  override readonly name = 'ScenarioError';
}

/** The first zod issue as "source: path: message". */
export function zodProblem(error: z.ZodError, source: string): ScenarioError {
  const issue = error.issues[0]!;
  const path = issue.path.length ? issue.path.join('.') : '(root)';
  return new ScenarioError(`${source}: ${path}: ${issue.message}`);
}

/** Parses and validates; the message names the file, the field path and what was expected. */
export function parseScenario(raw: unknown, source: string): Scenario {
  const result = ScenarioSchema.safeParse(raw);
  if (!result.success) throw zodProblem(result.error, source);
  const s = result.data;
  const fail = (path: string, message: string): never => {
    throw new ScenarioError(`${source}: ${path}: ${message}`);
  };
  checkWorld(s, source);
  unique(s.nodeClasses.map((c) => c.name), (i, n) => fail(`nodeClasses.${i}.name`, `duplicate name "${n}"`));
  unique(s.nodePools.map((p) => p.name), (i, n) => fail(`nodePools.${i}.name`, `duplicate name "${n}"`));
  unique(s.workload.map((w) => w.prefix), (i, n) => fail(`workload.${i}.prefix`, `duplicate prefix "${n}"`));
  const classes = new Set(s.nodeClasses.map((c) => c.name));
  for (const [i, np] of s.nodePools.entries()) {
    if (!classes.has(np.nodeClass)) fail(`nodePools.${i}.nodeClass`, `no nodeClass named "${np.nodeClass}"`);
    for (const [j, sku] of np.instanceTypes.entries()) if (!KNOWN_SKUS.has(sku.toLowerCase())) fail(`nodePools.${i}.instanceTypes.${j}`, unknownSku(sku));
    for (const [k, v] of Object.entries(np.limits)) quantity(v, k, (m) => fail(`nodePools.${i}.limits.${k}`, m));
    for (const key of ['consolidateAfter', 'expireAfter'] as const) duration(np[key], (m) => fail(`nodePools.${i}.${key}`, m));
    for (const [k, v] of Object.entries(np.labels)) {
      const problem = labelProblem(k, v);
      if (problem) fail(`nodePools.${i}.labels`, problem);
    }
    for (const [j, t] of np.taints.entries()) {
      const problem = labelProblem(t.key, t.value);
      if (problem) fail(`nodePools.${i}.taints.${j}`, problem);
    }
  }
  const regions = new Set(s.regions.map((r) => `${r.subscriptionId.toLowerCase()}/${r.location}`));
  for (const [i, c] of s.nodeClasses.entries()) {
    if (!regions.has(`${c.subscriptionID.toLowerCase()}/${c.location}`)) fail(`nodeClasses.${i}.location`, `no region "${c.location}" in subscription ${c.subscriptionID}`);
    for (const [j, name] of (c.capacityReservationGroups ?? []).entries()) {
      if (!scenarioReservationGroup(s, c, name)) fail(`nodeClasses.${i}.capacityReservationGroups.${j}`, `no capacity reservation group "${name}" in region ${c.location} of subscription ${c.subscriptionID}`);
    }
  }
  checkFaultTargets(s.regions, s.faults.schedule, source);
  checkSharedNetworks(s.nodeClasses, fail);
  // Each NodeClass's subnet (its subnetPrefix unless `subnets` lists it) in its VNet.
  const listed = new Set(s.subnets.map((n) => n.id.toLowerCase()));
  const own = s.nodeClasses.map((c, i) => ({ id: scenarioSubnetId(c), addressPrefix: c.subnetPrefix, path: `nodeClasses.${i}.subnetPrefix` })).filter((n) => !listed.has(n.id.toLowerCase()));
  checkSubnetOverlap([...own, ...s.subnets.map((n, i) => ({ ...n, path: `subnets.${i}.addressPrefix` }))], fail);
  let pods = 0;
  for (const [i, w] of s.workload.entries()) {
    for (const [k, v] of Object.entries(w.requests)) {
      quantity(v, k, (m) => fail(`workload.${i}.requests.${k}`, m));
      if (k.includes('/') && !wholeQuantity(v)) fail(`workload.${i}.requests.${k}`, `"${v}" must be a whole number (${k} is not divisible)`);
    }
    const misfit = fitsNoVmSize({ ...resourcesFromList(w.requests), pods: 1 });
    if (misfit) fail(`workload.${i}.requests`, misfit);
    for (const [k, v] of Object.entries(w.nodeSelector)) {
      const problem = labelProblem(k, v);
      if (problem) fail(`workload.${i}.nodeSelector`, problem);
    }
    if (w.at >= s.hours * 3600) fail(`workload.${i}.at`, `${w.at} s is after the end of the run (${s.hours * 3600} s)`);
    const rounds = w.repeatEverySeconds ? Math.ceil((s.hours * 3600 - w.at) / w.repeatEverySeconds) : 1;
    pods += w.count * rounds;
    if (pods > LIMITS.podsPerWave * 10) fail(`workload.${i}`, `the workload submits more than ${LIMITS.podsPerWave * 10} pods over the run`);
  }
  return s;
}

/**
 * World checks shared by scenarios and world files: unique regions, regions and quota
 * families the catalog knows, known SKUs and throttling policies, faults that refer to a
 * region, times inside the run, subnets that do not overlap.
 */
export function checkWorld(
  w: { hours: number; regions: Array<{ subscriptionId?: string; location: string; unavailableSkus: string[]; familyQuotaCores: Record<string, number>; spotEvictionRatePerHourBySku?: Record<string, number>; capacityReservationGroups?: Array<{ reservations: Array<{ sku: string }> }> }>; subnets: Array<{ id: string; addressPrefix: string }>; faults: z.output<typeof FaultsSchema> },
  source: string,
): void {
  const fail = (path: string, message: string): never => {
    throw new ScenarioError(`${source}: ${path}: ${message}`);
  };
  // ARM ids are case-insensitive: 0000…A and 0000…a are one subscription.
  unique(w.regions.map((r) => `${r.subscriptionId?.toLowerCase() ?? '*'}/${r.location}`), (i) => fail(`regions.${i}`, `duplicate region "${w.regions[i]!.location}"`));
  for (const [i, r] of w.regions.entries()) {
    const everywhere = w.regions.findIndex((o) => o.subscriptionId === undefined && o.location === r.location);
    if (r.subscriptionId !== undefined && everywhere >= 0) fail(`regions.${i}`, `region "${r.location}" is already given for every subscription by regions.${everywhere} (give it a subscriptionId too, or drop one)`);
    if (!CATALOG_REGIONS.has(r.location)) fail(`regions.${i}.location`, `no VM size of the catalog is offered in "${r.location}" (its regions: ${[...CATALOG_REGIONS].sort().join(', ')})`);
    for (const [j, sku] of r.unavailableSkus.entries()) if (!KNOWN_SKUS.has(sku.toLowerCase())) fail(`regions.${i}.unavailableSkus.${j}`, unknownSku(sku));
    for (const sku of Object.keys(r.spotEvictionRatePerHourBySku ?? {})) if (!KNOWN_SKUS.has(sku.toLowerCase())) fail(`regions.${i}.spotEvictionRatePerHourBySku.${sku}`, unknownSku(sku));
    for (const [g, group] of (r.capacityReservationGroups ?? []).entries()) {
      for (const [j, res] of group.reservations.entries()) if (!KNOWN_SKUS.has(res.sku.toLowerCase())) fail(`regions.${i}.capacityReservationGroups.${g}.reservations.${j}.sku`, unknownSku(res.sku));
    }
    for (const family of Object.keys(r.familyQuotaCores)) {
      const problem = familyProblem(family);
      if (problem) fail(`regions.${i}.familyQuotaCores.${family}`, problem);
    }
  }
  unique(w.subnets.map((n) => n.id.toLowerCase()), (i) => fail(`subnets.${i}.id`, `duplicate subnet "${w.subnets[i]!.id}" (ARM ids are case-insensitive)`));
  checkSubnetOverlap(w.subnets.map((n, i) => ({ ...n, path: `subnets.${i}.addressPrefix` })), fail);
  const locations = new Set(w.regions.map((r) => r.location));
  // A timeline, in time order: faults at one instant apply in list order, so the list is the truth.
  for (const [i, { at }] of w.faults.schedule.entries()) {
    const previous = w.faults.schedule[i - 1];
    if (previous && at < previous.at) fail(`faults.schedule.${i}.at`, `${at} s comes before the previous fault's ${previous.at} s: list the schedule in time order`);
  }
  for (const [i, { at, fault }] of w.faults.schedule.entries()) {
    if (at >= w.hours * 3600) fail(`faults.schedule.${i}.at`, `${at} s is after the end of the run (${w.hours * 3600} s)`);
    if ('location' in fault && fault.location !== undefined && !locations.has(fault.location)) fail(`faults.schedule.${i}.fault.location`, `no region "${fault.location}" in this world (${[...locations].join(', ')})`);
    if (fault.kind === 'skuUnavailable' && !KNOWN_SKUS.has(fault.sku.toLowerCase())) fail(`faults.schedule.${i}.fault.sku`, unknownSku(fault.sku));
    if (fault.kind === 'spotCapacity' && fault.sku !== undefined && !KNOWN_SKUS.has(fault.sku.toLowerCase())) fail(`faults.schedule.${i}.fault.sku`, unknownSku(fault.sku));
    if ((fault.kind === 'spotEviction' || fault.kind === 'vmAction') && fault.sku !== undefined && !KNOWN_SKUS.has(fault.sku.toLowerCase())) fail(`faults.schedule.${i}.fault.sku`, unknownSku(fault.sku));
    if (fault.kind === 'quota' && fault.family !== undefined) {
      const problem = familyProblem(fault.family);
      if (problem) fail(`faults.schedule.${i}.fault.family`, problem);
    }
    if (fault.kind === 'computeThrottle' && fault.policy !== undefined && !COMPUTE_THROTTLE_POLICIES.some((p) => p.name === fault.policy)) {
      fail(`faults.schedule.${i}.fault.policy`, `unknown Compute throttling policy "${fault.policy}" (${COMPUTE_THROTTLE_POLICIES.map((p) => p.name).join(', ')})`);
    }
  }
}

/**
 * Faults that name a subscription must name one the world has in that location, once the
 * regions are known per subscription (a world's unpinned regions exist in every
 * subscription the NodeClasses name).
 */
export function checkFaultTargets(regions: ReadonlyArray<{ subscriptionId: string; location: string }>, schedule: z.output<typeof FaultsSchema>['schedule'], source: string): void {
  for (const [i, { fault }] of schedule.entries()) {
    if (!('subscriptionId' in fault) || fault.subscriptionId === undefined) continue;
    const sub = fault.subscriptionId.toLowerCase();
    const location = 'location' in fault ? fault.location : undefined;
    if (!regions.some((r) => r.subscriptionId.toLowerCase() === sub && (location === undefined || r.location === location))) {
      const subs = [...new Set(regions.filter((r) => location === undefined || r.location === location).map((r) => r.subscriptionId))];
      throw new ScenarioError(`${source}: faults.schedule.${i}.fault.subscriptionId: no region${location ? ` "${location}"` : ''} in subscription ${fault.subscriptionId} (the world has it in: ${subs.join(', ') || 'none'})`);
    }
  }
}

/** Quota families are matched exactly (as ARM's quota names print them); a near miss would silently get the default quota. */
function familyProblem(family: string): string | undefined {
  if (CATALOG_FAMILIES.has(family)) return undefined;
  const near = [...CATALOG_FAMILIES].find((f) => f.toLowerCase() === family.toLowerCase());
  return `unknown quota family "${family}"${near ? ` (did you mean ${near}?)` : ''} (the catalog's families: ${[...CATALOG_FAMILIES].join(', ')})`;
}

const KNOWN_SKUS = new Set(STATIC_INSTANCE_TYPES.map((t) => t.name.toLowerCase()));
const CATALOG_FAMILIES = new Set(STATIC_INSTANCE_TYPES.map((t) => t.family));
const CATALOG_REGIONS = new Set(STATIC_INSTANCE_TYPES.flatMap((t) => t.locations));

export function isKnownSku(sku: string): boolean {
  return KNOWN_SKUS.has(sku.toLowerCase());
}

export function unknownSku(sku: string): string {
  return `unknown VM size "${sku}" (not in the catalog: ${STATIC_INSTANCE_TYPES.length} sizes, e.g. ${STATIC_INSTANCE_TYPES.slice(0, 3).map((t) => t.name).join(', ')})`;
}

function unique(values: string[], onDuplicate: (index: number, value: string) => void): void {
  const seen = new Set<string>();
  for (const [i, v] of values.entries()) {
    if (seen.has(v)) onDuplicate(i, v);
    seen.add(v);
  }
}

export function quantity(raw: string, resource: string, fail: (message: string) => void): void {
  let v: number;
  try {
    v = parseQuantity(raw, resource);
  } catch (err) {
    return fail(`"${raw}" is not a Kubernetes quantity (${(err as Error).message})`);
  }
  // Outside the try: `fail` throws, and its message must not be wrapped as a parse error.
  if (!Number.isFinite(v) || v < 0) fail(`"${raw}" is not a non-negative quantity`);
}

/** Kubernetes label syntax: values, and keys (an optional DNS prefix and "/", then a name). */
export const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
export const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

export function labelProblem(key: string, value: string | undefined): string | undefined {
  if (key.length > 316 || !LABEL_KEY.test(key) || key.split('/').pop()!.length > 63) return `"${key}" is not a label key (an optional DNS prefix and "/", then at most 63 letters, digits, -, _ or .)`;
  if (value !== undefined && (value.length > 63 || !LABEL_VALUE.test(value))) return `"${value}" is not a label value (at most 63 letters, digits, -, _ or ., starting and ending alphanumeric)`;
  return undefined;
}

/** Whether a valid quantity is a whole number (1, 2k, 1e3; not 1.5 or 500m). */
export function wholeQuantity(raw: string): boolean {
  try {
    return parseQuantity(raw, 'cpu') % 1000 === 0;
  } catch {
    return true; // too large to say: the VM-size check refuses it
  }
}

/** A pod no VM size could hold would stay pending whatever the world: a mistake, not a rehearsal. */
export function fitsNoVmSize(requests: Readonly<Resources>): string | undefined {
  const fits = STATIC_INSTANCE_TYPES.some((t) =>
    fitsWithin(requests, resourcesFromList({ cpu: String(t.vcpu), memory: `${t.memoryMiB}Mi`, pods: String(t.maxPods), ...(t.gpuCount ? { 'nvidia.com/gpu': String(t.gpuCount) } : {}) })),
  );
  if (fits) return undefined;
  const most = (f: (t: (typeof STATIC_INSTANCE_TYPES)[number]) => number) => Math.max(...STATIC_INSTANCE_TYPES.map(f));
  return `the pod's requests (${Object.entries(requests).map(([k, v]) => `${k} ${v}`).join(', ')}) fit no VM size in the catalog (largest: ${most((t) => t.vcpu)} vCPU, ${most((t) => t.memoryMiB) / 1024} GiB, ${most((t) => t.gpuCount)} GPUs)`;
}

export function duration(raw: string, fail: (message: string) => void): void {
  try {
    parseDuration(raw);
  } catch (err) {
    fail(err instanceof DurationError ? `${err.message}: use Go durations such as 30s, 5m, 720h, or Never` : String(err));
  }
}

export function loadScenarioFile(path: string): Scenario {
  let docs: unknown[];
  try {
    docs = parseYamlDocuments(readBoundedFile(path), path);
  } catch (err) {
    if (err instanceof InputFileError) throw new ScenarioError(err.message);
    throw err;
  }
  if (docs.length !== 1) throw new ScenarioError(`${path}: a scenario file holds exactly one document, found ${docs.length}`);
  return parseScenario(docs[0], path);
}

/** The subnet a scenario's NodeClass names, as an ARM ID in the simulated VNet. */
export function scenarioSubnetId(c: Scenario['nodeClasses'][number]): string {
  return `/subscriptions/${c.subscriptionID}/resourceGroups/${c.resourceGroup}/providers/Microsoft.Network/virtualNetworks/azflex-vnet/subnets/${c.subnet}`;
}

/** The ARM id of the reservation group `name` that the NodeClass's region declares (undefined: none). */
export function scenarioReservationGroup(s: Pick<Scenario, 'regions'>, c: Pick<Scenario['nodeClasses'][number], 'subscriptionID' | 'location'>, name: string): string | undefined {
  const region = s.regions.find((r) => r.subscriptionId.toLowerCase() === c.subscriptionID.toLowerCase() && r.location === c.location);
  const group = region?.capacityReservationGroups?.find((g) => g.name === name);
  return group ? `/subscriptions/${c.subscriptionID}/resourceGroups/${group.resourceGroup}/providers/Microsoft.Compute/capacityReservationGroups/${group.name}` : undefined;
}
