/**
 * Gauges upstream Karpenter derives from cluster state (pkg/controllers/metrics/{nodepool,
 * node,pod}), recomputed from the ClusterPort's lists: NodePool usage and limits, per-node
 * allocatable and pod requests/limits and lifetime, and one karpenter_pods_state series per
 * pod. Also azflex's NodeClass validation gauge. Reset and refilled on each refresh, so a
 * deleted node or pod stops being reported.
 */
import type { InstanceTypeCatalog } from '../catalog/skus.js';
import { claimCapacity } from '../controllers/nodepool/status.js';
import { validateNodeClassSpec } from '../controllers/nodeclass/validation.js';
import type { ClusterPort, Node, Pod } from '../ports/cluster.js';
import { addInto, parseQuantity, podRequests, RESOURCE_CPU, resourcesFromList, type Resources } from '../provisioning/resources.js';
import type { AzflexMetrics, KarpenterMetrics, NodeLabel } from './karpenter.js';
import { LABEL_CAPACITY_TYPE, LABEL_NODEPOOL } from '../apis/well-known.js';

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

function nodeLabels(node: Node, managedPools: ReadonlySet<string>): Record<NodeLabel, string> {
  const l = node.metadata.labels;
  const ready = node.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True');
  return {
    node_name: node.metadata.name,
    nodepool: managedPools.has(l[LABEL_NODEPOOL] ?? '') ? l[LABEL_NODEPOOL]! : '',
    zone: l['topology.kubernetes.io/zone'] ?? '',
    region: l['topology.kubernetes.io/region'] ?? '',
    instance_type: l['node.kubernetes.io/instance-type'] ?? '',
    arch: l['kubernetes.io/arch'] ?? '',
    os: l['kubernetes.io/os'] ?? '',
    capacity_type: l[LABEL_CAPACITY_TYPE] ?? '',
    windows_build: l['node.kubernetes.io/windows-build'] ?? '',
    phase: node.metadata.deletionTimestamp ? 'Terminating' : ready ? 'Running' : 'Pending',
  };
}

export async function refreshClusterGauges(
  cluster: ClusterPort, catalog: InstanceTypeCatalog, karpenter: KarpenterMetrics, azflex: AzflexMetrics, now: number,
): Promise<void> {
  const [pools, claims, nodes, pods, classes, types] = await Promise.all([
    cluster.listNodePools(), cluster.listNodeClaims(), cluster.listNodes(), cluster.listPods(), cluster.listNodeClasses(), catalog.list(),
  ]);
  const typesByName = new Map(types.map((t) => [t.name, t]));
  const classesByName = new Map(classes.map((c) => [c.metadata.name, c]));
  const poolNames = new Set(pools.map((p) => p.metadata.name));

  karpenter.nodePoolUsage.reset();
  karpenter.nodePoolLimit.reset();
  for (const pool of pools) {
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

  const podsByNode = new Map<string, Pod[]>();
  for (const pod of pods) {
    if (!pod.spec.nodeName || pod.status.phase === 'Succeeded' || pod.status.phase === 'Failed') continue;
    const list = podsByNode.get(pod.spec.nodeName) ?? [];
    list.push(pod);
    podsByNode.set(pod.spec.nodeName, list);
  }
  karpenter.nodesAllocatable.reset();
  karpenter.nodesTotalPodRequests.reset();
  karpenter.nodesTotalPodLimits.reset();
  karpenter.nodesCurrentLifetime.reset();
  const labelsByNode = new Map<string, Record<NodeLabel, string>>();
  for (const node of nodes) {
    const labels = nodeLabels(node, poolNames);
    labelsByNode.set(node.metadata.name, labels);
    let allocatable: Resources = {};
    try {
      allocatable = resourcesFromList(node.status.allocatable);
    } catch {
      allocatable = {};
    }
    setAll((resource_type, v) => karpenter.nodesAllocatable.set({ ...labels, resource_type }, v), allocatable);
    const requests: Resources = {};
    const limits: Resources = {};
    for (const pod of podsByNode.get(node.metadata.name) ?? []) {
      addInto(requests, podRequests(pod));
      addInto(limits, podLimits(pod));
    }
    setAll((resource_type, v) => karpenter.nodesTotalPodRequests.set({ ...labels, resource_type }, v), requests);
    setAll((resource_type, v) => karpenter.nodesTotalPodLimits.set({ ...labels, resource_type }, v), limits);
    const created = Date.parse(node.metadata.creationTimestamp);
    if (Number.isFinite(created)) karpenter.nodesCurrentLifetime.set(labels, Math.max(0, (now - created) / 1000));
  }

  karpenter.podsState.reset();
  for (const pod of pods) {
    const node = pod.spec.nodeName ? labelsByNode.get(pod.spec.nodeName) : undefined;
    const scheduled = pod.status.conditions.some((c) => c.type === 'PodScheduled' && c.status === 'True') || pod.spec.nodeName !== undefined;
    karpenter.podsState.set(
      {
        name: pod.metadata.name,
        namespace: pod.metadata.namespace,
        owner: pod.ownerKind ?? '',
        node: pod.spec.nodeName ?? '',
        scheduled: String(scheduled),
        nodepool: node?.nodepool ?? '',
        zone: node?.zone ?? '',
        arch: node?.arch ?? '',
        capacity_type: node?.capacity_type ?? '',
        instance_type: node?.instance_type ?? '',
        phase: pod.status.phase,
        ready: String(pod.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True')),
        managed: String(node !== undefined && node.nodepool !== ''),
      },
      1,
    );
  }

  azflex.nodeClassValidation.reset();
  for (const c of classes) azflex.nodeClassValidation.set({ nodeclass: c.metadata.name }, validateNodeClassSpec(c.spec).ok ? 1 : 0);
}
