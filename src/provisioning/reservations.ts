/**
 * Capacity reservations as Karpenter's `reserved` capacity type: the groups each NodeClass
 * names (spec.capacityReservationGroupIDs) read from ARM when a pass first needs them and once
 * an interval has passed, each reservation's free slots being its capacity less the VMs
 * allocated in it and the reserved NodeClaims whose VM PUT the reading cannot show yet (the
 * VM attempt time the launch writes before the PUT, as quota-in-flight.ts counts cores). A
 * read that fails, or a reading older than the staleness bound, offers nothing reserved
 * (fail open: the NodePool's other capacity types are planned as before).
 */
import type { AzurePort, CapacityReservation, CapacityReservationGroup } from '../ports/azure.js';
import type { Clock } from '../ports/clock.js';
import type { AzureFlexNodeClass, NodeClaim } from '../ports/cluster.js';
import { parseCapacityReservationGroupId } from '../apis/arm-id.js';
import { vmAttemptAt } from '../apis/vm-attempt.js';
import { CAPACITY_TYPE_RESERVED, LABEL_CAPACITY_RESERVATION_ID, LABEL_CAPACITY_TYPE } from '../apis/well-known.js';
import { zoneLabel } from '../catalog/skus.js';

export const DEFAULT_RESERVATION_READ_INTERVAL_MS = 5 * 60_000;

export interface ReservationReaderOptions {
  arm: Pick<AzurePort, 'getCapacityReservationGroup'>;
  /** ARM's clock: the readings are compared with the VM attempt times the launch stamps with it. */
  clock: Clock;
  intervalMs?: number;
  /** A reading older than this is not used (default three intervals). */
  staleAfterMs?: number;
  onReadFailed?: (groupId: string, err: unknown) => void;
}

/** One reservation with room, as a planned NodeClaim takes a slot of it. */
export interface ReservationSlot {
  groupId: string;
  /** The capacity-reservation-id label value. */
  reservationId: string;
  sku: string;
  /** Zone label ("eastus2-1") of a zonal reservation; absent: regional (the VM names no zone). */
  zone?: string;
  free: number;
}

interface GroupReading {
  readAt: number;
  group: CapacityReservationGroup;
}

const LABEL_VALUE = /^[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$/;

/**
 * A reservation's label value: `group.reservation` lowercased where that is a valid label
 * value, otherwise a hash of its ARM id (names may be longer than a label value allows).
 */
export function reservationLabelValue(groupName: string, reservation: Pick<CapacityReservation, 'id' | 'name'>): string {
  const plain = `${groupName}.${reservation.name}`.toLowerCase();
  if (LABEL_VALUE.test(plain)) return plain;
  let h = 0x811c9dc5;
  for (const ch of reservation.id.toLowerCase()) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return `crg-${h.toString(16).padStart(8, '0')}`;
}

export class ReservationReader {
  private readonly readings = new Map<string, GroupReading>();
  private readonly attempted = new Map<string, number>();
  private readonly intervalMs: number;
  private readonly staleAfterMs: number;

  constructor(private readonly options: ReservationReaderOptions) {
    this.intervalMs = options.intervalMs ?? DEFAULT_RESERVATION_READ_INTERVAL_MS;
    this.staleAfterMs = options.staleAfterMs ?? 3 * this.intervalMs;
  }

  /** Reads every named group that is due (never read, or the interval passed). */
  async refresh(nodeClasses: readonly AzureFlexNodeClass[]): Promise<void> {
    const now = this.options.clock.now();
    for (const id of groupIdsOf(nodeClasses)) {
      const tried = this.attempted.get(id.toLowerCase());
      if (tried === undefined || now - tried >= this.intervalMs) await this.read(id);
    }
  }

  private async read(id: string): Promise<void> {
    this.attempted.set(id.toLowerCase(), this.options.clock.now());
    try {
      const ref = parseCapacityReservationGroupId(id);
      const group = await this.options.arm.getCapacityReservationGroup({ subscriptionId: ref.subscriptionId, resourceGroup: ref.resourceGroup, name: ref.name });
      // A group that is gone offers nothing: forget the last reading.
      if (group) this.readings.set(id.toLowerCase(), { readAt: this.options.clock.now(), group });
      else this.readings.delete(id.toLowerCase());
    } catch (err) {
      // Kept until stale: one failed read is not a reason to forget a recent one.
      this.options.onReadFailed?.(id, err);
    }
  }

  /** One pass's ledger: each fresh reading's free slots less the reserved NodeClaims in flight. */
  ledger(nodeClasses: readonly AzureFlexNodeClass[], nodeClaims: readonly NodeClaim[]): ReservationLedger {
    const now = this.options.clock.now();
    const slots = new Map<string, ReservationSlot>();
    const byClass = new Map<string, string[]>();
    for (const nc of nodeClasses) {
      const keys: string[] = [];
      for (const id of nc.spec.capacityReservationGroupIDs ?? []) {
        const r = this.readings.get(id.toLowerCase());
        if (!r || now - r.readAt > this.staleAfterMs || r.group.location.toLowerCase() !== nc.spec.location.toLowerCase()) continue;
        for (const res of r.group.reservations) {
          const reservationId = reservationLabelValue(r.group.name, res);
          if (!slots.has(reservationId)) {
            const free = res.capacity - res.allocatedVmIds.length - inFlight(nodeClaims, reservationId, r.readAt);
            slots.set(reservationId, { groupId: r.group.id, reservationId, sku: res.vmSize, ...(res.zone ? { zone: zoneLabel(r.group.location, res.zone) } : {}), free });
          }
          keys.push(reservationId);
        }
      }
      if (keys.length > 0) byClass.set(nc.metadata.name, keys);
    }
    return new ReservationLedger(slots, byClass);
  }
}

function groupIdsOf(nodeClasses: readonly AzureFlexNodeClass[]): string[] {
  const out = new Map<string, string>();
  for (const nc of nodeClasses) for (const id of nc.spec.capacityReservationGroupIDs ?? []) if (!out.has(id.toLowerCase())) out.set(id.toLowerCase(), id);
  return [...out.values()];
}

/** Reserved NodeClaims of the reservation whose VM the reading cannot count (not sent, or sent after it). */
function inFlight(nodeClaims: readonly NodeClaim[], reservationId: string, readAt: number): number {
  let n = 0;
  for (const c of nodeClaims) {
    if (c.metadata.labels[LABEL_CAPACITY_RESERVATION_ID] !== reservationId || c.metadata.labels[LABEL_CAPACITY_TYPE] !== CAPACITY_TYPE_RESERVED) continue;
    if (c.status.conditions.some((x) => x.type === 'Launched' && x.status === 'False')) continue;
    const attemptAt = vmAttemptAt(c);
    if (attemptAt !== undefined ? attemptAt >= readAt : !c.status.providerID) n++;
  }
  return n;
}

/** One pass's free reservation slots; a NodeClaim the pass plans as reserved takes one. */
export class ReservationLedger {
  constructor(
    private readonly slots: Map<string, ReservationSlot>,
    private readonly byClass: Map<string, string[]>,
  ) {}

  /** Whether the NodeClass has a reservation of `sku` with a free slot. */
  offers(nodeClassName: string, sku: string): boolean {
    return this.slotsOf(nodeClassName).some((s) => s.free > 0 && s.sku.toLowerCase() === sku.toLowerCase());
  }

  /**
   * Takes a free slot for one of `skus` (in their order) that `zoneAllowed` admits (a zone
   * label, or undefined for a regional reservation); undefined when none is left.
   */
  take(nodeClassName: string, skus: readonly string[], zoneAllowed: (sku: string, zone: string | undefined) => boolean): ReservationSlot | undefined {
    for (const sku of skus) {
      const slot = this.slotsOf(nodeClassName).find((s) => s.free > 0 && s.sku.toLowerCase() === sku.toLowerCase() && zoneAllowed(sku, s.zone));
      if (slot) {
        slot.free--;
        return slot;
      }
    }
    return undefined;
  }

  /** The free counts, for the provisioner's skip key: a pass over the same inputs but other free slots plans differently. */
  fingerprint(): string {
    return [...this.slots.values()].map((s) => `${s.reservationId}=${s.free}`).join(',');
  }

  private slotsOf(nodeClassName: string): ReservationSlot[] {
    return (this.byClass.get(nodeClassName) ?? []).map((k) => this.slots.get(k)!);
  }
}
