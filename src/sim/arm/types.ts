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
  /**
   * Approved cores per VM family. A family that is missing gets the subscription default
   * (FakeArmConfig.defaultQuota): finite, and 0 for GPU families (NC, ND, NG, NV).
   */
  familyQuotaCores: Record<string, number>;
  /** "Total Regional vCPUs" quota; missing = FakeArmConfig.defaultQuota.regionalCores. */
  regionalQuotaCores?: number;
  /**
   * "Total Regional Low-priority vCPUs": the one quota Spot VMs count against (they use no
   * family or regional cores); missing = FakeArmConfig.defaultQuota.lowPriorityCores.
   */
  lowPriorityQuotaCores?: number;
  unavailableSkus?: string[];
  /** Probability that an accepted VM create fails asynchronously with AllocationFailed. */
  allocationFailureRate?: number;
  /** Same, with ZonalAllocationFailed (drawn after allocationFailureRate). */
  zonalAllocationFailureRate?: number;
  /** Same, with OverconstrainedAllocationRequest (drawn after the two above). */
  overconstrainedAllocationFailureRate?: number;
  /**
   * Spot evictions: each running Spot VM of the region is evicted at this rate per hour (a
   * memoryless hazard, so its mean run is 1/rate hours). Azure publishes no rate: default 0.
   */
  spotEvictionRatePerHour?: number;
  /** The same per VM size (ARM's name, any case), overriding spotEvictionRatePerHour for that size. */
  spotEvictionRatePerHourBySku?: Record<string, number>;
  /** On-demand capacity reservation groups of the subscription in this region (capacity-reservations.ts). */
  capacityReservationGroups?: FakeArmCapacityReservationGroupConfig[];
}

/**
 * A capacity reservation group and its reservations, as they stand when the fake starts: each
 * reservation holds `quantity` VMs of one size (in one zone of a zonal group, or regional),
 * and holds their cores against the subscription's quota from the start.
 */
export interface FakeArmCapacityReservationGroupConfig {
  /** The group's resource group (it exists from the start). */
  resourceGroup: string;
  name: string;
  /** Zone ids a zonal group spans; absent: a regional group, whose reservations have no zone. */
  zones?: string[];
  reservations: Array<{ name: string; sku: string; zone?: string; quantity: number }>;
}

/** Default quotas of a subscription for families and regions the config does not name. */
export interface FakeArmDefaultQuota {
  /** Per non-GPU VM family and region (default 100). */
  familyCores?: number;
  /** Per GPU family (standardNC*, standardND*, standardNG*, standardNV*) and region (default 0). */
  gpuFamilyCores?: number;
  /** Total Regional vCPUs (default 100). */
  regionalCores?: number;
  /** Total Regional Low-priority (Spot) vCPUs (default 100). */
  lowPriorityCores?: number;
}

/** The NIC reservation a VM PUT takes (ARM: from the create attempt, 180 s). */
export interface FakeArmReservation {
  /** Length (default 180). */
  seconds?: number;
  /** Each reservation lasts an extra uniform [0, jitterSeconds] (default 0). */
  jitterSeconds?: number;
  /** The reservation's clock starts this much later than the VM PUT (default 0). */
  startDelaySeconds?: number;
  /**
   * 'attempt' (ARM as documented): counted from the VM PUT. 'completion': an async create
   * outcome (failure or success) restarts the count, so it ends later than a controller
   * that reasons from the PUT expects.
   */
  from?: 'attempt' | 'completion';
}

/** Lists are served from a cache: new resources appear, deleted ones disappear, after a lag. GET is always current. */
export interface FakeArmListLag {
  appearSeconds?: number;
  disappearSeconds?: number;
}

/** One Compute resource-provider throttling policy (x-ms-ratelimit-remaining-resource). */
export interface ComputeThrottlePolicy {
  /** As ARM names it, e.g. PutVM3Min (rendered Microsoft.Compute/PutVM3Min). */
  name: string;
  ops: Array<'vm.put' | 'vm.get' | 'vm.delete' | 'vm.list'>;
  limit: number;
  windowSeconds: number;
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
  /** How long a VM PUT reserves the NICs it references (default 180); `reservation.seconds` wins. */
  reservationSeconds?: number;

  // --- fidelity knobs: every default is real ARM's behaviour (docs/fidelity.md) ---------
  reservation?: FakeArmReservation;
  /**
   * An async allocation failure leaves the VM in provisioningState Failed, still holding its
   * NIC and OS disk, until someone deletes it (default true). false: ARM rolls the VM back.
   */
  failedVmRecords?: boolean;
  /**
   * A VM delete with deleteOption Delete also deletes a NIC still inside its reservation
   * (default false: the network RP refuses, the NIC is only detached and must be deleted
   * by the caller once the reservation ends).
   */
  cascadeDeletesReservedNic?: boolean;
  /** Items per list page; more items give a nextLink (default 100). */
  listPageSize?: number;
  listLagSeconds?: FakeArmListLag;
  /** 409 PropertyChangeNotAllowed on a re-PUT of a VM that changes an immutable property (default true). */
  immutableVmProperties?: boolean;
  /** Compute RP throttling policies (default COMPUTE_THROTTLE_POLICIES); false turns them off. */
  computeThrottling?: boolean | ComputeThrottlePolicy[];
  defaultQuota?: FakeArmDefaultQuota;
  /**
   * Resource groups that exist, besides those of the configured subnets. A PUT, GET or
   * list in any other gets 404 ResourceGroupNotFound (unless requireResourceGroups is false).
   */
  resourceGroups?: Array<{ subscriptionId: string; name: string; location?: string }>;
  requireResourceGroups?: boolean;
  /** 400 InvalidApiVersionParameter / NoRegisteredProviderFound for api-versions ARM does not serve (default true). */
  validateApiVersions?: boolean;
  /**
   * The usages API (GET …/locations/{l}/usages): `readable` false answers 403
   * AuthorizationFailed (a role without Microsoft.Compute/locations/usages/read); `lagSeconds`
   * is how long a change in held cores takes to show in it (default 0: at once).
   */
  usages?: { readable?: boolean; lagSeconds?: number };
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
  | 'usage.list'
  | 'subnet.get'
  | 'operation.get'
  | 'rg.put'
  | 'rg.get'
  | 'vm.action'
  | 'crg.get'
  | 'crg.list';

/** State changes that are not calls (LRO completions, cascades, faults). */
export type ArmStateChange =
  | 'vm.provisioned'
  | 'vm.failed'
  | 'vm.removed'
  | 'nic.created'
  | 'nic.removed'
  | 'disk.created'
  | 'disk.removed'
  | 'vm.evicted'
  | 'vm.power'
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
  | { kind: 'capacity'; location: string; subscriptionId?: string; allocationFailureRate?: number; zonalAllocationFailureRate?: number; overconstrainedAllocationFailureRate?: number }
  /** `drain` empties the matching buckets now; `enabled` switches throttling on or off. */
  | { kind: 'throttle'; subscriptionId?: string; location?: string; bucket?: BucketKind; drain?: boolean; enabled?: boolean }
  | { kind: 'transient'; transientFaultRate?: number; timeoutRate?: number }
  /** Exhausts Compute RP throttling policies (all, or the one named) so the next matching call gets 429 with a long Retry-After. */
  | { kind: 'computeThrottle'; location: string; subscriptionId?: string; policy?: string }
  | { kind: 'skuUnavailable'; location: string; subscriptionId?: string; sku: string; unavailable?: boolean }
  /** Spot capacity for a size (or all sizes) in a region comes or goes: without it spot creates get SkuNotAvailable. */
  | { kind: 'spotCapacity'; location: string; subscriptionId?: string; sku?: string; available: boolean }
  | VmActionFault
  /**
   * Spot evictions in a region (of one VM size, or all): `evictFraction` evicts that share of
   * the running Spot VMs now (each with that probability: a capacity reclaim), `ratePerHour`
   * sets the eviction rate from now on.
   */
  | { kind: 'spotEviction'; location: string; subscriptionId?: string; sku?: string; evictFraction?: number; ratePerHour?: number };
/**
 * A person (or a tool) acts on running VMs of a region (of one VM size, or all), outside the
 * controller: each with probability `fraction`, it is deallocated, powered off or deleted.
 */
export type VmActionFault = { kind: 'vmAction'; location: string; subscriptionId?: string; sku?: string; action: 'deallocate' | 'powerOff' | 'delete'; fraction: number };

export type OperationStatus =
  | { status: 'InProgress' }
  | { status: 'Succeeded' }
  | { status: 'Failed'; error: { code: string; message: string } };

export type DeleteOption = 'Delete' | 'Detach';
