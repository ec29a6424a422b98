import type { Node, NodeClaim, Pod } from '../ports/cluster.js';
import { EVENT_REASON_FAILED_SCHEDULING, EVENT_REASON_INSUFFICIENT_QUOTA } from '../provisioning/pod-events.js';
import { LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, LABEL_REGION, LABEL_ZONE } from '../apis/well-known.js';
import { ownsNodeClaim } from '../runtime/world.js';
import type { FakeCluster } from './cluster.js';
import type { PlacementSummary, ZonePlacement } from '../viz/placement-table.js';

/**
 * Where things landed at the end of a run (`azflex simulate --json`, `--output-cluster`, the
 * HTML report): every node, azflex's and the others a snapshot brought, and every pod's node
 * or the reason it is still pending. Reporting only: read after the run, it changes nothing.
 */
export interface PlacedNode {
  /** The Node's name; an unregistered NodeClaim's own name. */
  name: string;
  /** azflex's NodeClaim behind it; absent for nodes azflex does not own (system pool, other provisioners). */
  nodeClaim?: string;
  nodePool?: string;
  instanceType?: string;
  capacityType?: string;
  region?: string;
  zone?: string;
  /** Whether a Node registered (for a node azflex does not own: always, it is there). */
  registered: boolean;
}

export interface PlacedPod {
  namespace: string;
  name: string;
  node?: string;
  /** Why a pod is still pending: the provisioner's last FailedScheduling (and InsufficientQuota) message, else the kube-scheduler's condition. */
  pending?: string;
}

export interface Placement {
  nodes: PlacedNode[];
  pods: PlacedPod[];
}

/** The placement of a finished run's cluster, in name order (the same seed gives the same bytes). */
export function placementOf(cluster: FakeCluster): Placement {
  const nodes: PlacedNode[] = [];
  const claimed = new Set<string>();
  for (const nc of cluster.nodeClaims.values()) {
    if (!ownsNodeClaim(nc)) continue;
    const node = nc.status.nodeName ? cluster.nodes.get(nc.status.nodeName) : undefined;
    if (node) claimed.add(node.metadata.name);
    nodes.push(claimEntry(nc, node));
  }
  for (const node of cluster.nodes.values()) if (!claimed.has(node.metadata.name)) nodes.push(nodeEntry(node));
  nodes.sort((a, b) => compareStrings(a.name, b.name));
  const reasons = pendingReasons(cluster);
  const pods: PlacedPod[] = [...cluster.pods.values()]
    .map((p) => podEntry(p, reasons))
    .sort((a, b) => compareStrings(a.namespace, b.namespace) || compareStrings(a.name, b.name));
  return { nodes, pods };
}

/** Per region and zone: the nodes by size and how many pods run there, in order (the HTML report's table). */
export function placementByZone(placement: Placement): PlacementSummary {
  const byName = new Map(placement.nodes.map((n) => [n.name, n]));
  const zones = new Map<string, ZonePlacement>();
  const at = (n: PlacedNode): ZonePlacement => {
    const key = `${n.region ?? ''}|${n.zone ?? ''}`;
    let z = zones.get(key);
    if (!z) zones.set(key, (z = { region: n.region ?? '', zone: n.zone ?? '', nodes: 0, registered: 0, sizes: {}, pods: 0 }));
    return z;
  };
  for (const n of placement.nodes) {
    const z = at(n);
    z.nodes++;
    if (n.registered) z.registered++;
    const size = n.instanceType ?? '(unknown)';
    z.sizes[size] = (z.sizes[size] ?? 0) + 1;
  }
  let pending = 0;
  for (const p of placement.pods) {
    const node = p.node === undefined ? undefined : byName.get(p.node);
    if (node) at(node).pods++;
    else if (p.node === undefined) pending++;
  }
  return { zones: [...zones.values()].sort((a, b) => compareStrings(a.region, b.region) || compareStrings(a.zone, b.zone)), pending };
}

function claimEntry(nc: NodeClaim, node: Node | undefined): PlacedNode {
  // A registered node's labels say what it is; before that, the NodeClaim's single-valued requirements.
  const labels: Record<string, string> = { ...nc.metadata.labels };
  for (const r of nc.spec.requirements) if (r.operator === 'In' && r.values?.length === 1) labels[r.key] = r.values[0]!;
  Object.assign(labels, node?.metadata.labels ?? {});
  return {
    name: node?.metadata.name ?? nc.metadata.name,
    nodeClaim: nc.metadata.name,
    ...described(labels),
    registered: node !== undefined && nc.status.conditions.some((c) => c.type === 'Registered' && c.status === 'True'),
  };
}

function nodeEntry(node: Node): PlacedNode {
  return { name: node.metadata.name, ...described(node.metadata.labels), registered: true };
}

function described(labels: Record<string, string>): Omit<PlacedNode, 'name' | 'nodeClaim' | 'registered'> {
  const out: Omit<PlacedNode, 'name' | 'nodeClaim' | 'registered'> = {};
  const set = (key: keyof typeof out, label: string): void => {
    if (labels[label] !== undefined) out[key] = labels[label];
  };
  set('nodePool', LABEL_NODEPOOL);
  set('instanceType', LABEL_INSTANCE_TYPE);
  set('capacityType', LABEL_CAPACITY_TYPE);
  set('region', LABEL_REGION);
  set('zone', LABEL_ZONE);
  return out;
}

/**
 * Each pod's last FailedScheduling message, by uid (events are kept in the order they were
 * sent), followed by its last InsufficientQuota one when quota is what ruled offerings out.
 */
function pendingReasons(cluster: FakeCluster): Map<string, string> {
  const failed = new Map<string, string>();
  const quota = new Map<string, string>();
  for (const e of cluster.events) {
    if (e.involvedObject.kind !== 'Pod' || !e.involvedObject.uid) continue;
    if (e.reason === EVENT_REASON_FAILED_SCHEDULING) failed.set(e.involvedObject.uid, e.message);
    else if (e.reason === EVENT_REASON_INSUFFICIENT_QUOTA) quota.set(e.involvedObject.uid, e.message);
  }
  for (const [uid, message] of failed) {
    const short = quota.get(uid);
    if (short !== undefined) failed.set(uid, `${message}; ${short}`);
  }
  return failed;
}

function podEntry(pod: Pod, reasons: ReadonlyMap<string, string>): PlacedPod {
  const { namespace, name, uid } = pod.metadata;
  if (pod.spec.nodeName) return { namespace, name, node: pod.spec.nodeName };
  const scheduled = pod.status.conditions.find((c) => c.type === 'PodScheduled' && c.status === 'False');
  const pending = reasons.get(uid) ?? (scheduled ? `${scheduled.reason}: no Ready node fits it and the provisioner sent no verdict` : 'not yet looked at by the kube-scheduler');
  return { namespace, name, pending };
}

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
