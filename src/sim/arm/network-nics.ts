import type { Nic, NicSpec, ResourceRef, Tags } from '../../ports/azure.js';
import { armId } from '../../azure/naming.js';
import * as msg from './messages.js';
import { normalizeLocation, sameId, sameTags, type ListScope, type NicRecord, type VmRecord } from './model.js';
import { SubnetPool } from './subnet-pool.js';
import type { ArmCalls } from './calls.js';
import type { ListPage, Listing } from './listing.js';
import type { Operations } from './operations.js';
import type { ResourceGroups } from './resource-groups.js';
import type { ArmState } from './state.js';
import type { FakeArmSubnetConfig } from './types.js';

const NIC_TYPE = 'Microsoft.Network/networkInterfaces';

/**
 * Microsoft.Network network interfaces and the subnets their addresses come from, with ARM's
 * NIC reservation: a VM PUT that reaches the NIC checks reserves it for reservationSeconds,
 * during which the network RP refuses to delete it or give it to another VM.
 */
export class Nics {
  private readonly subnets = new Map<string, SubnetPool>();
  private peakTotalIps = 0;
  private totalIps = 0;
  private readonly reapTimes: number[] = [];
  /** Per reaped NIC of a failed attempt: when ARM's reservation ended and when the NIC went. */
  private readonly reaps: { reservedUntil: number; removedAt: number }[] = [];

  constructor(
    private readonly state: ArmState,
    private readonly calls: ArmCalls,
    private readonly groups: ResourceGroups,
    private readonly listing: Listing,
    private readonly ops: Operations,
    subnets: readonly FakeArmSubnetConfig[],
  ) {
    for (const s of subnets) this.subnets.set(s.id.toLowerCase(), new SubnetPool(s.id, s.addressPrefix));
  }

  /** NIC PUT. Idempotent for an existing name (200, still a counted write); 201 when created. */
  put(spec: NicSpec): { nic: Nic; created: boolean } {
    const id = armId(spec.ref, NIC_TYPE);
    const location = normalizeLocation(spec.location);
    return this.calls.invoke<{ nic: Nic; created: boolean }>('nic.put', 'writes', spec.ref.subscriptionId, location, spec.ref.name, () => {
      this.groups.require(spec.ref);
      const key = id.toLowerCase();
      const existing = this.state.nics.get(key);
      if (existing?.deleteOp) throw msg.anotherOperationInProgress();
      if (existing) {
        // A PUT replaces the resource's tags (the one NIC property this fake lets a re-PUT change).
        this.replaceTags(existing, spec.tags);
        return { status: 200, value: { nic: this.state.nicView(existing), created: false } };
      }
      const rec = this.create(spec, id, key, location);
      // Reported here, inside the call: a PUT whose reply is lost still created the NIC.
      this.state.emit('nic.created', rec.name, 'Created');
      return { status: 201, value: { nic: this.state.nicView(rec), created: true } };
    });
  }

  /**
   * A NIC that exists before the run (a snapshot's node): made as a PUT makes it, with an
   * address of its subnet and listed at once, but no ARM call and no create counted.
   */
  adopt(spec: NicSpec): NicRecord {
    const id = armId(spec.ref, NIC_TYPE);
    const rec = this.create(spec, id, id.toLowerCase(), normalizeLocation(spec.location));
    rec.listedFrom = this.state.clock.now();
    return rec;
  }

  private create(spec: NicSpec, id: string, key: string, location: string): NicRecord {
    const subnet = this.subnets.get(spec.subnetId.toLowerCase());
    if (!subnet) throw msg.invalid(`Subnet ${spec.subnetId} referenced by resource ${id} was not found.`);
    const offset = subnet.allocate();
    if (offset === undefined) throw msg.subnetIsFull(subnet.id, subnet.addressPrefix);
    this.totalIps++;
    if (this.totalIps > this.peakTotalIps) this.peakTotalIps = this.totalIps;
    const rec: NicRecord = {
      key, id, name: spec.ref.name, location, subnetId: subnet.id, subnet, ipOffset: offset,
      ip: subnet.address(offset), tags: { ...spec.tags }, reservedUntil: 0, listedFrom: this.state.clock.now() + this.state.settings.appearLagMs,
    };
    this.state.nics.set(key, rec);
    this.state.nicTombs.delete(key);
    return rec;
  }

  get(ref: ResourceRef): Nic | undefined {
    return this.listing.getOne('nic.get', ref, this.state.nics, NIC_TYPE, (rec) => this.state.nicView(rec));
  }

  /**
   * NIC DELETE: 'notFound' is a success counted as 404. Refuses NICs in use or reserved.
   * Accepted (202), the NIC shows Deleting until its delete operation ends.
   */
  delete(ref: ResourceRef): { operationId: string } | 'notFound' {
    const rec = this.record(ref);
    return this.calls.invoke<{ operationId: string } | 'notFound'>('nic.delete', 'deletes', ref.subscriptionId, rec?.location, ref.name, () => {
      this.groups.require(ref);
      if (!rec) return { status: 404, value: 'notFound' };
      if (rec.deleteOp) return { status: 202, value: { operationId: rec.deleteOp.id } };
      const vm = rec.attachedVmKey === undefined ? undefined : this.state.vms.get(rec.attachedVmKey);
      if (vm) throw msg.nicInUse(rec.id, vm.id);
      if (this.state.clock.now() < rec.reservedUntil) throw msg.nicReserved(rec.reservedFor ?? '', this.state.settings.reservationSeconds);
      const op = this.ops.start('delete');
      rec.deleteOp = op;
      rec.view = undefined;
      const delay = this.state.draw(this.state.settings.latency.nicDeleteOperation);
      if (delay <= 0) this.remove(rec);
      else {
        rec.deleteTimer = this.state.clock.setTimer(delay, () => {
          rec.deleteTimer = undefined;
          if (this.state.nics.get(rec.key) === rec) this.remove(rec);
        });
      }
      return { status: 202, value: { operationId: op.id } };
    });
  }

  /** Every page of a NIC list (each page a counted read), as a client that follows nextLink sees it. */
  list(scope: ListScope): Nic[] {
    return this.listing.all('nic.list', scope, this.state.nics, this.state.nicTombs, (rec) => this.state.nicView(rec));
  }

  listPage(scope: ListScope, skip: number): ListPage<Nic> {
    return this.listing.page('nic.list', scope, this.state.nics, this.state.nicTombs, (rec) => this.state.nicView(rec), skip);
  }

  /** PATCH of a NIC's tags (a counted write): the NIC as it is now, or undefined when there is none. */
  patchTags(ref: ResourceRef, tags: Tags): Nic | undefined {
    const rec = this.record(ref);
    return this.calls.invoke('nic.put', 'writes', ref.subscriptionId, rec?.location, ref.name, () => {
      this.groups.require(ref);
      if (!rec) return { status: 404, value: undefined };
      if (rec.deleteOp) throw msg.anotherOperationInProgress();
      this.replaceTags(rec, tags);
      return { status: 200, value: this.state.nicView(rec) };
    });
  }

  /** Uncounted location look-up, used by the REST face to build operation URLs. */
  location(ref: ResourceRef): string | undefined {
    return this.record(ref)?.location;
  }

  /**
   * GET of a configured subnet (a counted read): its id as configured, prefix, and the NICs
   * holding an address in it. Undefined for a subnet the fake does not have.
   */
  subnetGet(subscriptionId: string, subnetId: string): { id: string; addressPrefix: string; nicIds: string[] } | undefined {
    const pool = this.subnets.get(subnetId.toLowerCase());
    return this.calls.invoke('subnet.get', 'reads', subscriptionId, undefined, subnetId, () => {
      if (!pool) return { status: 404, value: undefined };
      const nicIds: string[] = [];
      for (const nic of this.state.nics.values()) if (nic.subnet === pool) nicIds.push(nic.id);
      return { status: 200, value: { id: pool.id, addressPrefix: pool.addressPrefix, nicIds } };
    });
  }

  /** A VM PUT reserves the NIC: ARM refuses its deletion (and other VMs) until the end. */
  reserve(nic: NicRecord, vmId: string, now: number): void {
    const s = this.state.settings;
    let until = now + s.reservationDelayMs + s.reservationMs;
    if (s.reservationJitterMs > 0) until += Math.round(this.state.random.next() * s.reservationJitterMs);
    nic.reservedUntil = until;
    nic.reservedFor = vmId;
  }

  /** With reservation.from = 'completion', the create's outcome restarts the count. */
  renewReservationsAtCompletion(vm: VmRecord): void {
    if (this.state.settings.reservationFrom !== 'completion') return;
    const now = this.state.clock.now();
    for (const key of vm.nicKeys) {
      const nic = this.state.nics.get(key);
      if (nic && nic.reservedFor !== undefined && sameId(nic.reservedFor, vm.id)) nic.reservedUntil = Math.max(nic.reservedUntil, now + this.state.settings.reservationMs);
    }
  }

  remove(nic: NicRecord): void {
    const now = this.state.clock.now();
    this.state.nics.delete(nic.key);
    if (nic.deleteTimer !== undefined) this.state.clock.clearTimer(nic.deleteTimer);
    nic.deleteTimer = undefined;
    if (nic.deleteOp) this.ops.finish(nic.deleteOp, { status: 'Succeeded' });
    this.state.bury(this.state.nicTombs, nic.key, nic);
    nic.subnet.release(nic.ipOffset);
    this.totalIps--;
    if (nic.failedAt !== undefined) {
      this.reapTimes.push((now - nic.failedAt) / 1000);
      this.reaps.push({ reservedUntil: nic.reservedUntil, removedAt: now });
    }
    this.state.emit('nic.removed', nic.name, 'Deleted');
  }

  /** Peak of in-use private IPs: of one subnet, or (without an id) of all subnets together. */
  peakIpsUsed(subnetId?: string): number {
    if (subnetId === undefined) return this.peakTotalIps;
    return this.subnets.get(subnetId.toLowerCase())?.peak ?? 0;
  }

  ipsUsed(subnetId: string): number {
    return this.subnets.get(subnetId.toLowerCase())?.used ?? 0;
  }

  subnetRows(): Array<{ id: string; addressPrefix: string; used: number; peak: number; capacity: number }> {
    return [...this.subnets.values()].map((s) => ({ id: s.id, addressPrefix: s.addressPrefix, used: s.used, peak: s.peak, capacity: s.capacity }));
  }

  /**
   * For every NIC deleted after a failed VM create (sync refusal or async failure): seconds
   * from the first such failure since the NIC was last attached successfully to its deletion.
   */
  reapTimesSeconds(): number[] {
    return [...this.reapTimes];
  }

  /** The same reaps with their times (virtual ms), to tell a reservation that ended while the controller was down. */
  reapsAfterReservation(): { reservedUntil: number; removedAt: number }[] {
    return this.reaps.map((r) => ({ ...r }));
  }

  private record(ref: ResourceRef): NicRecord | undefined {
    return this.state.nics.get(armId(ref, NIC_TYPE).toLowerCase());
  }

  /** A PUT or PATCH replaces a NIC's tags; its view (and etag) follow. */
  private replaceTags(nic: NicRecord, tags: Tags): void {
    if (sameTags(nic.tags, tags)) return;
    nic.tags = { ...tags };
    nic.view = undefined;
  }
}
