/**
 * Plain data types of the fake ARM: its configuration, the events it reports, the faults
 * that can be injected at run time and the long-running-operation status documents.
 * Kept free of zod so the hot path never validates; scenario files are parsed elsewhere.
 */

export interface LatencyRangeMs {
  min: number;
  max: number;
}

/** Per-operation latency ranges; each call draws uniformly in [min, max] from the seeded random. */
export interface FakeArmLatency {
  /** GET and list calls. */
  read: LatencyRangeMs;
  /** NIC PUT until the response (the NIC is usable as soon as it exists). */
  nicPut: LatencyRangeMs;
  /** NIC DELETE until ARM accepts it (202). */
  nicDelete: LatencyRangeMs;
  /** NIC delete operation, from acceptance to the NIC being gone (the NIC shows Deleting meanwhile). */
  nicDeleteOperation: LatencyRangeMs;
  /** The synchronous answer of a VM PUT (accepted or refused). */
  vmPut: LatencyRangeMs;
  /** VM create LRO, from acceptance to Succeeded. */
  vmCreate: LatencyRangeMs;
  /** VM create LRO, from acceptance to an async allocation failure. */
  vmCreateFailure: LatencyRangeMs;
  /** VM delete LRO, from acceptance to the VM (and its cascade) being gone: VMs without GPUs, and VMs that never allocated (Failed). */
  vmDelete: LatencyRangeMs;
  /** The same for an allocated VM whose size has GPUs. */
  gpuVmDelete: LatencyRangeMs;
  diskDelete: LatencyRangeMs;
}

export interface FakeArmRegionConfig {
  subscriptionId: string;
  location: string;
  /** Approved cores per VM family; a family that is missing is unlimited. */
  familyQuotaCores: Record<string, number>;
  /** "Total Regional Cores" quota; missing = unlimited. */
  regionalQuotaCores?: number;
  unavailableSkus?: string[];
  /** Probability that an accepted VM create fails asynchronously with AllocationFailed. */
  allocationFailureRate?: number;
  /** Same, with ZonalAllocationFailed (drawn after allocationFailureRate). */
  zonalAllocationFailureRate?: number;
}

export interface FakeArmSubnetConfig {
  /** Full ARM subnet id. */
  id: string;
  /** IPv4 CIDR, e.g. '10.1.0.0/24'. */
  addressPrefix: string;
}

export interface FakeArmConfig {
  regions: FakeArmRegionConfig[];
  subnets: FakeArmSubnetConfig[];
  /** Missing ranges fall back to DEFAULT_LATENCY_MS. */
  latencyMs?: Partial<FakeArmLatency>;
  /** ARM token buckets per subscription and region (reads 250 +25/s, writes/deletes 200 +10/s). */
  throttling?: boolean;
  /** Probability of a 500 InternalServerError (before any effect). */
  transientFaultRate?: number;
  /** Probability of a RequestTimeout. */
  timeoutRate?: number;
  /** For a timed-out write: probability that the write took effect before the response was lost (default 0.5). */
  timeoutAfterEffectRate?: number;
  /** How long a VM PUT reserves the NICs it references (default 180). */
  reservationSeconds?: number;
}

export type ArmOperation =
  | 'nic.put'
  | 'nic.get'
  | 'nic.delete'
  | 'nic.list'
  | 'vm.put'
  | 'vm.get'
  | 'vm.delete'
  | 'vm.list'
  | 'disk.get'
  | 'disk.list'
  | 'disk.delete'
  | 'sku.list'
  | 'operation.get';

/** State changes that are not calls (LRO completions, cascades, faults). */
export type ArmStateChange =
  | 'vm.provisioned'
  | 'vm.failed'
  | 'vm.removed'
  | 'nic.created'
  | 'nic.removed'
  | 'disk.created'
  | 'disk.removed'
  | 'fault.injected';

/**
 * One line of the deterministic event log. Calls carry the HTTP status as a number,
 * state changes a word ('Succeeded', 'Failed', 'Deleted', ...).
 */
export interface ArmEvent {
  t: number;
  op: ArmOperation | ArmStateChange;
  name: string;
  status: number | string;
  code?: string;
}

export type BucketKind = 'reads' | 'writes' | 'deletes';

export type ArmFault =
  /** Set a family's approved cores (or, without `family`, the Total Regional Cores quota). */
  | { kind: 'quota'; location: string; subscriptionId?: string; family?: string; cores: number }
  | { kind: 'capacity'; location: string; subscriptionId?: string; allocationFailureRate?: number; zonalAllocationFailureRate?: number }
  /** `drain` empties the matching buckets now; `enabled` switches throttling on or off. */
  | { kind: 'throttle'; subscriptionId?: string; location?: string; bucket?: BucketKind; drain?: boolean; enabled?: boolean }
  | { kind: 'transient'; transientFaultRate?: number; timeoutRate?: number }
  | { kind: 'skuUnavailable'; location: string; subscriptionId?: string; sku: string; unavailable?: boolean };

export type OperationStatus =
  | { status: 'InProgress' }
  | { status: 'Succeeded' }
  | { status: 'Failed'; error: { code: string; message: string } };

export type DeleteOption = 'Delete' | 'Detach';
