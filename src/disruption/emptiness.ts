/**
 * Emptiness: a node whose only pods are DaemonSet, terminal or terminating pods has nothing
 * to reschedule. Both consolidation policies remove such nodes once they have been empty
 * (and, for underutilisation, unchanged) for consolidateAfter.
 *
 * "Since when" is the NodeClaim's status.lastPodEventTime, as upstream Karpenter keeps it: the
 * last time a reschedulable pod arrived on its node or left it (terminal, terminating or gone),
 * written when a pass sees the node's pod set change, at most once per 10 s (upstream's
 * dedupe). It lives on the NodeClaim, so a restarted controller counts from the same moment;
 * a change it did not see while it was down is missed, as upstream's pod watch misses it.
 */
import type { Pod } from '../ports/cluster.js';

/** Pods that would need a new home if the node went away. */
export function isReschedulable(pod: Pod): boolean {
  if (pod.ownerKind === 'DaemonSet') return false;
  if (pod.status.phase === 'Succeeded' || pod.status.phase === 'Failed') return false;
  return pod.metadata.deletionTimestamp === undefined;
}

/** The identity of the reschedulable pods on a node: equal signatures, same pods. */
export function reschedulableSignature(podsOnNode: readonly Pod[]): string {
  return podsOnNode.filter(isReschedulable).map((p) => p.metadata.uid).sort().join(',');
}

/** Upstream's podevents controller writes lastPodEventTime at most once per 10 s per NodeClaim. */
export const POD_EVENT_DEDUPE_MS = 10_000;

/**
 * A NodeClaim's last pod event after a pass: `seen` is what this process last worked out (undefined:
 * nothing yet), `stored` its status.lastPodEventTime, `changed` whether the pass saw its pod set
 * change. A change within the dedupe window of the last event keeps that event, as upstream does.
 */
export function lastPodEvent(changed: boolean, seen: number | undefined, stored: number | undefined, now: number): number | undefined {
  const known = seen === undefined ? stored : stored === undefined ? seen : Math.max(seen, stored);
  if (!changed) return known;
  return known !== undefined && now - known < POD_EVENT_DEDUPE_MS ? known : now;
}
