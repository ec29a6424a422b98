import type { Clock, Random } from '../ports/clock.js';
import { failureOf } from './failure.js';

/** What a machine needs from the outside besides its effects: the injected clock and random source. */
export interface MachineEnv {
  clock: Clock;
  random: Random;
}

/** ARM refuses a NIC delete for this long after any VM create that referenced the NIC. */
export const NIC_RESERVATION_MS = 180_000;
/** Margin for clock skew between us and ARM, so the first delete after the wait succeeds. */
export const RESERVATION_MARGIN_MS = 1_000;
/**
 * When ARM still says "reserved", ask again this soon. ARM's real end may differ from the
 * rule (jitter, a later start), so retrying is what bounds time-to-reap: the next DELETE goes this
 * long (+ RESERVATION_MARGIN_MS) after the refused one was sent, and NIC deletes are
 * themselves async operations of a few seconds.
 */
export const RESERVED_RETRY_MS = 1_000;
/**
 * A NIC whose owner let go while a VM still holds it is checked by GET this often while its
 * reservation ended less than RESERVATION_FRESH_MS ago: then the VM is most likely a Failed
 * one being deleted, and the NIC is ours to delete right after (time-to-reap).
 */
export const ATTACHMENT_PROBE_MS = 5_000;
export const RESERVATION_FRESH_MS = 5 * 60_000;
/**
 * Past that (a consolidated node's VM, created long ago, deleted by ARM for minutes and
 * taking its NIC with it), the probe backs off (backoffMs from ATTACHMENT_PROBE_MS up to
 * this): a probe every 5 s spent most of azflex's reads while a fleet scaled down.
 */
export const ATTACHMENT_PROBE_MAX_MS = 60_000;

/** Exponential backoff with full jitter from the injected random source. */
export function backoffMs(env: MachineEnv, attempt: number, baseMs = 1_000, capMs = 60_000): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 16));
  return Math.round(ceiling / 2 + env.random.next() * (ceiling / 2));
}

/** How long a failed call waits before it is tried again: ARM's Retry-After when it throttled, else the backoff. */
export function retryDelayMs(env: MachineEnv, event: { error?: unknown }, attempt: number): number {
  const action = failureOf(event);
  return action.kind === 'throttled' ? action.retryAfterSeconds * 1000 : backoffMs(env, attempt);
}

/** When ARM lets go of a NIC that a VM PUT sent at `attemptAt` referenced: the one place the deadline is computed. */
export function reservationEnd(attemptAt: number): number {
  return attemptAt + NIC_RESERVATION_MS;
}

/**
 * The one retry pattern: the state a failed call waits in, until `delay` (context.retryAt,
 * set by the failure's schedule action, unless named otherwise), before `target` calls again.
 * A wait is a state of its own because the event log records it; diagrams fold it into the
 * call's edge (meta.retryOf).
 */
export function retryWait<T extends string, D extends string = 'untilRetry'>(target: T, delay?: D) {
  return { after: { [delay ?? 'untilRetry']: target } as Record<D, T>, meta: { retryOf: target } };
}
