/** A minimal in-memory ClusterPort for provisioning and disruption tests. */
import {
  ClusterError, type AzureFlexNodeClass, type ClusterPort, type KubeEvent, type MetadataPatch, type Node, type NodeClaim,
  type NodePool, type Pod, type Taint,
} from '../../src/ports/cluster.js';

function applyMetadataPatch<T extends { labels: Record<string, string>; annotations: Record<string, string>; finalizers: string[] }>(meta: T, patch: MetadataPatch): void {
  for (const [k, v] of Object.entries(patch.labels ?? {})) {
    if (v === null) delete meta.labels[k];
    else meta.labels[k] = v;
  }
  for (const [k, v] of Object.entries(patch.annotations ?? {})) {
    if (v === null) delete meta.annotations[k];
    else meta.annotations[k] = v;
  }
  if (patch.finalizers) meta.finalizers = [...patch.finalizers];
}

export class FakeCluster implements ClusterPort {
  nodeClaims = new Map<string, NodeClaim>();
  nodes = new Map<string, Node>();
  pods: Pod[] = [];
  nodePools: NodePool[] = [];
  nodeClasses: AzureFlexNodeClass[] = [];
  events: KubeEvent[] = [];
  evictions: string[] = [];
  /** Pods ("ns/name") whose eviction a PodDisruptionBudget refuses. */
  pdbBlocked = new Set<string>();
  nodePoolStatusUpdates: Array<{ name: string; status: NodePool['status'] }> = [];
  now = (): string => '2026-01-01T00:00:00.000Z';
  failCreate: ClusterError | undefined;

  async listNodeClaims(): Promise<NodeClaim[]> { return [...this.nodeClaims.values()].map((c) => structuredClone(c)); }
  async getNodeClaim(name: string): Promise<NodeClaim | undefined> { const c = this.nodeClaims.get(name); return c && structuredClone(c); }
  async createNodeClaim(nodeClaim: NodeClaim): Promise<NodeClaim> {
    if (this.failCreate) { const e = this.failCreate; this.failCreate = undefined; throw e; }
    if (this.nodeClaims.has(nodeClaim.metadata.name)) throw new ClusterError('AlreadyExists', nodeClaim.metadata.name);
    const stored = structuredClone(nodeClaim);
    stored.metadata.uid = `uid-${nodeClaim.metadata.name}`;
    this.nodeClaims.set(stored.metadata.name, stored);
    return structuredClone(stored);
  }
  async patchNodeClaimMetadata(name: string, patch: MetadataPatch): Promise<NodeClaim> {
    const c = this.nodeClaims.get(name);
    if (!c) throw new ClusterError('NotFound', name);
    applyMetadataPatch(c.metadata, patch);
    return structuredClone(c);
  }
  async updateNodeClaimStatus(name: string, status: NodeClaim['status']): Promise<NodeClaim> {
    const c = this.nodeClaims.get(name);
    if (!c) throw new ClusterError('NotFound', name);
    c.status = structuredClone(status);
    return structuredClone(c);
  }
  async deleteNodeClaim(name: string): Promise<void> {
    const c = this.nodeClaims.get(name);
    if (!c) return;
    if (c.metadata.finalizers.length === 0) this.nodeClaims.delete(name);
    else c.metadata.deletionTimestamp ??= this.now();
  }
  async listNodes(): Promise<Node[]> { return [...this.nodes.values()].map((n) => structuredClone(n)); }
  async patchNode(name: string, patch: { metadata?: MetadataPatch; unschedulable?: boolean; taints?: Taint[] }): Promise<Node> {
    const n = this.nodes.get(name);
    if (!n) throw new ClusterError('NotFound', name);
    if (patch.metadata) applyMetadataPatch(n.metadata, patch.metadata);
    if (patch.unschedulable !== undefined) n.spec.unschedulable = patch.unschedulable;
    if (patch.taints) n.spec.taints = structuredClone(patch.taints);
    return structuredClone(n);
  }
  async deleteNode(name: string): Promise<void> { this.nodes.delete(name); }
  async listPods(): Promise<Pod[]> { return this.pods.map((p) => structuredClone(p)); }
  async evictPod(namespace: string, name: string): Promise<boolean> {
    const key = `${namespace}/${name}`;
    if (this.pdbBlocked.has(key)) return false;
    this.evictions.push(key);
    const pod = this.pods.find((p) => p.metadata.namespace === namespace && p.metadata.name === name);
    if (pod) pod.metadata.deletionTimestamp = this.now();
    return true;
  }
  async listNodePools(): Promise<NodePool[]> { return this.nodePools.map((p) => structuredClone(p)); }
  async updateNodePoolStatus(name: string, status: NodePool['status']): Promise<void> {
    const p = this.nodePools.find((x) => x.metadata.name === name);
    if (!p) throw new ClusterError('NotFound', name);
    p.status = structuredClone(status);
    this.nodePoolStatusUpdates.push({ name, status: structuredClone(status) });
  }
  async listNodeClasses(): Promise<AzureFlexNodeClass[]> { return this.nodeClasses.map((c) => structuredClone(c)); }
  async patchNodeClassMetadata(name: string, patch: MetadataPatch): Promise<AzureFlexNodeClass> {
    const c = this.nodeClasses.find((x) => x.metadata.name === name);
    if (!c) throw new ClusterError('NotFound', name);
    applyMetadataPatch(c.metadata, patch);
    return structuredClone(c);
  }
  async updateNodeClassStatus(name: string, status: AzureFlexNodeClass['status']): Promise<void> {
    const c = this.nodeClasses.find((x) => x.metadata.name === name);
    if (c) c.status = structuredClone(status);
  }
  async recordEvent(event: KubeEvent): Promise<void> { this.events.push(structuredClone(event)); }
}

export const silentLog = {
  debug: (): void => {}, info: (): void => {}, warn: (): void => {}, error: (): void => {},
};

/** Deterministic Random for suffixes. */
export function seqRandom(seed = 1): { next(): number } {
  let s = seed;
  return { next: () => ((s = (s * 16807) % 2147483647) - 1) / 2147483646 };
}
