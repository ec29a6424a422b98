import { describe, expect, it } from 'vitest';
import { expiresAt, isExpired } from '../../src/disruption/expiration.js';
import { T0, makeNodeClaim } from '../provisioning/fixtures.js';

describe('expiration', () => {
  it('expires expireAfter after creation, never with Never', () => {
    const claim = makeNodeClaim('a', { nodePool: 'p', expireAfter: '1h' });
    expect(expiresAt(claim)).toBe(T0 + 3_600_000);
    expect(isExpired(claim, T0 + 3_599_999)).toBe(false);
    expect(isExpired(claim, T0 + 3_600_000)).toBe(true);
    expect(isExpired(makeNodeClaim('b', { nodePool: 'p', expireAfter: 'Never' }), T0 + 1e12)).toBe(false);
  });
});
