import type { Clock, TimerId } from '../ports/clock.js';

/**
 * Karpenter's provisioning batcher: pods that turn pending trigger one provisioning pass once
 * they stop arriving for `idleMs`, or `maxMs` after the first of them at the latest, so a burst
 * of 1,000 pods the ReplicaSet controller creates over a few seconds is planned in one pass
 * rather than waiting for the next period, or split across two. Upstream's defaults: 1 s idle,
 * 10 s at most (BATCH_IDLE_DURATION, BATCH_MAX_DURATION).
 */
export const BATCH_IDLE_MS = 1_000;
export const BATCH_MAX_MS = 10_000;

export interface BatcherOptions {
  clock: Clock;
  /** The pass to run when the batch window closes. */
  fire: () => void;
  idleMs?: number;
  maxMs?: number;
}

export class ProvisioningBatcher {
  private windowStart: number | undefined;
  private timer: TimerId | undefined;
  private stopped = false;

  constructor(private readonly o: BatcherOptions) {}

  /** A pod turned pending: open the window, or keep it open for another idle period (within its maximum). */
  trigger(): void {
    if (this.stopped) return;
    const now = this.o.clock.now();
    this.windowStart ??= now;
    const idle = this.o.idleMs ?? BATCH_IDLE_MS;
    const closesAt = this.windowStart + (this.o.maxMs ?? BATCH_MAX_MS);
    if (this.timer !== undefined) this.o.clock.clearTimer(this.timer);
    this.timer = this.o.clock.setTimer(Math.max(0, Math.min(idle, closesAt - now)), () => {
      this.timer = undefined;
      this.windowStart = undefined;
      this.o.fire();
    });
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.o.clock.clearTimer(this.timer);
    this.timer = undefined;
  }
}
