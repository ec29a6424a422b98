import type { BucketKind } from './types.js';

/**
 * ARM's throttling model since 2024: a token bucket per (principal,) subscription and
 * region and per kind of request, refilled continuously. Refill is computed lazily from
 * the clock so idle buckets cost nothing.
 */
export const BUCKET_LIMITS: Readonly<Record<BucketKind, { capacity: number; refillPerSecond: number }>> = {
  reads: { capacity: 250, refillPerSecond: 25 },
  writes: { capacity: 200, refillPerSecond: 10 },
  deletes: { capacity: 200, refillPerSecond: 10 },
};

export type TakeResult = { ok: true; remaining: number } | { ok: false; retryAfterSeconds: number };

export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(private readonly capacity: number, private readonly refillPerSecond: number, nowMs: number) {
    this.tokens = capacity;
    this.last = nowMs;
  }

  take(nowMs: number): TakeResult {
    this.refill(nowMs);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { ok: true, remaining: Math.floor(this.tokens) };
    }
    // Whole seconds, as ARM's Retry-After header carries, rounded up so a client that
    // waits exactly that long always finds a token.
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - this.tokens) / this.refillPerSecond)) };
  }

  remaining(nowMs: number): number {
    this.refill(nowMs);
    return Math.floor(this.tokens);
  }

  drain(nowMs: number): void {
    this.refill(nowMs);
    this.tokens = 0;
  }

  private refill(nowMs: number): void {
    if (nowMs > this.last) {
      this.tokens = Math.min(this.capacity, this.tokens + ((nowMs - this.last) / 1000) * this.refillPerSecond);
      this.last = nowMs;
    }
  }
}

/**
 * ARM's global subscription limit: for each operation type, 15 times one principal's bucket,
 * shared by every principal of the subscription. A request draws from both; its answer says
 * what is left of each (x-ms-ratelimit-remaining-subscription-{kind} and -global-{kind}).
 */
export const GLOBAL_LIMIT_FACTOR = 15;

export type PairTakeResult = (TakeResult & { ok: true; globalRemaining: number }) | (TakeResult & { ok: false; globalRemaining: number });

/** One principal's bucket of a subscription, region and kind, with the subscription's global one beside it. */
export class SubscriptionBucket {
  private readonly principal: TokenBucket;
  private readonly global: TokenBucket;

  constructor(capacity: number, refillPerSecond: number, nowMs: number) {
    this.principal = new TokenBucket(capacity, refillPerSecond, nowMs);
    this.global = new TokenBucket(capacity * GLOBAL_LIMIT_FACTOR, refillPerSecond * GLOBAL_LIMIT_FACTOR, nowMs);
  }

  take(nowMs: number): PairTakeResult {
    const own = this.principal.take(nowMs);
    if (!own.ok) return { ...own, globalRemaining: this.global.remaining(nowMs) };
    // The fake is the subscription's only principal, so the global bucket, 15 times larger and
    // faster, cannot run out first; it is still drawn so its header counts what ARM would.
    const shared = this.global.take(nowMs);
    return shared.ok ? { ok: true, remaining: own.remaining, globalRemaining: shared.remaining } : { ...shared, globalRemaining: 0 };
  }

  /** Empties this principal's bucket (fault `throttle` with `drain`). */
  drain(nowMs: number): void {
    this.principal.drain(nowMs);
  }
}
