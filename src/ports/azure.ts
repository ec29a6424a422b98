/**
 * The Azure port: the only way the runtime touches ARM. Implemented by the SDK adapter
 * (src/azure) and by the simulator's fake ARM (src/sim/arm). Every failure is an AzureError.
 */
export interface ResourceGroupScope {
  subscriptionId: string;
  resourceGroup: string;
}

export interface ResourceRef extends ResourceGroupScope {
  name: string;
}

export type Tags = Record<string, string>;

export interface NicSpec {
  ref: ResourceRef;
  location: string;
  subnetId: string;
  tags: Tags;
}

export interface Nic {
  id: string;
  name: string;
  location: string;
  subnetId: string;
  privateIpAddress?: string;
  /** ARM id of the VM the NIC is attached to, if any. */
  virtualMachineId?: string;
  provisioningState: 'Updating' | 'Succeeded' | 'Failed' | 'Deleting';
  tags: Tags;
}

export interface ImageReference {
  publisher: string;
  offer: string;
  sku: string;
  version: string;
}

export interface VmSpec {
  ref: ResourceRef;
  location: string;
  vmSize: string;
  /** Availability zone id ("1"); absent: a regional VM. Immutable once the VM exists. */
  zone?: string;
  nicId: string;
  osDiskName: string;
  osDiskSizeGB: number;
  image: { reference: ImageReference } | { id: string };
  adminUsername: string;
  sshPublicKeys: string[];
  /** gzip + base64 cloud-init; a secret (carries the bootstrap token). */
  customData: string;
  priority: 'Regular' | 'Spot';
  /** A Spot VM's billingProfile.maxPrice (USD/hour; -1: up to the on-demand price, ARM's default for the field). */
  spotMaxPrice?: number;
  /** ARM id of the capacity reservation group the VM is created into (`properties.capacityReservation`). */
  capacityReservationGroupId?: string;
  tags: Tags;
}

export type VmProvisioningState = 'Creating' | 'Succeeded' | 'Failed' | 'Deleting';

/**
 * A provisioned VM's power state other than running, from its instance view (`PowerState/<code>`).
 * ARM shows it only to a GET that asks for the instance view, never in a list.
 */
export type VmPowerState = 'starting' | 'stopping' | 'stopped' | 'deallocating' | 'deallocated';

export interface Vm {
  id: string;
  name: string;
  location: string;
  vmSize: string;
  /** Availability zone id, when the VM is zonal. */
  zone?: string;
  nicIds: string[];
  osDiskName?: string;
  provisioningState: VmProvisioningState;
  /**
   * Set only when a GET's instance view shows a provisioned VM that is not running (a person
   * or ARM stopped or deallocated it, or it is starting again); absent when it runs, and in
   * every list answer (lists carry no instance view).
   */
  powerState?: VmPowerState;
  tags: Tags;
}

export interface Disk {
  id: string;
  name: string;
  managedBy?: string;
  tags: Tags;
}

/** One capacity reservation of a group, as its instance view shows it. */
export interface CapacityReservation {
  id: string;
  name: string;
  vmSize: string;
  /** Availability zone id ("1") of a zonal group's reservation; absent: regional. */
  zone?: string;
  /** The reserved quantity (`utilizationInfo.currentCapacity`). */
  capacity: number;
  /** ARM ids of the VMs allocated in it now (`utilizationInfo.virtualMachinesAllocated`, overallocated ones too). */
  allocatedVmIds: string[];
}

/** A capacity reservation group with its reservations' utilisation. */
export interface CapacityReservationGroup {
  id: string;
  name: string;
  location: string;
  reservations: CapacityReservation[];
}

/** One Compute usage counter of a region: vCPUs in use against the subscription's limit. */
export interface CoreUsage {
  used: number;
  limit: number;
}

/**
 * GET …/providers/Microsoft.Compute/locations/{l}/usages: the region's total (regional) vCPUs,
 * low-priority (Spot) vCPUs, and vCPUs per VM family (keyed by the family's name as Resource
 * SKUs spells it, e.g. standardDSv5Family).
 */
export interface ComputeUsages {
  regional: CoreUsage;
  lowPriority?: CoreUsage;
  families: ReadonlyMap<string, CoreUsage>;
}

export interface AzurePort {
  getNic(ref: ResourceRef): Promise<Nic | undefined>;
  /** PUT; resolves once the NIC is provisioned. Idempotent for the same name. */
  createNic(spec: NicSpec): Promise<Nic>;
  /** DELETE; 404 is success. */
  deleteNic(ref: ResourceRef): Promise<void>;
  listNics(scope: ResourceGroupScope): Promise<Nic[]>;
  getVm(ref: ResourceRef): Promise<Vm | undefined>;
  /**
   * PUT and poll the long-running operation to its end. Rejects with AzureError. Create-only:
   * a VM of the name that exists already (one that appeared since the caller's GET) is
   * answered as it is and never written over; the caller checks whose it is.
   */
  createVm(spec: VmSpec): Promise<Vm>;
  /**
   * DELETE; resolves once ARM has accepted it (202) or the VM is gone (404), without waiting
   * for the operation: a GPU VM takes minutes to delete, and callers observe it go (the VM
   * shows Deleting, then disappears with its NIC and OS disk: deleteOption: Delete).
   */
  deleteVm(ref: ResourceRef): Promise<void>;
  listVms(scope: ResourceGroupScope): Promise<Vm[]>;
  listDisks(scope: ResourceGroupScope): Promise<Disk[]>;
  /** GET; undefined when absent (lists lag, a GET does not: decisions that matter use it). */
  getDisk(ref: ResourceRef): Promise<Disk | undefined>;
  deleteDisk(ref: ResourceRef): Promise<void>;
  /** Compute usages of a subscription in a region (a read; quota-aware planning). */
  listUsages(subscriptionId: string, location: string): Promise<ComputeUsages>;
  /** A capacity reservation group with each reservation's size, zone, quantity and allocated VMs (reads); undefined when absent. */
  getCapacityReservationGroup(ref: ResourceRef): Promise<CapacityReservationGroup | undefined>;
}

/** Azure error codes the controller distinguishes (see src/azure/errors.ts for what each means). */
export type AzureErrorCode =
  | 'OperationNotAllowed'
  | 'QuotaExceeded'
  | 'SkuNotAvailable'
  | 'AllocationFailed'
  | 'ZonalAllocationFailed'
  | 'OverconstrainedAllocationRequest'
  | 'OverconstrainedZonalAllocationRequest'
  /** Spot only: the size is never offered as spot (ARM's error codes for Spot VMs). */
  | 'AzureSpotIsNotSupportedForThisVMSize'
  /** Spot only: billingProfile.maxPrice is below the size's current spot price. */
  | 'SpotPriceGreaterThanProvidedMaxPrice'
  | 'NicReservedForAnotherVm'
  | 'NicInUse'
  | 'SubnetIsFull'
  | 'TooManyRequests'
  | 'ResourceNotFound'
  | 'InternalServerError'
  | 'RequestTimeout'
  | 'InvalidParameter'
  /**
   * A resource of the name exists that is not this NodeClaim's (another cluster's, or nobody's):
   * azflex's own refusal to adopt or delete it, or ARM's ConflictingUserInput for an OS disk name taken.
   */
  | 'ResourceNameConflict'
  | 'Unknown';

/**
 * What ARM said beyond the port's code: its own error code (e.g. SubscriptionRequestsThrottled,
 * ResourceGroupNotFound, PropertyChangeNotAllowed) and, for a 429, who throttled: ARM itself
 * (the whole subscription waits) or one resource provider (only calls to that provider wait).
 */
export interface AzureErrorInfo {
  armCode?: string;
  /** 'arm' for ARM's subscription buckets, or a provider namespace such as 'Microsoft.Compute'. */
  throttledBy?: string;
  /** Extra response headers the fake's REST face sends with the error (rate-limit counters). */
  headers?: Record<string, string>;
  /** ARM's error.details[] (e.g. the Compute throttling policy that was exceeded). */
  details?: Array<{ code: string; target?: string; message: string }>;
}

export class AzureError extends Error {
  override readonly name = 'AzureError';
  constructor(
    readonly code: AzureErrorCode,
    readonly statusCode: number,
    message: string,
    /** Seconds, from a 429's Retry-After header. */
    readonly retryAfterSeconds?: number,
    readonly info: AzureErrorInfo = {},
  ) {
    super(`${code}: ${message}`);
  }
}

/** The resource provider that serves a resource type, for provider-scoped throttling. */
export const PROVIDER = { network: 'Microsoft.Network', compute: 'Microsoft.Compute' } as const;

export function isAzureError(err: unknown): err is AzureError {
  return err instanceof AzureError;
}
