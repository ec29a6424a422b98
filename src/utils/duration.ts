/**
 * Go-style durations as Karpenter's API takes them ("30s", "1h30m", "720h", "Never").
 * Returns milliseconds; `undefined` means "never" (the feature is off), so a typo is not
 * silently read as zero — callers get a DurationError instead.
 */
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, '\u00b5s': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
// \u00b5 (µ) escaped: the image's bundle stays ASCII, which V8 holds at one byte a character.
const PART = /(\d+(?:\.\d+)?)(ns|us|\u00b5s|ms|s|m|h)/y;

export class DurationError extends Error {
  override readonly name = 'DurationError';
}

export function parseDuration(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '' || raw === 'Never') return undefined;
  if (raw === '0') return 0;
  let total = 0;
  PART.lastIndex = 0;
  let consumed = 0;
  for (let match = PART.exec(raw); match; match = PART.exec(raw)) {
    total += Number(match[1]) * UNIT_MS[match[2]!]!;
    consumed = PART.lastIndex;
  }
  if (consumed !== raw.length || consumed === 0) throw new DurationError(`invalid duration "${raw}"`);
  return Math.round(total);
}

/** Like parseDuration, but a malformed value counts as "never" (the safe reading for disruption). */
export function durationOrNever(raw: string | undefined): number | undefined {
  try {
    return parseDuration(raw);
  } catch {
    return undefined;
  }
}
