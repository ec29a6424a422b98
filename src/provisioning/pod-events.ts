/**
 * The events a provisioning pass puts on pods, as Karpenter's provisioner publishes them:
 * Nominated (the NodeClaim a pod should schedule on), FailedScheduling (why no NodePool can
 * take it) and InsufficientQuota. A pod gets one event per reason and message: one stuck for
 * hours is not told the same again every pass.
 */
import type { ClusterPort, KubeEvent, NodeClaim, Pod } from '../ports/cluster.js';
import { BackgroundQueue, forEachBounded } from '../utils/bounded.js';
import { podKey, type NodeClaimPlan, type SchedulingResult } from './scheduler.js';

export const EVENT_REASON_FAILED_SCHEDULING = 'FailedScheduling';
export const EVENT_REASON_NOMINATED = 'Nominated';
/** Quota ruled an offering out for a pod that stays pending: which quota, where, limit, usage and request. */
export const EVENT_REASON_INSUFFICIENT_QUOTA = 'InsufficientQuota';

/** Each pod event's message: a fixed prefix per reason, then what varies (the NodeClaim, why the pod was refused). */
const EVENT_MESSAGE_PREFIX: Readonly<Record<string, string>> = {
  [EVENT_REASON_NOMINATED]: 'Pod should schedule on: nodeclaim/',
  [EVENT_REASON_FAILED_SCHEDULING]: 'Failed to schedule pod, ',
};

/** Bounded memory of events already sent, so a pod stuck for hours gets one event per reason. */
const MAX_REMEMBERED_EVENTS = 50_000;

export interface PodEventsOptions {
  cluster: ClusterPort;
  log: { warn(fields: Record<string, unknown>, message: string): void };
  /** How many events are sent at once (the provisioner's createConcurrency). */
  concurrency: number;
  /** An event could not be sent: the next reconcile must run to send it again. */
  onFailure: () => void;
}

export class PodEvents {
  /**
   * Pod uid → reason → what the message last sent said after its reason's fixed prefix (by
   * uid, so forgetting a pod is one delete). The part that varies is kept, not the message: a
   * pass with 2,000 pods still refused compares each one's reason string (one per pod group)
   * without building its message.
   */
  private readonly sent = new Map<string, Map<string, string>>();
  private sentCount = 0;
  /** Nominated events in flight, `concurrency` at a time. */
  private readonly background: BackgroundQueue;

  constructor(private readonly options: PodEventsOptions) {
    this.background = new BackgroundQueue(options.concurrency);
  }

  /**
   * Nominated for each pod of each NodeClaim launched (`launched[i]` made for `plans[i]`), sent
   * in the background once every NodeClaim exists, as Karpenter publishes them: a pass's ten
   * events a NodeClaim would hold back its later creates and the next pass.
   */
  nominate(launched: ReadonlyArray<NodeClaim | undefined>, plans: readonly NodeClaimPlan[], pending: readonly Pod[]): void {
    const podsByKey = new Map(pending.map((p) => [podKey(p), p]));
    launched.forEach((claim, i) => {
      for (const key of claim ? plans[i]!.podKeys : []) {
        const pod = podsByKey.get(key);
        if (pod && !this.alreadySent(pod, EVENT_REASON_NOMINATED, claim!.metadata.name)) this.background.push(() => this.record(pod, 'Normal', EVENT_REASON_NOMINATED, claim!.metadata.name));
      }
    });
  }

  /** FailedScheduling with each refused pod's reason, and InsufficientQuota with the quota `shortfall` when there is one. */
  refused(unschedulable: SchedulingResult['unschedulable'], shortfall: string | undefined): Promise<void> {
    return forEachBounded(unschedulable, this.options.concurrency, async ({ pod, reason }) => {
      if (!this.alreadySent(pod, EVENT_REASON_FAILED_SCHEDULING, reason)) await this.record(pod, 'Warning', EVENT_REASON_FAILED_SCHEDULING, reason);
      if (shortfall && !this.alreadySent(pod, EVENT_REASON_INSUFFICIENT_QUOTA, shortfall)) await this.record(pod, 'Warning', EVENT_REASON_INSUFFICIENT_QUOTA, shortfall);
    });
  }

  /** Events are only ever sent for pending pods: what is remembered for a pod goes when it stops being one. */
  forget(uids: readonly string[]): void {
    if (this.sent.size === 0) return;
    for (const uid of uids) {
      const sent = this.sent.get(uid);
      if (!sent) continue;
      this.sentCount -= sent.size;
      this.sent.delete(uid);
    }
  }

  /** Whether this pod's last event for the reason said the same (checked before awaiting anything). */
  private alreadySent(pod: Pod, reason: string, detail: string): boolean {
    return this.sent.get(pod.metadata.uid)?.get(reason) === detail;
  }

  /** Sends `reason`'s message with `detail` (EVENT_MESSAGE_PREFIX) unless the pod's last one for it said the same. */
  private async record(pod: Pod, type: KubeEvent['type'], reason: string, detail: string): Promise<void> {
    const uid = pod.metadata.uid;
    if (this.alreadySent(pod, reason, detail)) return;
    const message = `${EVENT_MESSAGE_PREFIX[reason] ?? ''}${detail}`;
    if (this.sentCount >= MAX_REMEMBERED_EVENTS) {
      this.sent.clear();
      this.sentCount = 0;
    }
    let sent = this.sent.get(uid);
    if (!sent) this.sent.set(uid, (sent = new Map()));
    if (!sent.has(reason)) this.sentCount++;
    sent.set(reason, detail);
    try {
      await this.options.cluster.recordEvent({
        involvedObject: { kind: 'Pod', name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid },
        type, reason, message,
      });
    } catch (error) {
      // Events are best effort; forget it so the next reconcile tries again.
      const remembered = this.sent.get(uid);
      if (remembered?.delete(reason)) {
        this.sentCount--;
        if (remembered.size === 0) this.sent.delete(uid);
      }
      this.options.onFailure();
      this.options.log.warn({ pod: podKey(pod), err: error instanceof Error ? error.message : String(error) }, 'recording event failed');
    }
  }
}
