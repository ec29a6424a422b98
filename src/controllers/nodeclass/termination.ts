import type { AzureFlexNodeClass, NodeClaim } from '../../ports/cluster.js';
import { type NodeClassControllerDeps } from './status.js';
import { FINALIZER_NODECLASS, NODECLASS_GROUP } from '../../apis/well-known.js';

export const NODECLASS_KIND = 'AzureFlexNodeClass';
/** Karpenter re-emits WaitingOnNodeClaimTermination on this cadence. */
export const WAITING_EVENT_INTERVAL_MS = 10 * 60_000;

export function referencesNodeClass(nodeClaim: NodeClaim, nodeClassName: string): boolean {
  const ref = nodeClaim.spec.nodeClassRef;
  return ref.group === NODECLASS_GROUP && ref.kind === NODECLASS_KIND && ref.name === nodeClassName;
}

/**
 * NodeClass termination: a NodeClass being deleted keeps our finalizer while any NodeClaim
 * still references it (those NodeClaims need its subscription/resource group to delete
 * their VM, NIC and disk — removing the class first is how resources leak). While waiting,
 * a Normal Event WaitingOnNodeClaimTermination names the NodeClaims, re-emitted every 10
 * minutes. It does not delete NodeClaims itself: their owners (NodePool, disruption) do.
 */
export class NodeClassTerminationController {
  readonly name = 'nodeclass.termination';
  readonly intervalMs: number;
  /** uid -> clock time of the last WaitingOnNodeClaimTermination Event. */
  private readonly lastWaitingEvent = new Map<string, number>();

  constructor(private readonly deps: NodeClassControllerDeps) {
    this.intervalMs = deps.intervalMs ?? 10_000;
  }

  async reconcile(): Promise<void> {
    const classes = await this.deps.cluster.listNodeClasses();
    const deleting = classes.filter((c) => c.metadata.deletionTimestamp && c.metadata.finalizers.includes(FINALIZER_NODECLASS));
    const live = new Set(classes.map((c) => c.metadata.uid));
    for (const uid of [...this.lastWaitingEvent.keys()]) if (!live.has(uid)) this.lastWaitingEvent.delete(uid);
    if (deleting.length === 0) return;
    const claims = await this.deps.cluster.listNodeClaims();
    for (const nc of deleting) {
      try {
        await this.reconcileOne(nc, claims);
      } catch (e) {
        this.deps.onError?.(e, nc.metadata.name);
      }
    }
  }

  /** Returns the names of NodeClaims still blocking deletion (empty once the finalizer is gone). */
  async reconcileOne(nodeClass: AzureFlexNodeClass, claims: NodeClaim[]): Promise<string[]> {
    const name = nodeClass.metadata.name;
    const uid = nodeClass.metadata.uid;
    const blocking = claims
      .filter((c) => referencesNodeClass(c, name))
      .map((c) => c.metadata.name)
      .sort();
    if (blocking.length > 0) {
      const now = this.deps.clock.now();
      const last = this.lastWaitingEvent.get(uid);
      if (last === undefined || now - last >= WAITING_EVENT_INTERVAL_MS) {
        this.lastWaitingEvent.set(uid, now);
        await this.deps.cluster.recordEvent({
          involvedObject: { kind: NODECLASS_KIND, name, uid },
          type: 'Normal',
          reason: 'WaitingOnNodeClaimTermination',
          message: `Waiting on NodeClaim termination for ${blocking.join(', ')}`,
        });
      }
      return blocking;
    }
    this.lastWaitingEvent.delete(uid);
    await this.deps.cluster.patchNodeClassMetadata(name, {
      finalizers: nodeClass.metadata.finalizers.filter((f) => f !== FINALIZER_NODECLASS),
    });
    return [];
  }
}
