import type {
  AzureFlexNodeClass,
  CachedKind,
  ClusterPort,
  KubeEvent,
  MetadataPatch,
  Node,
  NodeClaim,
  NodeClaimStatusChange,
  NodePool,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  StorageClass,
  Taint,
} from '../ports/cluster.js';
import { ClusterError } from '../ports/cluster.js';
import type { Clock } from '../ports/clock.js';
import type { PodDisruptionBudgetSpec } from './cluster-setup.js';
import { LABEL_NODEPOOL } from '../apis/well-known.js';
import { nodeClaimToWire, toNodeClaim } from '../k8s/resources.js';
import { checkAgainstCrd } from './crd-validation.js';
import { changedNodeClaimStatus } from '../lifecycle/nodeclaim/conditions.js';
import { JournaledMap, PodMap } from './journaled-map.js';

export interface FakeClusterOptions {
  /**
   * How far the controller's informer cache trails the API server: the port's reads
   * (list*, getNodeClaim) show every object as it was this many ms ago, while writes and
   * the world (kubelet, workload, which use the maps) see the present. Default 0. A real
   * informer lags by its watch latency; a lag longer than the provisioning interval is what
   * makes a provisioner that forgets its own creations launch duplicates.
   */
  informerLagMs?: number;
}

/**
 * In-memory API server for the simulator and the fast property tests. It keeps the
 * semantics the controller relies on: finalizers hold a deleted object with a
 * deletionTimestamp, removing the last finalizer deletes it, names are unique, reads
 * return snapshots (objects are replaced on write, never mutated in place). Optionally its
 * reads lag like an informer's cache (FakeClusterOptions.informerLagMs).
 */
export class FakeCluster implements ClusterPort {
  readonly nodeClaims: JournaledMap<NodeClaim>;
  readonly nodes: JournaledMap<Node>;
  readonly pods: PodMap;
  readonly nodePools: JournaledMap<NodePool>;
  readonly nodeClasses: JournaledMap<AzureFlexNodeClass>;
  /** Keyed "namespace/name". */
  readonly persistentVolumeClaims: JournaledMap<PersistentVolumeClaim>;
  readonly persistentVolumes: JournaledMap<PersistentVolume>;
  readonly storageClasses: JournaledMap<StorageClass>;
  readonly events: Array<KubeEvent & { t: number }> = [];
  readonly stats = { nodeClaimsCreated: 0, nodeClaimsCreatedByPool: {} as Record<string, number> };
  private uid = 0;
  private rv = 0;
  private pdbs: PodDisruptionBudgetSpec[] = [];

  constructor(
    private readonly clock: Clock,
    options: FakeClusterOptions = {},
  ) {
    const lag = options.informerLagMs ?? 0;
    const rv = (bump: boolean): number => (bump ? ++this.rv : this.rv);
    this.nodeClaims = new JournaledMap<NodeClaim>().configure(clock, lag, rv);
    this.nodes = new JournaledMap<Node>().configure(clock, lag, rv);
    this.pods = new PodMap().configure(clock, lag, rv);
    this.nodePools = new JournaledMap<NodePool>().configure(clock, lag, rv);
    this.nodeClasses = new JournaledMap<AzureFlexNodeClass>().configure(clock, lag, rv);
    this.persistentVolumeClaims = new JournaledMap<PersistentVolumeClaim>().configure(clock, lag, rv);
    this.persistentVolumes = new JournaledMap<PersistentVolume>().configure(clock, lag, rv);
    this.storageClasses = new JournaledMap<StorageClass>().configure(clock, lag, rv);
  }

  /**
   * A restarted controller's informers start with a fresh LIST, which shows the API server
   * as it is now: the lag applies again only to writes after this.
   */
  relistInformers(): void {
    for (const m of [this.nodeClaims, this.nodes, this.pods, this.nodePools, this.nodeClasses, this.persistentVolumeClaims, this.persistentVolumes, this.storageClasses]) m.relist();
  }

  private iso(): string {
    return new Date(this.clock.now()).toISOString();
  }

  newUid(): string {
    return `uid-${++this.uid}`;
  }

  private stamp<T extends { metadata: { resourceVersion?: string } }>(obj: T): T {
    // A new metadata object: a write's spread copy shares the previous version's, and an
    // object a reader holds must keep the resourceVersion it was read at.
    obj.metadata = { ...obj.metadata, resourceVersion: String(++this.rv) };
    return obj;
  }

  async listNodeClaims(): Promise<NodeClaim[]> {
    return this.nodeClaims.lagged();
  }

  async getNodeClaim(name: string): Promise<NodeClaim | undefined> {
    return this.nodeClaims.laggedGet(name);
  }

  cachedNodeClaim(name: string): NodeClaim | undefined {
    return this.nodeClaims.laggedGet(name);
  }

  seenThrough(kind: CachedKind): string {
    return String(this.store(kind).seenThrough());
  }

  cacheVersion(kind: CachedKind): string {
    return String(this.store(kind).visibleWrites());
  }

  private store(kind: CachedKind): JournaledMap<unknown> {
    return this[kind] as JournaledMap<unknown>;
  }

  async createNodeClaim(nodeClaim: NodeClaim): Promise<NodeClaim> {
    const name = nodeClaim.metadata.name;
    if (this.nodeClaims.has(name)) throw new ClusterError('AlreadyExists', `nodeclaims "${name}" already exists`);
    // The API server checks the body against the NodeClaim CRD (schema, then CEL rules) and
    // fills in its defaults; what the controller reads back is that object.
    const checked = checkAgainstCrd('NodeClaim', nodeClaimToWire(nodeClaim));
    if (!checked.ok) throw new ClusterError('Invalid', `NodeClaim.karpenter.sh "${name}" is invalid: ${checked.problem}`);
    const created = this.stamp({
      ...nodeClaim,
      spec: toNodeClaim(checked.object).spec,
      metadata: { ...nodeClaim.metadata, uid: this.newUid(), creationTimestamp: this.iso() },
    });
    this.nodeClaims.set(name, created);
    this.stats.nodeClaimsCreated++;
    const pool = nodeClaim.metadata.labels[LABEL_NODEPOOL] ?? '';
    this.stats.nodeClaimsCreatedByPool[pool] = (this.stats.nodeClaimsCreatedByPool[pool] ?? 0) + 1;
    return created;
  }

  async patchNodeClaimMetadata(name: string, patch: MetadataPatch): Promise<NodeClaim> {
    const nc = this.nodeClaims.get(name);
    if (!nc) throw new ClusterError('NotFound', `nodeclaims "${name}" not found`);
    const next = this.stamp({ ...nc, metadata: patchMetadata(nc.metadata, patch) });
    if (next.metadata.deletionTimestamp && next.metadata.finalizers.length === 0) {
      this.nodeClaims.delete(name);
    } else {
      this.nodeClaims.set(name, next);
    }
    return next;
  }

  async updateNodeClaimStatus(name: string, status: NodeClaim['status']): Promise<NodeClaim> {
    const nc = this.nodeClaims.get(name);
    if (!nc) throw new ClusterError('NotFound', `nodeclaims "${name}" not found`);
    const next = this.stamp({ ...nc, status });
    this.nodeClaims.set(name, next);
    return next;
  }

  async patchNodeClaimStatus(name: string, change: NodeClaimStatusChange): Promise<NodeClaim> {
    const nc = this.nodeClaims.get(name);
    if (!nc) throw new ClusterError('NotFound', `nodeclaims "${name}" not found`);
    const status = changedNodeClaimStatus(nc.status, change);
    if (status === nc.status) return nc;
    const next = this.stamp({ ...nc, status });
    this.nodeClaims.set(name, next);
    return next;
  }

  async deleteNodeClaim(name: string): Promise<void> {
    const nc = this.nodeClaims.get(name);
    if (!nc) return;
    if (nc.metadata.finalizers.length === 0) {
      this.nodeClaims.delete(name);
      return;
    }
    if (!nc.metadata.deletionTimestamp) {
      this.nodeClaims.set(name, this.stamp({ ...nc, metadata: { ...nc.metadata, deletionTimestamp: this.iso() } }));
    }
  }

  async listNodes(): Promise<Node[]> {
    return this.nodes.lagged();
  }

  async patchNode(name: string, patch: { metadata?: MetadataPatch; unschedulable?: boolean; taints?: Taint[] }): Promise<Node> {
    const node = this.nodes.get(name);
    if (!node) throw new ClusterError('NotFound', `nodes "${name}" not found`);
    const next = this.stamp({
      ...node,
      metadata: patch.metadata ? patchMetadata(node.metadata, patch.metadata) : node.metadata,
      spec: {
        ...node.spec,
        unschedulable: patch.unschedulable ?? node.spec.unschedulable,
        taints: patch.taints ?? node.spec.taints,
      },
    });
    // The write that removes the last finalizer of a deleting Node deletes it, as the API server does.
    if (next.metadata.deletionTimestamp && next.metadata.finalizers.length === 0) await this.removeNode(name);
    else this.nodes.set(name, next);
    return next;
  }

  /** Sets deletionTimestamp while finalizers remain (karpenter.sh/termination); 404 is success. */
  async deleteNode(name: string): Promise<void> {
    const node = this.nodes.get(name);
    if (!node) return;
    if (node.metadata.finalizers.length === 0) return this.removeNode(name);
    if (!node.metadata.deletionTimestamp) this.nodes.set(name, this.stamp({ ...node, metadata: { ...node.metadata, deletionTimestamp: this.iso() } }));
  }

  private async removeNode(name: string): Promise<void> {
    this.nodes.delete(name);
    // Pods on a deleted node are gone with it; their ReplicaSets recreate them as Pending.
    for (const pod of this.pods.boundTo(name)) await this.evictPod(pod.metadata.namespace, pod.metadata.name);
  }

  async listPersistentVolumeClaims(): Promise<PersistentVolumeClaim[]> {
    return this.persistentVolumeClaims.lagged();
  }

  async listPersistentVolumes(): Promise<PersistentVolume[]> {
    return this.persistentVolumes.lagged();
  }

  async listStorageClasses(): Promise<StorageClass[]> {
    return this.storageClasses.lagged();
  }

  /** What a user applies (PVC, PV, StorageClass); nothing in azflex writes them. */
  putStorage(obj: { kind: 'PersistentVolumeClaim'; value: PersistentVolumeClaim } | { kind: 'PersistentVolume'; value: PersistentVolume } | { kind: 'StorageClass'; value: StorageClass }): void {
    const meta = { ...obj.value.metadata, uid: obj.value.metadata.uid || this.newUid(), creationTimestamp: obj.value.metadata.creationTimestamp || this.iso() };
    switch (obj.kind) {
      case 'PersistentVolumeClaim':
        this.persistentVolumeClaims.set(`${obj.value.metadata.namespace}/${obj.value.metadata.name}`, this.stamp({ ...obj.value, metadata: { ...meta, namespace: obj.value.metadata.namespace } }));
        break;
      case 'PersistentVolume':
        this.persistentVolumes.set(obj.value.metadata.name, this.stamp({ ...obj.value, metadata: meta }));
        break;
      case 'StorageClass':
        this.storageClasses.set(obj.value.metadata.name, this.stamp({ ...obj.value, metadata: meta }));
        break;
    }
  }

  async listPods(): Promise<Pod[]> {
    return this.pods.lagged();
  }

  /** Evicted pods go back to Pending, as a ReplicaSet's replacement would; a PodDisruptionBudget may refuse (429). */
  async evictPod(namespace: string, name: string): Promise<boolean> {
    const key = `${namespace}/${name}`;
    const pod = this.pods.get(key);
    if (!pod) return true;
    if (this.pdbs.some((pdb) => pdb.namespace === namespace && selects(pdb, pod) && !this.allowsDisruption(pdb))) return false;
    if (pod.ownerKind === 'DaemonSet') {
      this.pods.delete(key);
      return true;
    }
    const { nodeName: _unbound, ...spec } = pod.spec;
    this.pods.set(key, this.stamp({ ...pod, spec, status: { phase: 'Pending', conditions: [] } }));
    return true;
  }

  async listNodePools(): Promise<NodePool[]> {
    return this.nodePools.lagged();
  }

  async updateNodePoolStatus(name: string, status: NodePool['status']): Promise<void> {
    const np = this.nodePools.get(name);
    // The status subresource of a missing object is 404, as on the API server.
    if (!np) throw new ClusterError('NotFound', `nodepools.karpenter.sh "${name}" not found`);
    this.nodePools.set(name, this.stamp({ ...np, status }));
  }

  async listNodeClasses(): Promise<AzureFlexNodeClass[]> {
    return this.nodeClasses.lagged();
  }

  async patchNodeClassMetadata(name: string, patch: MetadataPatch): Promise<AzureFlexNodeClass> {
    const nc = this.nodeClasses.get(name);
    if (!nc) throw new ClusterError('NotFound', `azureflexnodeclasses "${name}" not found`);
    const next = this.stamp({ ...nc, metadata: patchMetadata(nc.metadata, patch) });
    if (next.metadata.deletionTimestamp && next.metadata.finalizers.length === 0) this.nodeClasses.delete(name);
    else this.nodeClasses.set(name, next);
    return next;
  }

  async updateNodeClassStatus(name: string, status: AzureFlexNodeClass['status']): Promise<void> {
    const nc = this.nodeClasses.get(name);
    if (!nc) throw new ClusterError('NotFound', `azureflexnodeclasses "${name}" not found`);
    this.nodeClasses.set(name, this.stamp({ ...nc, status }));
  }

  async recordEvent(event: KubeEvent): Promise<void> {
    this.events.push({ ...event, t: this.clock.now() });
  }

  // --- world-side helpers (used by the simulated kubelet, scheduler and workload) ---

  setPodDisruptionBudgets(pdbs: readonly PodDisruptionBudgetSpec[]): void {
    this.pdbs = [...pdbs];
  }

  /** The Eviction API's arithmetic: healthy (bound) pods the budget selects against what it requires. */
  private allowsDisruption(pdb: PodDisruptionBudgetSpec): boolean {
    let total = 0;
    let healthy = 0;
    for (const p of this.pods.values()) {
      if (p.metadata.namespace !== pdb.namespace || !selects(pdb, p)) continue;
      total++;
      if (p.spec.nodeName && p.status.phase === 'Running') healthy++;
    }
    const amount = (v: number | string): number => (typeof v === 'number' ? v : Math.ceil((total * Number(v.slice(0, -1))) / 100));
    if (pdb.minAvailable !== undefined) return healthy - 1 >= amount(pdb.minAvailable);
    if (pdb.maxUnavailable !== undefined) return total - healthy + 1 <= amount(pdb.maxUnavailable);
    return true;
  }

  putPod(pod: Pod): void {
    this.pods.set(`${pod.metadata.namespace}/${pod.metadata.name}`, this.stamp(pod));
  }

  removePod(namespace: string, name: string): void {
    this.pods.delete(`${namespace}/${name}`);
  }

  /** A NodeClaim that exists before the controller starts (a world being restored, a starting state). */
  putNodeClaim(nc: NodeClaim): void {
    this.nodeClaims.set(nc.metadata.name, this.stamp(nc));
  }

  putNode(node: Node): void {
    this.nodes.set(node.metadata.name, this.stamp(node));
  }

  putNodePool(np: NodePool): void {
    this.nodePools.set(np.metadata.name, this.stamp(np));
  }

  putNodeClass(nc: AzureFlexNodeClass): void {
    this.nodeClasses.set(nc.metadata.name, this.stamp(nc));
  }
}

function patchMetadata<M extends { labels: Record<string, string>; annotations: Record<string, string>; finalizers: string[] }>(
  meta: M,
  patch: MetadataPatch,
): M {
  return {
    ...meta,
    labels: patch.labels ? mergeMap(meta.labels, patch.labels) : meta.labels,
    annotations: patch.annotations ? mergeMap(meta.annotations, patch.annotations) : meta.annotations,
    finalizers: patch.finalizers ?? meta.finalizers,
  };
}

function mergeMap(base: Record<string, string>, patch: Record<string, string | null>): Record<string, string> {
  const out = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

function selects(pdb: PodDisruptionBudgetSpec, pod: Pod): boolean {
  const labels = pod.metadata.labels;
  for (const [k, v] of Object.entries(pdb.matchLabels)) if (labels[k] !== v) return false;
  for (const e of pdb.matchExpressions) {
    const has = Object.hasOwn(labels, e.key);
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
    if (e.operator === 'In' && !(has && e.values.includes(labels[e.key]!))) return false;
    if (e.operator === 'NotIn' && has && e.values.includes(labels[e.key]!)) return false;
  }
  return true;
}
