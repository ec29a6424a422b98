import type { ClusterPort, Node, NodeClaim } from '../../ports/cluster.js';
import { FINALIZER_TERMINATION, LABEL_NODEPOOL, NODECLASS_GROUP } from '../../apis/well-known.js';
import { isFlexNodePool } from '../../provisioning/scheduler.js';
import { NODECLASS_KIND } from '../nodeclass/termination.js';

export interface NodeTerminationDeps {
  cluster: ClusterPort;
  intervalMs?: number;
  onError?: (e: unknown, nodeName: string) => void;
}

/**
 * Node termination, as Karpenter's: a Node of ours carries the karpenter.sh/termination
 * finalizer from registration (src/lifecycle/nodeclaim/registration.ts), so `kubectl delete node` leaves
 * it Terminating instead of orphaning its VM. This controller deletes the Node's NodeClaim;
 * the NodeClaim's machine then drains the node, deletes the VM, NIC and disk and, in its
 * finalize step, releases this finalizer. A deleting Node whose NodeClaim is already gone
 * (its finalizer was removed by hand) is released here: the VM garbage collection finds
 * anything left in ARM by its ownership tags. Another Karpenter's Nodes (e.g. AKS node
 * auto-provisioning's, which carry the same finalizer) are never touched.
 */
export class NodeTerminationController {
  readonly name = 'node.termination';
  readonly intervalMs: number;

  constructor(private readonly deps: NodeTerminationDeps) {
    this.intervalMs = deps.intervalMs ?? 5_000;
  }

  async reconcile(): Promise<void> {
    const deleting = (await this.deps.cluster.listNodes()).filter((n) => n.metadata.deletionTimestamp && n.metadata.finalizers.includes(FINALIZER_TERMINATION));
    if (deleting.length === 0) return;
    const [claims, pools] = await Promise.all([this.deps.cluster.listNodeClaims(), this.deps.cluster.listNodePools()]);
    const ours = new Set(pools.filter(isFlexNodePool).map((p) => p.metadata.name));
    for (const node of deleting) {
      try {
        await this.reconcileOne(node, claims, ours);
      } catch (e) {
        this.deps.onError?.(e, node.metadata.name);
      }
    }
  }

  private async reconcileOne(node: Node, claims: readonly NodeClaim[], ourPools: ReadonlySet<string>): Promise<void> {
    const claim = claimOf(node, claims);
    if (claim) {
      if (!isFlexNodeClaim(claim)) return;
      if (!claim.metadata.deletionTimestamp) await this.deps.cluster.deleteNodeClaim(claim.metadata.name);
      return;
    }
    if (!ourPools.has(node.metadata.labels[LABEL_NODEPOOL] ?? '')) return;
    await this.deps.cluster.patchNode(node.metadata.name, { metadata: { finalizers: node.metadata.finalizers.filter((f) => f !== FINALIZER_TERMINATION) } });
  }
}

function isFlexNodeClaim(claim: NodeClaim): boolean {
  const ref = claim.spec.nodeClassRef;
  return ref.kind === NODECLASS_KIND && ref.group === NODECLASS_GROUP;
}

/** The NodeClaim a Node belongs to: the one whose providerID it registered with (ARM ids are case-insensitive). */
function claimOf(node: Node, claims: readonly NodeClaim[]): NodeClaim | undefined {
  const pid = node.spec.providerID?.toLowerCase();
  return claims.find((c) => (pid !== undefined && c.status.providerID?.toLowerCase() === pid) || c.status.nodeName === node.metadata.name);
}
