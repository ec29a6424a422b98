import { describe, expect, it } from 'vitest';
import { isReschedulable, lastPodEvent, reschedulableSignature } from '../../src/disruption/emptiness.js';
import { makePod } from '../provisioning/fixtures.js';

describe('emptiness', () => {
  it('ignores DaemonSet, terminal and terminating pods', () => {
    expect(isReschedulable(makePod('ds', { nodeName: 'n', ownerKind: 'DaemonSet' }))).toBe(false);
    expect(isReschedulable(makePod('done', { nodeName: 'n', phase: 'Succeeded' }))).toBe(false);
    expect(isReschedulable(makePod('leaving', { nodeName: 'n', deletionTimestamp: '2026-01-01T00:00:00Z' }))).toBe(false);
    expect(isReschedulable(makePod('web', { nodeName: 'n' }))).toBe(true);
    expect(reschedulableSignature([makePod('done', { nodeName: 'n', phase: 'Failed' })])).toBe('');
  });

  it('keeps the last pod event as upstream writes lastPodEventTime (10 s dedupe)', () => {
    // First look (after a start or restart): what the NodeClaim says, nothing new.
    expect(lastPodEvent(false, undefined, undefined, 100_000)).toBeUndefined();
    expect(lastPodEvent(false, undefined, 50_000, 100_000)).toBe(50_000);
    // A change is an event now, unless the last one was less than 10 s ago.
    expect(lastPodEvent(true, 50_000, 50_000, 100_000)).toBe(100_000);
    expect(lastPodEvent(true, 95_000, 50_000, 100_000)).toBe(95_000);
    expect(lastPodEvent(true, undefined, undefined, 100_000)).toBe(100_000);
    // What this process saw and the stored value: the later one (a write not listed yet, or another writer's).
    expect(lastPodEvent(false, 100_000, 50_000, 200_000)).toBe(100_000);
    expect(lastPodEvent(false, 100_000, 150_000, 200_000)).toBe(150_000);
  });
});
