import { z } from 'zod';
import type { ClusterSetup } from './cluster-setup.js';
import { InputFileError, parseYamlDocuments, readBoundedFile } from './input-files.js';
import {
  ArmBehaviourSchema, checkFaultTargets, checkWorld, clusterLocation, DEFAULT_CLUSTER_LOCATION, ControllerSchema, DEFAULT_SUBNET_PREFIX, FaultsSchema, LIMITS, RegionSchema, ScenarioError, subnetCidr, SubnetsSchema, zodProblem,
  type Scenario, type ScenarioInput,
} from './scenario.js';
import { builtInScenarioInput, BUILT_IN_SCENARIOS } from './scenarios.js';

/**
 * A world: Azure alone (subscriptions and regions with family and regional quota, capacity
 * failure rates, SKU availability, subnet sizes, a fault schedule), for `azflex simulate
 * --manifests … --world`. The cluster comes from the user's own manifests. A region without
 * `subscriptionId` exists in every subscription the manifests' NodeClasses name.
 */
export const WorldSchema = z.strictObject({
  name: z.string().min(1).max(LIMITS.nameLength * 2),
  description: z.string().max(10_000).default(''),
  hours: z.number().positive().max(LIMITS.hours).default(8),
  clusterName: z.string().min(1).max(LIMITS.nameLength).default('aks-westeurope'),
  /** The AKS cluster's own region: where the disk CSI driver creates disks that bind Immediately. */
  clusterLocation: clusterLocation.default(DEFAULT_CLUSTER_LOCATION),
  regions: z.array(RegionSchema.extend({ subscriptionId: RegionSchema.shape.subscriptionId.unwrap().optional() })).min(1).max(LIMITS.regions),
  subnets: SubnetsSchema,
  defaultSubnetPrefix: subnetCidr.default(DEFAULT_SUBNET_PREFIX),
  /** How the fake ARM behaves (docs/fidelity.md); every default is real ARM's. */
  arm: ArmBehaviourSchema.default(ArmBehaviourSchema.parse({})),
  faults: FaultsSchema,
  controller: ControllerSchema,
});

export type World = z.output<typeof WorldSchema>;

export function parseWorld(raw: unknown, source: string): World {
  const result = WorldSchema.safeParse(raw);
  if (!result.success) throw zodProblem(result.error, source);
  checkWorld(result.data, source);
  return result.data;
}

/** Built-in worlds: the Azure half of each built-in scenario, any subscription. */
export function builtInWorld(name: string): World | undefined {
  const s = builtInScenarioInput(name);
  if (!s) return undefined;
  const { nodeClasses: _c, nodePools: _p, workload: _w, ...azure } = s;
  const regions = [...azure.regions, ...(EXTRA_REGIONS[name] ?? [])].map(({ subscriptionId: _s, ...r }) => r);
  return parseWorld({ ...azure, regions }, `built-in world ${name}`);
}

export const BUILT_IN_WORLDS: readonly string[] = BUILT_IN_SCENARIOS;

/**
 * The examples' second H200 region and CPU pools, so `--manifests examples/ -R` runs in every
 * built-in world: eastus2euap has no H200 quota at all (the storm reaches both regions),
 * eastus2 has DSv5 quota for the CPU pool, and westeurope (the cluster's own region, where the
 * topology examples' CPU pool and zonal disk are) the default quotas.
 */
const EXTRA_REGIONS: Record<string, ScenarioInput['regions']> = Object.fromEntries(
  BUILT_IN_SCENARIOS.map((n) => [n, [{ location: 'eastus2euap', familyQuotaCores: { standardNDSH200v5Family: 0 } }, { location: 'westeurope' }]]),
);

export function loadWorld(nameOrPath: string): World {
  const builtIn = builtInWorld(nameOrPath);
  if (builtIn) return builtIn;
  let docs: unknown[];
  try {
    docs = parseYamlDocuments(readBoundedFile(nameOrPath), nameOrPath);
  } catch (err) {
    if (err instanceof InputFileError) {
      if (/cannot read \(ENOENT\)/.test(err.message)) throw new ScenarioError(`unknown world "${nameOrPath}": not a built-in (${BUILT_IN_WORLDS.join(', ')}) and no such file`);
      throw new ScenarioError(err.message);
    }
    throw err;
  }
  if (docs.length !== 1) throw new ScenarioError(`${nameOrPath}: a world file holds exactly one document, found ${docs.length}`);
  return parseWorld(docs[0], nameOrPath);
}

/**
 * The scenario a simulation runs for a world and a cluster: regions copied into every
 * subscription the NodeClasses name (unless pinned), and every NodeClass checked to point
 * at a region of the world.
 */
export function scenarioOfWorld(world: World, cluster: ClusterSetup, source = `world ${world.name}`): Scenario {
  const subscriptions = [...new Set(cluster.nodeClasses.map((nc) => nc.spec.subscriptionID.toLowerCase()))].sort();
  const regions = world.regions.flatMap((r) =>
    r.subscriptionId !== undefined ? [{ ...r, subscriptionId: r.subscriptionId }] : subscriptions.map((subscriptionId) => ({ ...r, subscriptionId })),
  );
  const known = new Set(regions.map((r) => `${r.subscriptionId.toLowerCase()}/${r.location}`));
  for (const nc of cluster.nodeClasses) {
    if (!known.has(`${nc.spec.subscriptionID.toLowerCase()}/${nc.spec.location}`)) {
      const where = cluster.sources?.[`AzureFlexNodeClass/${nc.metadata.name}`] ?? 'manifests';
      throw new ScenarioError(
        `${where}: AzureFlexNodeClass ${nc.metadata.name}: location "${nc.spec.location}" is not a region of world ${world.name} (${[...new Set(world.regions.map((r) => r.location))].join(', ')})`,
      );
    }
  }
  if (regions.length === 0) throw new ScenarioError(`world ${world.name}: no region applies (the manifests have no AzureFlexNodeClass)`);
  checkFaultTargets(regions, world.faults.schedule, source);
  return { ...world, regions, nodeClasses: [], nodePools: [], workload: [] };
}
