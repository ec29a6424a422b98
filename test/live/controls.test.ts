import { describe, expect, it } from 'vitest';
import { ClockCommandError, parseClockCommand } from '../../src/live/controls.js';

describe('parseClockCommand', () => {
  it('accepts the four commands and rejects anything else', () => {
    expect(parseClockCommand('{"action":"step","ms":60000}')).toEqual({ action: 'step', ms: 60_000 });
    expect(parseClockCommand('{"action":"speed","speed":"max"}')).toEqual({ action: 'speed', speed: 'max' });
    for (const bad of ['nope', '{"action":"stop"}', '{"action":"speed","speed":-1}', '{"action":"step","ms":"1"}', '[]']) {
      expect(() => parseClockCommand(bad), bad).toThrow(ClockCommandError);
    }
  });
});
