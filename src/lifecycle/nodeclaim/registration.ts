/**
 * Registration and initialization as Karpenter does them (pkg/controllers/nodeclaim/lifecycle
 * registration.go, initialization.go), on the Node a NodeClaim's VM registered:
 *  - registered: the Node gets the NodeClaim's labels (plus karpenter.sh/registered=true)
 *    and the karpenter.sh/termination finalizer (so `kubectl delete node` terminates the
 *    NodeClaim and its VM before the Node goes: src/controllers/node/termination.ts);
 *    if it still carries karpenter.sh/unregistered (the kubelet registers with it), that taint
 *    is removed and the NodeClaim's taints and startup taints are put on in the same write;
 *  - initialized: the Node is Ready, carries neither karpenter.sh/unregistered nor any of the
 *    NodeClaim's startup taints, and every extended resource the NodeClaim requested (e.g.
 *    nvidia.com/gpu) is allocatable; then karpenter.sh/initialized=true.
 */
import type { MetadataPatch, Node, NodeClaim, Taint } from '../../ports/cluster.js';
import { parseQuantity } from '../../provisioning/resources.js';
import { FINALIZER_TERMINATION, LABEL_REGISTERED, UNREGISTERED_TAINT_KEY } from '../../apis/well-known.js';

/** Resources every node reports; only the others (device plugins) can be missing at first. */
const WELL_KNOWN_RESOURCES: ReadonlySet<string> = new Set(['cpu', 'memory', 'pods', 'ephemeral-storage']);

const sameTaint = (a: Taint, b: Taint): boolean => a.key === b.key && a.effect === b.effect;

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

/** Why the Node is not initialized yet, or undefined when it is. */
export function notInitializedReason(claim: NodeClaim, node: Node): string | undefined {
  if (!node.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True')) return 'node not Ready';
  if (node.spec.taints.some((t) => t.key === UNREGISTERED_TAINT_KEY)) return `taint ${UNREGISTERED_TAINT_KEY} still on the node`;
  const startup = claim.spec.startupTaints.find((t) => node.spec.taints.some((x) => sameTaint(x, t)));
  if (startup) return `startup taint ${startup.key}:${startup.effect} still on the node`;
  for (const resource of Object.keys(claim.spec.resources.requests)) {
    if (WELL_KNOWN_RESOURCES.has(resource)) continue;
    const allocatable = node.status.allocatable[resource];
    let amount = 0;
    try {
      amount = allocatable === undefined ? 0 : parseQuantity(allocatable, resource);
    } catch {
      amount = 0;
    }
    if (amount <= 0) return `requested resource ${resource} not allocatable yet`;
  }
  return undefined;
}
