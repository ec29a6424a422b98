/**
 * What the simulation reads of the fake ARM's world outside any API call: the whole world at
 * one instant (snapshot), and the resources no live NodeClaim owns (leaks). Neither is counted
 * as an ARM call nor draws a random number.
 */
import type { Tags } from '../../ports/azure.js';
import { TAG } from '../../azure/naming.js';
import { diskView, vmView, type Leaks, type SnapshotJson } from './model.js';
import type { Nics } from './network-nics.js';
import type { Operations } from './operations.js';
import type { Quotas } from './quotas.js';
import type { ArmState } from './state.js';

/** Every NIC (with ARM's reservation where one holds), VM and disk, the quotas, subnets and operations now. */
export function snapshotOf(state: ArmState, parts: { quotas: Quotas; nics: Nics; ops: Operations }): SnapshotJson {
  const now = state.clock.now();
  const nics: SnapshotJson['nics'] = [];
  const reservations: SnapshotJson['reservations'] = [];
  for (const rec of state.nics.values()) {
    const view = state.nicView(rec);
    if (now < rec.reservedUntil && rec.reservedFor !== undefined) {
      nics.push({ ...view, reservedUntil: rec.reservedUntil, reservedFor: rec.reservedFor });
      reservations.push({ nicId: rec.id, vmId: rec.reservedFor, until: rec.reservedUntil });
    } else {
      nics.push(view);
    }
  }
  return {
    t: now,
    nics,
    vms: [...state.vms.values()].map(vmView),
    disks: [...state.disks.values()].map(diskView),
    reservations,
    ...parts.quotas.snapshot(),
    subnets: parts.nics.subnetRows(),
    operations: parts.ops.stats(),
  };
}

/**
 * Resources whose NodeClaim tag is not a live NodeClaim. A NIC attached to an existing VM
 * and a disk managed by one are judged by that VM's tag; a resource without the tag counts.
 * With clusters sharing the resource groups, `live` judges the tags (cluster and NodeClaim).
 */
export function leaksOf(state: ArmState, liveNodeClaims: ReadonlySet<string> | ((tags: Tags) => boolean)): Leaks {
  const live = typeof liveNodeClaims === 'function' ? liveNodeClaims : (tags: Tags): boolean => {
    const owner = tags[TAG.nodeClaim];
    return owner !== undefined && liveNodeClaims.has(owner);
  };
  const records = state.vms;
  const vms = [...records.values()].filter((v) => !live(v.tags)).map(vmView);
  const nics = [...state.nics.values()]
    .filter((n) => {
      const vm = n.attachedVmKey === undefined ? undefined : records.get(n.attachedVmKey);
      return !live(vm ? vm.tags : n.tags);
    })
    .map((n) => state.nicView(n));
  const disks = [...state.disks.values()]
    .filter((d) => {
      const vm = d.managedByKey === undefined ? undefined : records.get(d.managedByKey);
      return !live(vm ? vm.tags : d.tags);
    })
    .map(diskView);
  return { nics, vms, disks };
}
