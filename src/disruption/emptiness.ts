/**
 * Emptiness: a node whose only pods are DaemonSet, terminal or terminating pods has nothing
 * to reschedule. Both consolidation policies remove such nodes once they have been empty
 * (and, for underutilisation, unchanged) for consolidateAfter.
 *
 * "Since when" is kept in memory and keyed by the set of pods on the node, which is what
 * Karpenter's lastPodEventTime approximates. After a controller restart the clock starts
 * again: that only delays consolidation, never makes it early.
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

/** Remembers, per NodeClaim, when the set of reschedulable pods on it last changed. */
export class PodChurnTracker {
  private readonly byClaim = new Map<string, { signature: string; since: number }>();

  /** Records the current pods (their reschedulableSignature) and returns the time the set last changed. */
  observe(nodeClaimName: string, signature: string, now: number): number {
    const previous = this.byClaim.get(nodeClaimName);
    if (previous && previous.signature === signature) return previous.since;
    this.byClaim.set(nodeClaimName, { signature, since: now });
    return now;
  }

  /** Drops the state of a NodeClaim that no longer exists. */
  forget(nodeClaimName: string): void {
    this.byClaim.delete(nodeClaimName);
  }
}
