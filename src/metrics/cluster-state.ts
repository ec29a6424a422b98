/**
 * Gauges upstream Karpenter derives from cluster state (pkg/controllers/metrics/{nodepool,
 * node,pod}, pkg/controllers/state), recomputed from the ClusterPort's lists: NodePool usage
 * and limits, per-node allocatable, overhead, pod and DaemonSet requests/limits and lifetime,
 * cluster utilisation, and one karpenter_pods_state series per pod. Also azflex's NodeClass
 * validation gauge. Reset and refilled on each refresh, so a deleted node or pod stops being
 * reported.
 *
 * Which objects, as upstream: NodePool gauges only for the NodePools this controller manages
 * (nodeClassRef an AzureFlexNodeClass; upstream's nodepool metrics controller skips pools of
 * another provider), so beside node auto-provisioning each pool is reported once. Node and pod
 * gauges cover every node and pod, labelled with the node's own `karpenter.sh/nodepool`;
 * `managed` says whether azflex owns the node (node gauges) or any Karpenter does (pods).
 */
import type { InstanceType, InstanceTypeCatalog } from '../catalog/skus.js';
import { claimCapacity } from '../provisioning/nodepool-totals.js';
import { validateNodeClassSpec } from '../apis/nodeclass-validation.js';
import type { AzureFlexNodeClass, ClusterPort, Node, NodeClaim, NodePool, Pod } from '../ports/cluster.js';
import { isFlexNodePool } from '../provisioning/scheduler.js';
import { allowedDisruptions, type DisruptionReason } from '../disruption/budgets.js';
import { addInto, parseQuantity, podRequests, RESOURCE_CPU, resourcesFromList, type Resources } from '../provisioning/resources.js';
import type { AzflexMetrics, KarpenterMetrics, NodeLabel } from './karpenter.js';
import {
  LABEL_ARCH, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, LABEL_OS, LABEL_REGION, LABEL_WINDOWS_BUILD, LABEL_ZONE,
} from '../apis/well-known.js';

/** Upstream's voluntary disruption reasons, each with its budget series. */
const DISRUPTION_REASONS: readonly DisruptionReason[] = ['Underutilized', 'Empty', 'Drifted'];
/** What upstream reports for a budget that sets no limit (math.MaxInt32). */
const MAX_INT32 = 2147483647;

/** Upstream's resource_type values: lower case, '-' → '_'. */
function resourceType(name: string): string {
  return name.toLowerCase().replace(/-/g, '_');
}

/** Upstream reports quantities as floats in the resource's natural unit (cores for cpu). */
function value(resource: string, amount: number): number {
  return resource === RESOURCE_CPU ? amount / 1000 : amount;
}

function setAll(set: (resourceType: string, v: number) => void, resources: Resources): void {
  for (const [resource, amount] of Object.entries(resources)) set(resourceType(resource), value(resource, amount));
}

function podLimits(pod: Pod): Resources {
  const out: Resources = {};
  for (const c of pod.spec.containers) {
    for (const [k, v] of Object.entries(c.resources.limits ?? {})) {
      try {
        out[k] = (out[k] ?? 0) + parseQuantity(v, k);
      } catch {
        /* a malformed quantity is the API server's to reject; skip it here */
      }
    }
  }
  return out;
}

/** Quantities of `b` missing from `a`, floored at 0 (capacity − allocatable). */
function subtract(a: Resources, b: Resources): Resources {
  const out: Resources = {};
  for (const [k, v] of Object.entries(a)) out[k] = Math.max(0, v - (b[k] ?? 0));
  return out;
}

function safeResources(list: Node['status']['allocatable']): Resources {
  try {
    return resourcesFromList(list);
  } catch {
    return {};
  }
}

/**
 * Upstream's node labels: each well-known label's value on the node (empty when absent), the
 * node's name, NodeStatus.phase as the node reports it (kubelets leave it unset, so usually
 * empty), and whether azflex manages the node (its NodePool is one of ours).
 */
function nodeLabels(node: Node, flexPools: ReadonlySet<string>): Record<NodeLabel, string> {
  const l = node.metadata.labels;
  return {
    node_name: node.metadata.name,
    nodepool: l[LABEL_NODEPOOL] ?? '',
    zone: l[LABEL_ZONE] ?? '',
    region: l[LABEL_REGION] ?? '',
    instance_type: l[LABEL_INSTANCE_TYPE] ?? '',
    arch: l[LABEL_ARCH] ?? '',
    os: l[LABEL_OS] ?? '',
    capacity_type: l[LABEL_CAPACITY_TYPE] ?? '',
    windows_build: l[LABEL_WINDOWS_BUILD] ?? '',
    phase: node.status.phase ?? '',
    managed: String(flexPools.has(l[LABEL_NODEPOOL] ?? '')),
  };
}

/** Upstream's `owner`: the first ownerReference as an API path (`/apis/<apiVersion>/namespaces/<ns>/<kind>s/<name>`). */
export function ownerPath(pod: Pod): string {
  const o = pod.owner;
  return o ? `/apis/${o.apiVersion}/namespaces/${pod.metadata.namespace}/${o.kind.toLowerCase()}s/${o.name}` : '';
}

/**
 * Empties the gauges with a series per node or per pod: at 1,000 nodes and 10,000 pods they
 * hold about 20,000 series (label sets and their keys, ~13 MiB), which between scrapes
 * nobody reads.
 */
export function releaseObjectGauges(karpenter: KarpenterMetrics): void {
  for (const g of [karpenter.nodesAllocatable, karpenter.nodesSystemOverhead, karpenter.nodesTotalPodRequests, karpenter.nodesTotalPodLimits,
    karpenter.nodesTotalDaemonRequests, karpenter.nodesTotalDaemonLimits, karpenter.nodesCurrentLifetime, karpenter.podsState]) g.reset();
}

/** What the refresh reads: the cluster's lists (from informer caches in production) and the catalog. */
export type ClusterStateSource = Pick<ClusterPort, 'listNodePools' | 'listNodeClaims' | 'listNodes' | 'listPods' | 'listNodeClasses'>;

export async function refreshClusterGauges(
  cluster: ClusterStateSource, catalog: Pick<InstanceTypeCatalog, 'list'>, karpenter: KarpenterMetrics, azflex: AzflexMetrics, now: number,
): Promise<void> {
  const [pools, claims, nodes, pods, classes, types] = await Promise.all([
    cluster.listNodePools(), cluster.listNodeClaims(), cluster.listNodes(), cluster.listPods(), cluster.listNodeClasses(), catalog.list(),
  ]);
  const flexPools = pools.filter(isFlexNodePool);
  const flexPoolNames = new Set(flexPools.map((p) => p.metadata.name));
  refreshNodePoolGauges({ flexPools, claims, nodes, classes, types }, karpenter, now);
  const labelsByNode = refreshNodeGauges(nodes, pods, flexPoolNames, karpenter, now);
  // Upstream's cluster state holds every node plus each of its NodeClaims not yet registered.
  const registering = claims.filter((c) => flexPoolNames.has(c.metadata.labels[LABEL_NODEPOOL] ?? '') && !c.status.nodeName).length;
  karpenter.clusterStateNodeCount.set(nodes.length + registering);
  refreshPodGauges(pods, labelsByNode, karpenter);
  azflex.nodeClassValidation.reset();
  for (const c of classes) azflex.nodeClassValidation.set({ nodeclass: c.metadata.name }, validateNodeClassSpec(c.spec).ok ? 1 : 0);
}

interface NodePoolGaugeInput {
  flexPools: NodePool[];
  claims: NodeClaim[];
  nodes: Node[];
  classes: AzureFlexNodeClass[];
  types: InstanceType[];
}

/** Per NodePool: usage, limits, and upstream's disruption budget view. */
function refreshNodePoolGauges(input: NodePoolGaugeInput, karpenter: KarpenterMetrics, now: number): void {
  const { flexPools, claims } = input;
  const typesByName = new Map(input.types.map((t) => [t.name, t]));
  const classesByName = new Map(input.classes.map((c) => [c.metadata.name, c]));
  karpenter.nodePoolUsage.reset();
  karpenter.nodePoolLimit.reset();
  karpenter.nodePoolAllowedDisruptions.reset();
  karpenter.nodePoolNodesConsumingBudgets.reset();
  const nodesByName = new Map(input.nodes.map((n) => [n.metadata.name, n]));
  for (const pool of flexPools) {
    // Upstream's budget view: the pool's initialized NodeClaims; those being deleted or whose node is not Ready consume it.
    let total = 0;
    let disrupting = 0;
    for (const claim of claims) {
      if (claim.metadata.labels[LABEL_NODEPOOL] !== pool.metadata.name) continue;
      if (!claim.status.conditions.some((c) => c.type === 'Initialized' && c.status === 'True')) continue;
      total++;
      const node = claim.status.nodeName ? nodesByName.get(claim.status.nodeName) : undefined;
      const ready = node?.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
      if (claim.metadata.deletionTimestamp || !ready) disrupting++;
    }
    for (const reason of DISRUPTION_REASONS) {
      const allowed = allowedDisruptions(pool.spec.disruption.budgets, reason, total, 0, now);
      const labels = { nodepool: pool.metadata.name, reason: reason.toLowerCase() };
      karpenter.nodePoolAllowedDisruptions.set(labels, Number.isFinite(allowed) ? allowed : MAX_INT32);
      karpenter.nodePoolNodesConsumingBudgets.set(labels, disrupting);
    }
    const usage: Resources = {};
    const nodeClass = classesByName.get(pool.spec.template.spec.nodeClassRef.name);
    for (const claim of claims) {
      if (claim.metadata.labels[LABEL_NODEPOOL] === pool.metadata.name) addInto(usage, claimCapacity(claim, typesByName, nodeClass));
    }
    setAll((resource_type, v) => karpenter.nodePoolUsage.set({ nodepool: pool.metadata.name, resource_type }, v), usage);
    let limits: Resources = {};
    try {
      limits = resourcesFromList(pool.spec.limits);
    } catch {
      limits = {};
    }
    setAll((resource_type, v) => karpenter.nodePoolLimit.set({ nodepool: pool.metadata.name, resource_type }, v), limits);
  }
}

/** Per node (allocatable, overhead, pod and daemon requests and limits, lifetime) and cluster utilization; returns each node's labels. */
function refreshNodeGauges(nodes: Node[], pods: Pod[], flexPoolNames: ReadonlySet<string>, karpenter: KarpenterMetrics, now: number): Map<string, Record<NodeLabel, string>> {
  const podsByNode = new Map<string, Pod[]>();
  for (const pod of pods) {
    if (!pod.spec.nodeName || pod.status.phase === 'Succeeded' || pod.status.phase === 'Failed') continue;
    const list = podsByNode.get(pod.spec.nodeName) ?? [];
    list.push(pod);
    podsByNode.set(pod.spec.nodeName, list);
  }
  releaseObjectGauges(karpenter);
  karpenter.clusterUtilization.reset();
  const labelsByNode = new Map<string, Record<NodeLabel, string>>();
  const clusterAllocatable: Resources = {};
  const clusterRequests: Resources = {};
  for (const node of nodes) {
    const labels = nodeLabels(node, flexPoolNames);
    labelsByNode.set(node.metadata.name, labels);
    const allocatable = safeResources(node.status.allocatable);
    const set = (gauge: typeof karpenter.nodesAllocatable, resources: Resources) =>
      setAll((resource_type, v) => gauge.set({ ...labels, resource_type }, v), resources);
    set(karpenter.nodesAllocatable, allocatable);
    set(karpenter.nodesSystemOverhead, subtract(safeResources(node.status.capacity), allocatable));
    const { requests, limits, daemonRequests, daemonLimits } = podTotals(podsByNode.get(node.metadata.name) ?? []);
    set(karpenter.nodesTotalPodRequests, requests);
    set(karpenter.nodesTotalPodLimits, limits);
    set(karpenter.nodesTotalDaemonRequests, daemonRequests);
    set(karpenter.nodesTotalDaemonLimits, daemonLimits);
    addInto(clusterAllocatable, allocatable);
    addInto(clusterRequests, requests);
    const created = Date.parse(node.metadata.creationTimestamp);
    if (Number.isFinite(created)) karpenter.nodesCurrentLifetime.set(labels, Math.max(0, (now - created) / 1000));
  }
  for (const [resource, allocatable] of Object.entries(clusterAllocatable)) {
    if (allocatable <= 0) continue;
    karpenter.clusterUtilization.set({ resource_type: resourceType(resource) }, (100 * (clusterRequests[resource] ?? 0)) / allocatable);
  }
  return labelsByNode;
}

function podTotals(pods: readonly Pod[]): { requests: Resources; limits: Resources; daemonRequests: Resources; daemonLimits: Resources } {
  const totals = { requests: {}, limits: {}, daemonRequests: {}, daemonLimits: {} };
  for (const pod of pods) {
    const r = podRequests(pod);
    const l = podLimits(pod);
    addInto(totals.requests, r);
    addInto(totals.limits, l);
    if (pod.ownerKind === 'DaemonSet') {
      addInto(totals.daemonRequests, r);
      addInto(totals.daemonLimits, l);
    }
  }
  return totals;
}

/** karpenter_pods_state: one series per pod, with its node's labels. */
function refreshPodGauges(pods: readonly Pod[], labelsByNode: ReadonlyMap<string, Record<NodeLabel, string>>, karpenter: KarpenterMetrics): void {
  for (const pod of pods) {
    const node = pod.spec.nodeName ? labelsByNode.get(pod.spec.nodeName) : undefined;
    karpenter.podsState.set(
      {
        name: pod.metadata.name,
        namespace: pod.metadata.namespace,
        owner: ownerPath(pod),
        node: pod.spec.nodeName ?? '',
        scheduled: String(Boolean(pod.spec.nodeName)),
        nodepool: node?.nodepool ?? '',
        zone: node?.zone ?? '',
        arch: node?.arch ?? '',
        capacity_type: node?.capacity_type ?? '',
        instance_type: node?.instance_type ?? '',
        phase: pod.status.phase,
        ready: String(pod.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True')),
        managed: String((node?.nodepool ?? '') !== ''),
      },
      1,
    );
  }
}
