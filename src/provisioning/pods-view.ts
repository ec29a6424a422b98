/**
 * What a provisioning pass reads of the pods: the pending ones it plans for, the bound ones
 * whose requests use up NodeClaims, and one pod per DaemonSet. A fleet holds 10,000 pods and
 * most passes see a handful of them changed, so each list is walked alongside the last one
 * and only a pod that is not the very same object (informer caches hand out an unchanged pod
 * as the same object) is classified again. The lists come out exactly as filtering the whole
 * list would make them, in list order.
 */
import type { Pod } from '../ports/cluster.js';
import { KeptList, sameNamespacedName, walkAlongside } from '../utils/list-walk.js';

export interface PodsView {
  pending: Pod[];
  bound: Pod[];
  daemonSets: Pod[];
}

const PENDING = 1;
const BOUND = 2;
const DAEMON_SET = 4;

/** A pod the kube-scheduler marked unschedulable that nobody has bound or is deleting. */
export function isProvisionable(pod: Pod): boolean {
  if (pod.spec.nodeName || pod.metadata.deletionTimestamp || pod.status.phase !== 'Pending') return false;
  if (pod.ownerKind === 'DaemonSet') return false;
  return pod.status.conditions.some((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable');
}

/**
 * One pod per DaemonSet. Pods carry no owner name here, so DaemonSet pods are told apart by
 * namespace and name minus the controller's 5-character suffix.
 */
export function daemonSetRepresentatives(pods: readonly Pod[]): Pod[] {
  const byOwner = new Map<string, Pod>();
  for (const pod of pods) {
    if (pod.ownerKind !== 'DaemonSet') continue;
    const owner = `${pod.metadata.namespace}/${pod.metadata.name.replace(/-[a-z0-9]{5}$/, '')}`;
    if (!byOwner.has(owner)) byOwner.set(owner, pod);
  }
  return [...byOwner.values()];
}

function classify(pod: Pod): number {
  return (isProvisionable(pod) ? PENDING : 0) | (pod.spec.nodeName !== undefined ? BOUND : 0) | (pod.ownerKind === 'DaemonSet' ? DAEMON_SET : 0);
}

export class PodsViewTracker {
  private readonly last = new KeptList<Pod>();
  /** Each pod's class in the last list, and the buffer the next list's go into (swapped each update: no 10,000-byte array per pass). */
  private classes: Uint8Array = new Uint8Array(0);
  private spare: Uint8Array = new Uint8Array(0);
  private view: PodsView = { pending: [], bound: [], daemonSets: [] };

  /**
   * The view of `pods`, and `goneUids`: the uids of the last view's pending pods that none of this one's has (what was kept
   * per pending pod can be dropped for them alone, not sought by a sweep over all of them).
   */
  update(pods: readonly Pod[]): PodsView & { goneUids: string[] } {
    const { classes, touched, left, entered } = this.classify(pods);
    // A list none of whose pods was written, added or removed is the last one: the same pods
    // in the same order (a fleet's 8,000 bound pods while only pending ones moved).
    const pending: Pod[] = touched & PENDING ? [] : this.view.pending;
    const bound: Pod[] = touched & BOUND ? [] : this.view.bound;
    const daemonSets: Pod[] = [];
    const wanted = touched & (PENDING | BOUND);
    for (let j = 0; j < pods.length; j++) {
      const c = classes[j]!;
      if (c === 0) continue;
      const pod = pods[j]!;
      if (c & wanted & PENDING) pending.push(pod);
      if (c & wanted & BOUND) bound.push(pod);
      if (c & DAEMON_SET) daemonSets.push(pod);
    }
    this.view = { pending, bound, daemonSets: daemonSetRepresentatives(daemonSets) };
    this.last.keep(pods);
    this.spare = this.classes;
    this.classes = classes;
    let goneUids = left;
    if (left.length > 0 && entered.length > 0) {
      const still = new Set(entered);
      goneUids = left.filter((uid) => !still.has(uid));
    }
    return { ...this.view, goneUids };
  }

  /**
   * Each pod's class, copied from the last list where the pod is the same object, the classes
   * of every pod written, added or gone, and the uids of pending pods among those gone or
   * written (`left`) and among those added or written (`entered`): a pending pod moved or
   * rewritten in place is in both.
   */
  private classify(pods: readonly Pod[]): { classes: Uint8Array; touched: number; left: string[]; entered: string[] } {
    const lastClasses = this.classes;
    // Every position of the new list is written by the walk below, so the reused buffer needs no clearing.
    const classes = this.spare.length >= pods.length ? this.spare : new Uint8Array(Math.max(pods.length, this.spare.length * 2));
    let touched = 0;
    const left: string[] = [];
    const entered: string[] = [];
    walkAlongside(this.last.list, pods, sameNamespacedName, {
      unchanged: (i, j, count) => {
        classes.set(lastClasses.subarray(i, i + count), j);
      },
      replaced: (old, pod, i, j) => {
        classes[j] = classify(pod);
        touched |= lastClasses[i]! | classes[j]!;
        if (lastClasses[i]! & PENDING) left.push(old.metadata.uid);
        if (classes[j]! & PENDING) entered.push(pod.metadata.uid);
      },
      added: (pod, j) => {
        classes[j] = classify(pod);
        touched |= classes[j]!;
        if (classes[j]! & PENDING) entered.push(pod.metadata.uid);
      },
      removed: (old, i) => {
        touched |= lastClasses[i]!;
        if (lastClasses[i]! & PENDING) left.push(old.metadata.uid);
      },
    });
    return { classes, touched, left, entered };
  }
}

/**
 * A pass's view of the pods, kept while the pod cache's version is the same: a fleet holds
 * 10,000 pods, and most passes that plan at all do so because NodeClaims changed.
 */
export class PodsViewCache {
  private last: { version: string; view: PodsView } | undefined;
  private readonly tracker = new PodsViewTracker();

  /** The view of `pods` at cache `version` (undefined: the port cannot say, so nothing is kept). */
  of(pods: readonly Pod[], version: string | undefined): PodsView & { goneUids: readonly string[] } {
    const kept = this.last;
    if (version !== undefined && kept?.version === version) return { ...kept.view, goneUids: [] };
    const { goneUids, ...view } = this.tracker.update(pods);
    this.last = version === undefined ? undefined : { version, view };
    return { ...view, goneUids };
  }
}
