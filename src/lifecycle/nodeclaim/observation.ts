import type { Vm } from '../../ports/azure.js';
import type { Node, NodeClaim } from '../../ports/cluster.js';
import { vmAttemptAt, type WorldView } from '../deps.js';
import { notInitializedReason } from './initialization.js';
import type { NodeClaimObservation } from './machine.js';

/** What the NodeClaim machine is told of the world: its object, its VM (as the view has it), its NIC and its Node. */
export function observeNodeClaim(world: WorldView, nc: NodeClaim, vm: Vm | undefined, nicName: string, node: Node | undefined): NodeClaimObservation {
  const name = nc.metadata.name;
  // "ready" for the machine means initialized as Karpenter has it: Ready, registration
  // taint and startup taints gone, requested extended resources allocatable.
  const ready = node ? notInitializedReason(nc, node) === undefined : false;
  return {
    exists: true,
    deleting: nc.metadata.deletionTimestamp !== undefined,
    vmAttemptAt: vmAttemptAt(nc),
    launched: conditionTrue(nc, 'Launched'),
    registered: conditionTrue(nc, 'Registered'),
    initialized: conditionTrue(nc, 'Initialized'),
    nicExists: world.nics.has(nicName),
    vm: vm?.provisioningState,
    ...(vm?.powerState !== undefined ? { vmPower: vm.powerState } : {}),
    node: node ? { name: node.metadata.name, ready, kubeletReady: node.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True') } : undefined,
  };
}

/** What a NodeClaim that no longer exists is observed as. */
export const GONE_NODECLAIM: NodeClaimObservation = { exists: false, deleting: false, launched: false, registered: false, initialized: false, nicExists: false };

function conditionTrue(nc: NodeClaim, type: string): boolean {
  for (const c of nc.status.conditions) if (c.type === type && c.status === 'True') return true;
  return false;
}
