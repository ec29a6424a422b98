import type { Disk, ResourceRef } from '../../ports/azure.js';
import { armId } from '../../azure/naming.js';
import * as msg from './messages.js';
import { diskView, toDiskDetails, type DiskDetails, type DiskRecord, type ListScope, type VmRecord } from './model.js';
import type { ArmCalls } from './calls.js';
import type { ListPage, Listing } from './listing.js';
import type { ResourceGroups } from './resource-groups.js';
import type { ArmState } from './state.js';

const DISK_TYPE = 'Microsoft.Compute/disks';

/** Microsoft.Compute managed disks: the OS disks ARM creates with each VM. */
export class Disks {
  constructor(
    private readonly state: ArmState,
    private readonly calls: ArmCalls,
    private readonly groups: ResourceGroups,
    private readonly listing: Listing,
  ) {}

  /** Whether a disk of the name exists (uncounted: part of a VM PUT's own validation). */
  exists(ref: ResourceRef): boolean {
    return this.state.disks.has(armId(ref, DISK_TYPE).toLowerCase());
  }

  get(ref: ResourceRef): DiskDetails | undefined {
    return this.listing.getOne('disk.get', ref, this.state.disks, DISK_TYPE, toDiskDetails);
  }

  /** The AzurePort's GET and list: the disk's frozen view. */
  getView(ref: ResourceRef): Disk | undefined {
    return this.listing.getOne('disk.get', ref, this.state.disks, DISK_TYPE, diskView);
  }

  listViews(scope: ListScope): Disk[] {
    return this.listing.all('disk.list', scope, this.state.disks, this.state.diskTombs, diskView);
  }

  list(scope: ListScope): DiskDetails[] {
    return this.listing.all('disk.list', scope, this.state.disks, this.state.diskTombs, toDiskDetails);
  }

  listPage(scope: ListScope, skip: number): ListPage<DiskDetails> {
    return this.listing.page('disk.list', scope, this.state.disks, this.state.diskTombs, toDiskDetails, skip);
  }

  /** Disk DELETE: 'notFound' is a success counted as 404; an attached disk is refused (409). */
  delete(ref: ResourceRef): 'deleted' | 'notFound' {
    const rec = this.state.disks.get(armId(ref, DISK_TYPE).toLowerCase());
    return this.calls.invoke('disk.delete', 'deletes', ref.subscriptionId, rec?.location, ref.name, () => {
      this.groups.require(ref);
      if (!rec) return { status: 404, value: 'notFound' as const };
      if (rec.managedByKey !== undefined && this.state.vms.has(rec.managedByKey)) throw msg.diskAttached(rec.name, rec.managedBy ?? '');
      this.remove(rec);
      return { status: 200, value: 'deleted' as const };
    });
  }

  /** Uncounted location look-up, used by the REST face to build operation URLs. */
  location(ref: ResourceRef): string | undefined {
    return this.state.disks.get(armId(ref, DISK_TYPE).toLowerCase())?.location;
  }

  /** The VM's OS disk exists and is managed by it (created on first need, with the VM's tags). */
  attachOsDisk(vm: VmRecord): void {
    const diskKey = osDiskId(vm).toLowerCase();
    const disk = this.state.disks.get(diskKey);
    if (disk) {
      disk.managedByKey = vm.key;
      disk.managedBy = vm.id;
      disk.view = undefined;
      return;
    }
    const now = this.state.clock.now();
    this.state.disks.set(diskKey, {
      key: diskKey, id: osDiskId(vm), name: vm.osDiskName, location: vm.location, managedByKey: vm.key, managedBy: vm.id,
      // ARM copies the VM's tags onto the OS disk it creates (once: later VM tag changes do not follow).
      diskSizeGB: vm.osDiskSizeGB, tags: { ...vm.tags }, timeCreated: now, listedFrom: now + this.state.settings.appearLagMs,
      ...(vm.shown?.osDiskStorageAccountType !== undefined ? { storageAccountType: vm.shown.osDiskStorageAccountType } : {}),
    });
    this.state.diskTombs.delete(diskKey);
    this.state.emit('disk.created', vm.osDiskName, 'Succeeded');
  }

  /** The VM went: its OS disk is detached, and deleted when its deleteOption says so. */
  releaseOsDisk(vm: VmRecord): void {
    const disk = this.state.disks.get(osDiskId(vm).toLowerCase());
    if (!disk || disk.managedByKey !== vm.key) return;
    disk.managedByKey = undefined;
    disk.managedBy = undefined;
    disk.view = undefined;
    if (vm.osDiskDeleteOption === 'Delete') this.remove(disk);
  }

  private remove(disk: DiskRecord): void {
    this.state.disks.delete(disk.key);
    this.state.bury(this.state.diskTombs, disk.key, disk);
    this.state.emit('disk.removed', disk.name, 'Deleted');
  }
}

function osDiskId(vm: VmRecord): string {
  return armId({ subscriptionId: vm.subscriptionId, resourceGroup: vm.resourceGroup, name: vm.osDiskName }, DISK_TYPE);
}
