import type { Clock, TimerId } from '../ports/clock.js';

/**
 * The one periodic-loop helper (runtime resync and controllers, the controller process's
 * NodeClass loops, leader election, `azflex dev`'s simulated kubelet).
 *
 * Runs never overlap: a tick that comes due while the previous run is still in flight
 * waits for it and starts as soon as it finishes. Otherwise ticks keep their period from
 * the start of the previous run (fixed rate), so a fast run changes no timing. `kick()`
 * asks for a run as soon as possible, coalesced with one already pending or in flight.
 * Progress (`lastFinishedAt`) is what /healthz reads to tell a stuck loop from a busy one.
 */
export interface PeriodicLoopOptions {
  name: string;
  clock: Clock;
  intervalMs: number;
  run: () => Promise<void>;
  onError?: (err: unknown) => void;
  /** Delay of the first run (default: one interval). */
  initialDelayMs?: number;
}

export interface LoopProgress {
  name: string;
  intervalMs: number;
  running: boolean;
  /** When a run last finished (successfully or not); when the loop started, before that. */
  lastFinishedAt: number;
  runs: number;
}

export class PeriodicLoop {
  private timer: TimerId | undefined;
  private inFlight: Promise<void> | undefined;
  private due = false;
  private stopped = true;
  private lastStartedAt = 0;
  private finishedAt = 0;
  private runs = 0;

  constructor(private readonly o: PeriodicLoopOptions) {}

  get name(): string {
    return this.o.name;
  }

  start(): this {
    if (!this.stopped) return this;
    this.stopped = false;
    this.finishedAt = this.o.clock.now();
    this.arm(this.o.initialDelayMs ?? this.o.intervalMs);
    return this;
  }

  /** Stops ticking and waits for a run in flight to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.due = false;
    if (this.timer !== undefined) this.o.clock.clearTimer(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }

  /** Run as soon as possible (coalesced with a pending or in-flight run). */
  kick(): void {
    if (this.stopped) return;
    if (this.inFlight) this.due = true;
    else this.arm(0);
  }

  progress(): LoopProgress {
    return { name: this.o.name, intervalMs: this.o.intervalMs, running: this.inFlight !== undefined, lastFinishedAt: this.finishedAt, runs: this.runs };
  }

  /** True when the loop is started and no run has finished for `afterMs`. */
  stalled(afterMs: number): boolean {
    return !this.stopped && this.o.clock.now() - this.finishedAt > afterMs;
  }

  private arm(delayMs: number): void {
    if (this.timer !== undefined) this.o.clock.clearTimer(this.timer);
    this.timer = this.o.clock.setTimer(Math.max(0, delayMs), () => {
      this.timer = undefined;
      this.fire();
    });
  }

  private fire(): void {
    if (this.stopped) return;
    if (this.inFlight) {
      this.due = true;
      return;
    }
    this.lastStartedAt = this.o.clock.now();
    // The next tick keeps the period; if it comes while this run is in flight, it waits.
    this.arm(this.o.intervalMs);
    this.inFlight = (async () => {
      try {
        await this.o.run();
      } catch (e) {
        this.o.onError?.(e);
      } finally {
        this.runs++;
        this.finishedAt = this.o.clock.now();
        this.inFlight = undefined;
        if (this.due && !this.stopped) {
          this.due = false;
          this.fire();
        }
      }
    })();
  }

  /** Start of the current or last run (for tests and diagnostics). */
  get startedAt(): number {
    return this.lastStartedAt;
  }
}

/** A process's periodic loops and one-shot timers, stopped together. */
export class Loops {
  private readonly loops: PeriodicLoop[] = [];
  private readonly timers = new Set<TimerId>();
  private stopped = false;

  constructor(private readonly clock: Clock, private readonly onError: (name: string, err: unknown) => void) {}

  /** A periodic loop whose runs never overlap (each waits for its previous run). */
  every(name: string, intervalMs: number, run: () => Promise<void>): void {
    if (this.stopped) return;
    this.loops.push(new PeriodicLoop({ name, clock: this.clock, intervalMs, run, onError: (err) => this.onError(name, err) }).start());
  }

  once(delayMs: number, fn: () => void): void {
    const id = this.clock.setTimer(delayMs, () => {
      this.timers.delete(id);
      fn();
    });
    this.timers.add(id);
  }

  /** Runs the named loop as soon as possible (coalesced with a run pending or in flight). */
  kick(name: string): void {
    for (const loop of this.loops) if (loop.name === name) loop.kick();
  }

  /** Names of loops with no finished run for `graceMs` beyond their interval. */
  stalled(graceMs: number): string[] {
    return this.loops.filter((l) => l.stalled(l.progress().intervalMs + graceMs)).map((l) => l.name);
  }

  stop(): void {
    this.stopped = true;
    for (const loop of this.loops.splice(0)) void loop.stop();
    for (const id of this.timers) this.clock.clearTimer(id);
    this.timers.clear();
  }
}
