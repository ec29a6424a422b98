import { TAG } from '../azure/naming.js';
import type { Tags } from '../ports/azure.js';
import type { FakeArm } from './arm/fake-arm.js';
import type { FakeCluster } from './cluster.js';
import type { CrossClusterWrites, NeighbourCluster } from './neighbour.js';

/** What a settled world still holds: NodeClaims that made no progress, and resources no live NodeClaim owns. */

/** The main cluster's name and the neighbour sharing its resource groups. */
export interface SharedResourceGroups {
  clusterName: string;
  other: NeighbourCluster;
  crossWrites: CrossClusterWrites;
}

/** Leaks of a settled world: by NodeClaim tag, or with a neighbour by cluster and NodeClaim tags (each cluster's stuck ones count). */
export function worldLeaks(arm: FakeArm, cluster: FakeCluster, stuck: string[], shared: SharedResourceGroups | undefined): ReturnType<FakeArm['leaks']> {
  const live = new Set([...cluster.nodeClaims.keys()].filter((n) => !stuck.includes(n)));
  if (!shared) return arm.leaks(live);
  const other = shared.other.cluster;
  const otherStuck = stuckNodeClaims(other);
  return arm.leaks(liveByCluster(new Map([[shared.clusterName, live], [shared.other.name, new Set([...other.nodeClaims.keys()].filter((n) => !otherStuck.includes(n)))]])));
}

/**
 * NodeClaims a settled world still holds that are not a working node: still terminating, or
 * not registered. Called once the world has settled (or MAX_SETTLE_MS has passed), which is
 * beyond every liveness deadline, so each of these made no progress past it.
 */
export function stuckNodeClaims(cluster: FakeCluster): string[] {
  const out: string[] = [];
  for (const nc of cluster.nodeClaims.values()) {
    const registered = nc.status.conditions.some((c) => c.type === 'Registered' && c.status === 'True');
    if (nc.metadata.deletionTimestamp || !registered) out.push(nc.metadata.name);
  }
  return out;
}

/** Whether tags name a live NodeClaim of the cluster they name (clusters sharing resource groups: a NodeClaim name alone says nothing). */
export function liveByCluster(live: ReadonlyMap<string, ReadonlySet<string>>): (tags: Tags) => boolean {
  return (tags) => live.get(tags[TAG.cluster] ?? '')?.has(tags[TAG.nodeClaim] ?? '') ?? false;
}
