import { stringify } from 'yaml';
import type { Node, NodeClaim, Pod } from '../ports/cluster.js';
import { nodeClaimToWire, statusToWire } from '../k8s/resources.js';
import type { FakeCluster } from './cluster.js';
import { compareStrings } from './placement.js';

/**
 * `azflex simulate --output-cluster`: the run's final cluster as `kubectl get
 * nodes,nodeclaims,pods -A -o yaml` would print it (a `v1 List`), so kubectl-style tools and
 * diffs work on it. Objects in kind then name order; fields the API server would add
 * (resourceVersion, managedFields) are left out, so two runs of one seed give the same bytes.
 */
export function clusterYaml(cluster: FakeCluster): string {
  const byName = <T extends { metadata: { name: string; namespace?: string } }>(list: Iterable<T>): T[] =>
    [...list].sort((a, b) => compareStrings(a.metadata.namespace ?? '', b.metadata.namespace ?? '') || compareStrings(a.metadata.name, b.metadata.name));
  const items = [
    ...byName(cluster.nodes.values()).map(nodeToWire),
    ...byName(cluster.nodeClaims.values()).map(claimToWire),
    ...byName(cluster.pods.values()).map(podToWire),
  ];
  return stringify({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items }, { aliasDuplicateObjects: false, lineWidth: 0 });
}

function meta(m: Node['metadata'] | Pod['metadata']): Record<string, unknown> {
  return withoutEmpty({
    name: m.name,
    namespace: m.namespace,
    uid: m.uid || undefined,
    creationTimestamp: m.creationTimestamp || undefined,
    deletionTimestamp: m.deletionTimestamp,
    labels: m.labels,
    annotations: m.annotations,
    finalizers: m.finalizers,
  });
}

function nodeToWire(node: Node): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: meta(node.metadata),
    spec: withoutEmpty({ providerID: node.spec.providerID, taints: node.spec.taints, unschedulable: node.spec.unschedulable }),
    status: withoutEmpty({ capacity: node.status.capacity, allocatable: node.status.allocatable, conditions: node.status.conditions }),
  };
}

function claimToWire(nc: NodeClaim): Record<string, unknown> {
  const wire = nodeClaimToWire(nc);
  return { ...wire, metadata: meta(nc.metadata), status: statusToWire(nc.status) };
}

function podToWire(pod: Pod): Record<string, unknown> {
  const owner = pod.owner ?? (pod.ownerKind ? { apiVersion: pod.ownerKind === 'Job' ? 'batch/v1' : 'apps/v1', kind: pod.ownerKind, name: '' } : undefined);
  const { nodeName, ...spec } = pod.spec;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...meta(pod.metadata), ...(owner?.name ? { ownerReferences: [{ ...owner, controller: true }] } : {}) },
    // nodeName first: it is what a reader of this file looks for.
    spec: withoutEmpty({ ...(nodeName ? { nodeName } : {}), ...spec }),
    status: withoutEmpty({ phase: pod.status.phase, conditions: pod.status.conditions }),
  };
}

/** Drops undefined values and empty maps and lists, as `kubectl get -o yaml` omits them. */
function withoutEmpty(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined || v === '') continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) continue;
    out[k] = v;
  }
  return out;
}
