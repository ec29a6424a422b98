import type { ClockControls, Speed } from './source.js';

/** What the page may ask of a virtual clock (POST /api/clock). */
export type ClockCommand =
  | { action: 'pause' }
  | { action: 'resume' }
  | { action: 'step'; ms?: number }
  | { action: 'speed'; speed: Speed };

export class ClockCommandError extends Error {}

/** Longest single step the page may ask for: a day of virtual time. */
const MAX_STEP_MS = 24 * 3_600_000;
const MAX_SPEED = 1_000_000;

/** Strict parsing: anything unexpected is a 400, never a half-applied command. */
export function parseClockCommand(body: string): ClockCommand {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new ClockCommandError('body is not JSON');
  }
  if (typeof value !== 'object' || value === null) throw new ClockCommandError('expected a JSON object');
  const o = value as Record<string, unknown>;
  switch (o.action) {
    case 'pause':
    case 'resume':
      return { action: o.action };
    case 'step': {
      if (o.ms === undefined) return { action: 'step' };
      if (typeof o.ms !== 'number' || !Number.isFinite(o.ms) || o.ms <= 0 || o.ms > MAX_STEP_MS) {
        throw new ClockCommandError(`step ms must be a number in (0, ${MAX_STEP_MS}]`);
      }
      return { action: 'step', ms: o.ms };
    }
    case 'speed': {
      if (o.speed === 'max') return { action: 'speed', speed: 'max' };
      if (typeof o.speed !== 'number' || !Number.isFinite(o.speed) || o.speed <= 0 || o.speed > MAX_SPEED) {
        throw new ClockCommandError(`speed must be "max" or a number in (0, ${MAX_SPEED}]`);
      }
      return { action: 'speed', speed: o.speed };
    }
    default:
      throw new ClockCommandError('action must be one of pause, resume, step, speed');
  }
}

export function applyClockCommand(clock: ClockControls, command: ClockCommand): void {
  switch (command.action) {
    case 'pause':
      return clock.pause();
    case 'resume':
      return clock.resume();
    case 'step':
      return clock.step(command.ms);
    case 'speed':
      return clock.setSpeed(command.speed);
  }
}
