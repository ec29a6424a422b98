import type {
  AzureFlexNodeClass,
  Condition,
  PersistentVolume,
  PersistentVolumeClaim,
  StorageClass,
  Node,
  NodeClaim,
  NodePool,
  ObjectMeta,
  Taint,
} from '../ports/cluster.js';
import type { KubernetesListObject, KubernetesObject, V1Node } from '@kubernetes/client-node';
import type { RawObject } from './cache.js';
import type { CallOptions, KubeClient } from './client.js';
import { NODECLASS_GROUP } from '../apis/well-known.js';
import { arr, obj, setOpt, sharedStr, str, strMap, time } from './wire.js';

/**
 * Where each kind lives on the API server, and the lossy-but-total mapping from raw JSON to
 * the port's types. The mapping fills the defaults the port promises (empty maps/lists),
 * because the API server omits empty fields.
 */

export interface ResourceDef {
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
}

export const RESOURCES = {
  nodeClaims: { group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims', namespaced: false },
  nodePools: { group: 'karpenter.sh', version: 'v1', plural: 'nodepools', namespaced: false },
  nodeClasses: { group: NODECLASS_GROUP, version: 'v1alpha1', plural: 'azureflexnodeclasses', namespaced: false },
  nodes: { group: '', version: 'v1', plural: 'nodes', namespaced: false },
  pods: { group: '', version: 'v1', plural: 'pods', namespaced: true },
  persistentVolumeClaims: { group: '', version: 'v1', plural: 'persistentvolumeclaims', namespaced: true },
  persistentVolumes: { group: '', version: 'v1', plural: 'persistentvolumes', namespaced: false },
  storageClasses: { group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses', namespaced: false },
  leases: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true },
  events: { group: 'events.k8s.io', version: 'v1', plural: 'events', namespaced: true },
} as const satisfies Record<string, ResourceDef>;


/** Collection path; for namespaced kinds without a namespace, the all-namespaces path. */
export function collectionPath(def: ResourceDef, namespace?: string): string {
  const base = def.group ? `/apis/${def.group}/${def.version}` : `/api/${def.version}`;
  return def.namespaced && namespace ? `${base}/namespaces/${namespace}/${def.plural}` : `${base}/${def.plural}`;
}

export function objectPath(def: ResourceDef, name: string, namespace?: string, sub?: string): string {
  return `${collectionPath(def, namespace)}/${encodeURIComponent(name)}${sub ? `/${sub}` : ''}`;
}

export function apiVersionOf(def: ResourceDef): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

export function toMeta(raw: unknown): ObjectMeta {
  const m = obj(raw);
  const meta: ObjectMeta = {
    name: str(m.name) ?? '',
    uid: str(m.uid) ?? '',
    labels: strMap(m.labels),
    annotations: strMap(m.annotations),
    finalizers: arr(m.finalizers).filter((f): f is string => typeof f === 'string'),
    creationTimestamp: time(m.creationTimestamp) ?? '',
  };
  setOpt(meta, 'namespace', sharedStr(m.namespace) || undefined);
  setOpt(meta, 'resourceVersion', str(m.resourceVersion) || undefined);
  setOpt(meta, 'deletionTimestamp', time(m.deletionTimestamp) || undefined);
  return meta;
}

export function toConditions(v: unknown): Condition[] {
  return arr(v).map((c) => {
    const o = obj(c);
    const status = str(o.status);
    return {
      type: sharedStr(o.type) ?? '',
      status: status === 'True' || status === 'False' ? status : 'Unknown',
      reason: sharedStr(o.reason) ?? '',
      message: sharedStr(o.message) ?? '',
      lastTransitionTime: time(o.lastTransitionTime) ?? '',
    };
  });
}

function toTaints(v: unknown): Taint[] {
  return arr(v).map((t) => {
    const o = obj(t);
    const effect = str(o.effect);
    const taint: Taint = {
      key: str(o.key) ?? '',
      effect: effect === 'PreferNoSchedule' || effect === 'NoExecute' ? effect : 'NoSchedule',
    };
    const value = str(o.value);
    if (value !== undefined) taint.value = value;
    return taint;
  });
}

export function toRequirements(v: unknown): NodeClaim['spec']['requirements'] {
  return arr(v).map((r) => {
    const o = obj(r);
    const req: NodeClaim['spec']['requirements'][number] = {
      key: str(o.key) ?? '',
      operator: (str(o.operator) ?? 'In') as NodeClaim['spec']['requirements'][number]['operator'],
    };
    if (Array.isArray(o.values)) req.values = o.values.map(String);
    if (typeof o.minValues === 'number') req.minValues = o.minValues;
    return req;
  });
}

function toNodeClassRef(v: unknown): NodeClaim['spec']['nodeClassRef'] {
  const o = obj(v);
  return { group: str(o.group) ?? '', kind: str(o.kind) ?? '', name: str(o.name) ?? '' };
}


export function toNodeClaim(raw: RawObject): NodeClaim {
  const spec = obj(raw.spec);
  const nc: NodeClaim = {
    metadata: toMeta(raw.metadata),
    spec: {
      nodeClassRef: toNodeClassRef(spec.nodeClassRef),
      requirements: toRequirements(spec.requirements),
      resources: { requests: strMap(obj(spec.resources).requests) },
      taints: toTaints(spec.taints),
      startupTaints: toTaints(spec.startupTaints),
    },
    status: toNodeClaimStatus(raw.status),
  };
  setOpt(nc.spec, 'expireAfter', str(spec.expireAfter));
  setOpt(nc.spec, 'terminationGracePeriod', str(spec.terminationGracePeriod));
  const owners = arr(obj(raw.metadata).ownerReferences).map(obj);
  if (owners.length > 0) nc.metadata.ownerReferences = owners.map((o) => ({ apiVersion: str(o.apiVersion) ?? '', kind: str(o.kind) ?? '', name: str(o.name) ?? '', uid: str(o.uid) ?? '', ...(o.blockOwnerDeletion === true ? { blockOwnerDeletion: true } : {}) }));
  return nc;
}

export function toNodeClaimStatus(raw: unknown): NodeClaim['status'] {
  const status = obj(raw);
  const out: NodeClaim['status'] = { conditions: toConditions(status.conditions) };
  setOpt(out, 'providerID', str(status.providerID));
  setOpt(out, 'nodeName', str(status.nodeName));
  setOpt(out, 'imageID', str(status.imageID));
  if (status.capacity !== undefined) out.capacity = strMap(status.capacity);
  if (status.allocatable !== undefined) out.allocatable = strMap(status.allocatable);
  setOpt(out, 'lastPodEventTime', str(status.lastPodEventTime));
  return out;
}

export function toNode(raw: RawObject): Node {
  const spec = obj(raw.spec);
  const status = obj(raw.status);
  const node: Node = {
    metadata: toMeta(raw.metadata),
    spec: { taints: toTaints(spec.taints) },
    status: { capacity: strMap(status.capacity), allocatable: strMap(status.allocatable), conditions: toConditions(status.conditions) },
  };
  setOpt(node.spec, 'providerID', str(spec.providerID));
  setOpt(node.status, 'phase', str(status.phase));
  if (typeof spec.unschedulable === 'boolean') node.spec.unschedulable = spec.unschedulable;
  return node;
}

export function toPersistentVolumeClaim(raw: RawObject): PersistentVolumeClaim {
  const spec = obj(raw.spec);
  const phase = str(obj(raw.status).phase);
  const claim: PersistentVolumeClaim = {
    metadata: { ...toMeta(raw.metadata), namespace: str(obj(raw.metadata).namespace) ?? '' },
    spec: {},
    status: phase === 'Pending' || phase === 'Bound' || phase === 'Lost' ? { phase } : {},
  };
  setOpt(claim.spec, 'storageClassName', str(spec.storageClassName));
  setOpt(claim.spec, 'volumeName', str(spec.volumeName) || undefined);
  return claim;
}

export function toPersistentVolume(raw: RawObject): PersistentVolume {
  const spec = obj(raw.spec);
  const required = obj(obj(spec.nodeAffinity).required);
  const pv: PersistentVolume = { metadata: toMeta(raw.metadata), spec: {} };
  setOpt(pv.spec, 'storageClassName', str(spec.storageClassName));
  if (Array.isArray(required.nodeSelectorTerms)) {
    pv.spec.nodeAffinity = { required: { nodeSelectorTerms: required.nodeSelectorTerms.map((t) => ({ matchExpressions: toRequirements(obj(t).matchExpressions) })) } };
  }
  if (spec.local !== undefined) pv.spec.local = true;
  if (spec.hostPath !== undefined) pv.spec.hostPath = true;
  return pv;
}

export function toStorageClass(raw: RawObject): StorageClass {
  const mode = str(raw.volumeBindingMode);
  const sc: StorageClass = { metadata: toMeta(raw.metadata), provisioner: str(raw.provisioner) ?? '' };
  if (mode === 'Immediate' || mode === 'WaitForFirstConsumer') sc.volumeBindingMode = mode;
  const parameters = Object.entries(obj(raw.parameters)).filter((e): e is [string, string] => typeof e[1] === 'string');
  if (parameters.length > 0) sc.parameters = Object.fromEntries(parameters);
  const topologies = arr(raw.allowedTopologies).map(obj);
  if (topologies.length > 0) {
    sc.allowedTopologies = topologies.map((t) => ({
      matchLabelExpressions: arr(t.matchLabelExpressions).map(obj).map((e) => ({ key: str(e.key) ?? '', values: arr(e.values).map(String) })),
    }));
  }
  return sc;
}

export function toNodePool(raw: RawObject): NodePool {
  const spec = obj(raw.spec);
  const template = obj(spec.template);
  const tmeta = obj(template.metadata);
  const tspec = obj(template.spec);
  const disruption = obj(spec.disruption);
  const status = obj(raw.status);
  const np: NodePool = {
    metadata: toMeta(raw.metadata),
    spec: {
      template: {
        metadata: { labels: strMap(tmeta.labels), annotations: strMap(tmeta.annotations) },
        spec: {
          nodeClassRef: toNodeClassRef(tspec.nodeClassRef),
          requirements: toRequirements(tspec.requirements),
          taints: toTaints(tspec.taints),
          startupTaints: toTaints(tspec.startupTaints),
        },
      },
      disruption: {
        consolidationPolicy: toConsolidationPolicy(str(disruption.consolidationPolicy)),
        consolidateAfter: str(disruption.consolidateAfter) ?? '0s',
        budgets: arr(disruption.budgets).map((b) => {
          const o = obj(b);
          const budget: NodePool['spec']['disruption']['budgets'][number] = { nodes: str(o.nodes) ?? '10%' };
          if (Array.isArray(o.reasons)) budget.reasons = o.reasons.map(String) as NonNullable<typeof budget.reasons>;
          setOpt(budget, 'schedule', str(o.schedule));
          setOpt(budget, 'duration', str(o.duration));
          return budget;
        }),
      },
      limits: strMap(spec.limits),
    },
    status: { conditions: toConditions(status.conditions) },
  };
  setOpt(np.spec.template.spec, 'expireAfter', str(tspec.expireAfter));
  setOpt(np.spec.template.spec, 'terminationGracePeriod', str(tspec.terminationGracePeriod));
  if (typeof spec.weight === 'number') np.spec.weight = spec.weight;
  if (typeof spec.replicas === 'number') np.spec.replicas = spec.replicas;
  if (status.resources !== undefined) np.status.resources = strMap(status.resources);
  if (typeof status.nodes === 'number') np.status.nodes = status.nodes;
  return np;
}

/** Passed through as upstream spells it (Balanced included); absent means upstream's default. */
function toConsolidationPolicy(v: string | undefined): NodePool['spec']['disruption']['consolidationPolicy'] {
  return v === 'WhenEmpty' || v === 'Balanced' ? v : 'WhenEmptyOrUnderutilized';
}

export function toNodeClass(raw: RawObject): AzureFlexNodeClass {
  const spec = obj(raw.spec);
  const status = obj(raw.status);
  const sec = str(spec.securityType);
  const nc: AzureFlexNodeClass = {
    metadata: toMeta(raw.metadata),
    spec: {
      subscriptionID: str(spec.subscriptionID) ?? '',
      location: str(spec.location) ?? '',
      resourceGroup: str(spec.resourceGroup) ?? '',
      subnetID: str(spec.subnetID) ?? '',
      securityType: sec === 'TrustedLaunch' || sec === 'ConfidentialVM' ? sec : 'Standard',
      osDiskSizeGB: typeof spec.osDiskSizeGB === 'number' ? spec.osDiskSizeGB : 128,
      sshPublicKeys: arr(spec.sshPublicKeys).filter((k): k is string => typeof k === 'string'),
      allocateNodePublicIP: spec.allocateNodePublicIP === true,
      maxPodsPerNode: typeof spec.maxPodsPerNode === 'number' ? spec.maxPodsPerNode : 110,
      ...(typeof spec.spotMaxPrice === 'number' ? { spotMaxPrice: spec.spotMaxPrice } : {}),
      ...(Array.isArray(spec.capacityReservationGroupIDs) ? { capacityReservationGroupIDs: arr(spec.capacityReservationGroupIDs).filter((g): g is string => typeof g === 'string') } : {}),
      tags: strMap(spec.tags),
    },
    status: { conditions: toConditions(status.conditions) },
  };
  if (spec.imageReference !== undefined) {
    const ir = obj(spec.imageReference);
    nc.spec.imageReference = {
      publisher: str(ir.publisher) ?? '',
      offer: str(ir.offer) ?? '',
      sku: str(ir.sku) ?? '',
      version: str(ir.version) ?? '',
    };
  }
  setOpt(nc.spec, 'imageID', str(spec.imageID));
  return nc;
}

// --- port -> wire (only what we create/write) ---------------------------------------------

function dropEmpty<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o) as Array<[keyof T, T[keyof T]]>) {
    if (v === undefined) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    out[k] = v;
  }
  return out;
}

export function nodeClaimToWire(nc: NodeClaim): RawObject {
  const m = nc.metadata;
  const wire: RawObject = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: dropEmpty({
      name: m.name,
      labels: m.labels,
      annotations: m.annotations,
      finalizers: m.finalizers,
      ownerReferences: m.ownerReferences,
    }),
    spec: dropEmpty({
      nodeClassRef: nc.spec.nodeClassRef,
      resources: nc.spec.resources,
      taints: nc.spec.taints,
      startupTaints: nc.spec.startupTaints,
      expireAfter: nc.spec.expireAfter,
      terminationGracePeriod: nc.spec.terminationGracePeriod,
    }),
  };
  // requirements is required by the CRD even when empty, so it is never dropped.
  (wire.spec as Record<string, unknown>).requirements = nc.spec.requirements;
  return wire;
}

/** Status subresource bodies keep `conditions: []` explicit so a merge patch clears them. */
export function statusToWire<S extends { conditions: Condition[] }>(status: S): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(status)) if (v !== undefined) out[k] = v;
  return out;
}

// --- typed client-node calls per kind -----------------------------------------------------

/** The calls KubeCluster makes on one cluster-scoped kind (core kinds typed, CRDs as custom objects). */
export interface KindApi {
  listPage(cont: string | undefined): Promise<KubernetesListObject<KubernetesObject>>;
  get(name: string): Promise<RawObject>;
  create(body: RawObject): Promise<RawObject>;
  patch(name: string, body: object, o: CallOptions): Promise<RawObject>;
  patchStatus(name: string, body: object, o: CallOptions): Promise<RawObject>;
  delete(name: string): Promise<RawObject & { kind?: string }>;
}

const PAGE_SIZE = 500;

export function kindApi(client: KubeClient, def: ResourceDef): KindApi {
  const what = (verb: string, name?: string): string => `${verb} ${def.plural}${name ? ` ${name}` : ''}`;
  const raw = <T>(p: Promise<T>): Promise<RawObject> => p as Promise<unknown> as Promise<RawObject>;
  if (def === RESOURCES.nodes) {
    const core = client.core;
    return {
      listPage: (cont) => client.call(what('list'), (o) => core.listNode({ limit: PAGE_SIZE, ...(cont ? { _continue: cont } : {}) }, o)),
      get: (name) => raw(client.call(what('get', name), (o) => core.readNode({ name }, o))),
      create: (body) => raw(client.call(what('create'), (o) => core.createNode({ body: body as V1Node }, o))),
      patch: (name, body, co) => raw(client.call(what('patch', name), (o) => core.patchNode({ name, body }, o), co)),
      patchStatus: (name, body, co) => raw(client.call(what('patch status', name), (o) => core.patchNodeStatus({ name, body }, o), co)),
      // The typed answer is a V1Status even when the server returns the Node: never write it through.
      delete: async (name) => {
        await client.call(what('delete', name), (o) => core.deleteNode({ name }, o));
        return { kind: 'Status' };
      },
    };
  }
  if (def === RESOURCES.persistentVolumeClaims || def === RESOURCES.persistentVolumes || def === RESOURCES.storageClasses) {
    const core = client.core;
    const storage = client.storage;
    const page = (cont: string | undefined): { limit: number; _continue?: string } => ({ limit: PAGE_SIZE, ...(cont ? { _continue: cont } : {}) });
    const unsupported = (): never => {
      throw new Error(`${def.plural} are only listed by azflex`);
    };
    const list = def === RESOURCES.persistentVolumeClaims
      ? (cont: string | undefined) => client.call(what('list'), (o) => core.listPersistentVolumeClaimForAllNamespaces(page(cont), o))
      : def === RESOURCES.persistentVolumes
        ? (cont: string | undefined) => client.call(what('list'), (o) => core.listPersistentVolume(page(cont), o))
        : (cont: string | undefined) => client.call(what('list'), (o) => storage.listStorageClass(page(cont), o));
    return { listPage: list, get: unsupported, create: unsupported, patch: unsupported, patchStatus: unsupported, delete: unsupported };
  }
  if (def === RESOURCES.pods) {
    const core = client.core;
    const unsupported = (): never => {
      throw new Error('pods are only listed and evicted by azflex');
    };
    return {
      listPage: (cont) => client.call(what('list'), (o) => core.listPodForAllNamespaces({ limit: PAGE_SIZE, ...(cont ? { _continue: cont } : {}) }, o)),
      get: unsupported,
      create: unsupported,
      patch: unsupported,
      patchStatus: unsupported,
      delete: unsupported,
    };
  }
  const custom = client.custom;
  const ref = { group: def.group, version: def.version, plural: def.plural };
  return {
    listPage: (cont) => client.call(what('list'), (o) => custom.listClusterCustomObject({ ...ref, limit: PAGE_SIZE, ...(cont ? { _continue: cont } : {}) }, o)),
    get: (name) => client.call(what('get', name), (o) => custom.getClusterCustomObject({ ...ref, name }, o)),
    create: (body) => client.call(what('create'), (o) => custom.createClusterCustomObject({ ...ref, body }, o)),
    patch: (name, body, co) => client.call(what('patch', name), (o) => custom.patchClusterCustomObject({ ...ref, name, body }, o), co),
    patchStatus: (name, body, co) => client.call(what('patch status', name), (o) => custom.patchClusterCustomObjectStatus({ ...ref, name, body }, o), co),
    delete: (name) => client.call(what('delete', name), (o) => custom.deleteClusterCustomObject({ ...ref, name }, o)),
  };
}
