import type { LogEntry } from '../runtime/event-log.js';

/**
 * What the live view needs from whatever runs the machines. The simulator implements it
 * (sim-source.ts); the real controller can later implement it over its Runtime and event
 * log, without clock controls, which makes the page read-only.
 *
 * Everything here is deliberately narrow: actor names and state names, event-log entries
 * and reservation deadlines. Nothing that could carry customData, tokens or kubeconfigs
 * reaches the server, so nothing of the kind can reach the page.
 */
export interface LiveSource {
  /** Shown in the page header, e.g. "simulate quota-storm (machine, seed 1)". */
  readonly title: string;
  /** Where "T+0" is on the source's clock (the start of a simulation); omitted for wall time. */
  readonly startedAt?: number;
  /** Now on the source's clock: virtual time in a simulation. */
  now(): number;
  /** Current state per live actor, as `Runtime.actorStates()` gives it. */
  actorStates(): LiveActorStates;
  /** Every event-log entry from now on; returns the unsubscribe function. */
  subscribe(listener: (entry: LogEntry) => void): () => void;
  /** NICs ARM holds a reservation on (a VM create referenced them), if the source can see it. */
  reservations?(): LiveReservation[];
  /** Pause/step/speed of a virtual clock; absent for a real controller (read-only page). */
  readonly clock?: ClockControls;
}

export interface LiveActorStates {
  nodeClaims: ReadonlyMap<string, string>;
  nics: ReadonlyMap<string, string>;
}

export interface LiveReservation {
  /** NIC resource name (also its NIC actor's name). */
  nic: string;
  /** When ARM lets go, on the source's clock. */
  until: number;
}

/** Virtual ms per wall ms, or as fast as the simulator goes. */
export type Speed = number | 'max';

export interface ClockStatus {
  paused: boolean;
  speed: Speed;
  /** Length of one paced step of virtual time. */
  stepMs: number;
  /** The run's main phase is over (the world may still be settling). */
  finished: boolean;
}

export interface ClockControls {
  status(): ClockStatus;
  pause(): void;
  resume(): void;
  /** Run at least `ms` of virtual time (default: one step), then pause. */
  step(ms?: number): void;
  setSpeed(speed: Speed): void;
}
