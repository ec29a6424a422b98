import type { MetadataPatch, Node, NodeClaim, Taint } from '../../ports/cluster.js';
import { FINALIZER_TERMINATION, LABEL_REGISTERED, UNREGISTERED_TAINT_KEY } from '../../apis/well-known.js';

/**
 * Registration as Karpenter does it (pkg/controllers/nodeclaim/lifecycle/registration.go), on
 * the Node a NodeClaim's VM registered: the Node gets the NodeClaim's labels (plus
 * karpenter.sh/registered=true) and the karpenter.sh/termination finalizer (so `kubectl delete
 * node` terminates the NodeClaim and its VM before the Node goes: src/controllers/node/termination.ts);
 * if it still carries karpenter.sh/unregistered (the kubelet registers with it), that taint is
 * removed and the NodeClaim's taints and startup taints are put on in the same write.
 * Initialization is initialization.ts; the status writes of every phase are status.ts.
 */

export const sameTaint = (a: Taint, b: Taint): boolean => a.key === b.key && a.effect === b.effect;

export interface NodePatch {
  metadata?: MetadataPatch;
  taints?: Taint[];
}

/** What the Node needs at registration; undefined when it already has it all. */
export function registrationPatch(claim: NodeClaim, node: Node): NodePatch | undefined {
  const want: Record<string, string> = { ...claim.metadata.labels, [LABEL_REGISTERED]: 'true' };
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(want)) if (node.metadata.labels[k] !== v) labels[k] = v;
  const patch: NodePatch = {};
  if (Object.keys(labels).length > 0) patch.metadata = { labels };
  // Not re-added to a Node already being deleted: the API server refuses new finalizers then.
  if (!node.metadata.finalizers.includes(FINALIZER_TERMINATION) && !node.metadata.deletionTimestamp) {
    patch.metadata = { ...patch.metadata, finalizers: [...node.metadata.finalizers, FINALIZER_TERMINATION] };
  }
  if (node.spec.taints.some((t) => t.key === UNREGISTERED_TAINT_KEY)) {
    const taints = node.spec.taints.filter((t) => t.key !== UNREGISTERED_TAINT_KEY);
    for (const t of [...claim.spec.taints, ...claim.spec.startupTaints]) if (!taints.some((x) => sameTaint(x, t))) taints.push({ ...t });
    patch.taints = taints;
  }
  return patch.metadata || patch.taints ? patch : undefined;
}
