import { AzureError, isAzureError, PROVIDER, type AzurePort, type ResourceGroupScope } from '../ports/azure.js';
import type { Clock } from '../ports/clock.js';
import { classifyAzureError } from '../azure/errors.js';

/**
 * Shares ARM's 429 answers across every actor, each blocking only what ARM throttled:
 * - ARM's own buckets (SubscriptionRequestsThrottled) are per subscription and per operation
 *   type: reads, writes (PUT) and deletes each have their own bucket, so a drained write
 *   bucket holds back the PUTs of the subscription and nothing else;
 * - a resource provider's policies are per operation group (Compute: PutVM3Min covers VM
 *   PUTs, DeleteVM3Min VM DELETEs, LowCostGet VM GETs, HighCostGet VM lists), so Compute
 *   saying "wait" to the VM creates of a subscription leaves its VM deletes alone: cleanup
 *   never queues behind creates.
 * Sources and limits: docs/fidelity.md ("ARM throttling", "Compute RP throttling"). Each such
 * scope is a lane. Until a lane's Retry-After has passed, no actor spends another request there.
 *
 * A read (every effect starts with one) waits out a block, for a slot READ_SPACING_MS after
 * the previous waiting read's: when a ramp of hundreds of actors hit the bucket, failing them
 * all at once had each back off, retry the moment the block lifted and be refused again (a
 * 1,000-node ramp spent ~100,000 local refusals and their transitions), while paced reads go
 * out at about ARM's refill rate. A read that would wait longer than MAX_READ_WAIT_MS is
 * refused locally.
 *
 * A write is refused locally (a 429 with its own Retry-After) and backs off on its actor's
 * deadline: nothing waits in memory. Once a provider stated its policy in a 429 (Compute's
 * names its allowed count per window), the gate keeps to it with the writes it let through
 * in the window: a write goes while the window has room, and one that finds it full is told
 * to come back when the window next has room that no earlier refused write was already told
 * of. Before, every refused create came back the moment the block lifted: ~150 VM PUTs at
 * once in the fleet world's ramp, which re-throttled the lane at once (each 429 spending a
 * token of ARM's write bucket and its actor a GET). ARM's own buckets are only waited out:
 * their Retry-After is a second or two.
 */
const READ_SPACING_MS = 40; // ARM refills 25 reads/s per subscription (docs/fidelity.md)
const MAX_READ_WAIT_MS = 10_000;
/** How far back a lane remembers its writes: Compute's longest policy window (the *30Min ones). */
const WRITE_HISTORY_MS = 1_800_000;
/**
 * A refused write is told to come back this much after the window has room: its actor reads
 * the resource first, and the provider counts the write when it arrives.
 */
const RETRY_MARGIN_MS = 1_000;

type OperationType = 'read' | 'write' | 'delete';

/** A throttling policy as a 429 states it: at most `allowed` calls in any `windowMs`. */
interface WindowPolicy {
  allowed: number;
  windowMs: number;
}

/** One throttling scope: an ARM bucket of a subscription, or a provider's operation group in one. */
class Lane {
  blockedUntil = 0;
  private readonly policies: WindowPolicy[] = [];
  private historyMs = WRITE_HISTORY_MS;
  /** When the writes this lane let through went, oldest first (from `head`). */
  private sent: number[] = [];
  private head = 0;
  /** Retry times handed to refused writes, in order: each is told of a different opening. */
  private promised: number[] = [];

  learn(p: WindowPolicy): void {
    if (this.policies.some((q) => q.allowed === p.allowed && q.windowMs === p.windowMs)) return;
    this.policies.push(p);
    this.historyMs = Math.max(this.historyMs, p.windowMs);
  }

  /** Whether a write may go now: not blocked, and every known policy's window has room. */
  admits(now: number): boolean {
    if (this.blockedUntil > now) return false;
    const n = this.sent.length;
    for (const p of this.policies) if (n - p.allowed >= this.head && this.sent[n - p.allowed]! > now - p.windowMs) return false;
    return true;
  }

  /** When a refused write should come back: the first opening after the block that no earlier refused write was told of. */
  retryAt(now: number): number {
    let k = 0;
    while (k < this.promised.length && this.promised[k]! <= now) k++;
    if (k > 0) this.promised.splice(0, k);
    const waiting = this.promised.length;
    const last = waiting > 0 ? this.promised[waiting - 1]! : now;
    let t = Math.max(now, this.blockedUntil);
    const n = this.sent.length;
    for (const p of this.policies) {
      // The (waiting+1)-th write from now fits once that many writes have aged out of the
      // window: those sent, then those promised (they will be sent at their times).
      const i = n - p.allowed + waiting;
      const opening = i < this.head ? now : (i < n ? this.sent[i]! : this.promised[i - n]!) + p.windowMs;
      t = Math.max(t, opening + RETRY_MARGIN_MS);
    }
    t = Math.max(t, last);
    this.promised.push(t);
    return t;
  }

  sentAt(now: number): void {
    while (this.head < this.sent.length && this.sent[this.head]! <= now - this.historyMs) this.head++;
    if (this.head > 1024 && this.head * 2 > this.sent.length) {
      this.sent = this.sent.slice(this.head);
      this.head = 0;
    }
    this.sent.push(now);
  }

  /** The write let through at `at` was refused before the provider counted it. */
  unsend(at: number): void {
    for (let i = this.sent.length - 1; i >= this.head && this.sent[i]! >= at; i--) {
      if (this.sent[i] === at) {
        this.sent.splice(i, 1);
        return;
      }
    }
  }
}

/** The gated port, and what the gate would say to a VM PUT right now. */
export interface GatedArm extends AzurePort {
  /**
   * The refusal a VM PUT of the subscription would meet now because Compute's policy window
   * is full (taken as that PUT's refusal: it is told its own opening), or undefined. Lets a
   * create that will not be sent skip its GET: reads share the subscription's bucket with
   * every tool. A block by ARM's own bucket (a second or two, the same end for every waiting
   * write) is not answered here: its creates still GET first, and the reads' spread is what
   * keeps them from all coming back in the same instant (without it the fleet world's ramp
   * drew three times the 429s).
   */
  vmPutRefusal(subscriptionId: string): AzureError | undefined;
}

/** A call's lanes, built once per (subscription as spelled, operation): every ARM call passes here. */
interface Route {
  sub: string;
  arm: Lane;
  rp: Lane;
  /** The subscription's three ARM lanes: an unattributed 429 blocks them all. */
  all: readonly Lane[];
}

const refuse = (ms: number): AzureError =>
  new AzureError('TooManyRequests', 429, 'throttled by ARM; waiting out Retry-After before calling again', Math.max(1, Math.ceil(ms / 1000)));
/** A refused write's own retry time (whole ms: ARM's Retry-After is whole seconds, this one is ours). */
const refuseWrite = (ms: number): AzureError =>
  new AzureError('TooManyRequests', 429, 'throttled by ARM; waiting for room in the throttling policy before calling again', Math.ceil(ms) / 1000);

class ArmGate {
  private readonly lanes = new Map<string, Lane>();
  /** Per subscription: when the next waiting read may go. */
  private readonly nextReadSlot = new Map<string, number>();
  private readonly routes = new Map<string, Map<string, Route>>();

  constructor(private readonly clock: Clock, private readonly isLeader: (() => boolean) | undefined) {}

  private lane(key: string): Lane {
    let l = this.lanes.get(key);
    if (!l) this.lanes.set(key, (l = new Lane()));
    return l;
  }

  routeOf(subscriptionId: string, op: Operation): Route {
    let byOp = this.routes.get(subscriptionId);
    if (!byOp) this.routes.set(subscriptionId, (byOp = new Map()));
    let r = byOp.get(op.name);
    if (!r) {
      const sub = subscriptionId.toLowerCase();
      const all = (['read', 'write', 'delete'] as const).map((type) => this.lane(`${sub}|arm|${type}`));
      r = { sub, arm: this.lane(`${sub}|arm|${op.type}`), rp: this.lane(`${sub}|${op.provider.toLowerCase()}|${op.name}`), all };
      byOp.set(op.name, r);
    }
    return r;
  }

  /** Records what a 429 blocks (the lane of whoever throttled) and the policy a provider states. */
  private noteThrottled(r: Route, err: AzureError, retryAfterSeconds: number, sentAt: number | undefined): void {
    const until = this.clock.now() + retryAfterSeconds * 1000;
    const by = err.info.throttledBy?.toLowerCase();
    // The provider did not count a write it (or ARM before it) refused.
    if (sentAt !== undefined) r.rp.unsend(sentAt);
    if (by !== undefined && by !== 'arm') {
      r.rp.blockedUntil = Math.max(r.rp.blockedUntil, until);
      const stated = policyOf(err);
      if (stated) r.rp.learn(stated);
      return;
    }
    // ARM's bucket (unknown origin: assume ARM, every bucket of the subscription, the wider block).
    for (const l of by === undefined ? r.all : [r.arm]) l.blockedUntil = Math.max(l.blockedUntil, until);
  }

  /** Why a write of the route may not go now (a running block, or the provider's window full), if it may not. */
  private writeRefusal(r: Route, now: number): AzureError | undefined {
    if (r.arm.blockedUntil > now) return refuseWrite(r.arm.blockedUntil - now);
    if (!r.rp.admits(now)) return refuseWrite(r.rp.retryAt(now) - now);
    return undefined;
  }

  async guard<T>(scope: ResourceGroupScope & { name?: string }, op: Operation, call: () => Promise<T>): Promise<T> {
    const r = this.routeOf(scope.subscriptionId, op);
    const { clock } = this;
    // A read waits out its lanes' blocks, paced READ_SPACING_MS apart per subscription.
    if (op.type === 'read') {
      for (let until = Math.max(r.arm.blockedUntil, r.rp.blockedUntil); clock.now() < until; until = Math.max(r.arm.blockedUntil, r.rp.blockedUntil)) {
        const now = clock.now();
        const slot = Math.max(until, this.nextReadSlot.get(r.sub) ?? 0);
        if (slot - now > MAX_READ_WAIT_MS) throw refuse(slot - now);
        this.nextReadSlot.set(r.sub, slot + READ_SPACING_MS);
        await new Promise<void>((resolve) => clock.setTimer(slot - now, resolve));
      }
    }
    let sentAt: number | undefined;
    if (op.type !== 'read') {
      // Fencing at the last moment (nothing awaits between here and the call): leadership may have moved since the actor decided.
      if (this.isLeader && !this.isLeader()) throw new Error('not the leader: ARM writes are fenced');
      const now = clock.now();
      const refused = this.writeRefusal(r, now);
      if (refused) throw refused;
      r.rp.sentAt(now);
      sentAt = now;
    }
    try {
      return await call();
    } catch (err) {
      // Only a 429 says "this scope is over its rate"; other waits (a VM marked for deletion) are the resource's own.
      if (isAzureError(err) && err.statusCode === 429) {
        const action = classifyAzureError(err);
        if (action.kind === 'throttled') this.noteThrottled(r, err, action.retryAfterSeconds, sentAt);
      }
      throw err;
    }
  }

  vmPutRefusal(subscriptionId: string): AzureError | undefined {
    const r = this.routeOf(subscriptionId, OPS.vmPut);
    const now = this.clock.now();
    return r.rp.admits(now) ? undefined : refuseWrite(r.rp.retryAt(now) - now);
  }
}

export function gateArm(arm: AzurePort, clock: Clock, isLeader?: () => boolean): GatedArm {
  const gate = new ArmGate(clock, isLeader);
  const guard = <T>(scope: ResourceGroupScope & { name?: string }, op: Operation, call: () => Promise<T>): Promise<T> => gate.guard(scope, op, call);
  return {
    vmPutRefusal: (subscriptionId) => gate.vmPutRefusal(subscriptionId),
    getNic: (ref) => guard(ref, OPS.nicGet, () => arm.getNic(ref)),
    createNic: (spec) => guard(spec.ref, OPS.nicPut, () => arm.createNic(spec)),
    deleteNic: (ref) => guard(ref, OPS.nicDelete, () => arm.deleteNic(ref)),
    listNics: (scope) => guard(scope, OPS.nicList, () => arm.listNics(scope)),
    getVm: (ref) => guard(ref, OPS.vmGet, () => arm.getVm(ref)),
    createVm: (spec) => guard(spec.ref, OPS.vmPut, () => arm.createVm(spec)),
    deleteVm: (ref) => guard(ref, OPS.vmDelete, () => arm.deleteVm(ref)),
    listVms: (scope) => guard(scope, OPS.vmList, () => arm.listVms(scope)),
    listDisks: (scope) => guard(scope, OPS.diskList, () => arm.listDisks(scope)),
    getDisk: (ref) => guard(ref, OPS.diskGet, () => arm.getDisk(ref)),
    deleteDisk: (ref) => guard(ref, OPS.diskDelete, () => arm.deleteDisk(ref)),
    listUsages: (subscriptionId, location) => guard({ subscriptionId, resourceGroup: '' }, OPS.usageList, () => arm.listUsages(subscriptionId, location)),
    getCapacityReservationGroup: (ref) => guard(ref, OPS.crgGet, () => arm.getCapacityReservationGroup(ref)),
  };
}

/** A port call as ARM throttles it: its provider, its bucket (operation type), its operation group. */
interface Operation {
  name: string;
  provider: string;
  type: OperationType;
}

const operation = (name: string, provider: string, type: OperationType): Operation => ({ name, provider, type });
const OPS = {
  nicGet: operation('nic.get', PROVIDER.network, 'read'),
  nicList: operation('nic.list', PROVIDER.network, 'read'),
  nicPut: operation('nic.put', PROVIDER.network, 'write'),
  nicDelete: operation('nic.delete', PROVIDER.network, 'delete'),
  vmGet: operation('vm.get', PROVIDER.compute, 'read'),
  vmList: operation('vm.list', PROVIDER.compute, 'read'),
  vmPut: operation('vm.put', PROVIDER.compute, 'write'),
  vmDelete: operation('vm.delete', PROVIDER.compute, 'delete'),
  diskGet: operation('disk.get', PROVIDER.compute, 'read'),
  diskList: operation('disk.list', PROVIDER.compute, 'read'),
  diskDelete: operation('disk.delete', PROVIDER.compute, 'delete'),
  usageList: operation('usage.list', PROVIDER.compute, 'read'),
  crgGet: operation('crg.get', PROVIDER.compute, 'read'),
} as const;

/**
 * The policy a provider's 429 states: Compute puts the exceeded policy in error.details[]
 * with a JSON message {operationGroup, startTime, endTime, allowedRequestCount, ...}.
 */
function policyOf(err: AzureError): WindowPolicy | undefined {
  for (const d of err.info.details ?? []) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(d.message);
    } catch {
      continue;
    }
    if (parsed === null || typeof parsed !== 'object') continue;
    const { startTime, endTime, allowedRequestCount } = parsed as Record<string, unknown>;
    if (typeof startTime !== 'string' || typeof endTime !== 'string' || typeof allowedRequestCount !== 'number') continue;
    const windowMs = Date.parse(endTime) - Date.parse(startTime);
    if (!(windowMs > 0) || !(allowedRequestCount >= 1)) continue;
    return { allowed: Math.floor(allowedRequestCount), windowMs };
  }
  return undefined;
}
