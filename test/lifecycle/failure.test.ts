import { describe, expect, it } from 'vitest';
import { ClassifiedError, classified, errorCode, failureOf } from '../../src/lifecycle/failure.js';
import { AzureError } from '../../src/ports/azure.js';

describe('a failure classified once', () => {
  it('keeps the original error, its code for the event log, and what to do next', () => {
    const answer = new AzureError('TooManyRequests', 429, 'throttled', 30);
    const once = classified(answer);
    expect(once).toBeInstanceOf(ClassifiedError);
    expect(once.original).toBe(answer);
    expect(errorCode(once)).toBe(errorCode(answer));
    expect(once.action).toEqual({ kind: 'throttled', retryAfterSeconds: 30, code: 'TooManyRequests' });
  });

  it('is not classified again on its way: classified() and failureOf() hand back what the effect decided', () => {
    const once = classified(new AzureError('NicReservedForAnotherVm', 400, 'reserved'));
    expect(classified(once)).toBe(once);
    expect(failureOf({ error: once })).toBe(once.action);
  });

  it('an error that is not ARM\'s is transient, logged by its message', () => {
    const once = classified(new Error('socket hang up'));
    expect(once.action.kind).toBe('transient');
    expect(errorCode(once)).toBe('socket hang up');
  });
});
