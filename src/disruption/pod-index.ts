/**
 * The pods bound to each node, kept from pass to pass. Each pods list is walked alongside the
 * previous one: an informer cache hands out an unchanged pod as the same object, so a pass
 * pays for the pods that were written, deleted or added, not for all 10,000 of a fleet. A port
 * that copies every list (or a reordered list) costs one rebuild, what a plain walk costs.
 */
import type { Pod } from '../ports/cluster.js';
import { isProvisionable } from '../provisioning/pods-view.js';
import { KeptList, sameNamespacedName, walkAlongside, type ListChanges } from '../utils/list-walk.js';

export interface PodsOnNode {
  pods: Set<Pod>;
  /** Changes whenever a pod bound to the node is added, removed or replaced (unique across nodes). */
  version: number;
}

export class PodIndex {
  private readonly last = new KeptList<Pod>();
  private readonly byNode = new Map<string, PodsOnNode>();
  private provisionable = 0;
  private versions = 0;
  /** Nodes whose pods changed since takeChanged() last answered; 'all' after a rebuild. */
  private changed: Set<string> | 'all' = 'all';

  /** The nodes whose pods changed since the last call (every node: 'all'). */
  takeChanged(): ReadonlySet<string> | 'all' {
    const changed = this.changed;
    this.changed = new Set();
    return changed;
  }

  /** Some pod waits for capacity (the provisioner's definition). */
  get anyProvisionable(): boolean {
    return this.provisionable > 0;
  }

  onNode(nodeName: string): PodsOnNode | undefined {
    return this.byNode.get(nodeName);
  }

  /** Brings the index to `pods` (the cache's list, in its order). */
  update(pods: readonly Pod[]): void {
    // Past this many differences a rebuild is cheaper than matching them up one by one.
    const walked = walkAlongside(this.last.list, pods, sameNamespacedName, this.changes, Math.max(64, pods.length >> 2));
    if (!walked) return this.rebuild(pods);
    this.last.keep(pods);
  }

  private readonly changes: ListChanges<Pod> = {
    replaced: (old, pod) => {
      this.remove(old);
      this.add(pod);
    },
    removed: (old) => this.remove(old),
    added: (pod) => this.add(pod),
  };

  private rebuild(pods: readonly Pod[]): void {
    this.changed = 'all';
    this.byNode.clear();
    this.provisionable = 0;
    for (const pod of pods) this.add(pod);
    this.last.keep(pods);
  }

  private add(pod: Pod): void {
    const nodeName = pod.spec.nodeName;
    if (!nodeName) {
      if (isProvisionable(pod)) this.provisionable++;
      return;
    }
    let onNode = this.byNode.get(nodeName);
    if (!onNode) this.byNode.set(nodeName, (onNode = { pods: new Set(), version: 0 }));
    onNode.pods.add(pod);
    onNode.version = ++this.versions;
    if (this.changed !== 'all') this.changed.add(nodeName);
  }

  private remove(pod: Pod): void {
    const nodeName = pod.spec.nodeName;
    if (!nodeName) {
      if (isProvisionable(pod)) this.provisionable--;
      return;
    }
    const onNode = this.byNode.get(nodeName);
    if (!onNode) return;
    onNode.pods.delete(pod);
    onNode.version = ++this.versions;
    if (this.changed !== 'all') this.changed.add(nodeName);
    if (onNode.pods.size === 0) this.byNode.delete(nodeName);
  }
}
