/**
 * The pods already bound to nodes, as the scheduler counts them: their requests per node,
 * kept from list to list, and which of them keep newcomers away.
 */
import type { Pod } from '../../ports/cluster.js';
import { addInto, podRequests, type Resources } from '../resources.js';
import { sameNamespacedName, walkAlongside, type ListChanges } from '../../utils/list-walk.js';

/** What the pods bound to one node request, and a version that changes whenever that does. */
export interface NodeUsage {
  used: Resources;
  /** Unique across nodes and never reused (so a cached answer for a version stays true). */
  version: number;
}

/**
 * Requests of the pods bound to each node (Succeeded and Failed pods hold nothing), kept from
 * list to list: each list of bound pods is walked alongside the last one, and an unchanged pod
 * is the same object (informer caches hand them out so), so a pass re-sums only the nodes whose
 * pods were written, deleted or added, not all 8,000 bound pods of a fleet. A list that differs
 * in more places (copies, another order) is summed afresh, what a plain walk costs.
 */
export class BoundUsage {
  private last: readonly Pod[] = [];
  private readonly podsByNode = new Map<string, Set<Pod>>();
  private readonly byNode = new Map<string, NodeUsage>();
  private versions = 0;
  /** Nodes whose usage changed since takeChanged() last answered; 'all' after starting afresh. */
  private changed: Set<string> | 'all' = 'all';
  /** The running pods of `last` with required anti-affinity, in list order; undefined once a pod that has or had such a rule changed. */
  private antiAffinity: readonly Pod[] | undefined;

  /** Brings the sums to `pods`; throws what podRequests throws for a bound pod (and then starts afresh next time). */
  update(pods: readonly Pod[]): ReadonlyMap<string, NodeUsage> {
    if (pods === this.last) return this.byNode;
    const dirty = new Set<string>();
    try {
      if (!this.walk(pods, dirty)) {
        this.antiAffinity = undefined;
        for (const name of this.podsByNode.keys()) dirty.add(name);
        this.podsByNode.clear();
        for (const pod of pods) this.add(pod, dirty);
      }
      for (const name of dirty) {
        const onNode = this.podsByNode.get(name);
        if (!onNode) {
          this.byNode.delete(name);
          continue;
        }
        const used: Resources = {};
        for (const pod of onNode) addInto(used, podRequests(pod));
        this.byNode.set(name, { used, version: ++this.versions });
      }
    } catch (error) {
      this.last = [];
      this.podsByNode.clear();
      this.byNode.clear();
      this.changed = 'all';
      this.antiAffinity = undefined;
      throw error;
    }
    if (this.changed !== 'all') for (const name of dirty) this.changed.add(name);
    this.last = pods;
    return this.byNode;
  }

  /**
   * The running pods with required anti-affinity of the list last brought in, in its order:
   * worked out again only after a pod that has or had such a rule was written, added or removed.
   */
  withAntiAffinity(): readonly Pod[] {
    return (this.antiAffinity ??= this.last.filter((pod) => hasRequiredAntiAffinity(pod) && isRunningBound(pod)));
  }

  /** The nodes whose usage changed since the last call (every node: 'all'). */
  takeChanged(): ReadonlySet<string> | 'all' {
    const changed = this.changed;
    this.changed = new Set();
    return changed;
  }

  /** Applies the differences from the last list; false when there are too many to be worth it. */
  private walk(pods: readonly Pod[], dirty: Set<string>): boolean {
    const changes: ListChanges<Pod> = {
      replaced: (old, pod) => {
        if (hasRequiredAntiAffinity(old) || hasRequiredAntiAffinity(pod)) this.antiAffinity = undefined;
        this.remove(old, dirty);
        this.add(pod, dirty);
      },
      removed: (old) => {
        if (hasRequiredAntiAffinity(old)) this.antiAffinity = undefined;
        this.remove(old, dirty);
      },
      added: (pod) => {
        if (hasRequiredAntiAffinity(pod)) this.antiAffinity = undefined;
        this.add(pod, dirty);
      },
    };
    return walkAlongside(this.last, pods, sameNamespacedName, changes, Math.max(64, pods.length >> 2));
  }

  private add(pod: Pod, dirty: Set<string>): void {
    const nodeName = pod.spec.nodeName;
    if (!nodeName || pod.status.phase === 'Succeeded' || pod.status.phase === 'Failed') return;
    let onNode = this.podsByNode.get(nodeName);
    if (!onNode) this.podsByNode.set(nodeName, (onNode = new Set()));
    onNode.add(pod);
    dirty.add(nodeName);
  }

  private remove(pod: Pod, dirty: Set<string>): void {
    const nodeName = pod.spec.nodeName;
    if (!nodeName) return;
    const onNode = this.podsByNode.get(nodeName);
    if (!onNode?.delete(pod)) return;
    if (onNode.size === 0) this.podsByNode.delete(nodeName);
    dirty.add(nodeName);
  }
}

export function hasRequiredAntiAffinity(pod: Pod): boolean {
  return Boolean(pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length);
}

/** Bound to a node and not finished: its requests and rules still hold there. */
export function isRunningBound(pod: Pod): boolean {
  return pod.spec.nodeName !== undefined && pod.spec.nodeName !== '' && pod.status.phase !== 'Succeeded' && pod.status.phase !== 'Failed';
}

