import type { Clock, Random } from '../ports/clock.js';

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
 * rule (jitter, a later start), so retrying is what bounds time-to-reap: at most this long
 * after the reservation really ends.
 */
export const RESERVED_RETRY_MS = 3_000;

/** Exponential backoff with full jitter from the injected random source. */
export function backoffMs(env: MachineEnv, attempt: number, baseMs = 1_000, capMs = 60_000): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 16));
  return Math.round(ceiling / 2 + env.random.next() * (ceiling / 2));
}
