/**
 * Time and randomness are ports so that the simulator can drive virtual ones and the
 * same seed yields a byte-identical event log. The real implementations live in
 * src/platform/real-clock.ts only.
 */
export type TimerId = number;

export interface Clock {
  /** Milliseconds since the Unix epoch (virtual in simulation). */
  now(): number;
  setTimer(delayMs: number, fn: () => void): TimerId;
  clearTimer(id: TimerId): void;
}

export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
}

export function randomInt(random: Random, maxExclusive: number): number {
  return Math.floor(random.next() * maxExclusive);
}

const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** Karpenter-style 5 character NodeClaim suffix (no vowels, so no words). */
export function randomSuffix(random: Random, length = 5): string {
  let out = '';
  for (let i = 0; i < length; i++) out += SUFFIX_ALPHABET[randomInt(random, SUFFIX_ALPHABET.length)];
  return out;
}

/** Adapter so XState's `after` delays run on our clock (createActor(m, { clock })). */
export function xstateClock(clock: Clock): { setTimeout(fn: () => void, ms: number): TimerId; clearTimeout(id: TimerId): void } {
  return {
    setTimeout: (fn, ms) => clock.setTimer(ms, fn),
    clearTimeout: (id) => clock.clearTimer(id),
  };
}
