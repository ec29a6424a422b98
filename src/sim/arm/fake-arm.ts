import {
  AzureError,
  type AzurePort,
  type CapacityReservationGroup,
  type ComputeUsages,
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
import type { InstanceType } from '../../catalog/skus.js';
import * as msg from './messages.js';
import { ArmCalls } from './calls.js';
import { Disks } from './compute-disks.js';
import { Vms } from './compute-vms.js';
import { Faults } from './faults.js';
import { CapacityReservations, type ReservationGroupView } from './capacity-reservations.js';
import { Listing, type ListPage } from './listing.js';
import { Nics } from './network-nics.js';
import { Operations } from './operations.js';
import { Quotas } from './quotas.js';
import { Regions } from './regions.js';
import { ResourceGroups } from './resource-groups.js';
import { ArmState, settingsOf } from './state.js';
import { VmPower } from './vm-power.js';
import { leaksOf, snapshotOf } from './inspection.js';
import { VmSpecRequests } from './vm-spec-request.js';
import type { ArmEvent, ArmFault, FakeArmConfig, LatencyRangeMs, OperationStatus } from './types.js';
import {
  toAzureError,
  toVm,
  type BeginResult,
  type DiskDetails,
  type Leaks,
  type ListScope,
  type OperationInfo,
  type PowerAction,
  type QuotaUsage,
  type SnapshotJson,
  type VmCreateRequest,
  type VmDetails,
} from './model.js';

export type * from './types.js';
export type { BeginResult, DiskDetails, EvictionPolicy, Leaks, ListScope, OperationInfo, PowerAction, QuotaUsage, SnapshotJson, VmCreateRequest, VmDetails } from './model.js';
export type { ListPage } from './listing.js';
export { SPOT_EVICTION_NOTICE_MS } from './vm-power.js';
export type { ReservationGroupView, ReservationView } from './capacity-reservations.js';

export interface FakeArmOptions {
  clock: Clock;
  random: Random;
  config: FakeArmConfig;
  instanceTypes: readonly InstanceType[];
  onEvent?: (e: ArmEvent) => void;
}

/**
 * A deterministic in-memory ARM for the three resource types azflex touches. Every
 * behaviour that made the upstream controller leak is modelled: the 180 s NIC reservation
 * taken by any VM PUT, asynchronous allocation failures after which ARM rolls the VM back,
 * quota refusals, throttling, and writes whose response is lost.
 *
 * This class wires one module per resource provider and concern (calls.ts and throttling.ts,
 * operations.ts, network-nics.ts, compute-vms.ts, vm-power.ts, compute-disks.ts, quotas.ts,
 * faults.ts) and shows two faces over them: the synchronous "begin" methods (nicPut,
 * beginCreateVm, pollOperation, ...) that the REST handler speaks, and the AzurePort methods,
 * which add response latency and wait for long-running operations.
 *
 * Time comes only from `clock` and randomness only from `random`, so a run is a pure
 * function of its seed. Random draws are made only when a feature is switched on, so
 * enabling, say, throttling does not shift the draws of an unrelated run.
 */
export class FakeArm implements AzurePort {
  /** Whether the REST face refuses api-versions ARM does not serve. */
  readonly validateApiVersions: boolean;
  private readonly state: ArmState;
  private readonly calls: ArmCalls;
  private readonly ops: Operations;
  private readonly regions: Regions;
  private readonly groups: ResourceGroups;
  private readonly quotas: Quotas;
  private readonly nics: Nics;
  private readonly disks: Disks;
  private readonly vms: Vms;
  private readonly power: VmPower;
  private readonly faults: Faults;
  private readonly reservations: CapacityReservations;
  /** The VM PUT body the SDK adapter sends for a VmSpec (vm-spec-request.ts). */
  private readonly vmRequests = new VmSpecRequests();
  /** Request bodies the REST face refused against the published REST model (request-validation.ts). */
  private readonly refusedBodies: string[] = [];

  constructor(opts: FakeArmOptions) {
    const { config } = opts;
    const state = (this.state = new ArmState(opts.clock, opts.random, settingsOf(config), opts.onEvent, opts.instanceTypes));
    this.validateApiVersions = state.settings.validateApiVersions;
    const regions = (this.regions = new Regions(config.regions));
    const calls = (this.calls = new ArmCalls(state, config, (s) => regions.homeRegionOf(s)));
    const ops = (this.ops = new Operations(state.clock, calls));
    const groups = (this.groups = new ResourceGroups(calls, state.settings.requireResourceGroups));
    const listing = new Listing(state, calls, groups);
    const quotas = (this.quotas = new Quotas(state, regions, calls));
    const nics = (this.nics = new Nics(state, calls, groups, listing, ops, config.subnets));
    const disks = (this.disks = new Disks(state, calls, groups, listing));
    // Power and VMs need each other: an eviction with policy Delete deletes the VM.
    const power = (this.power = new VmPower(state, calls, groups, ops, (rec) => this.vms.startDelete(rec)));
    const reservations = (this.reservations = new CapacityReservations(state, calls, groups, regions, quotas, config.regions));
    this.vms = new Vms({ state, calls, groups, listing, ops, regions, quotas, nics, disks, power, reservations });
    this.faults = new Faults(state, regions, calls, this.vms, power);
    for (const s of config.subnets) {
      const m = /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\//i.exec(s.id);
      if (m) groups.add(m[1]!, m[2]!, regions.homeOf(m[1]!) ?? 'eastus2');
    }
    for (const rg of config.resourceGroups ?? []) groups.add(rg.subscriptionId, rg.name, rg.location ?? regions.homeOf(rg.subscriptionId) ?? 'eastus2');
  }

  // ---------------------------------------------------------------- AzurePort

  // The port speaks as the SDK adapter does: a resource (group) that is not there is
  // `undefined`, `[]` or a successful delete; a PUT into a missing group is a configuration
  // error (InvalidParameter), not an absence.

  getNic(ref: ResourceRef): Promise<Nic | undefined> {
    return this.respond(this.state.settings.latency.read, () => absentAs(() => this.nics.get(ref), undefined));
  }

  createNic(spec: NicSpec): Promise<Nic> {
    return this.respond(this.state.settings.latency.nicPut, () => putInto(() => this.nics.put(spec).nic));
  }

  /** DELETE, then waits for the delete operation (Microsoft.Network deletes NICs asynchronously). */
  async deleteNic(ref: ResourceRef): Promise<void> {
    const begun = await this.respond(this.state.settings.latency.nicDelete, () => absentAs(() => this.nics.delete(ref), 'notFound' as const));
    if (begun === 'notFound') return;
    const op = this.ops.get(begun.operationId);
    if (op) await this.ops.wait(op);
  }

  listNics(scope: ResourceGroupScope): Promise<Nic[]> {
    return this.respond(this.state.settings.latency.read, () => absentAs(() => this.nics.list(scope), []));
  }

  getVm(ref: ResourceRef): Promise<Vm | undefined> {
    return this.respond(this.state.settings.latency.read, () => absentAs(() => this.vms.getView(ref), undefined));
  }

  async createVm(spec: VmSpec): Promise<Vm> {
    const begun = await this.respond(this.state.settings.latency.vmPut, () => {
      // Create-only, as the SDK adapter's PUT with If-None-Match: * (REST face: 412, then a GET).
      const existing = this.vms.etag(spec.ref) !== undefined ? this.vms.get(spec.ref) : undefined;
      return existing ? { vm: existing, operationId: undefined } : putInto(() => this.vms.beginCreate(this.vmRequests.of(spec)));
    });
    if (begun.operationId === undefined) return toVm(begun.vm);
    const op = this.ops.get(begun.operationId)!;
    await this.ops.wait(op);
    if (op.status.status === 'Failed') throw toAzureError(op.status.error, 409);
    // Frozen, so every caller waiting on the same in-flight create may share it.
    return op.result ?? toVm(begun.vm);
  }

  /** Accepted or gone: the delete runs on (see AzurePort.deleteVm). */
  async deleteVm(ref: ResourceRef): Promise<void> {
    await this.respond(this.state.settings.latency.vmPut, () => absentAs(() => this.vms.beginDelete(ref), undefined));
  }

  listVms(scope: ResourceGroupScope): Promise<Vm[]> {
    return this.respond(this.state.settings.latency.read, () => absentAs(() => this.vms.listViews(scope), []));
  }

  listDisks(scope: ResourceGroupScope): Promise<Disk[]> {
    return this.respond(this.state.settings.latency.read, () => absentAs(() => this.disks.listViews(scope), []));
  }

  getDisk(ref: ResourceRef): Promise<Disk | undefined> {
    return this.respond(this.state.settings.latency.read, () => absentAs(() => this.disks.getView(ref), undefined));
  }

  deleteDisk(ref: ResourceRef): Promise<void> {
    return this.respond(this.state.settings.latency.diskDelete, () => {
      absentAs(() => this.disks.delete(ref), 'notFound');
    });
  }

  /**
   * A VM with its NIC and OS disk that exist before the run (a snapshot's azflex node), as a
   * finished create leaves them: no ARM call is counted and no random draw is made.
   */
  adoptVm(vm: VmSpec, nic: NicSpec): void {
    this.vms.adopt(this.vmRequests.of(vm), [this.nics.adopt(nic)]);
  }

  // ------------------------------------------------ synchronous face (REST dialect)

  nicPut(spec: NicSpec): { nic: Nic; created: boolean } {
    return this.nics.put(spec);
  }

  nicGet(ref: ResourceRef): Nic | undefined {
    return this.nics.get(ref);
  }

  nicDelete(ref: ResourceRef): { operationId: string } | 'notFound' {
    return this.nics.delete(ref);
  }

  nicList(scope: ListScope): Nic[] {
    return this.nics.list(scope);
  }

  nicListPage(scope: ListScope, skip: number): ListPage<Nic> {
    return this.nics.listPage(scope, skip);
  }

  nicPatchTags(ref: ResourceRef, tags: Tags): Nic | undefined {
    return this.nics.patchTags(ref, tags);
  }

  nicLocation(ref: ResourceRef): string | undefined {
    return this.nics.location(ref);
  }

  subnetGet(subscriptionId: string, subnetId: string): { id: string; addressPrefix: string; nicIds: string[] } | undefined {
    return this.nics.subnetGet(subscriptionId, subnetId);
  }

  beginCreateVm(input: VmCreateRequest): BeginResult {
    return this.vms.beginCreate(input);
  }

  vmGet(ref: ResourceRef): VmDetails | undefined {
    return this.vms.get(ref);
  }

  vmList(scope: ListScope): VmDetails[] {
    return this.vms.list(scope);
  }

  vmListPage(scope: ListScope, skip: number): ListPage<VmDetails> {
    return this.vms.listPage(scope, skip);
  }

  beginDeleteVm(ref: ResourceRef): { operationId: string } | undefined {
    return this.vms.beginDelete(ref);
  }

  vmPatchTags(ref: ResourceRef, tags: Tags): VmDetails | undefined {
    return this.vms.patchTags(ref, tags);
  }

  vmLocation(ref: ResourceRef): string | undefined {
    return this.vms.location(ref);
  }

  vmEtag(ref: ResourceRef): number | undefined {
    return this.vms.etag(ref);
  }

  beginPowerAction(ref: ResourceRef, action: PowerAction): { operationId: string } | undefined {
    return this.power.beginAction(ref, action);
  }

  simulateEviction(ref: ResourceRef): boolean {
    return this.power.simulateEviction(ref);
  }

  diskGet(ref: ResourceRef): DiskDetails | undefined {
    return this.disks.get(ref);
  }

  diskList(scope: ListScope): DiskDetails[] {
    return this.disks.list(scope);
  }

  diskListPage(scope: ListScope, skip: number): ListPage<DiskDetails> {
    return this.disks.listPage(scope, skip);
  }

  diskDelete(ref: ResourceRef): 'deleted' | 'notFound' {
    return this.disks.delete(ref);
  }

  diskLocation(ref: ResourceRef): string | undefined {
    return this.disks.location(ref);
  }

  /** The port's usages read: the same counters the REST face's usages answer lists. */
  listUsages(subscriptionId: string, location: string): Promise<ComputeUsages> {
    return this.respond(this.state.settings.latency.read, () => {
      const usage = this.quotas.usage(subscriptionId, location);
      if (!usage) throw msg.armError('ResourceNotFound', 404, `The location ${location} is not available for subscription ${subscriptionId}.`, undefined, { armCode: 'LocationNotAvailableForResourceType' });
      return {
        regional: usage.regional,
        lowPriority: usage.lowPriority,
        families: new Map(usage.families.map((f) => [f.family, { used: f.used, limit: f.limit }])),
      };
    });
  }

  getCapacityReservationGroup(ref: ResourceRef): Promise<CapacityReservationGroup | undefined> {
    return this.respond(this.state.settings.latency.read, () => {
      const g = absentAs(() => this.reservations.getGroup(ref), undefined);
      return g && {
        id: g.id, name: g.name, location: g.location,
        reservations: g.reservations.map((r) => ({ id: r.id, name: r.name, vmSize: r.sku, ...(r.zone !== undefined ? { zone: r.zone } : {}), capacity: r.quantity, allocatedVmIds: r.allocatedVmIds })),
      };
    });
  }

  pollOperation(subscriptionId: string, id: string): OperationInfo | undefined {
    return this.ops.poll(subscriptionId, id);
  }

  completedOperation(kind: 'create' | 'delete', target?: ResourceRef): string {
    return this.ops.completed(kind, target);
  }

  waitForOperation(id: string): Promise<OperationStatus> {
    return this.ops.waitFor(id);
  }

  /** GET of a capacity reservation group with its reservations' instance views (a counted read); undefined when absent. */
  capacityReservationGroupGet(ref: ResourceRef): ReservationGroupView | undefined {
    return this.reservations.getGroup(ref);
  }

  /** The capacity reservation groups of a resource group, or of the subscription (one counted read). */
  capacityReservationGroupList(scope: { subscriptionId: string; resourceGroup?: string }): ReservationGroupView[] {
    return this.reservations.listGroups(scope);
  }

  quotaUsage(subscriptionId: string, location: string): QuotaUsage | undefined {
    return this.quotas.usage(subscriptionId, location);
  }

  /** Counts a Resource SKUs list call (the REST face renders the catalog itself). */
  countSkuList(subscriptionId: string): void {
    this.calls.invoke('sku.list', 'reads', subscriptionId, undefined, '', () => ({ status: 200, value: undefined }));
  }

  lastCallHeaders(): { seq: number; headers: Record<string, string> } {
    return this.calls.lastCallHeaders();
  }

  putResourceGroup(subscriptionId: string, name: string, location: string): { created: boolean; location: string } {
    return this.groups.put(subscriptionId, name, location);
  }

  getResourceGroup(subscriptionId: string, name: string): { name: string; location: string } {
    return this.groups.get(subscriptionId, name);
  }

  // ----------------------------------------------------------- catalog & regions

  /** The fake's clock reading (virtual ms), for timestamps in REST documents. */
  now(): number {
    return this.state.clock.now();
  }

  /** Instance types known to this ARM (for the Resource SKUs API). */
  instanceTypes(): InstanceType[] {
    return [...this.state.types.values()];
  }

  regionsOf(subscriptionId: string): Array<{ location: string; unavailableSkus: string[] }> {
    return this.regions.regionsOf(subscriptionId);
  }

  // ------------------------------------------------------------ stats & control

  /** The REST face refused a request body (see refusedRequestBodies). */
  noteRefusedBody(what: string): void {
    this.refusedBodies.push(what);
  }

  /** Every request body refused as invalid so far: a controller's own request should never be among them. */
  refusedRequestBodies(): string[] {
    return [...this.refusedBodies];
  }

  currentVms(): Vm[] {
    return this.vms.current();
  }

  armCalls(): Record<string, Record<string, number>> {
    return this.calls.counts();
  }

  peakSubnetIpsUsed(subnetId?: string): number {
    return this.nics.peakIpsUsed(subnetId);
  }

  subnetIpsUsed(subnetId: string): number {
    return this.nics.ipsUsed(subnetId);
  }

  reapTimesSeconds(): number[] {
    return this.nics.reapTimesSeconds();
  }

  /** For the same NICs: seconds from the end of ARM's own reservation on the NIC to its deletion (the p100 target is ≤ 5 s). */
  reapAfterReservationSeconds(): number[] {
    return this.nics.reapsAfterReservation().map((r) => (r.removedAt - r.reservedUntil) / 1000);
  }

  reapsAfterReservation(): { reservedUntil: number; removedAt: number }[] {
    return this.nics.reapsAfterReservation();
  }

  /** The whole world now (inspection.ts): not an ARM call. */
  snapshot(): SnapshotJson {
    return snapshotOf(this.state, { quotas: this.quotas, nics: this.nics, ops: this.ops });
  }

  /** Resources no live NodeClaim owns (inspection.ts says how a NIC or disk is judged). */
  leaks(liveNodeClaims: ReadonlySet<string> | ((tags: Tags) => boolean)): Leaks {
    return leaksOf(this.state, liveNodeClaims);
  }

  injectFault(f: ArmFault): void {
    this.faults.inject(f);
  }

  // ------------------------------------------------------------------ internals

  /** Runs `fn` now (the request reaches ARM at call time) and answers after a drawn latency. */
  private respond<T>(range: LatencyRangeMs, fn: () => T): Promise<T> {
    let value: T;
    try {
      value = fn();
    } catch (err) {
      const delay = this.state.draw(range);
      if (delay <= 0) return Promise.reject(err);
      return new Promise((_, reject) => this.state.clock.setTimer(delay, () => reject(err)));
    }
    const delay = this.state.draw(range);
    if (delay <= 0) return Promise.resolve(value);
    return new Promise((resolve) => this.state.clock.setTimer(delay, () => resolve(value)));
  }
}

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
