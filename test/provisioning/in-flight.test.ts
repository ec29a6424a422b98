import { describe, expect, it } from 'vitest';
import type { ClusterPort, NodeClaim } from '../../src/ports/cluster.js';
import { IN_FLIGHT_TTL_MS, InFlightNodeClaims } from '../../src/provisioning/in-flight.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { T0, makeNodeClaim } from './fixtures.js';

/** A port whose cache has applied events through `seen` (undefined: it cannot say). */
function portSeenThrough(seen: { rv: string | undefined }): ClusterPort {
  return { seenThrough: () => seen.rv } as unknown as ClusterPort;
}

function claim(name: string, resourceVersion?: string): NodeClaim {
  const c = makeNodeClaim(name, { nodePool: 'default' });
  return resourceVersion === undefined ? c : { ...c, metadata: { ...c.metadata, resourceVersion } };
}

describe('InFlightNodeClaims', () => {
  it('adds a created NodeClaim the list does not show yet, and stops once the list shows it', () => {
    const clock = new VirtualClock(T0);
    const inFlight = new InFlightNodeClaims(portSeenThrough({ rv: undefined }), clock);
    const created = claim('default-abcde', '7');
    inFlight.add(created);
    expect(inFlight.withListed([]).map((c) => c.metadata.name)).toEqual(['default-abcde']);
    const listed = [claim('default-abcde', '7')];
    expect(inFlight.withListed(listed)).toBe(listed);
    // Shown once: gone from memory, so a later list without it (deleted) does not bring it back.
    expect(inFlight.withListed([])).toEqual([]);
  });

  it('stops counting one the cache got past without holding it: deleted before the informer saw it', () => {
    const seen = { rv: '6' };
    const inFlight = new InFlightNodeClaims(portSeenThrough(seen), new VirtualClock(T0));
    inFlight.add(claim('default-abcde', '7'));
    expect(inFlight.withListed([])).toHaveLength(1);
    seen.rv = '9';
    expect(inFlight.withListed([])).toEqual([]);
  });

  it('without a comparable resourceVersion, counts one for the TTL only', async () => {
    const clock = new VirtualClock(T0);
    const inFlight = new InFlightNodeClaims(portSeenThrough({ rv: 'not-a-revision' }), clock);
    inFlight.add(claim('default-abcde', '7'));
    await clock.runUntil(T0 + IN_FLIGHT_TTL_MS);
    expect(inFlight.withListed([])).toHaveLength(1);
    await clock.runUntil(T0 + IN_FLIGHT_TTL_MS + 1);
    expect(inFlight.withListed([])).toEqual([]);
  });
});
