import {
  AzureError,
  type AzurePort,
  type Disk,
  type Nic,
  type NicSpec,
  type ResourceGroupScope,
  type ResourceRef,
  type Tags,
  type Vm,
  type VmSpec,
} from '../../ports/azure.js';
import type { Clock, Random } from '../../ports/clock.js';
import { zoneLabel, zonesIn, type InstanceType } from '../../catalog/skus.js';
import { armId, TAG } from '../../azure/naming.js';
import {
  COMPUTE_THROTTLE_POLICIES,
  DEFAULT_LATENCY_MS,
  DEFAULT_LIST_LAG_SECONDS,
  DEFAULT_LIST_PAGE_SIZE,
  DEFAULT_QUOTA,
  DEFAULT_RESERVATION_SECONDS,
  DEFAULT_TIMEOUT_AFTER_EFFECT_RATE,
  MAX_COMPUTE_RETRY_AFTER_SECONDS,
  isGpuFamily,
} from './defaults.js';
import * as msg from './messages.js';
import { ResourceIndex } from './resource-index.js';
import { SubnetPool } from './subnet-pool.js';
import { BUCKET_LIMITS, SubscriptionBucket } from './token-bucket.js';
import type {
  ArmEvent,
  ArmFault,
  ArmOperation,
  ArmStateChange,
  BucketKind,
  ComputeThrottlePolicy,
  FakeArmConfig,
  FakeArmLatency,
  FakeArmRegionConfig,
  LatencyRangeMs,
  OperationStatus,
} from './types.js';

import {
  changedImmutableProperty,
  copyImage,
  digest,
  diskView,
  normalizeLocation,
  vmGetView,
  vmView,
  regionKey,
  sameId,
  scopePrefix,
  toAzureError,
  toDiskDetails,
  toVm,
  toVmDetails,
  type BeginResult,
  type DiskDetails,
  type DiskRecord,
  type Leaks,
  type ListScope,
  type NicRecord,
  type OpKind,
  type OpRecord,
  type OperationInfo,
  type PowerAction,
  type QuotaUsage,
  type RegionState,
  type SnapshotJson,
  type VmCreateRequest,
  type VmDetails,
  type VmRecord,
} from './model.js';

export type * from './types.js';
export type { BeginResult, DiskDetails, EvictionPolicy, Leaks, ListScope, OperationInfo, PowerAction, QuotaUsage, SnapshotJson, VmCreateRequest, VmDetails } from './model.js';

export interface FakeArmOptions {
  clock: Clock;
  random: Random;
  config: FakeArmConfig;
  instanceTypes: readonly InstanceType[];
  onEvent?: (e: ArmEvent) => void;
}

type Outcome<T> = { status: number; value: T };

/** A deleted record lists on until `hiddenAt` (ARM's list cache lags behind deletes). */
interface Tomb<R> {
  rec: R;
  hiddenAt: number;
}

/** One page of a list, and where the next one starts (absent on the last page). */
export interface ListPage<V> {
  value: V[];
  nextSkip?: number;
}

/** Calls inside one sliding window (Compute RP throttling policies). */
class CallWindow {
  private times: number[] = [];
  private head = 0;

  count(now: number, windowMs: number): number {
    while (this.head < this.times.length && this.times[this.head]! <= now - windowMs) this.head++;
    if (this.head > 4096 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
    return this.times.length - this.head;
  }

  add(now: number, n = 1): void {
    for (let i = 0; i < n; i++) this.times.push(now);
  }

  /** Ms until the window holds fewer than `limit` calls (the window must be pruned first). */
  msUntilBelow(limit: number, now: number, windowMs: number): number {
    const excess = this.times.length - this.head - limit;
    if (excess < 0) return 0;
    return this.times[this.head + excess]! + windowMs - now;
  }
}

/**
 * A deterministic in-memory ARM for the three resource types azflex touches. Every
 * behaviour that made the upstream controller leak is modelled: the 180 s NIC reservation
 * taken by any VM PUT, asynchronous allocation failures after which ARM rolls the VM back,
 * quota refusals, throttling, and writes whose response is lost.
 *
 * Two faces share one behaviour: the synchronous "begin" methods (nicPut, beginCreateVm,
 * operationStatus, ...) that the REST handler speaks, and the AzurePort methods, which are
 * thin wrappers that add response latency and wait for long-running operations.
 *
 * Throttling uses ARM's token buckets per subscription and region: a call is charged to
 * the region of the resource it names (the PUT body's location, or the stored resource's);
 * a call that names no existing resource (a list, a GET or DELETE of something missing,
 * an operation poll) is charged to the subscription's first configured region.
 *
 * Time comes only from `clock` and randomness only from `random`, so a run is a pure
 * function of its seed. Random draws are made only when a feature is switched on, so
 * enabling, say, throttling does not shift the draws of an unrelated run.
 */
export class FakeArm implements AzurePort {
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly onEvent: ((e: ArmEvent) => void) | undefined;
  private readonly latency: FakeArmLatency;
  private readonly reservationMs: number;
  private readonly reservationSeconds: number;
  private readonly reservationJitterMs: number;
  private readonly reservationDelayMs: number;
  private readonly reservationFrom: 'attempt' | 'completion';
  private readonly failedVmRecords: boolean;
  private readonly cascadeDeletesReservedNic: boolean;
  private readonly pageSize: number;
  private readonly appearLagMs: number;
  private readonly disappearLagMs: number;
  private readonly immutableVmProperties: boolean;
  private readonly computePolicies: readonly ComputeThrottlePolicy[];
  private readonly defaultQuota: { familyCores: number; gpuFamilyCores: number; regionalCores: number; lowPriorityCores: number };
  private readonly requireResourceGroups: boolean;
  /**
   * The custom data last digested, and its digest: the controller renders the same bytes for
   * every NodeClaim of one NodePool and size (src/runtime/userdata.ts), and digesting a few KB
   * on every VM PUT of a quota storm showed in its profile.
   */
  private lastCustomData: { text: string; digest: string } | undefined;
  /** Whether the REST face refuses api-versions ARM does not serve. */
  readonly validateApiVersions: boolean;
  /** `sub|rg` (lower-case) of every resource group that exists. */
  private readonly resourceGroups = new Map<string, { subscriptionId: string; name: string; location: string }>();
  private readonly windows = new Map<string, CallWindow>();
  private readonly computeWindowsByCaller = new Map<string, Map<string, Map<ArmOperation, ReadonlyArray<{ p: ComputeThrottlePolicy; w: CallWindow }>>>>();
  private readonly nicTombs = new ResourceIndex<Tomb<NicRecord>>();
  private readonly vmTombs = new ResourceIndex<Tomb<VmRecord>>();
  private readonly diskTombs = new ResourceIndex<Tomb<DiskRecord>>();
  /** Rate-limit headers of the last call, and a sequence number telling calls apart. */
  /** What the last call's rate-limit headers say (rendered only when the REST face asks). */
  private lastRemaining: { kind: BucketKind; remaining: number; globalRemaining: number } | undefined;
  private lastResourceRemaining: string | undefined;
  private callSeq = 0;
  private throttling: boolean;
  private transientFaultRate: number;
  private timeoutRate: number;
  private readonly timeoutAfterEffectRate: number;

  private readonly types = new Map<string, InstanceType>();
  private readonly regions = new Map<string, RegionState>();
  /** First configured region per subscription: the throttling region for calls without a location. */
  private readonly homeRegion = new Map<string, string>();
  private readonly homeByCaller = new Map<string, string>();
  private readonly subnets = new Map<string, SubnetPool>();
  private readonly buckets = new Map<string, SubscriptionBucket>();
  /** The same buckets by the caller's (unnormalised) subscription, location and kind: see bucket(). */
  private readonly bucketsByCallerKeys = new Map<string, Map<string, Map<BucketKind, SubscriptionBucket>>>();
  /** Resource groups found by resourceGroupExists, by the caller's (unnormalised) strings. */
  private readonly knownGroups = new Map<string, Set<string>>();

  // Keyed by lower-cased ARM id: ARM compares ids case-insensitively.
  private readonly nics = new ResourceIndex<NicRecord>();
  private readonly vms = new ResourceIndex<VmRecord>();
  private readonly disks = new ResourceIndex<DiskRecord>();
  private readonly ops = new Map<string, OpRecord>();
  private opSeq = 0;
  private opsInProgress = 0;

  private readonly calls = new Map<string, Map<number, number>>();
  private readonly reapTimes: number[] = [];
  /** Per reaped NIC of a failed attempt: when ARM's reservation ended and when the NIC went. */
  private readonly reaps: { reservedUntil: number; removedAt: number }[] = [];
  private peakTotalIps = 0;
  private totalIps = 0;
  private lastBucket: { kind: BucketKind; remaining: number } | undefined;

  constructor(opts: FakeArmOptions) {
    const { config } = opts;
    this.clock = opts.clock;
    this.random = opts.random;
    this.onEvent = opts.onEvent;
    this.latency = { ...DEFAULT_LATENCY_MS, ...config.latencyMs };
    this.reservationSeconds = config.reservation?.seconds ?? config.reservationSeconds ?? DEFAULT_RESERVATION_SECONDS;
    this.reservationMs = this.reservationSeconds * 1000;
    this.reservationJitterMs = (config.reservation?.jitterSeconds ?? 0) * 1000;
    this.reservationDelayMs = (config.reservation?.startDelaySeconds ?? 0) * 1000;
    this.reservationFrom = config.reservation?.from ?? 'attempt';
    this.failedVmRecords = config.failedVmRecords ?? true;
    this.cascadeDeletesReservedNic = config.cascadeDeletesReservedNic ?? false;
    this.pageSize = Math.max(1, config.listPageSize ?? DEFAULT_LIST_PAGE_SIZE);
    this.appearLagMs = (config.listLagSeconds?.appearSeconds ?? DEFAULT_LIST_LAG_SECONDS.appearSeconds) * 1000;
    this.disappearLagMs = (config.listLagSeconds?.disappearSeconds ?? DEFAULT_LIST_LAG_SECONDS.disappearSeconds) * 1000;
    this.immutableVmProperties = config.immutableVmProperties ?? true;
    this.computePolicies = config.computeThrottling === false ? [] : Array.isArray(config.computeThrottling) ? config.computeThrottling : COMPUTE_THROTTLE_POLICIES;
    this.defaultQuota = { ...DEFAULT_QUOTA, ...config.defaultQuota };
    this.requireResourceGroups = config.requireResourceGroups ?? true;
    this.validateApiVersions = config.validateApiVersions ?? true;
    this.throttling = config.throttling ?? false;
    this.transientFaultRate = config.transientFaultRate ?? 0;
    this.timeoutRate = config.timeoutRate ?? 0;
    this.timeoutAfterEffectRate = config.timeoutAfterEffectRate ?? DEFAULT_TIMEOUT_AFTER_EFFECT_RATE;
    for (const t of opts.instanceTypes) this.types.set(t.name.toLowerCase(), t);
    for (const r of config.regions) this.addRegion(r);
    for (const s of config.subnets) {
      this.subnets.set(s.id.toLowerCase(), new SubnetPool(s.id, s.addressPrefix));
      const m = /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\//i.exec(s.id);
      if (m) this.addResourceGroup(m[1]!, m[2]!, this.homeRegion.get(m[1]!.toLowerCase()) ?? 'eastus2');
    }
    for (const rg of config.resourceGroups ?? []) this.addResourceGroup(rg.subscriptionId, rg.name, rg.location ?? this.homeRegion.get(rg.subscriptionId.toLowerCase()) ?? 'eastus2');
  }

  // ---------------------------------------------------------------- AzurePort

  // The port speaks as the SDK adapter does: a resource (group) that is not there is
  // `undefined`, `[]` or a successful delete; a PUT into a missing group is a configuration
  // error (InvalidParameter), not an absence.

  getNic(ref: ResourceRef): Promise<Nic | undefined> {
    return this.respond(this.latency.read, () => absentAs(() => this.nicGet(ref), undefined));
  }

  createNic(spec: NicSpec): Promise<Nic> {
    return this.respond(this.latency.nicPut, () => putInto(() => this.nicPut(spec).nic));
  }

  /** DELETE, then waits for the delete operation (Microsoft.Network deletes NICs asynchronously). */
  async deleteNic(ref: ResourceRef): Promise<void> {
    const begun = await this.respond(this.latency.nicDelete, () => absentAs(() => this.nicDelete(ref), 'notFound' as const));
    if (begun === 'notFound') return;
    const op = this.ops.get(begun.operationId);
    if (op) await this.waitOp(op);
  }

  listNics(scope: ResourceGroupScope): Promise<Nic[]> {
    return this.respond(this.latency.read, () => absentAs(() => this.listAll('nic.list', scope, this.nics, this.nicTombs, (rec) => this.nicView(rec)), []));
  }

  getVm(ref: ResourceRef): Promise<Vm | undefined> {
    return this.respond(this.latency.read, () => absentAs(() => this.getOne('vm.get', ref, this.vms, 'Microsoft.Compute/virtualMachines', vmGetView), undefined));
  }

  async createVm(spec: VmSpec): Promise<Vm> {
    const begun = await this.respond(this.latency.vmPut, () => putInto(() =>
      this.beginCreateVm({
        ref: spec.ref,
        location: spec.location,
        vmSize: spec.vmSize,
        ...(spec.zone ? { zone: spec.zone } : {}),
        nicIds: [spec.nicId],
        nicDeleteOption: 'Delete',
        osDiskName: spec.osDiskName,
        osDiskSizeGB: spec.osDiskSizeGB,
        osDiskDeleteOption: 'Delete',
        image: spec.image,
        adminUsername: spec.adminUsername,
        sshPublicKeys: spec.sshPublicKeys,
        priority: spec.priority,
        // As the SDK adapter asks: an evicted Spot VM is deleted, with its NIC and OS disk.
        ...(spec.priority === 'Spot' ? { evictionPolicy: 'Delete' as const } : {}),
        tags: spec.tags,
        customDataHash: this.customDataDigest(spec.customData),
      }),
    ));
    if (begun.operationId === undefined) return toVm(begun.vm);
    const op = this.ops.get(begun.operationId)!;
    await this.waitOp(op);
    if (op.status.status === 'Failed') throw toAzureError(op.status.error, 409);
    // Frozen, so every caller waiting on the same in-flight create may share it.
    return op.result ?? toVm(begun.vm);
  }

  /** Accepted or gone: the delete runs on (see AzurePort.deleteVm). */
  async deleteVm(ref: ResourceRef): Promise<void> {
    await this.respond(this.latency.vmPut, () => absentAs(() => this.beginDeleteVm(ref), undefined));
  }

  listVms(scope: ResourceGroupScope): Promise<Vm[]> {
    return this.respond(this.latency.read, () => absentAs(() => this.listAll('vm.list', scope, this.vms, this.vmTombs, vmView), []));
  }

  listDisks(scope: ResourceGroupScope): Promise<Disk[]> {
    return this.respond(this.latency.read, () => absentAs(() => this.listAll('disk.list', scope, this.disks, this.diskTombs, diskView), []));
  }

  getDisk(ref: ResourceRef): Promise<Disk | undefined> {
    return this.respond(this.latency.read, () => absentAs(() => this.getOne('disk.get', ref, this.disks, 'Microsoft.Compute/disks', diskView), undefined));
  }

  deleteDisk(ref: ResourceRef): Promise<void> {
    return this.respond(this.latency.diskDelete, () => {
      absentAs(() => this.diskDelete(ref), 'notFound');
    });
  }

  // ------------------------------------------------ synchronous face (REST dialect)

  /** NIC PUT. Idempotent for an existing name (200, still a counted write); 201 when created. */
  nicPut(spec: NicSpec): { nic: Nic; created: boolean } {
    const id = armId(spec.ref, 'Microsoft.Network/networkInterfaces');
    const location = normalizeLocation(spec.location);
    return this.invoke<{ nic: Nic; created: boolean }>('nic.put', 'writes', spec.ref.subscriptionId, location, spec.ref.name, () => {
      this.requireResourceGroup(spec.ref);
      const key = id.toLowerCase();
      const existing = this.nics.get(key);
      if (existing?.deleteOp) throw msg.anotherOperationInProgress();
      if (existing) {
        // A PUT replaces the resource's tags (the one NIC property this fake lets a re-PUT change).
        this.replaceNicTags(existing, spec.tags);
        return { status: 200, value: { nic: this.nicView(existing), created: false } };
      }
      const subnet = this.subnets.get(spec.subnetId.toLowerCase());
      if (!subnet) throw msg.invalid(`Subnet ${spec.subnetId} referenced by resource ${id} was not found.`);
      const offset = subnet.allocate();
      if (offset === undefined) throw msg.subnetIsFull(subnet.id, subnet.addressPrefix);
      this.totalIps++;
      if (this.totalIps > this.peakTotalIps) this.peakTotalIps = this.totalIps;
      const rec: NicRecord = {
        key, id, name: spec.ref.name, location, subnetId: subnet.id, subnet, ipOffset: offset,
        ip: subnet.address(offset), tags: { ...spec.tags }, reservedUntil: 0, listedFrom: this.clock.now() + this.appearLagMs,
      };
      this.nics.set(key, rec);
      // Reported here, inside the call: a PUT whose reply is lost still created the NIC.
      this.emit('nic.created', rec.name, 'Created');
      this.nicTombs.delete(key);
      return { status: 201, value: { nic: this.nicView(rec), created: true } };
    });
  }

  nicGet(ref: ResourceRef): Nic | undefined {
    return this.getOne('nic.get', ref, this.nics, 'Microsoft.Network/networkInterfaces', (rec) => this.nicView(rec));
  }

  /**
   * NIC DELETE: 'notFound' is a success counted as 404. Refuses NICs in use or reserved.
   * Accepted (202), the NIC shows Deleting until its delete operation ends.
   */
  nicDelete(ref: ResourceRef): { operationId: string } | 'notFound' {
    const key = armId(ref, 'Microsoft.Network/networkInterfaces').toLowerCase();
    const rec = this.nics.get(key);
    return this.invoke<{ operationId: string } | 'notFound'>('nic.delete', 'deletes', ref.subscriptionId, rec?.location, ref.name, () => {
      this.requireResourceGroup(ref);
      if (!rec) return { status: 404, value: 'notFound' };
      if (rec.deleteOp) return { status: 202, value: { operationId: rec.deleteOp.id } };
      const vm = rec.attachedVmKey === undefined ? undefined : this.vms.get(rec.attachedVmKey);
      if (vm) throw msg.nicInUse(rec.id, vm.id);
      if (this.clock.now() < rec.reservedUntil) throw msg.nicReserved(rec.reservedFor ?? '', this.reservationSeconds);
      const op = this.newOp('delete');
      rec.deleteOp = op;
      rec.view = undefined;
      const delay = this.draw(this.latency.nicDeleteOperation);
      if (delay <= 0) this.removeNic(rec);
      else {
        rec.deleteTimer = this.clock.setTimer(delay, () => {
          rec.deleteTimer = undefined;
          if (this.nics.get(rec.key) === rec) this.removeNic(rec);
        });
      }
      return { status: 202, value: { operationId: op.id } };
    });
  }

  /** Every page of a NIC list (each page a counted read), as a client that follows nextLink sees it. */
  nicList(scope: ListScope): Nic[] {
    return this.listAll('nic.list', scope, this.nics, this.nicTombs, (rec) => this.nicView(rec));
  }

  nicListPage(scope: ListScope, skip: number): ListPage<Nic> {
    return this.listPage('nic.list', scope, this.nics, this.nicTombs, (rec) => this.nicView(rec), skip);
  }

  /**
   * VM PUT. Any PUT that reaches the NIC checks reserves the NIC for reservationSeconds,
   * even when the SKU, quota or size check then refuses it synchronously: that is the
   * ARM behaviour behind the upstream leak. Returns the in-flight create operation.
   */
  beginCreateVm(input: VmCreateRequest): BeginResult {
    const id = armId(input.ref, 'Microsoft.Compute/virtualMachines');
    const req: VmCreateRequest = { ...input, location: normalizeLocation(input.location) };
    return this.invoke<BeginResult>('vm.put', 'writes', req.ref.subscriptionId, req.location, req.ref.name, () => {
      this.requireResourceGroup(req.ref);
      const key = id.toLowerCase();
      const existing = this.vms.get(key);
      if (existing) {
        if (existing.provisioningState === 'Deleting') throw msg.vmBeingDeleted(existing.name);
        const changed = this.immutableVmProperties ? changedImmutableProperty(existing, req) : undefined;
        if (changed !== undefined) throw msg.propertyChangeNotAllowed(changed);
        // Tags are mutable: a PUT replaces them (and the etag moves).
        this.replaceVmTags(existing, req.tags);
        // ARM retries provisioning of a Failed VM on an identical PUT (and reserves its NICs again).
        if (existing.provisioningState === 'Failed') return { status: 200, value: this.reprovision(existing, req) };
        const inFlight = existing.provisioningState === 'Creating' ? existing.createOp?.id : undefined;
        return { status: 200, value: { vm: toVmDetails(existing), operationId: inFlight, created: false } };
      }
      const region = this.regions.get(regionKey(req.ref.subscriptionId, req.location));
      if (!region) throw msg.invalid(`Location '${req.location}' is not configured for subscription '${req.ref.subscriptionId}' in the fake ARM.`);
      if (req.nicIds.length === 0) throw msg.invalid('At least one network interface is required (properties.networkProfile.networkInterfaces).');
      const nics: NicRecord[] = [];
      for (const nicId of req.nicIds) {
        const nic = this.nics.get(nicId.toLowerCase());
        if (!nic || nic.deleteOp) throw msg.invalid(`Resource ${nicId} referenced by resource ${id} was not found.`);
        const owner = nic.attachedVmKey === undefined ? undefined : this.vms.get(nic.attachedVmKey);
        // An attached NIC is owned; a refused PUT does not reserve it (the owner keeps it).
        if (owner && owner.key !== key) throw msg.nicInUse(nic.id, owner.id);
        if (this.clock.now() < nic.reservedUntil && nic.reservedFor !== undefined && nic.reservedFor.toLowerCase() !== key) {
          throw msg.nicReserved(nic.reservedFor, this.reservationSeconds);
        }
        nics.push(nic);
      }
      const now = this.clock.now();
      for (const nic of nics) this.reserve(nic, id, now);
      try {
        this.admitVm(req, region);
      } catch (err) {
        for (const nic of nics) nic.failedAt ??= now;
        throw err;
      }
      const type = this.types.get(req.vmSize.toLowerCase())!;
      const vm: VmRecord = {
        key, id, name: req.ref.name, subscriptionId: req.ref.subscriptionId, resourceGroup: req.ref.resourceGroup,
        location: req.location, vmSize: type.name, ...(req.zone ? { zone: req.zone } : {}), family: type.family, cores: type.vcpu, region,
        nicKeys: nics.map((n) => n.key), nicIds: nics.map((n) => n.id), nicDeleteOption: req.nicDeleteOption ?? 'Detach',
        osDiskName: req.osDiskName, osDiskSizeGB: req.osDiskSizeGB, osDiskDeleteOption: req.osDiskDeleteOption ?? 'Detach',
        image: copyImage(req.image), adminUsername: req.adminUsername, sshPublicKeys: [...req.sshPublicKeys], priority: req.priority,
        ...(req.priority === 'Spot' ? { evictionPolicy: req.evictionPolicy ?? 'Deallocate' } : {}),
        tags: { ...req.tags }, provisioningState: 'Creating', power: 'running', timeCreated: now, coresHeld: true, etag: 1,
        listedFrom: now + this.appearLagMs,
      };
      if (req.customDataHash !== undefined) vm.customDataHash = req.customDataHash;
      if (req.shown !== undefined) vm.shown = { ...req.shown };
      this.vms.set(key, vm);
      this.vmWrites++;
      this.vmTombs.delete(key);
      for (const nic of nics) this.attach(nic, key);
      this.addCores(vm, 1);
      const op = this.newOp('create');
      vm.createOp = op;
      this.scheduleCreateOutcome(vm, op);
      return { status: 201, value: { vm: toVmDetails(vm), operationId: op.id, created: true } };
    });
  }

  vmGet(ref: ResourceRef): VmDetails | undefined {
    return this.getOne('vm.get', ref, this.vms, 'Microsoft.Compute/virtualMachines', toVmDetails);
  }

  vmList(scope: ListScope): VmDetails[] {
    return this.listAll('vm.list', scope, this.vms, this.vmTombs, toVmDetails);
  }

  vmListPage(scope: ListScope, skip: number): ListPage<VmDetails> {
    return this.listPage('vm.list', scope, this.vms, this.vmTombs, toVmDetails, skip);
  }

  /**
   * VM DELETE. Undefined when the VM does not exist (a success counted as 404). Deleting a
   * VM that is still Creating preempts the create, whose operation then fails.
   */
  beginDeleteVm(ref: ResourceRef): { operationId: string } | undefined {
    const rec = this.vms.get(armId(ref, 'Microsoft.Compute/virtualMachines').toLowerCase());
    return this.invoke('vm.delete', 'deletes', ref.subscriptionId, rec?.location, ref.name, () => {
      this.requireResourceGroup(ref);
      if (!rec) return { status: 404, value: undefined };
      if (rec.provisioningState === 'Deleting' && rec.deleteOp) return { status: 202, value: { operationId: rec.deleteOp.id } };
      return { status: 202, value: { operationId: this.startDelete(rec).id } };
    });
  }

  /**
   * A VM power action (POST …/deallocate, powerOff, start, restart): a counted write that
   * starts an operation, or refuses (409 OperationNotAllowed) a VM that is not provisioned or
   * is in a state the action does not apply to. Undefined when the VM does not exist.
   */
  beginPowerAction(ref: ResourceRef, action: PowerAction): { operationId: string } | undefined {
    const rec = this.vms.get(armId(ref, 'Microsoft.Compute/virtualMachines').toLowerCase());
    return this.invoke('vm.action', 'writes', ref.subscriptionId, rec?.location, ref.name, () => {
      this.requireResourceGroup(ref);
      if (!rec) return { status: 404, value: undefined };
      if (rec.provisioningState === 'Deleting') throw msg.vmBeingDeleted(rec.name, action);
      if (rec.provisioningState !== 'Succeeded') throw msg.powerActionNotAllowed(rec.name, action, `the VM is in provisioning state '${rec.provisioningState}'`);
      const from = rec.power;
      const stopped = from === 'stopped' || from === 'stopping';
      const deallocated = from === 'deallocated' || from === 'deallocating';
      if (action === 'powerOff' && deallocated) throw msg.powerActionNotAllowed(rec.name, action, 'the VM is deallocated');
      if (action === 'restart' && (stopped || deallocated)) throw msg.powerActionNotAllowed(rec.name, action, `the VM is ${stopped ? 'stopped' : 'deallocated'}; start it first`);
      const op = this.newOp('action');
      // What the action leads to, and the state it shows meanwhile; an action that finds the VM there already just succeeds.
      const plan: { via: VmPowerTransit; to: 'running' | 'stopped' | 'deallocated' } | undefined =
        action === 'deallocate' ? (from === 'deallocated' ? undefined : { via: 'deallocating', to: 'deallocated' })
        : action === 'powerOff' ? (from === 'stopped' ? undefined : { via: 'stopping', to: 'stopped' })
        : action === 'start' ? (from === 'running' ? undefined : { via: 'starting', to: 'running' })
        : { via: 'starting', to: 'running' };
      if (!plan) {
        this.finishOp(op, { status: 'Succeeded' });
        return { status: 202, value: { operationId: op.id } };
      }
      this.changePower(rec, plan.via, op, this.draw(this.powerLatency(rec, plan.via)), plan.to);
      this.emit('vm.power', rec.name, action);
      return { status: 202, value: { operationId: op.id } };
    });
  }

  /**
   * POST …/simulateEviction of a running Spot VM (a counted write, 204): ARM evicts it as if it
   * needed the capacity back, after the notice a Preempt Scheduled Event gives the VM. A VM
   * that is not a running Spot VM is refused (409 OperationNotAllowed).
   */
  simulateEviction(ref: ResourceRef): boolean {
    const rec = this.vms.get(armId(ref, 'Microsoft.Compute/virtualMachines').toLowerCase());
    return this.invoke('vm.action', 'writes', ref.subscriptionId, rec?.location, ref.name, () => {
      this.requireResourceGroup(ref);
      if (!rec) return { status: 404, value: false };
      if (rec.priority !== 'Spot') throw msg.powerActionNotAllowed(rec.name, 'simulateEviction', 'it is not an Azure Spot VM');
      if (rec.provisioningState !== 'Succeeded' || rec.power !== 'running') throw msg.powerActionNotAllowed(rec.name, 'simulateEviction', 'it is not running');
      if (!rec.evictionNoticed) this.noticeEviction(rec);
      return { status: 204, value: true };
    });
  }

  /** Starts deleting a VM (a DELETE, or ARM evicting a Spot VM with policy Delete): Deleting, then gone with its cascade. */
  private startDelete(rec: VmRecord): OpRecord {
    if (rec.timer !== undefined) this.clock.clearTimer(rec.timer);
    rec.timer = undefined;
    this.stopPowerWork(rec);
    const wasAllocated = rec.provisioningState === 'Succeeded' && rec.power !== 'deallocated';
    if (rec.provisioningState === 'Creating' && rec.createOp) {
      this.finishOp(rec.createOp, { status: 'Failed', error: { code: 'OperationPreempted', message: msg.OPERATION_PREEMPTED_MESSAGE } });
    }
    rec.provisioningState = 'Deleting';
    this.vmChanged(rec);
    const op = this.newOp('delete');
    rec.deleteOp = op;
    const delay = this.draw(this.deleteLatency(rec, wasAllocated));
    rec.timer = this.clock.setTimer(delay, () => {
      rec.timer = undefined;
      this.removeVm(rec);
      this.finishOp(op, { status: 'Succeeded' });
    });
    return op;
  }

  /** Ends what runs on a VM's power: an action in flight (preempted) and a pending eviction. */
  private stopPowerWork(rec: VmRecord): void {
    if (rec.powerTimer !== undefined) this.clock.clearTimer(rec.powerTimer);
    rec.powerTimer = undefined;
    if (rec.powerOp) this.finishOp(rec.powerOp, { status: 'Failed', error: { code: 'OperationPreempted', message: msg.OPERATION_PREEMPTED_MESSAGE } });
    rec.powerOp = undefined;
    if (rec.evictionTimer !== undefined) this.clock.clearTimer(rec.evictionTimer);
    rec.evictionTimer = undefined;
    rec.evictionNoticed = false;
  }

  /** The VM shows `via` now and `to` after `delayMs`; `op` (if any) ends then. A running Spot VM may be evicted again. */
  private changePower(rec: VmRecord, via: VmPowerTransit, op: OpRecord | undefined, delayMs: number, to: 'running' | 'stopped' | 'deallocated'): void {
    this.stopPowerWork(rec);
    rec.power = via;
    this.vmChanged(rec);
    rec.powerOp = op;
    rec.powerTimer = this.clock.setTimer(delayMs, () => {
      rec.powerTimer = undefined;
      rec.powerOp = undefined;
      rec.power = to;
      this.vmChanged(rec);
      this.emit('vm.power', rec.name, to);
      if (op) this.finishOp(op, { status: 'Succeeded' });
      if (to === 'running') this.scheduleEviction(rec);
    });
  }

  /**
   * How long a power transition takes. Azure publishes no figures: deallocating releases the
   * host as a delete does (minutes for a GPU host), starting allocates one as a create does,
   * stopping shuts the guest down like a delete of a VM that holds no host.
   */
  private powerLatency(rec: VmRecord, via: VmPowerTransit): LatencyRangeMs {
    if (via === 'deallocating') return this.deleteLatency(rec, true);
    if (via === 'starting') return this.latency.vmCreate;
    return this.latency.vmDelete;
  }

  /** The region's Spot eviction rate for this VM's size (per hour). */
  private evictionRate(rec: VmRecord): number {
    const r = rec.region;
    return r.spotEvictionRateBySku.get(rec.vmSize.toLowerCase()) ?? r.spotEvictionRatePerHour;
  }

  /**
   * A running Spot VM's eviction, drawn from its region's rate (memoryless: an exponential wait,
   * so a rate change may simply draw again). No draw at all while the rate is 0, so a world
   * without evictions makes exactly the random draws it made before they existed.
   */
  private scheduleEviction(rec: VmRecord): void {
    if (rec.priority !== 'Spot' || rec.provisioningState !== 'Succeeded' || rec.power !== 'running' || rec.evictionNoticed) return;
    if (rec.evictionTimer !== undefined) this.clock.clearTimer(rec.evictionTimer);
    rec.evictionTimer = undefined;
    const rate = this.evictionRate(rec);
    if (rate <= 0) return;
    const waitMs = Math.max(1, Math.round((-Math.log(1 - this.random.next()) / rate) * 3_600_000));
    rec.evictionTimer = this.clock.setTimer(waitMs, () => {
      rec.evictionTimer = undefined;
      this.noticeEviction(rec);
    });
  }

  /**
   * ARM decided to evict: the VM gets a Preempt Scheduled Event (seen only inside the VM, through
   * the instance metadata service) at least SPOT_EVICTION_NOTICE_MS before ARM acts on it.
   */
  private noticeEviction(rec: VmRecord): void {
    if (rec.evictionTimer !== undefined) this.clock.clearTimer(rec.evictionTimer);
    rec.evictionNoticed = true;
    this.emit('vm.evicted', rec.name, 'Preempt');
    rec.evictionTimer = this.clock.setTimer(SPOT_EVICTION_NOTICE_MS, () => {
      rec.evictionTimer = undefined;
      rec.evictionNoticed = false;
      this.evict(rec);
    });
  }

  /** The eviction itself, per the VM's policy: deleted (with its cascade), or deallocated (its cores still count against quota). */
  private evict(rec: VmRecord): void {
    if (this.vms.get(rec.key) !== rec || rec.provisioningState !== 'Succeeded' || rec.power !== 'running') return;
    this.emit('vm.evicted', rec.name, rec.evictionPolicy === 'Delete' ? 'Deleted' : 'Deallocated');
    if (rec.evictionPolicy === 'Delete') this.startDelete(rec);
    else this.changePower(rec, 'deallocating', undefined, this.draw(this.deleteLatency(rec, true)), 'deallocated');
  }

  diskGet(ref: ResourceRef): DiskDetails | undefined {
    return this.getOne('disk.get', ref, this.disks, 'Microsoft.Compute/disks', toDiskDetails);
  }

  diskList(scope: ListScope): DiskDetails[] {
    return this.listAll('disk.list', scope, this.disks, this.diskTombs, toDiskDetails);
  }

  diskListPage(scope: ListScope, skip: number): ListPage<DiskDetails> {
    return this.listPage('disk.list', scope, this.disks, this.diskTombs, toDiskDetails, skip);
  }

  /** Disk DELETE: 'notFound' is a success counted as 404; an attached disk is refused (409). */
  diskDelete(ref: ResourceRef): 'deleted' | 'notFound' {
    const rec = this.disks.get(armId(ref, 'Microsoft.Compute/disks').toLowerCase());
    return this.invoke('disk.delete', 'deletes', ref.subscriptionId, rec?.location, ref.name, () => {
      this.requireResourceGroup(ref);
      if (!rec) return { status: 404, value: 'notFound' as const };
      if (rec.managedByKey !== undefined && this.vms.has(rec.managedByKey)) throw msg.diskAttached(rec.name, rec.managedBy ?? '');
      this.removeDisk(rec);
      return { status: 200, value: 'deleted' as const };
    });
  }

  /** Status of a long-running operation; undefined for an unknown id. Not counted (see pollOperation). */
  operationStatus(id: string): OperationStatus | undefined {
    return this.ops.get(id)?.status;
  }

  /** An operation poll as the REST face sees it: counted and throttled like any ARM read. */
  pollOperation(subscriptionId: string, id: string): OperationInfo | undefined {
    return this.invoke('operation.get', 'reads', subscriptionId, undefined, id, () => {
      const op = this.ops.get(id);
      if (!op) return { status: 404, value: undefined };
      const info: OperationInfo = { id: op.id, kind: op.kind, status: op.status, startedAt: op.startedAt };
      if (op.endedAt !== undefined) info.endedAt = op.endedAt;
      return { status: 200, value: info };
    });
  }

  /**
   * A finished operation for a write that completes synchronously in the fake (NIC PUT,
   * NIC and disk DELETE), so the REST face can hand out an Azure-AsyncOperation URL the way
   * Microsoft.Network does.
   */
  completedOperation(kind: 'create' | 'delete'): string {
    const op = this.newOp(kind);
    this.finishOp(op, { status: 'Succeeded' });
    return op.id;
  }

  /** Uncounted location look-ups, used by the REST face to build operation URLs. */
  nicLocation(ref: ResourceRef): string | undefined {
    return this.nics.get(armId(ref, 'Microsoft.Network/networkInterfaces').toLowerCase())?.location;
  }

  vmLocation(ref: ResourceRef): string | undefined {
    return this.vms.get(armId(ref, 'Microsoft.Compute/virtualMachines').toLowerCase())?.location;
  }

  diskLocation(ref: ResourceRef): string | undefined {
    return this.disks.get(armId(ref, 'Microsoft.Compute/disks').toLowerCase())?.location;
  }

  /** PATCH of a NIC's tags (a counted write): the NIC as it is now, or undefined when there is none. */
  nicPatchTags(ref: ResourceRef, tags: Tags): Nic | undefined {
    const rec = this.nics.get(armId(ref, 'Microsoft.Network/networkInterfaces').toLowerCase());
    return this.invoke('nic.put', 'writes', ref.subscriptionId, rec?.location, ref.name, () => {
      this.requireResourceGroup(ref);
      if (!rec) return { status: 404, value: undefined };
      if (rec.deleteOp) throw msg.anotherOperationInProgress();
      this.replaceNicTags(rec, tags);
      return { status: 200, value: this.nicView(rec) };
    });
  }

  /** PATCH of a VM's tags (a counted VM write, as Compute counts updates): the VM now, or undefined when there is none. */
  vmPatchTags(ref: ResourceRef, tags: Tags): VmDetails | undefined {
    const rec = this.vms.get(armId(ref, 'Microsoft.Compute/virtualMachines').toLowerCase());
    return this.invoke('vm.put', 'writes', ref.subscriptionId, rec?.location, ref.name, () => {
      this.requireResourceGroup(ref);
      if (!rec) return { status: 404, value: undefined };
      if (rec.provisioningState === 'Deleting') throw msg.vmBeingDeleted(rec.name, 'PATCH');
      this.replaceVmTags(rec, tags);
      return { status: 200, value: toVmDetails(rec) };
    });
  }

  /**
   * GET of a configured subnet (a counted read): its id as configured, prefix, and the NICs
   * holding an address in it. Undefined for a subnet the fake does not have.
   */
  subnetGet(subscriptionId: string, subnetId: string): { id: string; addressPrefix: string; nicIds: string[] } | undefined {
    const pool = this.subnets.get(subnetId.toLowerCase());
    return this.invoke('subnet.get', 'reads', subscriptionId, undefined, subnetId, () => {
      if (!pool) return { status: 404, value: undefined };
      const nicIds: string[] = [];
      for (const nic of this.nics.values()) if (nic.subnet === pool) nicIds.push(nic.id);
      return { status: 200, value: { id: pool.id, addressPrefix: pool.addressPrefix, nicIds } };
    });
  }

  /** Uncounted etag look-up, for the REST face's If-Match / If-None-Match check of a VM PUT. */
  vmEtag(ref: ResourceRef): number | undefined {
    return this.vms.get(armId(ref, 'Microsoft.Compute/virtualMachines').toLowerCase())?.etag;
  }

  /**
   * Compute usages of a region (GET …/locations/{l}/usages, a counted read): cores used and
   * allowed per VM family (every family offered there, plus any with a quota or usage) and
   * in total, and the region's VM count. Undefined for a region the fake does not serve.
   */
  quotaUsage(subscriptionId: string, location: string): QuotaUsage | undefined {
    const loc = normalizeLocation(location);
    const region = this.regions.get(regionKey(subscriptionId, loc));
    return this.invoke('usage.list', 'reads', subscriptionId, region ? loc : undefined, loc, () => {
      if (!region) return { status: 404, value: undefined };
      const families = new Set<string>([...region.familyQuota.keys(), ...region.familyUsed.keys()]);
      for (const t of this.types.values()) if (t.locations.some((l) => l.toLowerCase() === loc)) families.add(t.family);
      let vms = 0;
      for (const vm of this.vms.values()) if (vm.region === region) vms++;
      return {
        status: 200,
        value: {
          regional: { used: region.totalUsed, limit: this.regionalLimit(region) },
          lowPriority: { used: region.lowPriorityUsed, limit: this.lowPriorityLimit(region) },
          families: [...families].sort().map((family) => ({ family, used: region.familyUsed.get(family) ?? 0, limit: this.familyLimit(region, family) })),
          virtualMachines: vms,
        },
      };
    });
  }

  /** Resolves when the operation has finished (immediately if it has). */
  waitForOperation(id: string): Promise<OperationStatus> {
    const op = this.ops.get(id);
    if (!op) return Promise.reject(msg.armError('ResourceNotFound', 404, `Operation ${id} not found.`));
    return this.waitOp(op).then(() => op.status);
  }

  /** Counts a Resource SKUs list call (the REST face renders the catalog itself). */
  countSkuList(subscriptionId: string): void {
    this.invoke('sku.list', 'reads', subscriptionId, undefined, '', () => ({ status: 200, value: undefined }));
  }

  /** The token bucket the last call drew from, for x-ms-ratelimit-remaining-* headers. */
  lastRateLimit(): { kind: BucketKind; remaining: number } | undefined {
    return this.lastBucket;
  }

  /** Sequence number of the last call and the rate-limit headers ARM sends with its answer. */
  lastCallHeaders(): { seq: number; headers: Record<string, string> } {
    const headers: Record<string, string> = {};
    if (this.lastRemaining) {
      headers[`x-ms-ratelimit-remaining-subscription-${this.lastRemaining.kind}`] = String(this.lastRemaining.remaining);
      headers[`x-ms-ratelimit-remaining-subscription-global-${this.lastRemaining.kind}`] = String(this.lastRemaining.globalRemaining);
    }
    if (this.lastResourceRemaining !== undefined) headers['x-ms-ratelimit-remaining-resource'] = this.lastResourceRemaining;
    return { seq: this.callSeq, headers };
  }

  // ------------------------------------------------------------- resource groups

  resourceGroupExists(subscriptionId: string, name: string): boolean {
    if (!this.requireResourceGroups) return true;
    // Groups are never deleted, so a group once found stays found; remembered by the caller's
    // own strings, which are usually the same instances every call (no key to build and hash).
    let names = this.knownGroups.get(subscriptionId);
    if (names?.has(name)) return true;
    if (!this.resourceGroups.has(`${subscriptionId}|${name}`.toLowerCase())) return false;
    if (!names) this.knownGroups.set(subscriptionId, (names = new Set()));
    names.add(name);
    return true;
  }

  /** PUT /subscriptions/{s}/resourcegroups/{rg}: 201 when created, 200 when it existed. */
  putResourceGroup(subscriptionId: string, name: string, location: string): { created: boolean; location: string } {
    return this.invoke<{ created: boolean; location: string }>('rg.put', 'writes', subscriptionId, normalizeLocation(location), name, () => {
      const existing = this.resourceGroups.get(`${subscriptionId}|${name}`.toLowerCase());
      if (existing) return { status: 200, value: { created: false, location: existing.location } };
      this.addResourceGroup(subscriptionId, name, normalizeLocation(location));
      return { status: 201, value: { created: true, location: normalizeLocation(location) } };
    });
  }

  getResourceGroup(subscriptionId: string, name: string): { name: string; location: string } {
    return this.invoke('rg.get', 'reads', subscriptionId, undefined, name, () => {
      const rg = this.resourceGroups.get(`${subscriptionId}|${name}`.toLowerCase());
      if (!rg) throw msg.resourceGroupNotFound(name);
      return { status: 200, value: { name: rg.name, location: rg.location } };
    });
  }

  // ----------------------------------------------------------- catalog & regions

  /** The fake's clock reading (virtual ms), for timestamps in REST documents. */
  now(): number {
    return this.clock.now();
  }

  /** Instance types known to this ARM (for the Resource SKUs API). */
  instanceTypes(): InstanceType[] {
    return [...this.types.values()];
  }

  /** Configured regions with their current availability (for the Resource SKUs API). */
  regionsOf(subscriptionId: string): Array<{ location: string; unavailableSkus: string[] }> {
    const out: Array<{ location: string; unavailableSkus: string[] }> = [];
    for (const r of this.regions.values()) {
      if (r.subscriptionId.toLowerCase() === subscriptionId.toLowerCase()) out.push({ location: r.location, unavailableSkus: [...r.unavailable] });
    }
    return out;
  }

  subscriptions(): string[] {
    return [...this.homeRegion.keys()];
  }

  // ------------------------------------------------------------ stats & control

  /**
   * The VMs as they are now: frozen views, not an ARM call (not counted, never throttled).
   * For the simulated world (kubelet, invariants), which should not pay for snapshot().
   */
  currentVms(): Vm[] {
    // The same array while no VM was added, changed or removed (vmWrites): the simulated
    // kubelet asks every 10 s, and a 1,000-VM fleet built the list afresh each time (and then
    // compared 1,000 views to tell it had not changed). Shared, so no caller may change it, but
    // not frozen (the views are): V8 runs array builtins on a frozen array through a slow path,
    // and one frozen array reaching a shared loop (list-walk.ts) made its element reads
    // megamorphic for every caller: the 10,000-pod walks took 15x as long.
    if (this.currentVmList && this.currentVmListAt === this.vmWrites) return this.currentVmList;
    this.currentVmListAt = this.vmWrites;
    // As a GET shows them: the simulated kubelet needs to know a VM stopped or deallocated.
    return (this.currentVmList = [...this.vms.values()].map(vmGetView));
  }
  private currentVmList: Vm[] | undefined;
  private currentVmListAt = -1;
  /** Bumped on every write that changes a VM's view or the VM map (currentVms' cache key). */
  private vmWrites = 0;

  /** A VM's state changed: its cached view and etag go stale, and so does currentVms' list. */
  private vmChanged(vm: VmRecord): void {
    vm.view = undefined;
    vm.getView = undefined;
    vm.etag++;
    this.vmWrites++;
  }

  armCalls(): Record<string, Record<string, number>> {
    const out: Record<string, Record<string, number>> = {};
    for (const [op, byStatus] of this.calls) {
      const row: Record<string, number> = {};
      for (const [status, n] of byStatus) row[String(status)] = n;
      out[op] = row;
    }
    return out;
  }

  /** Peak of in-use private IPs: of one subnet, or (without an id) of all subnets together. */
  peakSubnetIpsUsed(subnetId?: string): number {
    if (subnetId === undefined) return this.peakTotalIps;
    return this.subnets.get(subnetId.toLowerCase())?.peak ?? 0;
  }

  subnetIpsUsed(subnetId: string): number {
    return this.subnets.get(subnetId.toLowerCase())?.used ?? 0;
  }

  /**
   * For every NIC deleted after a failed VM create (sync refusal or async failure): seconds
   * from the first such failure since the NIC was last attached successfully to its deletion.
   */
  reapTimesSeconds(): number[] {
    return [...this.reapTimes];
  }

  /** For the same NICs: seconds from the end of ARM's own reservation on the NIC to its deletion (the p100 target is ≤ 5 s). */
  reapAfterReservationSeconds(): number[] {
    return this.reaps.map((r) => (r.removedAt - r.reservedUntil) / 1000);
  }

  /** The same reaps with their times (virtual ms), to tell a reservation that ended while the controller was down. */
  reapsAfterReservation(): { reservedUntil: number; removedAt: number }[] {
    return this.reaps.map((r) => ({ ...r }));
  }

  snapshot(): SnapshotJson {
    const now = this.clock.now();
    const nics: SnapshotJson['nics'] = [];
    const reservations: SnapshotJson['reservations'] = [];
    for (const rec of this.nics.values()) {
      const view = this.nicView(rec);
      if (now < rec.reservedUntil && rec.reservedFor !== undefined) {
        nics.push({ ...view, reservedUntil: rec.reservedUntil, reservedFor: rec.reservedFor });
        reservations.push({ nicId: rec.id, vmId: rec.reservedFor, until: rec.reservedUntil });
      } else {
        nics.push(view);
      }
    }
    const quota: SnapshotJson['quota'] = [];
    const regionalCores: SnapshotJson['regionalCores'] = [];
    for (const r of this.regions.values()) {
      const families = new Set([...r.familyQuota.keys(), ...r.familyUsed.keys()]);
      for (const family of families) {
        quota.push({ subscriptionId: r.subscriptionId, location: r.location, family, usedCores: r.familyUsed.get(family) ?? 0, limitCores: this.familyLimit(r, family) });
      }
      regionalCores.push({ subscriptionId: r.subscriptionId, location: r.location, usedCores: r.totalUsed, limitCores: this.regionalLimit(r) });
    }
    return {
      t: now,
      nics,
      vms: [...this.vms.values()].map(vmView),
      disks: [...this.disks.values()].map(diskView),
      reservations,
      quota,
      regionalCores,
      subnets: [...this.subnets.values()].map((s) => ({ id: s.id, addressPrefix: s.addressPrefix, used: s.used, peak: s.peak, capacity: s.capacity })),
      operations: { inProgress: this.opsInProgress, total: this.ops.size },
    };
  }

  /**
   * Resources whose NodeClaim tag is not a live NodeClaim. A NIC attached to an existing VM
   * and a disk managed by one are judged by that VM's tag; a resource without the tag counts.
   */
  leaks(liveNodeClaimNames: ReadonlySet<string>): Leaks {
    const live = (tags: Tags): boolean => {
      const owner = tags[TAG.nodeClaim];
      return owner !== undefined && liveNodeClaimNames.has(owner);
    };
    const vms = [...this.vms.values()].filter((v) => !live(v.tags)).map(vmView);
    const nics = [...this.nics.values()]
      .filter((n) => {
        const vm = n.attachedVmKey === undefined ? undefined : this.vms.get(n.attachedVmKey);
        return !live(vm ? vm.tags : n.tags);
      })
      .map((n) => this.nicView(n));
    const disks = [...this.disks.values()]
      .filter((d) => {
        const vm = d.managedByKey === undefined ? undefined : this.vms.get(d.managedByKey);
        return !live(vm ? vm.tags : d.tags);
      })
      .map(diskView);
    return { nics, vms, disks };
  }

  injectFault(f: ArmFault): void {
    switch (f.kind) {
      case 'quota':
        for (const r of this.matchRegions(f.location, f.subscriptionId)) {
          if (f.family === undefined) r.regionalQuota = f.cores;
          else r.familyQuota.set(f.family, f.cores);
        }
        break;
      case 'capacity':
        for (const r of this.matchRegions(f.location, f.subscriptionId)) {
          if (f.allocationFailureRate !== undefined) r.allocationFailureRate = f.allocationFailureRate;
          if (f.zonalAllocationFailureRate !== undefined) r.zonalAllocationFailureRate = f.zonalAllocationFailureRate;
          if (f.overconstrainedAllocationFailureRate !== undefined) r.overconstrainedAllocationFailureRate = f.overconstrainedAllocationFailureRate;
        }
        break;
      case 'computeThrottle': {
        const now = this.clock.now();
        for (const r of this.matchRegions(f.location, f.subscriptionId)) {
          for (const p of this.computePolicies) {
            if (f.policy !== undefined && p.name.toLowerCase() !== f.policy.toLowerCase()) continue;
            const w = this.callWindow(r.subscriptionId, r.location, p.name);
            const used = w.count(now, p.windowSeconds * 1000);
            if (used < p.limit) w.add(now, p.limit - used);
          }
        }
        break;
      }
      case 'throttle': {
        if (f.enabled !== undefined) this.throttling = f.enabled;
        if (f.drain) {
          const regions = f.location === undefined ? [...this.regions.values()].filter((r) => f.subscriptionId === undefined || sameId(r.subscriptionId, f.subscriptionId)) : this.matchRegions(f.location, f.subscriptionId);
          const kinds: BucketKind[] = f.bucket ? [f.bucket] : ['reads', 'writes', 'deletes'];
          for (const r of regions) for (const kind of kinds) this.bucket(r.subscriptionId, r.location, kind).drain(this.clock.now());
        }
        break;
      }
      case 'transient':
        if (f.transientFaultRate !== undefined) this.transientFaultRate = f.transientFaultRate;
        if (f.timeoutRate !== undefined) this.timeoutRate = f.timeoutRate;
        break;
      case 'skuUnavailable':
        for (const r of this.matchRegions(f.location, f.subscriptionId)) {
          if (f.unavailable === false) r.unavailable.delete(f.sku.toLowerCase());
          else r.unavailable.add(f.sku.toLowerCase());
        }
        break;
      case 'vmAction':
        for (const r of this.matchRegions(f.location, f.subscriptionId)) {
          const sku = f.sku?.toLowerCase();
          // A snapshot in map order (a delete changes the map), so a seed picks the same VMs.
          for (const vm of [...this.vms.values()]) {
            if (vm.region !== r || (sku !== undefined && vm.vmSize.toLowerCase() !== sku)) continue;
            if (vm.provisioningState !== 'Succeeded' || vm.power !== 'running' || !(f.fraction > 0) || this.random.next() >= f.fraction) continue;
            this.emit('vm.power', vm.name, f.action);
            if (f.action === 'delete') this.startDelete(vm);
            else if (f.action === 'deallocate') this.changePower(vm, 'deallocating', undefined, this.draw(this.powerLatency(vm, 'deallocating')), 'deallocated');
            else this.changePower(vm, 'stopping', undefined, this.draw(this.powerLatency(vm, 'stopping')), 'stopped');
          }
        }
        break;
      case 'spotEviction':
        for (const r of this.matchRegions(f.location, f.subscriptionId)) {
          const sku = f.sku?.toLowerCase();
          if (f.ratePerHour !== undefined) {
            if (sku === undefined) {
              r.spotEvictionRatePerHour = f.ratePerHour;
              r.spotEvictionRateBySku.clear();
            } else r.spotEvictionRateBySku.set(sku, f.ratePerHour);
          }
          // In ARM's order of the VMs (map order), so a seed gives the same victims.
          for (const vm of this.vms.values()) {
            if (vm.region !== r || (sku !== undefined && vm.vmSize.toLowerCase() !== sku)) continue;
            if (vm.priority !== 'Spot' || vm.provisioningState !== 'Succeeded' || vm.power !== 'running') continue;
            if (vm.evictionNoticed) continue;
            if (f.evictFraction !== undefined && f.evictFraction > 0 && this.random.next() < f.evictFraction) this.noticeEviction(vm);
            else if (f.ratePerHour !== undefined) this.scheduleEviction(vm);
          }
        }
        break;
      default: {
        const never: never = f;
        throw new Error(`unknown fault ${JSON.stringify(never)}`);
      }
    }
    this.emit('fault.injected', f.kind, 'Injected');
  }

  // ------------------------------------------------------------------ internals

  /**
   * Runs one ARM call: throttling, injected 5xx and timeouts, then the body; counts the
   * answer's status and reports it. A timed-out write may have taken effect first.
   */
  private invoke<T>(op: ArmOperation, kind: BucketKind, subscriptionId: string, location: string | undefined, name: string, body: () => Outcome<T>): T {
    try {
      this.lastBucket = undefined;
      this.callSeq++;
      this.lastRemaining = undefined;
      this.lastResourceRemaining = undefined;
      const loc = location ?? this.homeRegionOf(subscriptionId);
      // ARM counts every call and says what is left; with throttling off it never refuses.
      const taken = this.bucket(subscriptionId, loc, kind).take(this.clock.now());
      const remaining = taken.ok ? taken.remaining : 0;
      const left = { kind, remaining };
      this.lastRemaining = { kind, remaining, globalRemaining: taken.globalRemaining };
      if (this.throttling) {
        this.lastBucket = left;
        if (!taken.ok) throw msg.throttled(kind === 'reads' ? 'read' : kind === 'writes' ? 'write' : 'delete', subscriptionId, taken.retryAfterSeconds);
      }
      // ARM answers a DELETE of a VM it does not have itself (204): Compute never sees it, so no policy is charged.
      const reachesCompute = op === 'vm.put' || op === 'vm.get' || op === 'vm.list' || (op === 'vm.delete' && location !== undefined);
      if (this.computePolicies.length > 0 && reachesCompute) {
        this.chargeCompute(op, subscriptionId, loc);
      }
      if (this.transientFaultRate > 0 && this.random.next() < this.transientFaultRate) throw msg.internalError();
      let timedOutAfter = false;
      if (this.timeoutRate > 0 && this.random.next() < this.timeoutRate) {
        if (kind === 'reads' || this.random.next() >= this.timeoutAfterEffectRate) throw msg.requestTimeout();
        timedOutAfter = true;
      }
      if (timedOutAfter) {
        try {
          body();
        } catch {
          // The answer (success or refusal) is lost with the response.
        }
        throw msg.requestTimeout();
      }
      const out = body();
      this.count(op, out.status, name, undefined);
      return out.value;
    } catch (err) {
      if (err instanceof AzureError) this.count(op, err.statusCode, name, err.code);
      throw err;
    }
  }

  /** A counted GET: the view of the record, or undefined (counted as 404). */
  private getOne<R extends { location: string }, V>(
    op: ArmOperation,
    ref: ResourceRef,
    records: ResourceIndex<R>,
    provider: Parameters<typeof armId>[1],
    view: (rec: R) => V,
  ): V | undefined {
    const rec = records.get(armId(ref, provider).toLowerCase());
    return this.invoke(op, 'reads', ref.subscriptionId, rec?.location, ref.name, () => {
      this.requireResourceGroup(ref);
      return rec ? { status: 200, value: view(rec) } : { status: 404, value: undefined };
    });
  }

  /**
   * What a list shows now: ARM's list cache trails the resources, so a new record shows
   * only from `listedFrom`, and a deleted one lists on until its tomb's `hiddenAt`.
   */
  private listed<R extends { listedFrom: number }, V>(scope: ListScope, records: ResourceIndex<R>, tombs: ResourceIndex<Tomb<R>>, view: (rec: R) => V): V[] {
    const now = this.clock.now();
    const prefix = scopePrefix(scope);
    const out: V[] = [];
    for (const rec of records.inScope(prefix)) if (rec.listedFrom <= now) out.push(view(rec));
    if (tombs.size > 0) {
      const expired: string[] = [];
      for (const [key, tomb] of tombs.entriesInScope(prefix)) {
        if (tomb.hiddenAt > now) out.push(view(tomb.rec));
        else expired.push(key);
      }
      for (const key of expired) tombs.delete(key);
    }
    return out;
  }

  /** One page of a list call (a counted read): `skip` items in, at most pageSize long. */
  private listPage<R extends { listedFrom: number }, V>(
    op: ArmOperation,
    scope: ListScope,
    records: ResourceIndex<R>,
    tombs: ResourceIndex<Tomb<R>>,
    view: (rec: R) => V,
    skip: number,
    /** listAll's pages share one listing (the clock does not move between them). */
    listing: { all?: V[] } = {},
  ): ListPage<V> {
    return this.invoke(op, 'reads', scope.subscriptionId, undefined, scope.resourceGroup ?? '', () => {
      if (scope.resourceGroup !== undefined) this.requireResourceGroup({ subscriptionId: scope.subscriptionId, resourceGroup: scope.resourceGroup });
      const all = (listing.all ??= this.listed(scope, records, tombs, view));
      const page: ListPage<V> = { value: all.slice(skip, skip + this.pageSize) };
      if (skip + this.pageSize < all.length) page.nextSkip = skip + this.pageSize;
      return { status: 200, value: page };
    });
  }

  /** Every page of a list, each a counted read, as a client following nextLink gets it. */
  private listAll<R extends { listedFrom: number }, V>(
    op: ArmOperation,
    scope: ListScope,
    records: ResourceIndex<R>,
    tombs: ResourceIndex<Tomb<R>>,
    view: (rec: R) => V,
  ): V[] {
    const out: V[] = [];
    const listing: { all?: V[] } = {};
    let skip: number | undefined = 0;
    while (skip !== undefined) {
      const page: ListPage<V> = this.listPage(op, scope, records, tombs, view, skip, listing);
      out.push(...page.value);
      skip = page.nextSkip;
    }
    return out;
  }

  /** Compute RP throttling: every policy covering `op` counts the call; one over its limit refuses it. */
  private chargeCompute(op: ArmOperation, subscriptionId: string, location: string): void {
    const now = this.clock.now();
    const covering = this.computeWindows(op, subscriptionId, location);
    let refusal: AzureError | undefined;
    const used: number[] = [];
    for (const { p, w } of covering) {
      const windowMs = p.windowSeconds * 1000;
      const n = w.count(now, windowMs);
      used.push(n);
      if (n >= p.limit && refusal === undefined) {
        const waitMs = w.msUntilBelow(p.limit, now, windowMs);
        const retryAfter = Math.min(MAX_COMPUTE_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(waitMs / 1000)));
        refusal = msg.computeThrottled(p.name, now - windowMs, now, p.limit, n + 1, retryAfter);
      }
    }
    // Only served calls count: a refused one spends nothing of the window.
    if (!refusal) for (const c of covering) c.w.add(now);
    if (covering.length > 0) {
      this.lastResourceRemaining = covering.map(({ p }, i) => `Microsoft.Compute/${p.name};${Math.max(0, p.limit - used[i]! - (refusal ? 0 : 1))}`).join(',');
    }
    if (refusal) throw refusal;
  }

  /** The call windows of every policy covering `op`, by the caller's own strings (see bucket()). */
  private computeWindows(op: ArmOperation, subscriptionId: string, location: string): ReadonlyArray<{ p: ComputeThrottlePolicy; w: CallWindow }> {
    let byLocation = this.computeWindowsByCaller.get(subscriptionId);
    if (!byLocation) this.computeWindowsByCaller.set(subscriptionId, (byLocation = new Map()));
    let byOp = byLocation.get(location);
    if (!byOp) byLocation.set(location, (byOp = new Map()));
    let windows = byOp.get(op);
    if (!windows) {
      windows = this.computePolicies.filter((p) => (p.ops as string[]).includes(op)).map((p) => ({ p, w: this.callWindow(subscriptionId, location, p.name) }));
      byOp.set(op, windows);
    }
    return windows;
  }

  private callWindow(subscriptionId: string, location: string, policy: string): CallWindow {
    const key = `${regionKey(subscriptionId, location)}|${policy}`;
    let w = this.windows.get(key);
    if (!w) this.windows.set(key, (w = new CallWindow()));
    return w;
  }

  private requireResourceGroup(scope: ResourceGroupScope): void {
    if (!this.resourceGroupExists(scope.subscriptionId, scope.resourceGroup)) throw msg.resourceGroupNotFound(scope.resourceGroup);
  }

  private addResourceGroup(subscriptionId: string, name: string, location: string): void {
    const key = `${subscriptionId}|${name}`.toLowerCase();
    if (!this.resourceGroups.has(key)) this.resourceGroups.set(key, { subscriptionId, name, location });
  }

  /** A VM PUT reserves the NIC: ARM refuses its deletion (and other VMs) until the end. */
  private reserve(nic: NicRecord, vmId: string, now: number): void {
    let until = now + this.reservationDelayMs + this.reservationMs;
    if (this.reservationJitterMs > 0) until += Math.round(this.random.next() * this.reservationJitterMs);
    nic.reservedUntil = until;
    nic.reservedFor = vmId;
  }

  /** With reservation.from = 'completion', the create's outcome restarts the count. */
  private renewReservationsAtCompletion(vm: VmRecord): void {
    if (this.reservationFrom !== 'completion') return;
    const now = this.clock.now();
    for (const key of vm.nicKeys) {
      const nic = this.nics.get(key);
      if (nic && nic.reservedFor !== undefined && sameId(nic.reservedFor, vm.id)) nic.reservedUntil = Math.max(nic.reservedUntil, now + this.reservationMs);
    }
  }

  /** An identical PUT of a Failed VM: ARM tries the allocation again. */
  private reprovision(vm: VmRecord, req: VmCreateRequest): BeginResult {
    const now = this.clock.now();
    for (const key of vm.nicKeys) {
      const nic = this.nics.get(key);
      if (nic) this.reserve(nic, vm.id, now);
    }
    this.admitVm(req, vm.region);
    vm.provisioningState = 'Creating';
    this.vmChanged(vm);
    vm.coresHeld = true;
    this.addCores(vm, 1);
    const op = this.newOp('create');
    vm.createOp = op;
    this.scheduleCreateOutcome(vm, op);
    return { vm: toVmDetails(vm), operationId: op.id, created: false };
  }

  /** Sync admission of an accepted-looking VM PUT: size, SKU availability, then quota. */
  private admitVm(req: VmCreateRequest, region: RegionState): void {
    const type = this.types.get(req.vmSize.toLowerCase());
    if (!type) throw msg.invalid(`The value ${req.vmSize} provided for the VM size is not valid.`);
    const loc = req.location.toLowerCase();
    if (region.unavailable.has(type.name.toLowerCase()) || !type.locations.some((l) => l.toLowerCase() === loc)) {
      throw msg.skuNotAvailable(type.name, req.location);
    }
    // A zonal PUT is admitted only in a zone the size is offered in there (Resource SKUs'
    // locationInfo zones); a regional region has none, so any zone is refused.
    if (req.zone !== undefined && !zonesIn(type, loc).includes(zoneLabel(loc, req.zone))) {
      throw msg.skuNotAvailable(type.name, req.location, req.zone);
    }
    if (req.priority === 'Spot') {
      const lowPriority = this.lowPriorityLimit(region);
      if (region.lowPriorityUsed + type.vcpu > lowPriority) {
        throw msg.quotaExceeded('LowPriorityCores', req.location, lowPriority, region.lowPriorityUsed, type.vcpu, 'spot-quota');
      }
      return;
    }
    const limit = this.familyLimit(region, type.family);
    const used = region.familyUsed.get(type.family) ?? 0;
    if (used + type.vcpu > limit) {
      throw msg.quotaExceeded(type.family + ' Cores', req.location, limit, used, type.vcpu, 'per-vm-quota-requests');
    }
    const regional = this.regionalLimit(region);
    if (region.totalUsed + type.vcpu > regional) {
      throw msg.quotaExceeded('Total Regional Cores', req.location, regional, region.totalUsed, type.vcpu, 'regional-quota-requests');
    }
  }

  private familyLimit(region: RegionState, family: string): number {
    return region.familyQuota.get(family) ?? (isGpuFamily(family) ? this.defaultQuota.gpuFamilyCores : this.defaultQuota.familyCores);
  }

  private regionalLimit(region: RegionState): number {
    return region.regionalQuota ?? this.defaultQuota.regionalCores;
  }

  private lowPriorityLimit(region: RegionState): number {
    return region.lowPriorityQuota ?? this.defaultQuota.lowPriorityCores;
  }

  /** A PUT or PATCH replaces a NIC's tags; its view (and etag) follow. */
  private replaceNicTags(nic: NicRecord, tags: Tags): void {
    if (sameTags(nic.tags, tags)) return;
    nic.tags = { ...tags };
    nic.view = undefined;
  }

  /** A PUT or PATCH replaces a VM's tags; its view and etag follow. */
  private replaceVmTags(vm: VmRecord, tags: Tags): void {
    if (sameTags(vm.tags, tags)) return;
    vm.tags = { ...tags };
    this.vmChanged(vm);
  }

  private scheduleCreateOutcome(vm: VmRecord, op: OpRecord): void {
    const r = vm.region;
    let failure: AllocationFailure | undefined;
    if (r.allocationFailureRate > 0 && this.random.next() < r.allocationFailureRate) failure = 'AllocationFailed';
    // Only a VM pinned to a zone can fail for that zone's capacity.
    else if (vm.zone !== undefined && r.zonalAllocationFailureRate > 0 && this.random.next() < r.zonalAllocationFailureRate) failure = 'ZonalAllocationFailed';
    else if (r.overconstrainedAllocationFailureRate > 0 && this.random.next() < r.overconstrainedAllocationFailureRate) failure = 'OverconstrainedAllocationRequest';
    const delay = this.draw(failure ? this.latency.vmCreateFailure : this.latency.vmCreate);
    vm.timer = this.clock.setTimer(delay, () => {
      vm.timer = undefined;
      if (failure) this.failCreate(vm, op, failure);
      else this.succeedCreate(vm, op);
    });
  }

  private succeedCreate(vm: VmRecord, op: OpRecord): void {
    vm.provisioningState = 'Succeeded';
    vm.power = 'running';
    this.vmChanged(vm);
    for (const key of vm.nicKeys) {
      const nic = this.nics.get(key);
      if (nic) nic.failedAt = undefined;
    }
    this.attachOsDisk(vm);
    this.renewReservationsAtCompletion(vm);
    op.result = vmView(vm);
    this.emit('vm.provisioned', vm.name, 'Succeeded');
    this.finishOp(op, { status: 'Succeeded' });
    this.scheduleEviction(vm);
  }

  /** The VM's OS disk exists and is managed by it (created on first need, with the VM's tags). */
  private attachOsDisk(vm: VmRecord): void {
    const diskId = armId({ subscriptionId: vm.subscriptionId, resourceGroup: vm.resourceGroup, name: vm.osDiskName }, 'Microsoft.Compute/disks');
    const diskKey = diskId.toLowerCase();
    const disk = this.disks.get(diskKey);
    if (disk) {
      disk.managedByKey = vm.key;
      disk.managedBy = vm.id;
      disk.view = undefined;
    } else {
      this.disks.set(diskKey, {
        key: diskKey, id: diskId, name: vm.osDiskName, location: vm.location, managedByKey: vm.key, managedBy: vm.id,
        // ARM copies the VM's tags onto the OS disk it creates (once: later VM tag changes do not follow).
        diskSizeGB: vm.osDiskSizeGB, tags: { ...vm.tags }, timeCreated: this.clock.now(), listedFrom: this.clock.now() + this.appearLagMs,
        ...(vm.shown?.osDiskStorageAccountType !== undefined ? { storageAccountType: vm.shown.osDiskStorageAccountType } : {}),
      });
      this.diskTombs.delete(diskKey);
      this.emit('disk.created', vm.osDiskName, 'Succeeded');
    }
  }

  /**
   * An async allocation failure. Real ARM keeps the VM in provisioningState Failed, holding
   * its NICs and OS disk, until someone deletes it; with failedVmRecords off the record
   * goes (the NICs stay reserved either way). No cores are held by a VM that got none.
   */
  private failCreate(vm: VmRecord, op: OpRecord, code: AllocationFailure): void {
    const now = this.clock.now();
    if (vm.coresHeld) {
      this.addCores(vm, -1);
      vm.coresHeld = false;
    }
    if (this.failedVmRecords) {
      vm.provisioningState = 'Failed';
      this.vmChanged(vm);
      this.attachOsDisk(vm);
    } else {
      this.deleteVmRecord(vm);
    }
    for (const key of vm.nicKeys) {
      const nic = this.nics.get(key);
      if (!nic) continue;
      if (!this.failedVmRecords && nic.attachedVmKey === vm.key) this.attach(nic, undefined);
      nic.failedAt ??= now;
    }
    this.renewReservationsAtCompletion(vm);
    this.emit('vm.failed', vm.name, 'Failed', code);
    const message =
      code === 'AllocationFailed' ? msg.ALLOCATION_FAILED_MESSAGE : code === 'ZonalAllocationFailed' ? msg.ZONAL_ALLOCATION_FAILED_MESSAGE : msg.OVERCONSTRAINED_ALLOCATION_MESSAGE;
    this.finishOp(op, { status: 'Failed', error: { code, message } });
  }

  private deleteVmRecord(vm: VmRecord): void {
    this.stopPowerWork(vm);
    this.vms.delete(vm.key);
    this.vmWrites++;
    if (this.disappearLagMs > 0) this.vmTombs.set(vm.key, { rec: vm, hiddenAt: this.clock.now() + this.disappearLagMs });
  }

  /**
   * End of a VM delete: cores back, NICs and OS disk deleted or detached per deleteOption.
   * A NIC still inside its reservation is only detached (the network RP refuses to delete
   * it) unless cascadeDeletesReservedNic says otherwise.
   */
  private removeVm(vm: VmRecord): void {
    this.deleteVmRecord(vm);
    if (vm.coresHeld) {
      this.addCores(vm, -1);
      vm.coresHeld = false;
    }
    const now = this.clock.now();
    for (const key of vm.nicKeys) {
      const nic = this.nics.get(key);
      if (!nic || nic.attachedVmKey !== vm.key) continue;
      this.attach(nic, undefined);
      if (vm.nicDeleteOption === 'Delete' && (this.cascadeDeletesReservedNic || now >= nic.reservedUntil)) this.removeNic(nic);
    }
    const diskKey = armId({ subscriptionId: vm.subscriptionId, resourceGroup: vm.resourceGroup, name: vm.osDiskName }, 'Microsoft.Compute/disks').toLowerCase();
    const disk = this.disks.get(diskKey);
    if (disk && disk.managedByKey === vm.key) {
      disk.managedByKey = undefined;
      disk.managedBy = undefined;
      disk.view = undefined;
      if (vm.osDiskDeleteOption === 'Delete') this.removeDisk(disk);
    }
    this.emit('vm.removed', vm.name, 'Deleted');
  }

  /** How long deleting this VM takes: GPU hosts take minutes to deprovision; a VM that never allocated has nothing to release. */
  private deleteLatency(vm: VmRecord, allocated: boolean): LatencyRangeMs {
    const gpu = (this.types.get(vm.vmSize.toLowerCase())?.gpuCount ?? 0) > 0;
    return allocated && gpu ? this.latency.gpuVmDelete : this.latency.vmDelete;
  }

  private removeNic(nic: NicRecord): void {
    this.nics.delete(nic.key);
    if (nic.deleteTimer !== undefined) this.clock.clearTimer(nic.deleteTimer);
    nic.deleteTimer = undefined;
    if (nic.deleteOp) this.finishOp(nic.deleteOp, { status: 'Succeeded' });
    if (this.disappearLagMs > 0) this.nicTombs.set(nic.key, { rec: nic, hiddenAt: this.clock.now() + this.disappearLagMs });
    nic.subnet.release(nic.ipOffset);
    this.totalIps--;
    if (nic.failedAt !== undefined) {
      this.reapTimes.push((this.clock.now() - nic.failedAt) / 1000);
      this.reaps.push({ reservedUntil: nic.reservedUntil, removedAt: this.clock.now() });
    }
    this.emit('nic.removed', nic.name, 'Deleted');
  }

  private removeDisk(disk: DiskRecord): void {
    this.disks.delete(disk.key);
    if (this.disappearLagMs > 0) this.diskTombs.set(disk.key, { rec: disk, hiddenAt: this.clock.now() + this.disappearLagMs });
    this.emit('disk.removed', disk.name, 'Deleted');
  }

  /** Holds (sign 1) or frees (-1) a VM's cores: a Spot VM's in the low-priority quota only, others in their family's and the regional. */
  private addCores(vm: VmRecord, sign: 1 | -1): void {
    const region = vm.region;
    const cores = sign * vm.cores;
    if (vm.priority === 'Spot') {
      region.lowPriorityUsed += cores;
      return;
    }
    region.familyUsed.set(vm.family, (region.familyUsed.get(vm.family) ?? 0) + cores);
    region.totalUsed += cores;
  }

  private newOp(kind: OpKind): OpRecord {
    const op: OpRecord = { id: `op-${String(++this.opSeq).padStart(8, '0')}`, kind, startedAt: this.clock.now(), status: { status: 'InProgress' }, waiters: [] };
    this.ops.set(op.id, op);
    this.opsInProgress++;
    return op;
  }

  private finishOp(op: OpRecord, status: OperationStatus): void {
    if (op.status.status !== 'InProgress') return;
    op.status = status;
    op.endedAt = this.clock.now();
    this.opsInProgress--;
    const waiters = op.waiters;
    op.waiters = [];
    for (const w of waiters) w();
  }

  private waitOp(op: OpRecord): Promise<void> {
    if (op.status.status !== 'InProgress') return Promise.resolve();
    return new Promise((resolve) => op.waiters.push(resolve));
  }

  /** Runs `fn` now (the request reaches ARM at call time) and answers after a drawn latency. */
  private respond<T>(range: LatencyRangeMs, fn: () => T): Promise<T> {
    let value: T;
    try {
      value = fn();
    } catch (err) {
      const delay = this.draw(range);
      if (delay <= 0) return Promise.reject(err);
      return new Promise((_, reject) => this.clock.setTimer(delay, () => reject(err)));
    }
    const delay = this.draw(range);
    if (delay <= 0) return Promise.resolve(value);
    return new Promise((resolve) => this.clock.setTimer(delay, () => resolve(value)));
  }

  private customDataDigest(text: string): string {
    if (this.lastCustomData?.text !== text) this.lastCustomData = { text, digest: digest(text) };
    return this.lastCustomData.digest;
  }

  private draw(range: LatencyRangeMs): number {
    if (range.max <= range.min) return range.min;
    return Math.round(range.min + this.random.next() * (range.max - range.min));
  }

  /**
   * Every ARM call charges a bucket: looked up by the caller's own strings first, which are
   * usually the same instances every call, so no lower-cased key is built and hashed.
   */
  private bucket(subscriptionId: string, location: string, kind: BucketKind): SubscriptionBucket {
    let byLocation = this.bucketsByCallerKeys.get(subscriptionId);
    if (!byLocation) this.bucketsByCallerKeys.set(subscriptionId, (byLocation = new Map()));
    let byKind = byLocation.get(location);
    if (!byKind) byLocation.set(location, (byKind = new Map()));
    let b = byKind.get(kind);
    if (!b) byKind.set(kind, (b = this.normalisedBucket(subscriptionId, location, kind)));
    return b;
  }

  private normalisedBucket(subscriptionId: string, location: string, kind: BucketKind): SubscriptionBucket {
    const key = `${subscriptionId.toLowerCase()}|${location.toLowerCase()}|${kind}`;
    let b = this.buckets.get(key);
    if (!b) {
      const limits = BUCKET_LIMITS[kind];
      b = new SubscriptionBucket(limits.capacity, limits.refillPerSecond, this.clock.now());
      this.buckets.set(key, b);
    }
    return b;
  }

  private matchRegions(location: string, subscriptionId: string | undefined): RegionState[] {
    const out = [...this.regions.values()].filter(
      (r) => sameId(r.location, location) && (subscriptionId === undefined || sameId(r.subscriptionId, subscriptionId)),
    );
    if (out.length === 0) throw new Error(`fake ARM: no configured region ${location}${subscriptionId ? ` in ${subscriptionId}` : ''}`);
    return out;
  }

  private homeRegionOf(subscriptionId: string): string {
    let home = this.homeByCaller.get(subscriptionId);
    if (home === undefined) {
      home = this.homeRegion.get(subscriptionId.toLowerCase()) ?? 'global';
      // Regions are added at construction only, so the answer never changes.
      this.homeByCaller.set(subscriptionId, home);
    }
    return home;
  }

  private addRegion(r: FakeArmRegionConfig): void {
    const key = regionKey(r.subscriptionId, r.location);
    this.regions.set(key, {
      subscriptionId: r.subscriptionId,
      location: r.location,
      familyQuota: new Map(Object.entries(r.familyQuotaCores)),
      familyUsed: new Map(),
      regionalQuota: r.regionalQuotaCores,
      lowPriorityQuota: r.lowPriorityQuotaCores,
      lowPriorityUsed: 0,
      totalUsed: 0,
      unavailable: new Set((r.unavailableSkus ?? []).map((s) => s.toLowerCase())),
      allocationFailureRate: r.allocationFailureRate ?? 0,
      zonalAllocationFailureRate: r.zonalAllocationFailureRate ?? 0,
      overconstrainedAllocationFailureRate: r.overconstrainedAllocationFailureRate ?? 0,
      spotEvictionRatePerHour: r.spotEvictionRatePerHour ?? 0,
      spotEvictionRateBySku: new Map(Object.entries(r.spotEvictionRatePerHourBySku ?? {}).map(([sku, rate]) => [sku.toLowerCase(), rate])),
    });
    const sub = r.subscriptionId.toLowerCase();
    if (!this.homeRegion.has(sub)) this.homeRegion.set(sub, r.location);
  }

  /** Frozen and cached like vmView/diskView (see model.ts); attach() clears the cache. */
  private nicView(rec: NicRecord): Nic {
    if (rec.view) return rec.view;
    const nic: Nic = {
      id: rec.id, name: rec.name, location: rec.location, subnetId: rec.subnetId, privateIpAddress: rec.ip,
      provisioningState: rec.deleteOp ? 'Deleting' : 'Succeeded', tags: Object.freeze({ ...rec.tags }),
    };
    const vm = rec.attachedVmKey === undefined ? undefined : this.vms.get(rec.attachedVmKey);
    if (vm) nic.virtualMachineId = vm.id;
    return (rec.view = Object.freeze(nic));
  }

  private attach(nic: NicRecord, vmKey: string | undefined): void {
    nic.attachedVmKey = vmKey;
    nic.view = undefined;
  }

  private count(op: ArmOperation, status: number, name: string, code: string | undefined): void {
    let byStatus = this.calls.get(op);
    if (!byStatus) this.calls.set(op, (byStatus = new Map()));
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    if (this.onEvent) {
      const e: ArmEvent = { t: this.clock.now(), op, name, status };
      if (code !== undefined) e.code = code;
      this.onEvent(e);
    }
  }

  private emit(op: ArmStateChange, name: string, status: string, code?: string): void {
    if (!this.onEvent) return;
    const e: ArmEvent = { t: this.clock.now(), op, name, status };
    if (code !== undefined) e.code = code;
    this.onEvent(e);
  }
}

type AllocationFailure = 'AllocationFailed' | 'ZonalAllocationFailed' | 'OverconstrainedAllocationRequest';

/** The power states a VM shows while an action or an eviction moves it. */
type VmPowerTransit = 'starting' | 'stopping' | 'deallocating';

/**
 * A Spot VM's Preempt Scheduled Event comes at least this long before ARM evicts it ("a minimum
 * of 30 seconds"); the fake evicts exactly then.
 */
export const SPOT_EVICTION_NOTICE_MS = 30_000;

/** Runs `fn`; a 404 (resource or resource group not found) becomes `fallback`, as the SDK adapter answers. */
function absentAs<T, F>(fn: () => T, fallback: F): T | F {
  try {
    return fn();
  } catch (err) {
    if (err instanceof AzureError && err.code === 'ResourceNotFound') return fallback;
    throw err;
  }
}

/** A PUT into a resource group that does not exist is a configuration error, as the SDK adapter reports it. */
function putInto<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof AzureError && err.code === 'ResourceNotFound') {
      throw msg.armError('InvalidParameter', err.statusCode, err.message.slice(err.code.length + 2), undefined, err.info);
    }
    throw err;
  }
}

function sameTags(a: Tags, b: Tags): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (a[k] !== b[k]) return false;
  return true;
}
