import { describe, expect, it } from 'vitest';
import { cronMatches, parseCron } from '../../src/utils/cron.js';

const at = (s: string): number => Date.parse(s);

describe('cron', () => {
  it('parses cron fields, names, ranges, steps and macros', () => {
    const weekdays = parseCron('0 9 * * mon-fri');
    expect(cronMatches(weekdays, at('2026-01-05T09:00:00Z'))).toBe(true); // Monday
    expect(cronMatches(weekdays, at('2026-01-04T09:00:00Z'))).toBe(false); // Sunday
    expect(cronMatches(parseCron('*/15 * * * *'), at('2026-01-05T10:45:00Z'))).toBe(true);
    expect(cronMatches(parseCron('@daily'), at('2026-01-05T00:00:00Z'))).toBe(true);
    expect(() => parseCron('0 25 * * *')).toThrow();
  });
});
