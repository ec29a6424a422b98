import { randomInt as cryptoRandomInt } from 'node:crypto';
import type { Clock, Random, TimerId } from '../ports/clock.js';

/**
 * The one place where wall-clock time and real randomness enter azflex. Everything else
 * takes a Clock/Random so the simulator can substitute virtual ones.
 */
export class RealClock implements Clock {
  private readonly timers = new Map<TimerId, NodeJS.Timeout>();
  private seq = 0;

  now(): number {
    return Date.now();
  }

  setTimer(delayMs: number, fn: () => void): TimerId {
    const id = ++this.seq;
    const handle = setTimeout(() => {
      this.timers.delete(id);
      fn();
    }, Math.max(0, delayMs));
    this.timers.set(id, handle);
    return id;
  }

  clearTimer(id: TimerId): void {
    const handle = this.timers.get(id);
    if (handle !== undefined) {
      clearTimeout(handle);
      this.timers.delete(id);
    }
  }

  /** Number of armed timers; lets shutdown tests prove nothing is left ticking. */
  pendingTimers(): number {
    return this.timers.size;
  }
}

/** Uniform [0,1) from the OS CSPRNG (~48 bits, exactly representable in a double). */
export class CryptoRandom implements Random {
  next(): number {
    // crypto.randomInt requires max - min < 2^48.
    return cryptoRandomInt(0, 2 ** 48 - 1) / 2 ** 48;
  }
}
