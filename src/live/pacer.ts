import type { SimulationPace } from '../sim/simulation.js';
import type { ClockControls, ClockStatus, Speed } from './source.js';

export interface PacerOptions {
  /** Virtual ms per paced step; small steps make the page move smoothly. */
  stepMs?: number;
  speed?: Speed;
  paused?: boolean;
}

/** Behind real time by more than this, the pacer stops trying to catch up (e.g. after a slow step). */
const MAX_LAG_MS = 1_000;

/**
 * Pause, step and speed for a simulation, through `runSimulation`'s `pace` hook: the
 * simulator awaits `beforeStep` before every step of virtual time, so holding that promise
 * holds the virtual clock. Real timers are fine here: they only decide *when* a step runs,
 * never what happens in it, so a paced run is still the same run as an unpaced one.
 */
export class Pacer implements ClockControls {
  readonly stepMs: number;
  private paused: boolean;
  private speed: Speed;
  private finished = false;
  /** While stepping: run until the simulation reaches this many ms, then pause. */
  private stepUntil: number | undefined;
  private simulatedMs = 0;
  /** Wall time and virtual time that speed is measured from; set by the first step, reset on every change. */
  private anchor: { wall: number; sim: number } | undefined;
  private wake: Array<() => void> = [];

  constructor(options: PacerOptions = {}) {
    this.stepMs = options.stepMs ?? 1_000;
    this.speed = options.speed ?? 60;
    this.paused = options.paused ?? false;
    if (!(this.stepMs > 0)) throw new RangeError(`stepMs must be positive, got ${this.stepMs}`);
    validSpeed(this.speed);
  }

  /** Pass as `runSimulation({ pace })`. */
  get pace(): SimulationPace {
    return { stepMs: this.stepMs, beforeStep: (simulatedMs) => this.beforeStep(simulatedMs) };
  }

  status(): ClockStatus {
    return { paused: this.paused, speed: this.speed, stepMs: this.stepMs, finished: this.finished };
  }

  pause(): void {
    this.stepUntil = undefined;
    this.paused = true;
    this.changed();
  }

  resume(): void {
    this.stepUntil = undefined;
    this.paused = false;
    this.changed();
  }

  step(ms = this.stepMs): void {
    if (!(ms > 0)) throw new RangeError(`step must be positive, got ${ms}`);
    this.paused = true;
    this.stepUntil = this.simulatedMs + ms;
    this.changed();
  }

  setSpeed(speed: Speed): void {
    validSpeed(speed);
    this.speed = speed;
    this.changed();
  }

  /** The main phase is over: nothing more to pace, and nothing may wait on a control again. */
  finish(): void {
    this.finished = true;
    this.paused = false;
    this.stepUntil = undefined;
    this.changed();
  }

  private async beforeStep(simulatedMs: number): Promise<void> {
    this.simulatedMs = simulatedMs;
    for (;;) {
      if (this.finished) return;
      if (this.stepUntil !== undefined) {
        // Stepping runs flat out; it only yields so the server can push what happened.
        if (simulatedMs < this.stepUntil) return yieldToEventLoop();
        this.stepUntil = undefined;
        this.paused = true;
        this.changed();
      }
      if (this.paused) {
        await this.nextChange();
        continue;
      }
      if (this.speed === 'max') return yieldToEventLoop();
      // The step that starts at `simulatedMs` may run once real time has reached its end.
      const now = performance.now();
      this.anchor ??= { wall: now, sim: simulatedMs };
      const due = this.anchor.wall + (simulatedMs + this.stepMs - this.anchor.sim) / this.speed;
      if (due - now > 0) {
        await this.nextChange(due - now);
        continue;
      }
      if (now - due > MAX_LAG_MS) this.reanchor(now);
      return yieldToEventLoop();
    }
  }

  private changed(): void {
    this.reanchor(performance.now());
    const waiting = this.wake;
    this.wake = [];
    for (const w of waiting) w();
  }

  private reanchor(wall: number): void {
    this.anchor = { wall, sim: this.simulatedMs };
  }

  /** Resolves on the next control change, or after `timeoutMs`, whichever comes first. */
  private nextChange(timeoutMs?: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        // Drop this waiter when the timeout won, so a long run does not pile them up.
        this.wake = this.wake.filter((w) => w !== done);
        resolve();
      };
      const timer = timeoutMs === undefined ? undefined : setTimeout(done, timeoutMs);
      this.wake.push(done);
    });
  }
}

function validSpeed(speed: Speed): void {
  if (speed !== 'max' && !(Number.isFinite(speed) && speed > 0)) throw new RangeError(`speed must be a positive number or "max", got ${String(speed)}`);
}

/** Lets the HTTP server run between steps even when the simulation goes flat out. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
