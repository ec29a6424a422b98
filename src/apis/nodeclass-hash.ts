import { createHash } from 'node:crypto';
import type { AzureFlexNodeClass, AzureFlexNodeClassSpec, NodeClaim } from '../ports/cluster.js';
import { ANNOTATION_NODECLASS_HASH, ANNOTATION_NODECLASS_HASH_VERSION } from './well-known.js';

/**
 * Drift hash: SHA-256 over the NodeClass fields that are baked into a VM at creation, with
 * tag keys sorted so map order never changes the hash. The status controller stamps it on
 * the NodeClass; the provisioner stamps it on each NodeClaim at launch (the upstream PR
 * forgot that half, so drift never fired). A NodeClaim whose value differs is Drifted.
 */
/** Bumped when the hashed field set changes on purpose, so an upgrade does not drift every node. */
export const NODECLASS_HASH_VERSION = 'v1';

function sortedRecord(r: Record<string, string>): Array<[string, string]> {
  return Object.keys(r)
    .sort()
    .map((k) => [k, r[k] as string]);
}

/** The canonical, ordered projection that is hashed. ARM names are case-insensitive, so they are lower-cased. */
export function hashInput(spec: AzureFlexNodeClassSpec): unknown[] {
  return [
    NODECLASS_HASH_VERSION,
    spec.subscriptionID.toLowerCase(),
    spec.location.toLowerCase(),
    spec.resourceGroup.toLowerCase(),
    spec.subnetID.toLowerCase(),
    spec.imageReference
      ? [spec.imageReference.publisher, spec.imageReference.offer, spec.imageReference.sku, spec.imageReference.version]
      : null,
    spec.imageID ? spec.imageID.toLowerCase() : null,
    spec.securityType,
    spec.osDiskSizeGB,
    [...spec.sshPublicKeys].sort(),
    spec.allocateNodePublicIP,
    spec.maxPodsPerNode,
    sortedRecord(spec.tags),
  ];
}

export function driftHash(spec: AzureFlexNodeClassSpec): string {
  return createHash('sha256').update(JSON.stringify(hashInput(spec))).digest('hex');
}

/** Asked for every NodeClaim on every disruption pass; specs are replaced, never mutated, on a write. */
const hashes = new WeakMap<AzureFlexNodeClassSpec, string>();

export function nodeClassHash(nodeClass: AzureFlexNodeClass): string {
  let hash = hashes.get(nodeClass.spec);
  if (hash === undefined) hashes.set(nodeClass.spec, (hash = driftHash(nodeClass.spec)));
  return hash;
}

/**
 * Drifted when the NodeClaim was launched from a different NodeClass spec. NodeClaims
 * without the annotation (launched by an older version) or with another hash version are
 * not called drifted: we cannot know, and replacing every node on upgrade is worse.
 */
export function isNodeClaimDrifted(nodeClaim: NodeClaim, nodeClass: AzureFlexNodeClass): boolean {
  const stamped = nodeClaim.metadata.annotations[ANNOTATION_NODECLASS_HASH];
  if (stamped === undefined) return false;
  const version = nodeClaim.metadata.annotations[ANNOTATION_NODECLASS_HASH_VERSION];
  if (version !== undefined && version !== NODECLASS_HASH_VERSION) return false;
  return stamped !== nodeClassHash(nodeClass);
}
