/** Shared setup for disruption tests: the simulator's cluster with one pool of initialized D8s nodes. */
import type { Clock } from '../../src/ports/clock.js';
import type { Condition, Node, NodeClaim } from '../../src/ports/cluster.js';
import { nodeClassHash, NODECLASS_HASH_VERSION } from '../../src/apis/nodeclass-hash.js';
import { NODEPOOL_HASH_VERSION, nodePoolTemplateHash } from '../../src/provisioning/nodepool-hash.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { T0, iso, makeNodeClaim, makeNodeClass, makeNodePool, type NodePoolOptions } from '../provisioning/fixtures.js';
import {
  ANNOTATION_NODECLASS_HASH, ANNOTATION_NODECLASS_HASH_VERSION, ANNOTATION_NODEPOOL_HASH,
  ANNOTATION_NODEPOOL_HASH_VERSION,
} from '../../src/apis/well-known.js';

export function readyConditions(at: number): Condition[] {
  return ['Launched', 'Registered', 'Initialized', 'Ready'].map((type) => ({ type, status: 'True' as const, reason: type, message: '', lastTransitionTime: iso(at) }));
}

export function makeNode(name: string, annotations: Record<string, string> = {}): Node {
  return {
    metadata: { name, uid: `node-${name}`, labels: {}, annotations, finalizers: [], creationTimestamp: iso(T0) },
    spec: { taints: [] },
    status: { capacity: {}, allocatable: {}, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: '', lastTransitionTime: iso(T0) }] },
  };
}

/** A cluster with `count` initialized, correctly stamped D8s NodeClaims (and Nodes) in pool "default". */
export function clusterWithNodes(clock: Clock, count: number, pool: NodePoolOptions = {}): FakeCluster {
  const cluster = new FakeCluster(clock);
  cluster.putNodeClass(makeNodeClass());
  cluster.putNodePool(makeNodePool('default', pool));
  for (let i = 0; i < count; i++) addClaim(cluster, `default-n${i}`, { createdAt: T0 + i * 1000 });
  return cluster;
}

export function addClaim(cluster: FakeCluster, name: string, options: { createdAt?: number; expireAfter?: string; annotations?: Record<string, string>; launchedAs?: string } = {}): NodeClaim {
  const pool = cluster.nodePools.get('default')!;
  const claim = makeNodeClaim(name, {
    nodePool: pool.metadata.name,
    launchedAs: options.launchedAs ?? 'Standard_D8s_v5',
    nodeName: `node-${name}`,
    capacity: { cpu: '8', memory: '32Gi', pods: '110' },
    allocatable: { cpu: '7900m', memory: '30Gi', pods: '110' },
    conditions: readyConditions(options.createdAt ?? T0),
    creationTimestamp: iso(options.createdAt ?? T0),
    ...(options.expireAfter ? { expireAfter: options.expireAfter } : {}),
    annotations: {
      [ANNOTATION_NODECLASS_HASH]: nodeClassHash(cluster.nodeClasses.get('eastus2')!),
      [ANNOTATION_NODECLASS_HASH_VERSION]: NODECLASS_HASH_VERSION,
      [ANNOTATION_NODEPOOL_HASH]: nodePoolTemplateHash(pool),
      [ANNOTATION_NODEPOOL_HASH_VERSION]: NODEPOOL_HASH_VERSION,
      ...(options.annotations ?? {}),
    },
  });
  cluster.putNodeClaim(claim);
  cluster.putNode(makeNode(`node-${name}`));
  return claim;
}

/** A NodeClaim being deleted finishes terminating: its finalizer goes, and with it the object. */
export async function finishTermination(cluster: FakeCluster, name: string): Promise<void> {
  await cluster.patchNodeClaimMetadata(name, { finalizers: [] });
}

/** The NodeClass image changes (drift). */
export function changeImage(cluster: FakeCluster, version: string): void {
  const nc = cluster.nodeClasses.get('eastus2')!;
  cluster.putNodeClass({ ...nc, spec: { ...nc.spec, imageReference: { publisher: 'p', offer: 'o', sku: 's', version } } });
}
