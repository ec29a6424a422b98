import { TAG, clusterNamesFor, legacyNamesFor, type ResourceNames } from '../azure/naming.js';
import { AzureError, type Tags } from '../ports/azure.js';
import type { LifecycleConfig, WorldView } from './deps.js';

/**
 * Who owns an ARM resource, and which names a NodeClaim's resources have. Names only find:
 * before azflex adopts (a PUT over an existing resource), updates or deletes a NIC, VM or OS
 * disk, the resource's tags must say it is this cluster's and this NodeClaim's. Anything else
 * of that name (another cluster's, or untagged) is never adopted and never deleted.
 */

/** The view of this cluster's resources a NodeClaim's names are resolved against (it holds only resources tagged with the cluster). */
export type TaggedView = Pick<WorldView, 'vms' | 'nics' | 'disks'>;

/**
 * The NodeClaim's resource names: the cluster's (`azflex-<hash6>-<nodeclaim>`), unless the view
 * shows a resource of the first version's names (`azflex-<nodeclaim>`) tagged with this cluster
 * and NodeClaim: a NodeClaim launched before the upgrade keeps its resources, and they are
 * reaped under their own names. Level-triggered and restart-safe: the first version created
 * its resources before the upgrade, so the first full list after it shows every one; the
 * cluster's names are used only once none is left, when a GET of them finds nothing.
 */
export function resourceNamesOf(view: TaggedView | undefined, config: Pick<LifecycleConfig, 'clusterName' | 'legacyNames'>, nodeClaim: string): ResourceNames {
  const legacy = legacyNamesFor(nodeClaim);
  if (config.legacyNames) return legacy;
  if (view && (taggedFor(view.vms.get(legacy.vm), nodeClaim) || taggedFor(view.nics.get(legacy.nic), nodeClaim) || taggedFor(view.disks?.get(legacy.osDisk), nodeClaim))) {
    return legacy;
  }
  return clusterNamesFor(nodeClaim, config.clusterName);
}

/** Every name the NodeClaim's NIC may have (for maps from a NIC to its NodeClaim, which must find either). */
export function nicNameCandidates(config: Pick<LifecycleConfig, 'clusterName' | 'legacyNames'>, nodeClaim: string): readonly string[] {
  const legacy = legacyNamesFor(nodeClaim).nic;
  return config.legacyNames ? [legacy] : [clusterNamesFor(nodeClaim, config.clusterName).nic, legacy];
}

function taggedFor(resource: { tags: Tags } | undefined, nodeClaim: string): boolean {
  return resource !== undefined && resource.tags[TAG.nodeClaim] === nodeClaim;
}

/** Whether the tags say the resource is the cluster's and the NodeClaim's. */
export function ownedBy(tags: Tags, clusterName: string, nodeClaim: string): boolean {
  return tags[TAG.cluster] === clusterName && tags[TAG.nodeClaim] === nodeClaim;
}

/** The resource as ARM answered, when it is the NodeClaim's; undefined when it is absent or someone else's (which azflex leaves alone). */
export function ours<R extends { tags: Tags }>(resource: R | undefined, clusterName: string, nodeClaim: string): R | undefined {
  return resource && ownedBy(resource.tags, clusterName, nodeClaim) ? resource : undefined;
}

/**
 * The resource, when its tags say it is the cluster's. For a NIC actor's reaping GETs: the
 * actor exists for a name of one of the cluster's NodeClaims, and a NIC of the cluster under
 * it is what it reaps (its NodeClaim may be gone already).
 */
export function clusterOwns<R extends { tags: Tags }>(resource: R | undefined, clusterName: string): R | undefined {
  return resource && resource.tags[TAG.cluster] === clusterName ? resource : undefined;
}

/**
 * Throws the conflict when a resource of the NodeClaim's name exists and is not its own: the
 * one error (ResourceNameConflict, classified `conflict` in src/azure/errors.ts) that fails
 * the launch for good, so the NodeClaim is deleted and its pods go elsewhere.
 */
export function assertOwned(resource: { id: string; tags: Tags }, kind: 'NIC' | 'VM' | 'OS disk', clusterName: string, nodeClaim: string): void {
  if (ownedBy(resource.tags, clusterName, nodeClaim)) return;
  throw nameConflict(resource, kind, clusterName);
}

export function nameConflict(resource: { id: string; tags: Tags }, kind: 'NIC' | 'VM' | 'OS disk', clusterName: string): AzureError {
  const cluster = resource.tags[TAG.cluster];
  const owner = cluster === undefined ? 'no azflex cluster tag' : `${TAG.cluster}=${cluster}`;
  const claim = resource.tags[TAG.nodeClaim];
  return new AzureError('ResourceNameConflict', 409,
    `${kind} ${resource.id} already exists and is not this NodeClaim's (${owner}${claim !== undefined ? `, ${TAG.nodeClaim}=${claim}` : ''}; this cluster is ${clusterName}): azflex neither adopts nor deletes it`);
}
