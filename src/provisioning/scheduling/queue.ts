/**
 * The order pods are tried in (Karpenter's queue.go): pods that topology concerns (or whose
 * volumes pin them) go one by one, most constrained first; the rest keep the bulk path, in
 * groups of identical pods, largest first (pod-groups.ts).
 */
import type { Pod } from '../../ports/cluster.js';
import { Requirements } from '../requirements.js';
import { EMPTY_TOPOLOGY, type PodTopology, type Topology } from './topology.js';
import type { SchedulingInput } from './types.js';

export interface ConstrainedPod {
  topology: PodTopology;
  /** What the pod's volumes require of the node (intersected with each of its terms). */
  volumes: Requirements | undefined;
  /** Why the pod cannot be considered at all. */
  error: string | undefined;
}

/** Pending pods: those the bulk path may place, and those placed one at a time with what constrains them. */
export function splitPending(input: SchedulingInput, groups: Topology, invalid: ReadonlyMap<Pod, string>): { plain: Pod[]; constrained: Map<Pod, ConstrainedPod> } {
  const constrained = new Map<Pod, ConstrainedPod>();
  const plain: Pod[] = [];
  for (const pod of input.pendingPods) {
    const error = invalid.get(pod);
    const volumes = input.volumeRequirements?.(pod);
    const topology = error === undefined ? groups.of(pod) : undefined;
    if (error === undefined && topology === undefined && volumes === undefined) {
      plain.push(pod);
      continue;
    }
    const entry: ConstrainedPod = { topology: topology ?? EMPTY_TOPOLOGY, volumes: undefined, error };
    if (volumes && 'error' in volumes) entry.error ??= volumes.error;
    else if (volumes) entry.volumes = Requirements.fromSelectors(volumes);
    constrained.set(pod, entry);
  }
  return { plain, constrained };
}

/**
 * Karpenter's queue: each item is tried in turn, and one that fails goes to the back; the
 * round ends once every item left has failed since the last one placed. Returns those
 * items, in queue order, with the reason each last failed.
 */
export function untilNoProgress<T>(items: readonly T[], place: (item: T) => string | undefined): Array<{ item: T; reason: string }> {
  // placed: how many items had been placed when this one last failed (-1: not tried yet).
  const queue = items.map((item) => ({ item, reason: '', placed: -1 }));
  let placed = 0;
  let head = 0;
  while (head < queue.length && queue[head]!.placed !== placed) {
    const entry = queue[head++]!;
    const reason = place(entry.item);
    if (reason === undefined) placed++;
    else queue.push({ item: entry.item, reason, placed });
  }
  return queue.slice(head).map(({ item, reason }) => ({ item, reason }));
}
