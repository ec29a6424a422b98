/**
 * Termination, the karpenter.sh/termination finalizer's work: the node drained, the VM
 * deleted, and, once ARM's own answers show nothing of the claim left, the Node and the
 * finalizer released (claimTerminationActors, at the end).
 *
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
import { fromPromise } from 'xstate';
import { refFromId } from '../../azure/naming.js';
import { durationOrNever } from '../../utils/duration.js';
import { AzureError } from '../../ports/azure.js';
import { ClusterError, type AzureFlexNodeClass, type ClusterPort, type Node, type Pod, type Taint } from '../../ports/cluster.js';
import { podBlocksDisruption } from '../../apis/do-not-disrupt.js';
import { FINALIZER_TERMINATION, TAINT_DISRUPTED } from '../../apis/well-known.js';
import { assertLeader, namesOf, nodeOf, refIn, type LifecycleScope } from '../scope.js';
import { ours } from '../ownership.js';
import { dropQuotaMarks } from './offerings.js';

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

/** The NodeClaim's node drained (RuntimeDeps.drain), by its terminationGracePeriod from the deletion. */
async function drainClaim(s: LifecycleScope, name: string): Promise<boolean> {
  const nc = s.world()?.nodeClaims.get(name);
  const node = nc ? nodeOf(s, nc) : undefined;
  if (!node || !s.deps.drain) return true;
  const deletedAt = nc?.metadata.deletionTimestamp ? Date.parse(nc.metadata.deletionTimestamp) : s.deps.clock.now();
  const grace = durationOrNever(nc?.spec.terminationGracePeriod);
  return s.deps.drain(node.metadata.name, grace === undefined ? Number.POSITIVE_INFINITY : deletedAt + grace);
}

/** The VM delete, started (a GPU VM's takes minutes): the world shows it finish. */
async function deleteVm(s: LifecycleScope, name: string): Promise<void> {
  assertLeader(s);
  const nc = s.world()?.nodeClaims.get(name);
  const cls = nc ? s.world()?.nodeClasses.get(nc.spec.nodeClassRef.name) : undefined;
  const vmName = namesOf(s, name).vm;
  const vm = s.world()?.vms.get(vmName);
  const ref = cls ? refIn(cls, vmName) : vm ? refFromId(vm.id) : undefined;
  if (!ref) return;
  // A read first: a failed launch left no VM, and a DELETE would spend a write token on a
  // 404; a VM already Deleting needs nothing (the delete runs for minutes; we observe it go).
  // A VM of the name that is not this NodeClaim's (a name conflict) is none of ours: left alone.
  const existing = ours(await s.deps.arm.getVm(ref), s.deps.config.clusterName, name);
  if (!existing || existing.provisioningState === 'Deleting') return;
  const started = s.deps.clock.now();
  await s.deps.arm.deleteVm(ref).catch((error: unknown) => {
    s.deps.observer?.cloudProviderCall?.({ method: 'Delete', nodeClaim: name, seconds: (s.deps.clock.now() - started) / 1000, error });
    throw error;
  });
  s.deps.observer?.cloudProviderCall?.({ method: 'Delete', nodeClaim: name, seconds: (s.deps.clock.now() - started) / 1000 });
  if (existing.provisioningState === 'Succeeded' && s.deps.offerings) {
    s.deps.offerings.noteCoresFreed(existing.vmSize, existing.location);
    await dropQuotaMarks(s, existing.vmSize, existing.location);
  }
}

/**
 * Node object goes first (Karpenter's order: deleted, then our karpenter.sh/termination
 * finalizer on it released, as the instance is gone), then the finalizer that held the NodeClaim.
 * Before the finalizer goes, ARM's own answers verify that it holds nothing of the claim:
 * the NIC is gone (its machine's DELETE finished, else a GET), and so is the OS disk (a GET:
 * a VM delete cascades it; one that survived, detached, is deleted here). Lists cannot be
 * trusted for this: they lag. A NIC or disk of the name that is not the NodeClaim's (another
 * cluster's, or untagged) is nothing of the claim's: never waited for, never deleted.
 */
async function finalize(s: LifecycleScope, name: string): Promise<void> {
  const nc = s.world()?.nodeClaims.get(name);
  const cls = nc ? s.world()?.nodeClasses.get(nc.spec.nodeClassRef.name) : undefined;
  if (nc && cls && s.deps.config.strategy === 'machine') await verifyNothingLeft(s, name, cls);
  const node = nc ? nodeOf(s, nc) : undefined;
  if (node) await releaseNode(s, node);
  if (nc && nc.metadata.finalizers.includes(FINALIZER_TERMINATION)) {
    await s.deps.cluster.patchNodeClaimMetadata(name, { finalizers: nc.metadata.finalizers.filter((f) => f !== FINALIZER_TERMINATION) });
  }
}

/** Deletes the Node (404 is success) and releases our finalizer on it, if it has it. */
async function releaseNode(s: LifecycleScope, node: Node): Promise<void> {
  const name = node.metadata.name;
  if (!node.metadata.deletionTimestamp) await s.deps.cluster.deleteNode(name);
  if (!node.metadata.finalizers.includes(FINALIZER_TERMINATION)) return;
  await s.deps.cluster.patchNode(name, { metadata: { finalizers: node.metadata.finalizers.filter((f) => f !== FINALIZER_TERMINATION) } }).catch((err: unknown) => {
    if (!(err instanceof ClusterError && err.reason === 'NotFound')) throw err;
  });
}

async function verifyNothingLeft(s: LifecycleScope, name: string, cls: AzureFlexNodeClass): Promise<void> {
  const names = namesOf(s, name);
  const cluster = s.deps.config.clusterName;
  // The NIC machine's DELETE finished (or a GET found nothing) and nothing since showed the
  // NIC: that is ARM's own answer, as good as another GET. A list's absence is not.
  if (!s.world()?.nicAnsweredGone(names.nic)) {
    const nic = ours(await s.deps.arm.getNic(refIn(cls, names.nic)), cluster, name);
    if (nic) throw new AzureError('NicInUse', 409, `NIC ${nic.name} still exists; the finalizer stays until it is reaped`);
  }
  const diskRef = refIn(cls, names.osDisk);
  const disk = ours(await s.deps.arm.getDisk(diskRef), cluster, name);
  if (!disk) return;
  if (disk.managedBy) throw new AzureError('OperationNotAllowed', 409, `disk ${disk.name} is still attached to ${disk.managedBy}`);
  assertLeader(s);
  await s.deps.arm.deleteDisk(diskRef);
}

/** The termination effects as the NodeClaim machine invokes them; a started VM delete asks for an early look. */
export function claimTerminationActors(s: LifecycleScope) {
  return {
    drain: fromPromise<boolean, { name: string }>(({ input }) => drainClaim(s, input.name)),
    deleteVm: fromPromise<void, { name: string }>(async ({ input }) => {
      await s.traced(`nodeclaim/${input.name}`, 'deleteVm', () => deleteVm(s, input.name));
      s.requestResync();
    }),
    finalize: fromPromise<void, { name: string }>(({ input }) => finalize(s, input.name)),
  };
}
