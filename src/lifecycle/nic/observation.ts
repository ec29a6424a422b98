import type { NodeClaim } from '../../ports/cluster.js';
import type { WorldView } from '../deps.js';
import { reservationEnd } from '../timing.js';
import type { NicObservation, NicOwner } from './machine.js';

/**
 * What the NIC machine is told of the world: the NIC, whether a VM holds it, whether its
 * NodeClaim wants it, and when ARM's reservation ends by the owner's latest VM attempt.
 */
export function observeNic(world: WorldView, name: string, owner: NodeClaim | undefined, attemptAt: number | undefined): NicObservation {
  const nic = world.nics.get(name);
  let ownerState: NicOwner = 'gone';
  if (owner) ownerState = owner.metadata.deletionTimestamp ? 'releasing' : 'wants';
  return {
    exists: nic !== undefined,
    attached: nic !== undefined && world.isAttached(nic),
    owner: ownerState,
    reservedUntil: attemptAt === undefined ? undefined : reservationEnd(attemptAt),
  };
}
