import type { Clock } from '../../ports/clock.js';
import type { AzureError } from '../../ports/azure.js';
import { MAX_COMPUTE_RETRY_AFTER_SECONDS } from './defaults.js';
import * as msg from './messages.js';
import { regionKey } from './model.js';
import { BUCKET_LIMITS, SubscriptionBucket } from './token-bucket.js';
import type { ArmOperation, BucketKind, ComputeThrottlePolicy } from './types.js';

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

type Covering = ReadonlyArray<{ p: ComputeThrottlePolicy; w: CallWindow }>;

/** Compute RP throttling: sliding-window policies per subscription and region (x-ms-ratelimit-remaining-resource). */
export class ComputeThrottle {
  private readonly windows = new Map<string, CallWindow>();
  private readonly windowsByCaller = new Map<string, Map<string, Map<ArmOperation, Covering>>>();

  constructor(private readonly clock: Clock, readonly policies: readonly ComputeThrottlePolicy[]) {}

  /**
   * Every policy covering `op` counts the call; one over its limit refuses it. Returns the
   * remaining-resource header (undefined when no policy covers `op`) and the refusal, if any.
   */
  charge(op: ArmOperation, subscriptionId: string, location: string): { header: string | undefined; refusal: AzureError | undefined } {
    const now = this.clock.now();
    const covering = this.covering(op, subscriptionId, location);
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
    const header = covering.length > 0 ? covering.map(({ p }, i) => `Microsoft.Compute/${p.name};${Math.max(0, p.limit - used[i]! - (refusal ? 0 : 1))}`).join(',') : undefined;
    return { header, refusal };
  }

  /** Fills the windows of a region's policies (all, or the one named) to their limits. */
  saturate(subscriptionId: string, location: string, policy: string | undefined): void {
    const now = this.clock.now();
    for (const p of this.policies) {
      if (policy !== undefined && p.name.toLowerCase() !== policy.toLowerCase()) continue;
      const w = this.window(subscriptionId, location, p.name);
      const used = w.count(now, p.windowSeconds * 1000);
      if (used < p.limit) w.add(now, p.limit - used);
    }
  }

  /** The call windows of every policy covering `op`, by the caller's own strings (see Buckets.get). */
  private covering(op: ArmOperation, subscriptionId: string, location: string): Covering {
    let byLocation = this.windowsByCaller.get(subscriptionId);
    if (!byLocation) this.windowsByCaller.set(subscriptionId, (byLocation = new Map()));
    let byOp = byLocation.get(location);
    if (!byOp) byLocation.set(location, (byOp = new Map()));
    let windows = byOp.get(op);
    if (!windows) {
      windows = this.policies.filter((p) => (p.ops as string[]).includes(op)).map((p) => ({ p, w: this.window(subscriptionId, location, p.name) }));
      byOp.set(op, windows);
    }
    return windows;
  }

  private window(subscriptionId: string, location: string, policy: string): CallWindow {
    const key = `${regionKey(subscriptionId, location)}|${policy}`;
    let w = this.windows.get(key);
    if (!w) this.windows.set(key, (w = new CallWindow()));
    return w;
  }
}

/** ARM's token buckets, one per subscription, region and kind of request. */
export class Buckets {
  private readonly buckets = new Map<string, SubscriptionBucket>();
  /** The same buckets by the caller's (unnormalised) subscription, location and kind. */
  private readonly byCallerKeys = new Map<string, Map<string, Map<BucketKind, SubscriptionBucket>>>();

  constructor(private readonly clock: Clock) {}

  /**
   * Every ARM call charges a bucket: looked up by the caller's own strings first, which are
   * usually the same instances every call, so no lower-cased key is built and hashed.
   */
  get(subscriptionId: string, location: string, kind: BucketKind): SubscriptionBucket {
    let byLocation = this.byCallerKeys.get(subscriptionId);
    if (!byLocation) this.byCallerKeys.set(subscriptionId, (byLocation = new Map()));
    let byKind = byLocation.get(location);
    if (!byKind) byLocation.set(location, (byKind = new Map()));
    let b = byKind.get(kind);
    if (!b) byKind.set(kind, (b = this.normalised(subscriptionId, location, kind)));
    return b;
  }

  private normalised(subscriptionId: string, location: string, kind: BucketKind): SubscriptionBucket {
    const key = `${subscriptionId.toLowerCase()}|${location.toLowerCase()}|${kind}`;
    let b = this.buckets.get(key);
    if (!b) {
      const limits = BUCKET_LIMITS[kind];
      b = new SubscriptionBucket(limits.capacity, limits.refillPerSecond, this.clock.now());
      this.buckets.set(key, b);
    }
    return b;
  }
}
