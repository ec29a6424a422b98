import type { ClusterSetup } from './cluster-setup.js';
import type { FakeCluster } from './cluster.js';

/** Puts what a simulated cluster starts with into it: NodeClasses, NodePools, PDBs and storage. */
export function seedCluster(cluster: FakeCluster, setup: ClusterSetup): void {
  for (const nc of setup.nodeClasses) cluster.putNodeClass({ ...nc, metadata: { ...nc.metadata, uid: cluster.newUid() } });
  for (const np of setup.nodePools) cluster.putNodePool({ ...np, metadata: { ...np.metadata, uid: cluster.newUid() } });
  cluster.setPodDisruptionBudgets(setup.podDisruptionBudgets);
  for (const value of setup.storage?.classes ?? []) cluster.putStorage({ kind: 'StorageClass', value });
  for (const value of setup.storage?.volumes ?? []) cluster.putStorage({ kind: 'PersistentVolume', value });
  for (const value of setup.storage?.claims ?? []) cluster.putStorage({ kind: 'PersistentVolumeClaim', value });
}
