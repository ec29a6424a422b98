import { createHash } from 'node:crypto';
import type { ResourceRef, Tags } from '../ports/azure.js';

/**
 * Deterministic ARM names and tags. A NodeClaim name maps to exactly one VM, NIC and OS
 * disk name, so every create is idempotent and a restarted controller finds its resources.
 */

/** Azure Linux VM names (and their hostnames): 1-64 chars of [a-z0-9-], not ending in '-'. */
const VM_NAME_MAX = 64;
const PREFIX = 'azflex-';

/**
 * Names are asked for on every resync, for every NodeClaim, and by most effects; the
 * answers are pure, so they are remembered (bounded: forgotten all at once when full).
 */
const NAME_CACHE_MAX = 16_384;
const vmNames = new Map<string, string>();
const nicNames = new Map<string, string>();

function remembered(cache: Map<string, string>, key: string, compute: (key: string) => string): string {
  let value = cache.get(key);
  if (value === undefined) {
    if (cache.size >= NAME_CACHE_MAX) cache.clear();
    cache.set(key, (value = compute(key)));
  }
  return value;
}

export function vmNameFor(nodeClaimName: string): string {
  return remembered(vmNames, nodeClaimName, computeVmName);
}

function computeVmName(nodeClaimName: string): string {
  const cleaned = nodeClaimName.toLowerCase().replace(/[^a-z0-9-]/g, '-');
  let name = PREFIX + cleaned;
  if (name.length > VM_NAME_MAX) {
    // Keep the head readable and make the tail unique: the hash covers the full input.
    const hash = shortHash(nodeClaimName, 10);
    name = `${name.slice(0, VM_NAME_MAX - hash.length - 1)}-${hash}`;
  }
  return name.replace(/-+$/, '');
}

export function nicNameFor(nodeClaimName: string): string {
  return remembered(nicNames, nodeClaimName, (n) => `${vmNameFor(n)}-nic`);
}

export function osDiskNameFor(nodeClaimName: string): string {
  return `${vmNameFor(nodeClaimName)}-osdisk`;
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
