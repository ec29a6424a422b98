import { createHash } from 'node:crypto';
import type { ResourceRef, Tags } from '../ports/azure.js';

/**
 * Deterministic ARM names and tags. A NodeClaim name maps to exactly one VM, NIC and OS
 * disk name per cluster, so every create is idempotent and a restarted controller finds its
 * resources. Names carry a short hash of the cluster's name (`azflex-<hash6>-<nodeclaim>`):
 * two clusters that share a resource group cannot collide on a name, whatever their
 * NodeClaims are called. Names only find; the tags decide who owns a resource
 * (src/lifecycle/ownership.ts).
 */

/** Azure Linux VM names (and their hostnames): 1-64 chars of [a-z0-9-], not ending in '-'. */
const VM_NAME_MAX = 64;
/** The first version's prefix, with nothing of the cluster: its resources are still recognised and reaped. */
const LEGACY_PREFIX = 'azflex-';
const CLUSTER_HASH_LENGTH = 6;

/** A NodeClaim's three resource names. */
export interface ResourceNames {
  vm: string;
  nic: string;
  osDisk: string;
}

/** Which names: a cluster's (its name hashed in), or the first version's (`legacy`). */
export type Naming = { cluster: string } | 'legacy';

/**
 * Names are asked for on every resync, for every NodeClaim, and by most effects; the
 * answers are pure, so they are remembered (bounded: forgotten all at once when full).
 */
const NAME_CACHE_MAX = 16_384;
const namesCache = new Map<string, ResourceNames>();
const prefixes = new Map<string, string>();

function prefixOf(naming: Naming): string {
  if (naming === 'legacy') return LEGACY_PREFIX;
  let prefix = prefixes.get(naming.cluster);
  if (prefix === undefined) {
    if (prefixes.size >= NAME_CACHE_MAX) prefixes.clear();
    prefixes.set(naming.cluster, (prefix = `${LEGACY_PREFIX}${shortHash(naming.cluster, CLUSTER_HASH_LENGTH)}-`));
  }
  return prefix;
}

/** The NodeClaim's VM, NIC and OS disk names under a naming. */
export function resourceNamesFor(nodeClaimName: string, naming: Naming): ResourceNames {
  const prefix = prefixOf(naming);
  const key = `${prefix}\u0000${nodeClaimName}`;
  let names = namesCache.get(key);
  if (names === undefined) {
    if (namesCache.size >= NAME_CACHE_MAX) namesCache.clear();
    const vm = computeVmName(prefix, nodeClaimName);
    namesCache.set(key, (names = { vm, nic: `${vm}-nic`, osDisk: `${vm}-osdisk` }));
  }
  return names;
}

/** The names in a cluster (what a NodeClaim gets unless the first version's already exist: src/lifecycle/ownership.ts). */
export function clusterNamesFor(nodeClaimName: string, clusterName: string): ResourceNames {
  return resourceNamesFor(nodeClaimName, { cluster: clusterName });
}

/** The first version's names, `azflex-<nodeclaim>`, without the cluster. */
export function legacyNamesFor(nodeClaimName: string): ResourceNames {
  return resourceNamesFor(nodeClaimName, 'legacy');
}

function computeVmName(prefix: string, nodeClaimName: string): string {
  const cleaned = nodeClaimName.toLowerCase().replace(/[^a-z0-9-]/g, '-');
  let name = prefix + cleaned;
  if (name.length > VM_NAME_MAX) {
    // Keep the head readable and make the tail unique: the hash covers the full input.
    const hash = shortHash(nodeClaimName, 10);
    name = `${name.slice(0, VM_NAME_MAX - hash.length - 1)}-${hash}`;
  }
  return name.replace(/-+$/, '');
}

export function shortHash(input: string, length: number): string {
  return createHash('sha256').update(input).digest('hex').slice(0, length);
}

/** Azure tag names may not contain '/', so Kubernetes-style keys use '_' (as the Azure Karpenter provider does). */
export const TAG = {
  cluster: 'azflex.io_cluster',
  nodePool: 'karpenter.sh_nodepool',
  nodeClaim: 'karpenter.sh_nodeclaim',
  nodeClass: 'azflex.io_nodeclass',
  /** Controller's clock at NIC creation (RFC 3339): the sweep's grace period starts here. */
  createdAt: 'azflex.io_created-at',
} as const;

export function ownershipTags(cluster: string, nodePool: string, nodeClaim: string, nodeClass: string, createdAtMs: number): Tags {
  // The keys of TAG spelled out: an object literal with computed keys is built key by key at
  // run time, and every NIC and VM PUT's tags (then every answer's copy) are built from this.
  return {
    'azflex.io_cluster': cluster,
    'karpenter.sh_nodepool': nodePool,
    'karpenter.sh_nodeclaim': nodeClaim,
    'azflex.io_nodeclass': nodeClass,
    'azflex.io_created-at': new Date(createdAtMs).toISOString(),
  } satisfies Record<(typeof TAG)[keyof typeof TAG], string>;
}

export function armId(ref: ResourceRef, provider: 'Microsoft.Network/networkInterfaces' | 'Microsoft.Compute/virtualMachines' | 'Microsoft.Compute/disks'): string {
  return `/subscriptions/${ref.subscriptionId}/resourceGroups/${ref.resourceGroup}/providers/${provider}/${ref.name}`;
}

/** Last path segment of an ARM id (names are compared case-insensitively by ARM). */
export function nameFromArmId(id: string): string {
  return id.slice(id.lastIndexOf('/') + 1);
}

/** The resource an ARM id names: its subscription, resource group and name. */
export function refFromId(id: string): ResourceRef {
  const m = /\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/[^/]+\/[^/]+\/([^/]+)$/i.exec(id);
  if (!m) throw new Error(`not an ARM resource id: ${id}`);
  return { subscriptionId: m[1]!, resourceGroup: m[2]!, name: m[3]! };
}

/** A Node's providerID is this prefix and its VM's ARM id. */
export const PROVIDER_ID_PREFIX = 'azure-flex://';
