import { AzureError } from '../../ports/azure.js';
import * as msg from './messages.js';
import type { ArmState } from './state.js';
import { Buckets, ComputeThrottle } from './throttling.js';
import type { ArmEvent, ArmOperation, BucketKind, FakeArmConfig } from './types.js';

/** What an ARM call answers: its HTTP status (counted) and its value. */
export type Outcome<T> = { status: number; value: T };

/**
 * The door every ARM call goes through: ARM's token buckets and Compute's policies, injected
 * 5xx and timeouts, then the call's body; the answer's status is counted and reported.
 *
 * A call is charged to the region of the resource it names (the PUT body's location, or the
 * stored resource's); a call that names no existing resource (a list, a GET or DELETE of
 * something missing, an operation poll) is charged to the subscription's home region.
 */
export class ArmCalls {
  readonly buckets: Buckets;
  readonly compute: ComputeThrottle;
  throttling: boolean;
  transientFaultRate: number;
  timeoutRate: number;
  private readonly calls = new Map<string, Map<number, number>>();
  /** What the last call's rate-limit headers say (rendered only when the REST face asks). */
  private lastRemaining: { kind: BucketKind; remaining: number; globalRemaining: number } | undefined;
  private lastResourceRemaining: string | undefined;
  /** Tells calls apart for the REST face's rate-limit headers. */
  private seq = 0;

  constructor(private readonly state: ArmState, config: FakeArmConfig, private readonly homeRegionOf: (subscriptionId: string) => string) {
    this.buckets = new Buckets(state.clock);
    this.compute = new ComputeThrottle(state.clock, state.settings.computePolicies);
    this.throttling = config.throttling ?? false;
    this.transientFaultRate = config.transientFaultRate ?? 0;
    this.timeoutRate = config.timeoutRate ?? 0;
  }

  /** Runs one ARM call. A timed-out write may have taken effect first. */
  invoke<T>(op: ArmOperation, kind: BucketKind, subscriptionId: string, location: string | undefined, name: string, body: () => Outcome<T>): T {
    try {
      this.seq++;
      this.lastRemaining = undefined;
      this.lastResourceRemaining = undefined;
      const loc = location ?? this.homeRegionOf(subscriptionId);
      this.charge(op, kind, subscriptionId, loc, location !== undefined);
      if (this.transientFaultRate > 0 && this.state.random.next() < this.transientFaultRate) throw msg.internalError();
      if (this.timeoutRate > 0 && this.state.random.next() < this.timeoutRate) {
        if (kind === 'reads' || this.state.random.next() >= this.state.settings.timeoutAfterEffectRate) throw msg.requestTimeout();
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

  /** ARM counts every call and says what is left; with throttling off it never refuses. */
  private charge(op: ArmOperation, kind: BucketKind, subscriptionId: string, loc: string, namesResource: boolean): void {
    const taken = this.buckets.get(subscriptionId, loc, kind).take(this.state.clock.now());
    const remaining = taken.ok ? taken.remaining : 0;
    this.lastRemaining = { kind, remaining, globalRemaining: taken.globalRemaining };
    if (this.throttling && !taken.ok) throw msg.throttled(kind === 'reads' ? 'read' : kind === 'writes' ? 'write' : 'delete', subscriptionId, taken.retryAfterSeconds);
    // ARM answers a DELETE of a VM it does not have itself (204): Compute never sees it, so no policy is charged.
    const reachesCompute = op === 'vm.put' || op === 'vm.get' || op === 'vm.list' || (op === 'vm.delete' && namesResource);
    if (this.compute.policies.length > 0 && reachesCompute) {
      const { header, refusal } = this.compute.charge(op, subscriptionId, loc);
      this.lastResourceRemaining = header;
      if (refusal) throw refusal;
    }
  }

  /** Sequence number of the last call and the rate-limit headers ARM sends with its answer. */
  lastCallHeaders(): { seq: number; headers: Record<string, string> } {
    const headers: Record<string, string> = {};
    if (this.lastRemaining) {
      headers[`x-ms-ratelimit-remaining-subscription-${this.lastRemaining.kind}`] = String(this.lastRemaining.remaining);
      headers[`x-ms-ratelimit-remaining-subscription-global-${this.lastRemaining.kind}`] = String(this.lastRemaining.globalRemaining);
    }
    if (this.lastResourceRemaining !== undefined) headers['x-ms-ratelimit-remaining-resource'] = this.lastResourceRemaining;
    return { seq: this.seq, headers };
  }

  /** Calls answered, by operation and HTTP status. */
  counts(): Record<string, Record<string, number>> {
    const out: Record<string, Record<string, number>> = {};
    for (const [op, byStatus] of this.calls) {
      const row: Record<string, number> = {};
      for (const [status, n] of byStatus) row[String(status)] = n;
      out[op] = row;
    }
    return out;
  }

  private count(op: ArmOperation, status: number, name: string, code: string | undefined): void {
    let byStatus = this.calls.get(op);
    if (!byStatus) this.calls.set(op, (byStatus = new Map()));
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    if (this.state.onEvent) {
      const e: ArmEvent = { t: this.state.clock.now(), op, name, status };
      if (code !== undefined) e.code = code;
      this.state.onEvent(e);
    }
  }
}
