import type { EventsV1Event } from '@kubernetes/client-node';
import type { Clock } from '../ports/clock.js';
import { redactString } from '../log/redact.js';
import {
  ClusterError,
  type AzureFlexNodeClass,
  type CachedKind,
  type ClusterPort,
  type KubeEvent,
  type MetadataPatch,
  type Node,
  type NodeClaim,
  type NodeClaimStatusChange,
  type NodePool,
  type ObjectMeta,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type Pod,
  type StorageClass,
  type Taint,
} from '../ports/cluster.js';
import { ResourceCache, type RawObject } from './cache.js';
import { changedNodeClaimStatus } from '../lifecycle/nodeclaim/conditions.js';
import { KubeApiError, PatchStrategy, type KubeClient } from './client.js';
import {
  RESOURCES,
  collectionPath,
  kindApi,
  nodeClaimToWire,
  statusToWire,
  toNode,
  toNodeClaim,
  toNodeClaimStatus,
  toNodeClass,
  toNodePool,
  toPersistentVolume,
  toPersistentVolumeClaim,
  toStorageClass,
  type ResourceDef,
} from './resources.js';
import { toPod } from './pod.js';

/**
 * ClusterPort on a real API server through @kubernetes/client-node. Reads come from
 * list+watch caches (client-node's ListWatch, never a GET per call); writes are typed API
 * calls whose responses are overlaid on the cache so a reconcile that reads right after its
 * own write sees it.
 *
 * Concurrency model:
 *  - labels/annotations: JSON merge patch per key, no precondition (keys are independent);
 *  - finalizers and node taints: the port hands us a whole list computed from our cache, so
 *    we turn it into a delta (added/removed) against that cache and send the result with a
 *    resourceVersion precondition; on 409 we re-read and re-apply the delta, never
 *    clobbering another controller's finalizer or taint;
 *  - status: the caller owns status and passes it whole; we send it with a resourceVersion
 *    precondition and on 409 re-read and retry, refusing if the object was recreated (new
 *    UID) in between so a stale status never lands on a different object.
 */

const MERGE = { patch: PatchStrategy.MergePatch };
const MAX_CONFLICT_RETRIES = 8;

export const EVENT_API_VERSIONS: Record<string, string> = {
  NodeClaim: 'karpenter.sh/v1',
  NodePool: 'karpenter.sh/v1',
  AzureFlexNodeClass: 'flex.aks.azure.com/v1alpha1',
  Node: 'v1',
  Pod: 'v1',
};

export interface KubeClusterOptions {
  client: KubeClient;
  clock: Clock;
  /** events.k8s.io reportingController. */
  reportingController?: string;
  /** events.k8s.io reportingInstance: the pod name in production. */
  reportingInstance: string;
  watchTimeoutSeconds?: number;
  onError?: (err: unknown) => void;
}

/**
 * A pod as the cache keeps it: only the conditions azflex reads (PodScheduled for
 * provisioning, Ready for karpenter_pods_state), where a Running pod carries five; ~300 bytes
 * a pod.
 */
export function toCachedPod(raw: RawObject): Pod {
  const pod = toPod(raw);
  pod.status.conditions = pod.status.conditions.filter((c) => c.type === 'PodScheduled' || c.type === 'Ready');
  return pod;
}

type Kind = keyof Informers;

interface Informers {
  nodeClaims: ResourceCache<NodeClaim>;
  nodes: ResourceCache<Node>;
  pods: ResourceCache<Pod>;
  nodePools: ResourceCache<NodePool>;
  nodeClasses: ResourceCache<AzureFlexNodeClass>;
  persistentVolumeClaims: ResourceCache<PersistentVolumeClaim>;
  persistentVolumes: ResourceCache<PersistentVolume>;
  storageClasses: ResourceCache<StorageClass>;
}

export class KubeCluster implements ClusterPort {
  readonly informers: Informers;
  private started = false;

  constructor(private readonly o: KubeClusterOptions) {
    const mk = <T>(def: ResourceDef, convert: (raw: RawObject) => T): ResourceCache<T> => {
      const api = kindApi(o.client, def);
      return new ResourceCache<T>({
        client: o.client,
        clock: o.clock,
        path: collectionPath(def),
        listPage: (cont) => api.listPage(cont),
        convert,
        ...(o.watchTimeoutSeconds !== undefined ? { watchTimeoutSeconds: o.watchTimeoutSeconds } : {}),
        ...(o.onError ? { onError: o.onError } : {}),
      });
    };
    this.informers = {
      nodeClaims: mk(RESOURCES.nodeClaims, toNodeClaim),
      nodes: mk(RESOURCES.nodes, toNode),
      pods: mk(RESOURCES.pods, toCachedPod),
      nodePools: mk(RESOURCES.nodePools, toNodePool),
      nodeClasses: mk(RESOURCES.nodeClasses, toNodeClass),
      persistentVolumeClaims: mk(RESOURCES.persistentVolumeClaims, toPersistentVolumeClaim),
      persistentVolumes: mk(RESOURCES.persistentVolumes, toPersistentVolume),
      storageClasses: mk(RESOURCES.storageClasses, toStorageClass),
    };
  }

  start(): void {
    this.started = true;
    for (const inf of Object.values(this.informers) as Array<ResourceCache<unknown>>) inf.start();
  }

  async waitForSync(): Promise<void> {
    await Promise.all((Object.values(this.informers) as Array<ResourceCache<unknown>>).map((i) => i.waitForSync()));
  }

  async stop(): Promise<void> {
    this.started = false;
    await Promise.all((Object.values(this.informers) as Array<ResourceCache<unknown>>).map((i) => i.stop()));
  }

  /** Every cache running and heard from the API server within `staleMs` (for /healthz). */
  staleInformers(staleMs: number): string[] {
    const now = this.o.clock.now();
    return (Object.entries(this.informers) as Array<[string, ResourceCache<unknown>]>)
      .filter(([, c]) => !c.isRunning() || now - c.lastProgressAt > staleMs)
      .map(([name]) => name);
  }

  private async synced<T>(kind: Kind): Promise<ResourceCache<T>> {
    if (!this.started) throw new ClusterError('ServerError', 'KubeCluster.start() was not called; reads are served from informers');
    const inf = this.informers[kind] as unknown as ResourceCache<T>;
    await inf.waitForSync();
    return inf;
  }

  /**
   * The cache's objects themselves, not copies, as the simulator's FakeCluster hands out its
   * own: the port's readers never change what they read (writes go through the port, and the
   * cache replaces an object on change). Copying every list was, at 10,000 pods, a 10,000-pod
   * clone per controller pass and one more copy of every pod held by each controller's memo.
   */
  private async cached<T>(kind: Kind): Promise<T[]> {
    return (await this.synced<T>(kind)).list();
  }

  seenThrough(kind: CachedKind): string | undefined {
    const inf = this.informers[kind] as unknown as ResourceCache<unknown>;
    return inf.hasSynced() ? inf.lastResourceVersion() : undefined;
  }

  cacheVersion(kind: CachedKind): string | undefined {
    return (this.informers[kind] as unknown as ResourceCache<unknown>).viewVersion();
  }

  // --- NodeClaims ---------------------------------------------------------------------------

  listNodeClaims(): Promise<NodeClaim[]> {
    return this.cached<NodeClaim>('nodeClaims');
  }


  cachedNodeClaim(name: string): NodeClaim | undefined {
    return this.informers.nodeClaims.get(name);
  }

  async getNodeClaim(name: string): Promise<NodeClaim | undefined> {
    return (await this.synced<NodeClaim>('nodeClaims')).get(name);
  }

  async createNodeClaim(nodeClaim: NodeClaim): Promise<NodeClaim> {
    const raw = await kindApi(this.o.client, RESOURCES.nodeClaims).create(nodeClaimToWire(nodeClaim));
    this.informers.nodeClaims.noteWrite(raw);
    return toNodeClaim(raw);
  }

  async patchNodeClaimMetadata(name: string, patch: MetadataPatch): Promise<NodeClaim> {
    const raw = await this.patchMetadata(RESOURCES.nodeClaims, this.informers.nodeClaims, name, patch);
    return toNodeClaim(raw);
  }

  async updateNodeClaimStatus(name: string, status: NodeClaim['status']): Promise<NodeClaim> {
    return toNodeClaim(await this.patchStatus(RESOURCES.nodeClaims, this.informers.nodeClaims, name, statusToWire(status)));
  }

  async patchNodeClaimStatus(name: string, change: NodeClaimStatusChange): Promise<NodeClaim> {
    // Applied to the status each attempt starts from (the cache's, then the server's after a
    // conflict), so a condition another writer put meanwhile is kept; nothing to change, no call.
    const raw = await this.patchStatus(RESOURCES.nodeClaims, this.informers.nodeClaims, name, (current) => {
      const status = toNodeClaimStatus(current);
      const next = changedNodeClaimStatus(status, change);
      return next === status ? undefined : statusToWire(next);
    });
    if (raw) return toNodeClaim(raw);
    const current = await this.getNodeClaim(name);
    if (!current) throw new ClusterError('NotFound', `nodeclaims ${name}`);
    return current;
  }

  async deleteNodeClaim(name: string): Promise<void> {
    await this.deleteObject(RESOURCES.nodeClaims, this.informers.nodeClaims, name);
  }

  // --- Nodes --------------------------------------------------------------------------------

  listNodes(): Promise<Node[]> {
    return this.cached<Node>('nodes');
  }

  async patchNode(name: string, patch: { metadata?: MetadataPatch; unschedulable?: boolean; taints?: Taint[] }): Promise<Node> {
    const base = this.informers.nodes.get(name);
    const taintDelta = patch.taints ? delta(base?.spec.taints ?? [], patch.taints, taintKey) : undefined;
    const raw = await this.patchMetadata(RESOURCES.nodes, this.informers.nodes, name, patch.metadata ?? {}, (fresh) => {
      const spec: Record<string, unknown> = {};
      if (patch.unschedulable !== undefined) spec.unschedulable = patch.unschedulable;
      if (taintDelta && fresh) spec.taints = taintDelta.applyTo(toNode(fresh).spec.taints);
      else if (patch.taints) spec.taints = patch.taints;
      return Object.keys(spec).length ? { spec } : {};
    });
    return toNode(raw);
  }

  async deleteNode(name: string): Promise<void> {
    await this.deleteObject(RESOURCES.nodes, this.informers.nodes, name);
  }

  // --- Pods ---------------------------------------------------------------------------------

  listPods(): Promise<Pod[]> {
    return this.cached<Pod>('pods');
  }

  listPersistentVolumeClaims(): Promise<PersistentVolumeClaim[]> {
    return this.cached<PersistentVolumeClaim>('persistentVolumeClaims');
  }

  listPersistentVolumes(): Promise<PersistentVolume[]> {
    return this.cached<PersistentVolume>('persistentVolumes');
  }

  listStorageClasses(): Promise<StorageClass[]> {
    return this.cached<StorageClass>('storageClasses');
  }

  async evictPod(namespace: string, name: string): Promise<boolean> {
    try {
      await this.o.client.call(`evict pod ${namespace}/${name}`, (opts) =>
        this.o.client.core.createNamespacedPodEviction({ name, namespace, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } } }, opts),
      );
      return true;
    } catch (e) {
      // 429: a PodDisruptionBudget refuses right now; the caller retries later.
      if (e instanceof KubeApiError && e.code === 429) return false;
      // Already gone is what eviction wanted.
      if (e instanceof KubeApiError && e.code === 404) return true;
      throw e;
    }
  }

  // --- NodePools and NodeClasses ------------------------------------------------------------

  listNodePools(): Promise<NodePool[]> {
    return this.cached<NodePool>('nodePools');
  }

  async updateNodePoolStatus(name: string, status: NodePool['status']): Promise<void> {
    await this.patchStatus(RESOURCES.nodePools, this.informers.nodePools, name, statusToWire(status));
  }

  listNodeClasses(): Promise<AzureFlexNodeClass[]> {
    return this.cached<AzureFlexNodeClass>('nodeClasses');
  }

  async patchNodeClassMetadata(name: string, patch: MetadataPatch): Promise<AzureFlexNodeClass> {
    return toNodeClass(await this.patchMetadata(RESOURCES.nodeClasses, this.informers.nodeClasses, name, patch));
  }

  async updateNodeClassStatus(name: string, status: AzureFlexNodeClass['status']): Promise<void> {
    await this.patchStatus(RESOURCES.nodeClasses, this.informers.nodeClasses, name, statusToWire(status));
  }

  // --- Events -------------------------------------------------------------------------------

  async recordEvent(event: KubeEvent): Promise<void> {
    const io = event.involvedObject;
    // events.k8s.io requires cluster-scoped subjects' events to live in "default".
    const namespace = io.namespace ?? 'default';
    const regarding: Record<string, string> = { kind: io.kind, name: io.name };
    const apiVersion = EVENT_API_VERSIONS[io.kind];
    if (apiVersion) regarding.apiVersion = apiVersion;
    if (io.namespace) regarding.namespace = io.namespace;
    if (io.uid) regarding.uid = io.uid;
    const body = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      // client-go names events "<object>.<hex time>"; generateName only accepts a trailing
      // "-" (the server appends a random suffix), which also avoids name collisions.
      metadata: { generateName: `${io.name.slice(0, 200)}-`, namespace },
      eventTime: microTime(this.o.clock.now()),
      reportingController: this.o.reportingController ?? 'flex.aks.azure.com/azflex',
      reportingInstance: this.o.reportingInstance,
      action: event.reason,
      reason: event.reason,
      // Every Event any controller writes passes here: its text is scrubbed like a log line
      // (Events are readable far more widely than the controller's logs).
      note: redactString(event.message).slice(0, 1024),
      type: event.type,
      regarding,
    };
    try {
      await this.o.client.call(`create event in ${namespace}`, (opts) =>
        this.o.client.events.createNamespacedEvent({ namespace, body: body as unknown as EventsV1Event }, opts),
      );
    } catch (e) {
      // Events are best effort (as in client-go's recorder): a failed event must not fail
      // the reconcile that emitted it. Surface it to the error sink instead.
      this.o.onError?.(e);
    }
  }

  // --- shared write paths -------------------------------------------------------------------

  private async fetch(def: ResourceDef, name: string): Promise<RawObject | undefined> {
    try {
      return await kindApi(this.o.client, def).get(name);
    } catch (e) {
      if (e instanceof ClusterError && e.reason === 'NotFound') return undefined;
      throw e;
    }
  }

  /**
   * Merge-patches metadata (plus optional extra top-level fields). Finalizer changes and
   * anything `extra` builds from the fresh object are sent with a resourceVersion
   * precondition and retried on conflict.
   */
  private async patchMetadata<T extends { metadata: ObjectMeta }>(
    def: ResourceDef,
    inf: ResourceCache<T>,
    name: string,
    patch: MetadataPatch,
    extra?: (fresh: RawObject | undefined) => Record<string, unknown>,
  ): Promise<RawObject> {
    const cachedObj = inf.get(name);
    const finDelta = patch.finalizers ? delta(cachedObj?.metadata.finalizers ?? [], patch.finalizers, (f) => f) : undefined;
    const needsPrecondition = finDelta !== undefined || extra !== undefined;
    let fresh: RawObject | undefined;
    if (needsPrecondition) {
      fresh = cachedObj ? undefined : await this.fetch(def, name);
      if (!cachedObj && !fresh) throw new ClusterError('NotFound', `${def.plural} ${name}`);
    }
    for (let attempt = 0; ; attempt++) {
      const meta: Record<string, unknown> = {};
      if (patch.labels) meta.labels = patch.labels;
      if (patch.annotations) meta.annotations = patch.annotations;
      const current = fresh ? toMetaLite(fresh) : cachedObj?.metadata;
      if (finDelta && current) meta.finalizers = finDelta.applyTo(current.finalizers);
      if (needsPrecondition && current?.resourceVersion) meta.resourceVersion = current.resourceVersion;
      const body: Record<string, unknown> = { ...(extra ? extra(fresh) : {}) };
      if (Object.keys(meta).length) body.metadata = meta;
      try {
        const raw = await kindApi(this.o.client, def).patch(name, body, MERGE);
        inf.noteWrite(raw);
        return raw;
      } catch (e) {
        if (!(e instanceof ClusterError) || e.reason !== 'Conflict' || attempt >= MAX_CONFLICT_RETRIES) throw e;
        fresh = await this.fetch(def, name);
        if (!fresh) throw new ClusterError('NotFound', `${def.plural} ${name}`);
      }
    }
  }

  /**
   * Sends a status with a resourceVersion precondition; on 409 re-reads and sends again. `status`
   * is either the whole status (the caller owns it) or worked out from the object each attempt
   * starts from (undefined: nothing to write; resolves undefined without a call).
   */
  private async patchStatus<T extends { metadata: ObjectMeta; status: object }>(
    def: ResourceDef,
    inf: ResourceCache<T>,
    name: string,
    status: Record<string, unknown>,
  ): Promise<RawObject>;
  private async patchStatus<T extends { metadata: ObjectMeta; status: object }>(
    def: ResourceDef,
    inf: ResourceCache<T>,
    name: string,
    status: (current: Record<string, unknown>) => Record<string, unknown> | undefined,
  ): Promise<RawObject | undefined>;
  private async patchStatus<T extends { metadata: ObjectMeta; status: object }>(
    def: ResourceDef,
    inf: ResourceCache<T>,
    name: string,
    status: Record<string, unknown> | ((current: Record<string, unknown>) => Record<string, unknown> | undefined),
  ): Promise<RawObject | undefined> {
    const cachedObj = inf.get(name);
    let uid = cachedObj?.metadata.uid;
    let rv = cachedObj?.metadata.resourceVersion;
    let oldStatus: Record<string, unknown> = (cachedObj?.status as Record<string, unknown> | undefined) ?? {};
    if (!cachedObj) {
      const fresh = await this.fetch(def, name);
      if (!fresh) throw new ClusterError('NotFound', `${def.plural} ${name}`);
      ({ uid, rv, oldStatus } = statusBase(fresh));
    }
    for (let attempt = 0; ; attempt++) {
      const wanted = typeof status === 'function' ? status(oldStatus) : status;
      if (wanted === undefined) return undefined;
      // A merge patch only adds/replaces; fields the new status omits must be nulled.
      const body: Record<string, unknown> = { ...wanted };
      for (const k of Object.keys(oldStatus)) if (!(k in body)) body[k] = null;
      try {
        const raw = await kindApi(this.o.client, def).patchStatus(name, { metadata: { resourceVersion: rv }, status: body }, MERGE);
        inf.noteWrite(raw);
        return raw;
      } catch (e) {
        if (!(e instanceof ClusterError) || e.reason !== 'Conflict' || attempt >= MAX_CONFLICT_RETRIES) throw e;
        const fresh = await this.fetch(def, name);
        if (!fresh) throw new ClusterError('NotFound', `${def.plural} ${name}`);
        const next = statusBase(fresh);
        if (uid && next.uid !== uid) throw new ClusterError('NotFound', `${def.plural} ${name} was recreated (uid ${uid} -> ${next.uid})`);
        ({ rv, oldStatus } = next);
      }
    }
  }

  private async deleteObject<T>(def: ResourceDef, inf: ResourceCache<T>, name: string): Promise<void> {
    try {
      const raw = await kindApi(this.o.client, def).delete(name);
      // With finalizers left the server returns the object (deletionTimestamp set).
      if (raw && raw.kind !== 'Status' && raw.metadata) inf.noteWrite(raw);
    } catch (e) {
      if (e instanceof ClusterError && e.reason === 'NotFound') return;
      throw e;
    }
  }
}

function toMetaLite(raw: RawObject): { finalizers: string[]; resourceVersion?: string } {
  const m = raw.metadata as { finalizers?: unknown; resourceVersion?: string } | undefined;
  const out: { finalizers: string[]; resourceVersion?: string } = {
    finalizers: Array.isArray(m?.finalizers) ? m.finalizers.filter((f): f is string => typeof f === 'string') : [],
  };
  if (m?.resourceVersion) out.resourceVersion = m.resourceVersion;
  return out;
}

function statusBase(raw: RawObject): { uid: string | undefined; rv: string | undefined; oldStatus: Record<string, unknown> } {
  const m = (raw.metadata ?? {}) as { uid?: string; resourceVersion?: string };
  const s = raw.status;
  return {
    uid: m.uid,
    rv: m.resourceVersion,
    oldStatus: typeof s === 'object' && s !== null ? (s as Record<string, unknown>) : {},
  };
}

/** What a caller changed in a list, replayable onto a newer version of that list. */
export interface ListDelta<T> {
  added: T[];
  removed: Set<string>;
  applyTo(current: T[]): T[];
}

export function delta<T>(before: T[], after: T[], key: (t: T) => string): ListDelta<T> {
  const beforeKeys = new Set(before.map(key));
  const afterKeys = new Set(after.map(key));
  const added = after.filter((t) => !beforeKeys.has(key(t)));
  const removed = new Set([...beforeKeys].filter((k) => !afterKeys.has(k)));
  return {
    added,
    removed,
    applyTo(current: T[]): T[] {
      const kept = current.filter((t) => !removed.has(key(t)));
      const keptKeys = new Set(kept.map(key));
      return [...kept, ...added.filter((t) => !keptKeys.has(key(t)))];
    },
  };
}

function taintKey(t: Taint): string {
  return `${t.key}:${t.effect}`;
}

/** metav1.MicroTime wire format. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

