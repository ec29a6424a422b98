import type { Clock } from '../ports/clock.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LevelLogger = Record<LogLevel, (fields: Record<string, unknown>, message: string) => void>;

/** Keys remembered at most; a flood of distinct keys only costs this much memory. */
const MAX_KEYS = 1_000;

/**
 * Repeated messages at most once per window per key (e.g. one controller's error): the
 * first goes out at once, the repeats are counted and reported with the next one that is
 * let through (`suppressed: n`), so nothing is hidden and a stuck loop cannot flood the log.
 */
export class RateLimitedLog {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly log: LevelLogger,
    private readonly clock: Clock,
    private readonly windowMs = 60_000,
  ) {}

  write(level: LogLevel, key: string, fields: Record<string, unknown>, message: string): void {
    const now = this.clock.now();
    const seen = this.last.get(key);
    if (seen && now - seen.at < this.windowMs) {
      seen.suppressed++;
      return;
    }
    if (!seen && this.last.size >= MAX_KEYS) this.last.clear();
    this.last.set(key, { at: now, suppressed: 0 });
    this.log[level](seen && seen.suppressed > 0 ? { ...fields, suppressed: seen.suppressed } : fields, message);
  }
}
