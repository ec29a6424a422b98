/**
 * Draining a node before its VM is deleted (the karpenter.sh/termination finalizer's first
 * step). Each call makes progress and says whether the node is drained; the NodeClaim
 * machine calls it again until it is, so the function keeps no state and a restarted
 * controller simply carries on.
 *
 *   1. Cordon: spec.unschedulable plus the karpenter.sh/disrupted:NoSchedule taint, so
 *      nothing new lands while pods leave.
 *   2. Evict through the Eviction API, so PodDisruptionBudgets are honoured (a refusal just
 *      means "try again next time"). Non-critical pods go first, system-critical ones only
 *      once the rest are gone (as Karpenter does, so logging/CNI outlive the workloads).
 *      DaemonSet pods stay (the node's deletion ends them), terminal pods are ignored and
 *      already-terminating pods are waited for, not evicted again.
 *   3. Pods with karpenter.sh/do-not-disrupt are left alone until the terminationGracePeriod
 *      deadline; after it everything is evicted regardless and the node counts as drained
 *      (terminationGracePeriod is the upper bound on how long a node may block deletion).
 */
import type { ClusterPort, Pod, Taint } from '../../ports/cluster.js';
import { podBlocksDisruption } from '../../disruption/do-not-disrupt.js';
import { TAINT_DISRUPTED } from '../../apis/well-known.js';

/** Pods at or above system-cluster-critical's priority are evicted last. */
export const CRITICAL_PRIORITY = 2_000_000_000;

export interface DrainOptions {
  /** Current time (ms since epoch) from the caller's Clock. */
  now: number;
  /** deletionTimestamp + terminationGracePeriod, or +Infinity when there is none. */
  gracePeriodDeadline: number;
}

export interface DrainProgress {
  drained: boolean;
  /** Pods an eviction was requested for in this call. */
  evicted: string[];
  /** Pods whose eviction a PodDisruptionBudget refused (retry later). */
  refused: string[];
  /** Pods still on the node that keep it from being drained. */
  remaining: string[];
}

function key(pod: Pod): string {
  return `${pod.metadata.namespace}/${pod.metadata.name}`;
}

/** Pods that must leave before the node can go. */
function mustLeave(pod: Pod): boolean {
  if (pod.ownerKind === 'DaemonSet') return false;
  return pod.status.phase !== 'Succeeded' && pod.status.phase !== 'Failed';
}

function hasTaint(taints: readonly Taint[], taint: Taint): boolean {
  return taints.some((t) => t.key === taint.key && t.effect === taint.effect);
}

/** Pods lists seen once, and those seen again with their pods by node (lists are never changed in place). */
const listsSeen = new WeakSet<readonly Pod[]>();
const podsByNode = new WeakMap<readonly Pod[], Map<string, Pod[]>>();

/**
 * The pods of `pods` bound to `nodeName`, in list order. A cache that hands out the same list
 * again while nothing changed (src/sim/cluster.ts) has it indexed once: nodes drain in bursts,
 * and a 1,000-node fleet scanned all 10,000 pods per drain step.
 */
function podsOn(pods: readonly Pod[], nodeName: string): Pod[] {
  let index = podsByNode.get(pods);
  if (!index) {
    if (!listsSeen.has(pods)) {
      listsSeen.add(pods);
      return pods.filter((p) => p.spec.nodeName === nodeName);
    }
    index = new Map();
    for (const pod of pods) {
      const name = pod.spec.nodeName;
      if (!name) continue;
      const list = index.get(name);
      if (list) list.push(pod);
      else index.set(name, [pod]);
    }
    podsByNode.set(pods, index);
  }
  return index.get(nodeName) ?? [];
}

/** One drain step with details (for logs and tests); see drain() for the boolean form. */
export async function drainStep(cluster: ClusterPort, nodeName: string, options: DrainOptions): Promise<DrainProgress> {
  const node = (await cluster.listNodes()).find((n) => n.metadata.name === nodeName);
  const progress: DrainProgress = { drained: false, evicted: [], refused: [], remaining: [] };
  if (node && (!node.spec.unschedulable || !hasTaint(node.spec.taints, TAINT_DISRUPTED))) {
    const taints = hasTaint(node.spec.taints, TAINT_DISRUPTED) ? node.spec.taints : [...node.spec.taints, TAINT_DISRUPTED];
    await cluster.patchNode(nodeName, { unschedulable: true, taints });
  }
  const pastDeadline = options.now >= options.gracePeriodDeadline;
  const leaving = podsOn(await cluster.listPods(), nodeName).filter(mustLeave);
  const notTerminating = leaving.filter((p) => p.metadata.deletionTimestamp === undefined);
  const evictable = notTerminating.filter((p) => pastDeadline || !podBlocksDisruption(p));
  const nonCritical = evictable.filter((p) => (p.spec.priority ?? 0) < CRITICAL_PRIORITY);
  const blockingNonCritical = notTerminating.some((p) => (p.spec.priority ?? 0) < CRITICAL_PRIORITY) ||
    leaving.some((p) => p.metadata.deletionTimestamp !== undefined && (p.spec.priority ?? 0) < CRITICAL_PRIORITY);
  const wave = nonCritical.length > 0 || blockingNonCritical ? nonCritical : evictable;
  for (const pod of wave) {
    const accepted = await cluster.evictPod(pod.metadata.namespace, pod.metadata.name);
    (accepted ? progress.evicted : progress.refused).push(key(pod));
  }
  progress.remaining = leaving.map(key);
  // Without a Node there is nothing left to drain; past the deadline the VM's deletion ends
  // whatever is still running (and deletion must not wait forever on a stuck PDB).
  progress.drained = !node || leaving.length === 0 || pastDeadline;
  return progress;
}

/**
 * Cordons the node, evicts what may be evicted now, and resolves true once the node is
 * drained (no pods left that must leave, or the grace period deadline has passed).
 */
export async function drain(cluster: ClusterPort, nodeName: string, options: DrainOptions): Promise<boolean> {
  return (await drainStep(cluster, nodeName, options)).drained;
}
