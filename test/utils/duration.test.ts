import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/utils/duration.js';

describe('durations', () => {
  it('parses Go durations and Never', () => {
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('720h')).toBe(720 * 3_600_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration('Never')).toBeUndefined();
    expect(() => parseDuration('5 minutes')).toThrow();
  });
});
