import type { Node, NodeClaim } from '../../ports/cluster.js';
import { parseQuantity } from '../../provisioning/resources.js';
import { UNREGISTERED_TAINT_KEY } from '../../apis/well-known.js';
import { sameTaint } from './registration.js';

/**
 * Initialization as Karpenter does it (pkg/controllers/nodeclaim/lifecycle/initialization.go):
 * the Node is Ready, carries neither karpenter.sh/unregistered nor any of the NodeClaim's
 * startup taints, and every extended resource the NodeClaim requested (e.g. nvidia.com/gpu)
 * is allocatable; then karpenter.sh/initialized=true (status.ts writes it).
 */

/** Resources every node reports; only the others (device plugins) can be missing at first. */
const WELL_KNOWN_RESOURCES: ReadonlySet<string> = new Set(['cpu', 'memory', 'pods', 'ephemeral-storage']);

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
