import {
  AzureError,
  type AzureErrorCode,
  type Disk,
  type ImageReference,
  type Nic,
  type ResourceGroupScope,
  type ResourceRef,
  type Tags,
  type Vm,
  type VmPowerState,
  type VmProvisioningState,
} from '../../ports/azure.js';
import type { TimerId } from '../../ports/clock.js';
import * as msg from './messages.js';
import type { SubnetPool } from './subnet-pool.js';
import type { DeleteOption, OperationStatus } from './types.js';

/**
 * The fake ARM's data model: the request and view types its faces exchange, the internal
 * records behind them, and the record-to-view copies (the only copying on the hot path:
 * enough that callers cannot mutate the fake's state).
 */

/** What a VM PUT carries, in the form both faces can produce (customData is never stored). */
export interface VmCreateRequest {
  ref: ResourceRef;
  location: string;
  vmSize: string;
  /** Availability zone id ("1"), from the PUT's `zones`; absent: regional. */
  zone?: string;
  nicIds: string[];
  /** Azure's default for a NIC referenced by a VM is Detach; the AzurePort asks for Delete. */
  nicDeleteOption?: DeleteOption;
  osDiskName: string;
  osDiskSizeGB: number;
  osDiskDeleteOption?: DeleteOption;
  image: { reference: ImageReference } | { id: string };
  adminUsername: string;
  sshPublicKeys: string[];
  priority: 'Regular' | 'Spot';
  /** What ARM does to a Spot VM it evicts (`properties.evictionPolicy`; ARM's default for Spot is Deallocate). */
  evictionPolicy?: EvictionPolicy;
  /** A Spot VM's `properties.billingProfile.maxPrice` (USD/hour; -1 or absent: up to the on-demand price). */
  maxPrice?: number;
  tags: Tags;
  /** A digest of osProfile.customData (the secret itself is never stored); absent = not sent. */
  customDataHash?: string;
  /** What a REST client set and ARM returns as it was sent (absent: ARM's defaults are shown). */
  shown?: VmShownProperties;
  /** `properties.capacityReservation.capacityReservationGroup.id`: the group the VM is created into. */
  capacityReservationGroupId?: string;
}

/** VM properties the fake only keeps to show them back (osProfile.computerName, the OS disk's storage type). */
export interface VmShownProperties {
  computerName?: string;
  osDiskStorageAccountType?: string;
}

/** A VM with everything the REST face renders (still without customData). */
export interface VmDetails extends Vm {
  subscriptionId: string;
  resourceGroup: string;
  nicDeleteOption: DeleteOption;
  osDiskSizeGB: number;
  osDiskDeleteOption: DeleteOption;
  image: { reference: ImageReference } | { id: string };
  adminUsername: string;
  sshPublicKeys: string[];
  priority: 'Regular' | 'Spot';
  /** A Spot VM's eviction policy. */
  evictionPolicy?: EvictionPolicy;
  /** A Spot VM's billingProfile.maxPrice (-1: up to the on-demand price). */
  maxPrice?: number;
  /** A provisioned VM's power state (its instance view's PowerState/<code>); absent while not Succeeded. */
  power?: 'running' | VmPowerState;
  /** Virtual ms. */
  timeCreated: number;
  /** Bumped on every change ARM shows (rendered as the VM's etag). */
  etag: number;
  /** Why the last create failed, while the VM is Failed (its instance view shows it). */
  provisioningError?: { code: string; message: string };
  shown?: VmShownProperties;
  /** The capacity reservation group the VM was created into, as its PUT named it. */
  capacityReservationGroupId?: string;
}

/** A region's compute usages, as GET …/locations/{l}/usages reports them. */
export interface QuotaUsage {
  regional: { used: number; limit: number };
  lowPriority: { used: number; limit: number };
  families: Array<{ family: string; used: number; limit: number }>;
  virtualMachines: number;
}

export interface DiskDetails extends Disk {
  location: string;
  diskSizeGB: number;
  timeCreated: number;
  storageAccountType?: string;
}

export interface BeginResult {
  vm: VmDetails;
  /** Set while a create is in flight; undefined when the VM already existed and is settled. */
  operationId?: string;
  /** True when this PUT created the VM (201), false when it returned an existing one (200). */
  created: boolean;
}

/** Spot eviction policies ARM takes for a single VM. */
export type EvictionPolicy = 'Delete' | 'Deallocate';

/** VM power actions the fake serves (POST …/virtualMachines/{vm}/{action}). */
export type PowerAction = 'deallocate' | 'powerOff' | 'start' | 'restart';

export interface OperationInfo {
  id: string;
  kind: OpKind;
  status: OperationStatus;
  /** Virtual ms. */
  startedAt: number;
  endedAt?: number;
  /** The VM a create makes: where the operation's Location ("monitor") URL leads once it succeeded. */
  target?: ResourceRef;
}

export interface SnapshotJson {
  t: number;
  nics: Array<Nic & { reservedUntil?: number; reservedFor?: string }>;
  vms: Vm[];
  disks: Disk[];
  reservations: Array<{ nicId: string; vmId: string; until: number }>;
  quota: Array<{ subscriptionId: string; location: string; family: string; usedCores: number; limitCores: number | null }>;
  regionalCores: Array<{ subscriptionId: string; location: string; usedCores: number; limitCores: number | null }>;
  subnets: Array<{ id: string; addressPrefix: string; used: number; peak: number; capacity: number }>;
  operations: { inProgress: number; total: number };
}

export interface Leaks {
  nics: Nic[];
  vms: Vm[];
  disks: Disk[];
}

export interface RegionState {
  subscriptionId: string;
  location: string;
  familyQuota: Map<string, number>;
  familyUsed: Map<string, number>;
  regionalQuota: number | undefined;
  totalUsed: number;
  lowPriorityQuota: number | undefined;
  /** Cores of Spot VMs: they count against the low-priority quota only. */
  lowPriorityUsed: number;
  unavailable: Set<string>;
  /** Sizes (lower-case, or `*` for all) with no spot capacity now: spot creates get SkuNotAvailable. */
  spotUnavailable: Set<string>;
  allocationFailureRate: number;
  zonalAllocationFailureRate: number;
  overconstrainedAllocationFailureRate: number;
  /** Spot evictions per running Spot VM and hour, and the same per VM size (lower-case name). */
  spotEvictionRatePerHour: number;
  spotEvictionRateBySku: Map<string, number>;
}

export interface NicRecord {
  key: string;
  id: string;
  name: string;
  location: string;
  subnetId: string;
  subnet: SubnetPool;
  ipOffset: number;
  ip: string;
  tags: Tags;
  attachedVmKey?: string;
  reservedUntil: number;
  reservedFor?: string;
  /** First VM-create failure since the NIC was last attached successfully (for reapTimesSeconds). */
  failedAt?: number;
  /** Set while an accepted DELETE runs (the NIC shows Deleting). */
  deleteOp?: OpRecord;
  deleteTimer?: TimerId;
  /** Virtual ms from which lists show the NIC (list cache lag). */
  listedFrom: number;
  /** Cached frozen AzurePort view; cleared whenever a field it shows changes. */
  view?: Nic;
}

export interface VmRecord {
  key: string;
  id: string;
  name: string;
  subscriptionId: string;
  resourceGroup: string;
  location: string;
  vmSize: string;
  zone?: string;
  family: string;
  cores: number;
  region: RegionState;
  nicKeys: string[];
  nicIds: string[];
  nicDeleteOption: DeleteOption;
  osDiskName: string;
  osDiskSizeGB: number;
  osDiskDeleteOption: DeleteOption;
  image: { reference: ImageReference } | { id: string };
  adminUsername: string;
  sshPublicKeys: string[];
  priority: 'Regular' | 'Spot';
  evictionPolicy?: EvictionPolicy;
  /** A Spot VM's billingProfile.maxPrice (-1: up to the on-demand price). */
  maxPrice?: number;
  tags: Tags;
  provisioningState: VmProvisioningState;
  /** Meaningful while Succeeded: a provisioned VM runs until a power action or an eviction says otherwise. */
  power: 'running' | VmPowerState;
  createOp?: OpRecord;
  deleteOp?: OpRecord;
  timer?: TimerId;
  /** A power action in flight (deallocate, powerOff, start, restart) and the timer that ends it. */
  powerOp?: OpRecord;
  powerTimer?: TimerId;
  /** When ARM will evict this Spot VM (drawn from its region's eviction rate), or the notice running out. */
  evictionTimer?: TimerId;
  /** The eviction is decided (its Preempt notice runs): nothing reschedules it. */
  evictionNoticed?: boolean;
  timeCreated: number;
  customDataHash?: string;
  shown?: VmShownProperties;
  /** Whether the VM's cores count against quota now (not after an allocation failure, nor while a reservation holds them). */
  coresHeld: boolean;
  /** The capacity reservation the VM was matched to, and whether it took a reserved slot (not overallocated). */
  reservation?: { record: ReservationRecord; reserved: boolean; groupId: string };
  etag: number;
  listedFrom: number;
  /** Cached frozen AzurePort view; cleared whenever a field it shows changes. */
  view?: Vm;
  /** The same as a GET shows it (with the power state when not running); cleared with `view`. */
  getView?: Vm;
}

/** One capacity reservation of a group: a size, a zone (of a zonal group) and a quantity. */
export interface ReservationRecord {
  id: string;
  name: string;
  /** The size's canonical name. */
  sku: string;
  zone?: string;
  quantity: number;
  /** ARM ids of the VMs matched to it (allocated or not), by key, in the order they came. */
  vmIds: Map<string, string>;
  timeCreated: number;
}

export interface DiskRecord {
  key: string;
  id: string;
  name: string;
  location: string;
  managedByKey?: string;
  managedBy?: string;
  diskSizeGB: number;
  tags: Tags;
  timeCreated: number;
  listedFrom: number;
  /** The OS disk storage type its VM's PUT asked for (absent: the fake's default). */
  storageAccountType?: string;
  /** Cached frozen AzurePort view; cleared whenever a field it shows changes. */
  view?: Disk;
}

export type OpKind = 'create' | 'delete' | 'action';

export interface OpRecord {
  id: string;
  kind: OpKind;
  startedAt: number;
  endedAt?: number;
  status: OperationStatus;
  result?: Vm;
  /** See OperationInfo.target. */
  target?: ResourceRef;
  waiters: Array<() => void>;
}

/** A resource group, or a whole subscription when resourceGroup is absent. */
export type ListScope = ResourceGroupScope | { subscriptionId: string; resourceGroup?: undefined };

const KNOWN_CODES: ReadonlySet<string> = new Set<AzureErrorCode>([
  'OperationNotAllowed', 'QuotaExceeded', 'SkuNotAvailable', 'AllocationFailed', 'ZonalAllocationFailed',
  'OverconstrainedAllocationRequest', 'OverconstrainedZonalAllocationRequest', 'NicReservedForAnotherVm', 'NicInUse',
  'SubnetIsFull', 'TooManyRequests', 'ResourceNotFound', 'InternalServerError', 'RequestTimeout', 'InvalidParameter', 'Unknown',
]);

export function regionKey(subscriptionId: string, location: string): string {
  return `${subscriptionId.toLowerCase()}|${location.toLowerCase()}`;
}

export function sameId(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** Lower-cased id prefix of a resource group (or, without one, a subscription). */
export function scopePrefix(scope: { subscriptionId: string; resourceGroup?: string | undefined }): string {
  const sub = `/subscriptions/${scope.subscriptionId}/`;
  return (scope.resourceGroup === undefined ? sub : `${sub}resourcegroups/${scope.resourceGroup}/`).toLowerCase();
}

/** Works on records, details and views alike: every one of them carries the Vm fields. */
export function toVm(rec: Vm): Vm {
  const nicIds = 'nicKeys' in rec ? rec.nicIds : rec.nicIds;
  const state = 'state' in rec ? rec.provisioningState : rec.provisioningState;
  return {
    id: rec.id, name: rec.name, location: rec.location, vmSize: rec.vmSize, ...(rec.zone ? { zone: rec.zone } : {}), nicIds: [...nicIds], osDiskName: rec.osDiskName,
    provisioningState: state, tags: { ...rec.tags },
  };
}

export function toVmDetails(rec: VmRecord): VmDetails {
  return {
    ...toVm(rec),
    subscriptionId: rec.subscriptionId, resourceGroup: rec.resourceGroup, nicDeleteOption: rec.nicDeleteOption,
    osDiskSizeGB: rec.osDiskSizeGB, osDiskDeleteOption: rec.osDiskDeleteOption, image: copyImage(rec.image),
    adminUsername: rec.adminUsername, sshPublicKeys: [...rec.sshPublicKeys], priority: rec.priority, timeCreated: rec.timeCreated,
    etag: rec.etag,
    ...(rec.evictionPolicy !== undefined ? { evictionPolicy: rec.evictionPolicy } : {}),
    ...(rec.maxPrice !== undefined ? { maxPrice: rec.maxPrice } : {}),
    ...(rec.provisioningState === 'Succeeded' ? { power: rec.power } : {}),
    ...(rec.provisioningState === 'Failed' && rec.createOp?.status.status === 'Failed' ? { provisioningError: { ...rec.createOp.status.error } } : {}),
    ...(rec.shown ? { shown: { ...rec.shown } } : {}),
    ...(rec.reservation ? { capacityReservationGroupId: rec.reservation.groupId } : {}),
  };
}

export function toDiskDetails(rec: DiskRecord): DiskDetails {
  const d: DiskDetails = { id: rec.id, name: rec.name, tags: { ...rec.tags }, location: rec.location, diskSizeGB: rec.diskSizeGB, timeCreated: rec.timeCreated };
  if (rec.managedBy !== undefined) d.managedBy = rec.managedBy;
  if (rec.storageAccountType !== undefined) d.storageAccountType = rec.storageAccountType;
  return d;
}

/** An LRO failure as the port reports it; codes outside the AzureErrorCode union become Unknown. */
export function toAzureError(error: { code: string; message: string }, status: number): AzureError {
  const code = KNOWN_CODES.has(error.code) ? (error.code as AzureErrorCode) : 'Unknown';
  return msg.armError(code, status, code === 'Unknown' ? `${error.code}: ${error.message}` : error.message);
}

/** ARM's canonical location name: 'East US 2' and 'EASTUS2' are both eastus2. */
export function normalizeLocation(location: string): string {
  return location.replace(/\s+/g, '').toLowerCase();
}

/** A short non-reversible digest (FNV-1a, 2 x 32 bit): enough to tell a changed customData, never enough to recover it. */
export function digest(text: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x9e3779b9;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  }
  return h1.toString(16).padStart(8, '0') + h2.toString(16).padStart(8, '0');
}

/**
 * The first property of a VM re-PUT that ARM would refuse to change (409
 * PropertyChangeNotAllowed), or undefined when the PUT changes nothing immutable.
 */
export function changedImmutableProperty(rec: VmRecord, req: VmCreateRequest): string | undefined {
  if (req.adminUsername !== rec.adminUsername) return 'osProfile.adminUsername';
  if ((req.shown?.computerName ?? rec.name) !== (rec.shown?.computerName ?? rec.name)) return 'osProfile.computerName';
  if (req.customDataHash !== undefined && req.customDataHash !== rec.customDataHash) return 'osProfile.customData';
  if (req.sshPublicKeys.join('\n') !== rec.sshPublicKeys.join('\n')) return 'osProfile.linuxConfiguration.ssh.publicKeys';
  if (req.nicIds.map((id) => id.toLowerCase()).join(',') !== rec.nicIds.map((id) => id.toLowerCase()).join(',')) return 'networkProfile.networkInterfaces';
  if (req.osDiskName.toLowerCase() !== rec.osDiskName.toLowerCase()) return 'storageProfile.osDisk.name';
  if (imageKey(req.image) !== imageKey(rec.image)) return 'storageProfile.imageReference';
  if (req.vmSize.toLowerCase() !== rec.vmSize.toLowerCase()) return 'hardwareProfile.vmSize';
  if ((req.zone ?? '') !== (rec.zone ?? '')) return 'zones';
  if (req.priority !== rec.priority) return 'priority';
  if (req.priority === 'Spot' && (req.evictionPolicy ?? 'Deallocate') !== (rec.evictionPolicy ?? 'Deallocate')) return 'evictionPolicy';
  return undefined;
}

function imageKey(image: { reference: ImageReference } | { id: string }): string {
  const r = 'id' in image ? undefined : image.reference;
  return (r ? `${r.publisher}:${r.offer}:${r.sku}:${r.version}` : (image as { id: string }).id).toLowerCase();
}

export function copyImage(image: { reference: ImageReference } | { id: string }): { reference: ImageReference } | { id: string } {
  return 'id' in image ? { id: image.id } : { reference: { ...image.reference } };
}

/**
 * The AzurePort views are frozen and cached per record: the simulator lists every NIC, VM
 * and disk on each resync, and handing out the same immutable object until the record
 * changes stops callers mutating the fake's state without copying on every read.
 */
export function vmView(rec: VmRecord): Vm {
  return (rec.view ??= Object.freeze({
    id: rec.id, name: rec.name, location: rec.location, vmSize: rec.vmSize, ...(rec.zone ? { zone: rec.zone } : {}), nicIds: Object.freeze([...rec.nicIds]) as string[],
    osDiskName: rec.osDiskName, provisioningState: rec.provisioningState, tags: Object.freeze({ ...rec.tags }),
  }));
}

/**
 * A VM as a GET shows it: the list view, plus the power state of a provisioned VM that is not
 * running (a list has no instance view, so it never shows one).
 */
export function vmGetView(rec: VmRecord): Vm {
  if (rec.provisioningState !== 'Succeeded' || rec.power === 'running') return vmView(rec);
  return (rec.getView ??= Object.freeze({ ...vmView(rec), powerState: rec.power }));
}

export function diskView(rec: DiskRecord): Disk {
  if (rec.view) return rec.view;
  const d: Disk = { id: rec.id, name: rec.name, tags: Object.freeze({ ...rec.tags }) };
  if (rec.managedBy !== undefined) d.managedBy = rec.managedBy;
  return (rec.view = Object.freeze(d));
}

/** Whether two tag sets hold the same pairs (a PUT or PATCH with the same tags changes nothing). */
export function sameTags(a: Tags, b: Tags): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (a[k] !== b[k]) return false;
  return true;
}
