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
