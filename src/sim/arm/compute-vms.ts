import type { ResourceRef, Tags, Vm } from '../../ports/azure.js';
import { armId } from '../../azure/naming.js';
import * as msg from './messages.js';
import { checkSpotCreate, checkSpotParameters } from './spot.js';
import {
  changedImmutableProperty,
  copyImage,
  normalizeLocation,
  sameTags,
  toVmDetails,
  vmGetView,
  vmView,
  type BeginResult,
  type ListScope,
  type NicRecord,
  type OpRecord,
  type RegionState,
  type VmCreateRequest,
  type VmDetails,
  type VmRecord,
} from './model.js';
import type { ArmCalls } from './calls.js';
import type { Disks } from './compute-disks.js';
import type { ListPage, Listing } from './listing.js';
import type { Nics } from './network-nics.js';
import type { Operations } from './operations.js';
import type { Quotas } from './quotas.js';
import type { Regions } from './regions.js';
import type { ResourceGroups } from './resource-groups.js';
import type { ArmState } from './state.js';
import { vmDeleteLatency, type VmPower } from './vm-power.js';
import type { CapacityReservations, Placement } from './capacity-reservations.js';

const VM_TYPE = 'Microsoft.Compute/virtualMachines';

type AllocationFailure = 'AllocationFailed' | 'ZonalAllocationFailed' | 'OverconstrainedAllocationRequest';

/** What a VM's parts are, for the collaborators a VM's life reaches. */
export interface VmParts {
  state: ArmState;
  calls: ArmCalls;
  groups: ResourceGroups;
  listing: Listing;
  ops: Operations;
  regions: Regions;
  quotas: Quotas;
  nics: Nics;
  disks: Disks;
  power: VmPower;
  reservations: CapacityReservations;
}

/**
 * Microsoft.Compute virtual machines: the PUT that reserves its NICs even when refused, the
 * asynchronous allocation that may fail (the VM then stays Failed, holding NICs and OS disk),
 * and the delete that cascades to NICs and OS disk by their deleteOption.
 */
export class Vms {
  private readonly state: ArmState;
  private currentVmList: Vm[] | undefined;
  private currentVmListAt = -1;

  constructor(private readonly p: VmParts) {
    this.state = p.state;
  }

  /**
   * VM PUT. Any PUT that reaches the NIC checks reserves the NIC for reservationSeconds,
   * even when the SKU, quota or size check then refuses it synchronously: that is the
   * ARM behaviour behind the upstream leak. Returns the in-flight create operation.
   */
  beginCreate(input: VmCreateRequest): BeginResult {
    const id = armId(input.ref, VM_TYPE);
    const req: VmCreateRequest = { ...input, location: normalizeLocation(input.location) };
    return this.p.calls.invoke<BeginResult>('vm.put', 'writes', req.ref.subscriptionId, req.location, req.ref.name, () => {
      this.p.groups.require(req.ref);
      const key = id.toLowerCase();
      const existing = this.state.vms.get(key);
      if (existing) return { status: 200, value: this.putExisting(existing, req) };
      const region = this.p.regions.get(req.ref.subscriptionId, req.location);
      if (!region) throw msg.invalid(`Location '${req.location}' is not configured for subscription '${req.ref.subscriptionId}' in the fake ARM.`);
      if (req.nicIds.length === 0) throw msg.invalid('At least one network interface is required (properties.networkProfile.networkInterfaces).');
      // A new VM's OS disk is created from the image: a disk of that name already there is refused, never taken over.
      if (this.p.disks.exists({ ...req.ref, name: req.osDiskName })) throw msg.osDiskNameTaken(req.osDiskName, req.ref.resourceGroup);
      checkSpotParameters(req);
      const nics = this.nicsFor(req, id, key);
      const now = this.state.clock.now();
      for (const nic of nics) this.p.nics.reserve(nic, id, now);
      let placement: Placement | undefined;
      try {
        placement = this.p.reservations.match(req, id);
        const type = this.state.types.get(req.vmSize.toLowerCase());
        if (type) checkSpotCreate(req, type, region);
        this.p.quotas.admit(req, region, placement?.reserved ?? false);
      } catch (err) {
        for (const nic of nics) nic.failedAt ??= now;
        throw err;
      }
      const vm = this.newRecord(req, id, key, region, nics, now);
      this.state.vms.set(key, vm);
      this.state.vmWrites++;
      this.state.vmTombs.delete(key);
      for (const nic of nics) this.state.attach(nic, key);
      if (placement) this.p.reservations.join(vm, placement);
      // A reserved slot's cores are the reservation's, held since it was made.
      if (placement?.reserved) vm.coresHeld = false;
      else this.p.quotas.addCores(vm, 1);
      const op = this.p.ops.start('create');
      op.target = req.ref;
      vm.createOp = op;
      this.scheduleCreateOutcome(vm, op);
      return { status: 201, value: { vm: toVmDetails(vm), operationId: op.id, created: true } };
    });
  }

  /**
   * A VM that runs before the run starts (a snapshot's node): Succeeded at once, holding its
   * cores, NIC and OS disk as a finished create leaves them, but with no ARM call, operation
   * or random draw (so nothing else in the run shifts).
   */
  adopt(input: VmCreateRequest, nics: NicRecord[]): void {
    const id = armId(input.ref, VM_TYPE);
    const key = id.toLowerCase();
    const req: VmCreateRequest = { ...input, location: normalizeLocation(input.location) };
    const region = this.p.regions.get(req.ref.subscriptionId, req.location);
    if (!region) throw msg.invalid(`Location '${req.location}' is not configured for subscription '${req.ref.subscriptionId}' in the fake ARM.`);
    if (!this.state.types.has(req.vmSize.toLowerCase())) throw msg.invalid(`The VM size '${req.vmSize}' is not in the simulated catalog.`);
    const now = this.state.clock.now();
    const vm = this.newRecord(req, id, key, region, nics, now);
    vm.provisioningState = 'Succeeded';
    vm.listedFrom = now;
    this.state.vms.set(key, vm);
    this.state.vmWrites++;
    for (const nic of nics) this.state.attach(nic, key);
    this.p.quotas.addCores(vm, 1);
    this.p.disks.attachOsDisk(vm);
  }

  get(ref: ResourceRef): VmDetails | undefined {
    return this.p.listing.getOne('vm.get', ref, this.state.vms, VM_TYPE, toVmDetails);
  }

  /** The AzurePort's GET: the VM as a GET shows it (with its power state when not running). */
  getView(ref: ResourceRef): Vm | undefined {
    return this.p.listing.getOne('vm.get', ref, this.state.vms, VM_TYPE, vmGetView);
  }

  list(scope: ListScope): VmDetails[] {
    return this.p.listing.all('vm.list', scope, this.state.vms, this.state.vmTombs, toVmDetails);
  }

  listViews(scope: ListScope): Vm[] {
    return this.p.listing.all('vm.list', scope, this.state.vms, this.state.vmTombs, vmView);
  }

  listPage(scope: ListScope, skip: number): ListPage<VmDetails> {
    return this.p.listing.page('vm.list', scope, this.state.vms, this.state.vmTombs, toVmDetails, skip);
  }

  /**
   * VM DELETE. Undefined when the VM does not exist (a success counted as 404). Deleting a
   * VM that is still Creating preempts the create, whose operation then fails.
   */
  beginDelete(ref: ResourceRef): { operationId: string } | undefined {
    const rec = this.record(ref);
    return this.p.calls.invoke('vm.delete', 'deletes', ref.subscriptionId, rec?.location, ref.name, () => {
      this.p.groups.require(ref);
      if (!rec) return { status: 404, value: undefined };
      if (rec.provisioningState === 'Deleting' && rec.deleteOp) return { status: 202, value: { operationId: rec.deleteOp.id } };
      return { status: 202, value: { operationId: this.startDelete(rec).id } };
    });
  }

  /** PATCH of a VM's tags (a counted VM write, as Compute counts updates): the VM now, or undefined when there is none. */
  patchTags(ref: ResourceRef, tags: Tags): VmDetails | undefined {
    const rec = this.record(ref);
    return this.p.calls.invoke('vm.put', 'writes', ref.subscriptionId, rec?.location, ref.name, () => {
      this.p.groups.require(ref);
      if (!rec) return { status: 404, value: undefined };
      if (rec.provisioningState === 'Deleting') throw msg.vmBeingDeleted(rec.name, 'PATCH');
      this.replaceTags(rec, tags);
      return { status: 200, value: toVmDetails(rec) };
    });
  }

  /** Uncounted look-ups for the REST face: location (operation URLs) and etag (If-Match / If-None-Match). */
  location(ref: ResourceRef): string | undefined {
    return this.record(ref)?.location;
  }

  etag(ref: ResourceRef): number | undefined {
    return this.record(ref)?.etag;
  }

  /**
   * The VMs as they are now: frozen views, not an ARM call (not counted, never throttled).
   * For the simulated world (kubelet, invariants), which should not pay for snapshot().
   */
  current(): Vm[] {
    // The same array while no VM was added, changed or removed (vmWrites): the simulated
    // kubelet asks every 10 s, and a 1,000-VM fleet built the list afresh each time (and then
    // compared 1,000 views to tell it had not changed). Shared, so no caller may change it, but
    // not frozen (the views are): V8 runs array builtins on a frozen array through a slow path,
    // and one frozen array reaching a shared loop (list-walk.ts) made its element reads
    // megamorphic for every caller: the 10,000-pod walks took 15x as long.
    if (this.currentVmList && this.currentVmListAt === this.state.vmWrites) return this.currentVmList;
    this.currentVmListAt = this.state.vmWrites;
    // As a GET shows them: the simulated kubelet needs to know a VM stopped or deallocated.
    return (this.currentVmList = [...this.state.vms.values()].map(vmGetView));
  }

  /** Starts deleting a VM (a DELETE, or ARM evicting a Spot VM with policy Delete): Deleting, then gone with its cascade. */
  startDelete(rec: VmRecord): OpRecord {
    if (rec.timer !== undefined) this.state.clock.clearTimer(rec.timer);
    rec.timer = undefined;
    this.p.power.stopWork(rec);
    const wasAllocated = rec.provisioningState === 'Succeeded' && rec.power !== 'deallocated';
    if (rec.provisioningState === 'Creating' && rec.createOp) this.p.ops.preempt(rec.createOp);
    rec.provisioningState = 'Deleting';
    this.state.vmChanged(rec);
    const op = this.p.ops.start('delete');
    rec.deleteOp = op;
    const delay = this.state.draw(vmDeleteLatency(this.state, rec, wasAllocated));
    rec.timer = this.state.clock.setTimer(delay, () => {
      rec.timer = undefined;
      this.remove(rec);
      this.p.ops.finish(op, { status: 'Succeeded' });
    });
    return op;
  }

  /** A PUT of a VM that exists: refused while deleting or when it changes an immutable property; retries a Failed VM. */
  private putExisting(existing: VmRecord, req: VmCreateRequest): BeginResult {
    if (existing.provisioningState === 'Deleting') throw msg.vmBeingDeleted(existing.name);
    const changed = this.state.settings.immutableVmProperties ? changedImmutableProperty(existing, req) : undefined;
    if (changed !== undefined) throw msg.propertyChangeNotAllowed(changed);
    // Tags are mutable: a PUT replaces them (and the etag moves).
    this.replaceTags(existing, req.tags);
    // ARM retries provisioning of a Failed VM on an identical PUT (and reserves its NICs again).
    if (existing.provisioningState === 'Failed') return this.reprovision(existing, req);
    const inFlight = existing.provisioningState === 'Creating' ? existing.createOp?.id : undefined;
    return { vm: toVmDetails(existing), operationId: inFlight, created: false };
  }

  /** The NICs a new VM's PUT names, each there, not owned by another VM and not reserved for one. */
  private nicsFor(req: VmCreateRequest, id: string, key: string): NicRecord[] {
    const nics: NicRecord[] = [];
    for (const nicId of req.nicIds) {
      const nic = this.state.nics.get(nicId.toLowerCase());
      if (!nic || nic.deleteOp) throw msg.invalid(`Resource ${nicId} referenced by resource ${id} was not found.`);
      const owner = nic.attachedVmKey === undefined ? undefined : this.state.vms.get(nic.attachedVmKey);
      // An attached NIC is owned; a refused PUT does not reserve it (the owner keeps it).
      if (owner && owner.key !== key) throw msg.nicInUse(nic.id, owner.id);
      if (this.state.clock.now() < nic.reservedUntil && nic.reservedFor !== undefined && nic.reservedFor.toLowerCase() !== key) {
        throw msg.nicReserved(nic.reservedFor, this.state.settings.reservationSeconds);
      }
      nics.push(nic);
    }
    return nics;
  }

  private newRecord(req: VmCreateRequest, id: string, key: string, region: RegionState, nics: NicRecord[], now: number): VmRecord {
    const type = this.state.types.get(req.vmSize.toLowerCase())!;
    const vm: VmRecord = {
      key, id, name: req.ref.name, subscriptionId: req.ref.subscriptionId, resourceGroup: req.ref.resourceGroup,
      location: req.location, vmSize: type.name, ...(req.zone ? { zone: req.zone } : {}), family: type.family, cores: type.vcpu, region,
      nicKeys: nics.map((n) => n.key), nicIds: nics.map((n) => n.id), nicDeleteOption: req.nicDeleteOption ?? 'Detach',
      osDiskName: req.osDiskName, osDiskSizeGB: req.osDiskSizeGB, osDiskDeleteOption: req.osDiskDeleteOption ?? 'Detach',
      image: copyImage(req.image), adminUsername: req.adminUsername, sshPublicKeys: [...req.sshPublicKeys], priority: req.priority,
      ...(req.priority === 'Spot' ? { evictionPolicy: req.evictionPolicy ?? 'Deallocate', maxPrice: req.maxPrice ?? -1 } : {}),
      tags: { ...req.tags }, provisioningState: 'Creating', power: 'running', timeCreated: now, coresHeld: true, etag: 1,
      listedFrom: now + this.state.settings.appearLagMs,
    };
    if (req.customDataHash !== undefined) vm.customDataHash = req.customDataHash;
    if (req.shown !== undefined) vm.shown = { ...req.shown };
    return vm;
  }

  /** An identical PUT of a Failed VM: ARM tries the allocation again. */
  private reprovision(vm: VmRecord, req: VmCreateRequest): BeginResult {
    const now = this.state.clock.now();
    for (const key of vm.nicKeys) {
      const nic = this.state.nics.get(key);
      if (nic) this.p.nics.reserve(nic, vm.id, now);
    }
    this.p.quotas.admit(req, vm.region);
    vm.provisioningState = 'Creating';
    this.state.vmChanged(vm);
    vm.coresHeld = true;
    this.p.quotas.addCores(vm, 1);
    const op = this.p.ops.start('create');
    op.target = req.ref;
    vm.createOp = op;
    this.scheduleCreateOutcome(vm, op);
    return { vm: toVmDetails(vm), operationId: op.id, created: false };
  }

  /** A PUT or PATCH replaces a VM's tags; its view and etag follow. */
  private replaceTags(vm: VmRecord, tags: Tags): void {
    if (sameTags(vm.tags, tags)) return;
    vm.tags = { ...tags };
    this.state.vmChanged(vm);
  }

  private scheduleCreateOutcome(vm: VmRecord, op: OpRecord): void {
    const r = vm.region;
    const random = this.state.random;
    let failure: AllocationFailure | undefined;
    // A reserved slot is capacity set aside: its allocation does not fail (no draw either).
    if (vm.reservation?.reserved) failure = undefined;
    else if (r.allocationFailureRate > 0 && random.next() < r.allocationFailureRate) failure = 'AllocationFailed';
    // Only a VM pinned to a zone can fail for that zone's capacity.
    else if (vm.zone !== undefined && r.zonalAllocationFailureRate > 0 && random.next() < r.zonalAllocationFailureRate) failure = 'ZonalAllocationFailed';
    else if (r.overconstrainedAllocationFailureRate > 0 && random.next() < r.overconstrainedAllocationFailureRate) failure = 'OverconstrainedAllocationRequest';
    const latency = this.state.settings.latency;
    const delay = this.state.draw(failure ? latency.vmCreateFailure : latency.vmCreate);
    vm.timer = this.state.clock.setTimer(delay, () => {
      vm.timer = undefined;
      if (failure) this.failCreate(vm, op, failure);
      else this.succeedCreate(vm, op);
    });
  }

  private succeedCreate(vm: VmRecord, op: OpRecord): void {
    vm.provisioningState = 'Succeeded';
    vm.power = 'running';
    this.state.vmChanged(vm);
    for (const key of vm.nicKeys) {
      const nic = this.state.nics.get(key);
      if (nic) nic.failedAt = undefined;
    }
    this.p.disks.attachOsDisk(vm);
    this.p.nics.renewReservationsAtCompletion(vm);
    op.result = vmView(vm);
    this.state.emit('vm.provisioned', vm.name, 'Succeeded');
    this.p.ops.finish(op, { status: 'Succeeded' });
    this.p.power.scheduleEviction(vm);
  }

  /**
   * An async allocation failure. Real ARM keeps the VM in provisioningState Failed, holding
   * its NICs and OS disk, until someone deletes it; with failedVmRecords off the record
   * goes (the NICs stay reserved either way). No cores are held by a VM that got none.
   */
  private failCreate(vm: VmRecord, op: OpRecord, code: AllocationFailure): void {
    const now = this.state.clock.now();
    const keepRecord = this.state.settings.failedVmRecords;
    if (vm.coresHeld) {
      this.p.quotas.addCores(vm, -1);
      vm.coresHeld = false;
    }
    if (keepRecord) {
      vm.provisioningState = 'Failed';
      this.state.vmChanged(vm);
      this.p.disks.attachOsDisk(vm);
    } else {
      this.deleteRecord(vm);
    }
    for (const key of vm.nicKeys) {
      const nic = this.state.nics.get(key);
      if (!nic) continue;
      if (!keepRecord && nic.attachedVmKey === vm.key) this.state.attach(nic, undefined);
      nic.failedAt ??= now;
    }
    this.p.nics.renewReservationsAtCompletion(vm);
    this.state.emit('vm.failed', vm.name, 'Failed', code);
    const message =
      code === 'AllocationFailed' ? msg.ALLOCATION_FAILED_MESSAGE : code === 'ZonalAllocationFailed' ? msg.ZONAL_ALLOCATION_FAILED_MESSAGE : msg.OVERCONSTRAINED_ALLOCATION_MESSAGE;
    this.p.ops.finish(op, { status: 'Failed', error: { code, message } });
  }

  private deleteRecord(vm: VmRecord): void {
    this.p.power.stopWork(vm);
    this.p.reservations.leave(vm);
    this.state.vms.delete(vm.key);
    this.state.vmWrites++;
    this.state.bury(this.state.vmTombs, vm.key, vm);
  }

  /**
   * End of a VM delete: cores back, NICs and OS disk deleted or detached per deleteOption.
   * A NIC still inside its reservation is only detached (the network RP refuses to delete
   * it) unless cascadeDeletesReservedNic says otherwise.
   */
  private remove(vm: VmRecord): void {
    this.deleteRecord(vm);
    if (vm.coresHeld) {
      this.p.quotas.addCores(vm, -1);
      vm.coresHeld = false;
    }
    const now = this.state.clock.now();
    for (const key of vm.nicKeys) {
      const nic = this.state.nics.get(key);
      if (!nic || nic.attachedVmKey !== vm.key) continue;
      this.state.attach(nic, undefined);
      if (vm.nicDeleteOption === 'Delete' && (this.state.settings.cascadeDeletesReservedNic || now >= nic.reservedUntil)) this.p.nics.remove(nic);
    }
    this.p.disks.releaseOsDisk(vm);
    this.state.emit('vm.removed', vm.name, 'Deleted');
  }

  private record(ref: ResourceRef): VmRecord | undefined {
    return this.state.vms.get(armId(ref, VM_TYPE).toLowerCase());
  }
}
