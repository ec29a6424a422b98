import type { ResourceGroupScope, ResourceRef } from '../../ports/azure.js';
import * as msg from './messages.js';
import { normalizeLocation, type RegionState, type ReservationRecord, type VmCreateRequest, type VmRecord } from './model.js';
import type { ArmCalls } from './calls.js';
import { skuRestriction, type Quotas } from './quotas.js';
import type { Regions } from './regions.js';
import type { ResourceGroups } from './resource-groups.js';
import type { ArmState } from './state.js';
import type { FakeArmCapacityReservationGroupConfig, FakeArmRegionConfig } from './types.js';

/** The group's ARM resource type. */
export const GROUP_TYPE = 'Microsoft.Compute/capacityReservationGroups';

interface GroupRecord {
  id: string;
  name: string;
  subscriptionId: string;
  resourceGroup: string;
  location: string;
  zones?: string[];
  reservations: ReservationRecord[];
  timeCreated: number;
}

/** A capacity reservation as its instance view shows it. */
export interface ReservationView {
  id: string;
  name: string;
  location: string;
  sku: string;
  zone?: string;
  quantity: number;
  /** Every VM created into the group that matched this reservation and still exists. */
  associatedVmIds: string[];
  /** Those of them allocated now (creating or running; not failed, deallocated or deleting), overallocated ones included. */
  allocatedVmIds: string[];
  timeCreated: number;
}

export interface ReservationGroupView {
  id: string;
  name: string;
  location: string;
  zones?: string[];
  reservations: ReservationView[];
}

/** Where a VM PUT that names a group lands: its reservation, and whether a reserved slot is free for it. */
export interface Placement {
  record: ReservationRecord;
  groupId: string;
  reserved: boolean;
}

const groupId = (scope: ResourceGroupScope, name: string): string =>
  `/subscriptions/${scope.subscriptionId}/resourceGroups/${scope.resourceGroup}/providers/${GROUP_TYPE}/${name}`;

/**
 * On-demand capacity reservation groups (Microsoft.Compute/capacityReservationGroups): each
 * reservation holds a quantity of one size (in one zone of a zonal group) and its cores count
 * against quota from the start. A VM PUT naming the group is matched to the reservation of its
 * size and zone; while that has a free slot, the VM takes it (no quota check, no allocation
 * failure, no further cores). Beyond the quantity it is overallocated: admitted as any VM, with
 * its own quota and capacity (docs/fidelity.md).
 */
export class CapacityReservations {
  private readonly groups = new Map<string, GroupRecord>();

  constructor(
    private readonly state: ArmState,
    private readonly calls: ArmCalls,
    private readonly rgs: ResourceGroups,
    regions: Regions,
    quotas: Quotas,
    configs: readonly FakeArmRegionConfig[],
  ) {
    for (const r of configs) {
      const region = regions.get(r.subscriptionId, r.location);
      for (const g of r.capacityReservationGroups ?? []) if (region) this.add(r.subscriptionId, region, g, quotas);
    }
  }

  private add(subscriptionId: string, region: RegionState, g: FakeArmCapacityReservationGroupConfig, quotas: Quotas): void {
    const location = normalizeLocation(region.location);
    const id = groupId({ subscriptionId, resourceGroup: g.resourceGroup }, g.name);
    this.rgs.add(subscriptionId, g.resourceGroup, location);
    const now = this.state.clock.now();
    const reservations = g.reservations.map((r): ReservationRecord => {
      const type = this.state.types.get(r.sku.toLowerCase());
      if (!type) throw new Error(`fake ARM: capacity reservation ${g.name}/${r.name} names an unknown size ${r.sku}`);
      if ((g.zones === undefined) !== (r.zone === undefined) || (r.zone !== undefined && !g.zones!.includes(r.zone))) {
        throw new Error(`fake ARM: capacity reservation ${g.name}/${r.name}: a zonal group's reservations name one of its zones, a regional group's none`);
      }
      // ARM creates no reservation of a size the subscription may not deploy there (docs/fidelity.md).
      if (skuRestriction(type, region, r.zone) !== undefined) {
        throw new Error(`fake ARM: capacity reservation ${g.name}/${r.name}: ${type.name} is not available in ${location}${r.zone !== undefined ? ` zone ${r.zone}` : ''} for this subscription`);
      }
      quotas.holdReserved(region, type.family, type.vcpu * r.quantity);
      return { id: `${id}/capacityReservations/${r.name}`, name: r.name, sku: type.name, ...(r.zone !== undefined ? { zone: r.zone } : {}), quantity: r.quantity, vmIds: new Map(), timeCreated: now };
    });
    this.groups.set(id.toLowerCase(), { id, name: g.name, subscriptionId, resourceGroup: g.resourceGroup, location, ...(g.zones ? { zones: [...g.zones] } : {}), reservations, timeCreated: now });
  }

  /**
   * The reservation a VM PUT naming a group is matched to (undefined when it names none).
   * Refused when the group is not there or is in another region, and when it holds no
   * reservation of the VM's size in the VM's zone (none, for a regional VM).
   */
  match(req: VmCreateRequest, vmId: string): Placement | undefined {
    if (req.capacityReservationGroupId === undefined) return undefined;
    const group = this.groups.get(req.capacityReservationGroupId.replace(/^\/?/, '/').toLowerCase());
    if (!group) throw msg.invalid(`Resource ${req.capacityReservationGroupId} referenced by resource ${vmId} was not found.`);
    if (group.location !== normalizeLocation(req.location)) {
      throw msg.invalid(`Capacity reservation group ${group.id} is in location '${group.location}', the virtual machine in '${normalizeLocation(req.location)}'.`);
    }
    const record = group.reservations.find((r) => r.sku.toLowerCase() === req.vmSize.toLowerCase() && r.zone === req.zone);
    if (!record) {
      throw msg.invalid(`Capacity reservation group ${group.id} has no capacity reservation for VM size ${req.vmSize}${req.zone !== undefined ? ` in zone ${req.zone}` : ' without a zone'}.`);
    }
    return { record, groupId: group.id, reserved: this.allocated(record).length < record.quantity };
  }

  /** A new VM joins its reservation. */
  join(vm: VmRecord, placement: Placement): void {
    vm.reservation = placement;
    placement.record.vmIds.set(vm.key, vm.id);
  }

  /** A VM is gone: it no longer counts as associated. */
  leave(vm: VmRecord): void {
    vm.reservation?.record.vmIds.delete(vm.key);
  }

  /** GET of a group (a counted read); undefined when it does not exist. */
  getGroup(ref: ResourceRef): ReservationGroupView | undefined {
    const group = this.groups.get(groupId(ref, ref.name).toLowerCase());
    return this.calls.invoke('crg.get', 'reads', ref.subscriptionId, group?.location, ref.name, () => {
      this.rgs.require(ref);
      return group ? { status: 200, value: this.groupView(group) } : { status: 404, value: undefined };
    });
  }

  /** The groups of a resource group (or of a subscription), one counted read. */
  listGroups(scope: { subscriptionId: string; resourceGroup?: string }): ReservationGroupView[] {
    return this.calls.invoke('crg.list', 'reads', scope.subscriptionId, undefined, scope.resourceGroup ?? '', () => {
      if (scope.resourceGroup !== undefined) this.rgs.require({ subscriptionId: scope.subscriptionId, resourceGroup: scope.resourceGroup });
      const out: ReservationGroupView[] = [];
      for (const g of this.groups.values()) {
        if (g.subscriptionId.toLowerCase() !== scope.subscriptionId.toLowerCase()) continue;
        if (scope.resourceGroup !== undefined && g.resourceGroup.toLowerCase() !== scope.resourceGroup.toLowerCase()) continue;
        out.push(this.groupView(g));
      }
      return { status: 200, value: out };
    });
  }

  private groupView(g: GroupRecord): ReservationGroupView {
    return { id: g.id, name: g.name, location: g.location, ...(g.zones ? { zones: [...g.zones] } : {}), reservations: g.reservations.map((r) => this.view(r, g.location)) };
  }

  private view(r: ReservationRecord, location: string): ReservationView {
    return {
      id: r.id, name: r.name, location, sku: r.sku, ...(r.zone !== undefined ? { zone: r.zone } : {}), quantity: r.quantity,
      associatedVmIds: [...r.vmIds.values()], allocatedVmIds: this.allocated(r).map((vm) => vm.id), timeCreated: r.timeCreated,
    };
  }

  /** The reservation's VMs that hold capacity now: creating, or provisioned and not deallocated. */
  private allocated(r: ReservationRecord): VmRecord[] {
    const out: VmRecord[] = [];
    for (const key of r.vmIds.keys()) {
      const vm = this.state.vms.get(key);
      if (!vm) continue;
      if (vm.provisioningState === 'Creating' || (vm.provisioningState === 'Succeeded' && vm.power !== 'deallocated' && vm.power !== 'deallocating')) out.push(vm);
    }
    return out;
  }
}
