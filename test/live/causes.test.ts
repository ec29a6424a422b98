import { describe, expect, it } from 'vitest';
import { inferCause } from '../../src/live/causes.js';
import { machineGraph } from '../../src/viz/machines.js';

const nic = machineGraph('nic');
const nodeclaim = machineGraph('nodeclaim');

describe('inferCause', () => {
  it('names the delayed transition out of the reservation, with its 180 s', () => {
    expect(inferCause(nic, 'reserved-180s', 'probing-before-delete')).toBe('after 180 s (untilReservationEnds)');
  });

  it('picks the done/error edge of the effect that just finished', () => {
    expect(inferCause(nic, 'deleting', 'reaped', { effect: 'deleteNic', detail: 'ok' })).toBe('deleteNic ok (done: deleteNic)');
    expect(inferCause(nic, 'deleting', 'reserved-180s', { effect: 'deleteNic', detail: 'NicReservedForAnotherVm' })).toBe(
      'deleteNic failed: NicReservedForAnotherVm (error: deleteNic [isReserved] / rememberError, extendReservation)',
    );
  });

  it('follows eventless hops and prefers the shortest story', () => {
    // nic-created → vm-failed → (always) reserved-180s; the detour through `observing` is longer.
    const cause = inferCause(nic, 'nic-created', 'reserved-180s');
    expect(cause).toContain('VM_FAILED');
    expect(cause).not.toContain('observedAbsent');
  });

  it('finds transitions defined on a parent state and entries into nested states', () => {
    // Two edges lead there (NIC_READY, or an observation that shows the NIC); both are named.
    expect(inferCause(nodeclaim, 'launching.creating-nic', 'launching.recording-attempt')).toMatch(/^NIC_READY \| OBSERVED \[observedNicPresent\]/);
    expect(inferCause(nodeclaim, undefined, 'pending')).toMatch(/^started/);
  });
});
