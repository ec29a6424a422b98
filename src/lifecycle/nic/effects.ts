import { fromPromise } from 'xstate';
import { AzureError } from '../../ports/azure.js';
import { assertLeader, nicRef, observedNodeClaim, ownedTags, refIn, validNodeClassOf, type LifecycleScope } from '../scope.js';
import { assertOwned, clusterOwns } from '../ownership.js';

/**
 * The NIC machine's effects: its ARM calls, each idempotent (a PUT after a GET, a DELETE whose
 * 404 the machine reads as gone), each decision that the NIC is gone resting on a GET. A NIC
 * of the name that is not this cluster's is never adopted (the PUT's GET refuses it) and,
 * to the GETs that decide on a DELETE, it is not there: nothing of ours is.
 */

export async function putNic(s: LifecycleScope, nicName: string, nodeClaimName: string): Promise<void> {
  assertLeader(s);
  const nc = observedNodeClaim(s, nodeClaimName);
  const cls = validNodeClassOf(s, nc);
  const ref = refIn(cls, nicName);
  const existing = await s.deps.arm.getNic(ref);
  if (existing) {
    assertOwned(existing, 'NIC', s.deps.config.clusterName, nodeClaimName);
    return;
  }
  await s.deps.arm.createNic({ ref, location: cls.spec.location, subnetId: cls.spec.subnetID, tags: ownedTags(s, nc, cls) });
}

/** GET, not a list: lists trail ARM, and "the NIC is gone" must be true before anyone acts on it. */
async function nicExists(s: LifecycleScope, nicName: string): Promise<boolean> {
  const ref = nicRef(s, nicName);
  if (!ref) return false;
  return clusterOwns(await s.deps.arm.getNic(ref), s.deps.config.clusterName) !== undefined;
}

/** Whether a GET shows the NIC attached to a VM (lists may still show a VM that is gone). */
async function nicAttachment(s: LifecycleScope, nicName: string): Promise<'attached' | 'detached' | 'absent'> {
  const ref = nicRef(s, nicName);
  if (!ref) return 'absent';
  const nic = clusterOwns(await s.deps.arm.getNic(ref), s.deps.config.clusterName);
  if (!nic) return 'absent';
  return nic.virtualMachineId === undefined ? 'detached' : 'attached';
}

async function deleteNic(s: LifecycleScope, nicName: string): Promise<void> {
  assertLeader(s);
  const ref = nicRef(s, nicName);
  if (!ref) throw new AzureError('ResourceNotFound', 404, `no scope known for NIC ${nicName}`);
  await s.deps.arm.deleteNic(ref);
}

/** The effects as the NIC machine invokes them (createNicMachine(...).provide({ actors })). */
export function nicActors(s: LifecycleScope) {
  const traced = <T>(name: string, effect: string, run: () => Promise<T>): Promise<T> => s.traced(`nic/${name}`, effect, run);
  return {
    putNic: fromPromise<void, { name: string }>(({ input }) => traced(input.name, 'putNic', () => putNic(s, input.name, s.ownerOfNic(input.name)))),
    deleteNic: fromPromise<void, { name: string }>(({ input }) => traced(input.name, 'deleteNic', () => deleteNic(s, input.name))),
    nicExists: fromPromise<boolean, { name: string }>(({ input }) => traced(input.name, 'nicExists', () => nicExists(s, input.name))),
    nicAttachment: fromPromise<'attached' | 'detached' | 'absent', { name: string }>(({ input }) => traced(input.name, 'nicAttachment', () => nicAttachment(s, input.name))),
  };
}
