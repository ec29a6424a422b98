import { describe, expect, it } from 'vitest';
import { ReservationReader, reservationLabelValue } from '../../src/provisioning/reservations.js';
import { withinReservations } from '../../src/provisioning/plan-limits.js';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import { AzureError, type CapacityReservationGroup } from '../../src/ports/azure.js';
import type { AzureFlexNodeClass } from '../../src/ports/cluster.js';
import type { NodeClaimPlan } from '../../src/provisioning/scheduling/types.js';
import { T0, iso, makeNodeClaim, makeNodeClass } from './fixtures.js';

const H200 = STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_ND96isr_H200_v5')!;
const SUB = '00000000-0000-0000-0000-000000000000';
const GROUP = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/capacityReservationGroups/crg`;

function reservedClass(location = 'eastus2'): AzureFlexNodeClass {
  const nc = makeNodeClass('eastus2', location);
  return { ...nc, spec: { ...nc.spec, capacityReservationGroupIDs: [GROUP] } };
}

/** A clock the test moves, and a group port that counts its reads (or fails). */
function setup(capacity: number, allocated: number, opts: { zone?: string } = {}) {
  let now = T0;
  let fail = false;
  const reads: number[] = [];
  const group = (): CapacityReservationGroup => ({
    id: GROUP, name: 'crg', location: 'eastus2',
    reservations: [{ id: `${GROUP}/capacityReservations/h200`, name: 'h200', vmSize: H200.name, ...(opts.zone ? { zone: opts.zone } : {}), capacity, allocatedVmIds: Array.from({ length: allocated }, (_, i) => `vm-${i}`) }],
  });
  const reader = new ReservationReader({
    clock: { now: () => now, setTimer: () => 0, clearTimer: () => {} },
    arm: {
      getCapacityReservationGroup: async () => {
        reads.push(now);
        if (fail) throw new AzureError('Unknown', 403, 'AuthorizationFailed');
        return group();
      },
    },
  });
  return { reader, reads, advance: (ms: number) => (now += ms), failReads: () => (fail = true) };
}

const reservedClaim = (name: string, annotations: Record<string, string> = {}) =>
  makeNodeClaim(name, { nodePool: 'gpu', labels: { 'karpenter.sh/capacity-type': 'reserved', 'karpenter.azure.com/capacity-reservation-id': 'crg.h200' }, annotations });

function plan(capacityTypes: string[], zones?: string[]): NodeClaimPlan {
  return {
    nodePoolName: 'gpu', nodeClassName: 'eastus2', instanceType: H200, instanceTypeOptions: [H200], requests: {}, podKeys: ['default/p'],
    requirements: [
      { key: 'node.kubernetes.io/instance-type', operator: 'In', values: [H200.name] },
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: capacityTypes },
      ...(zones ? [{ key: 'topology.kubernetes.io/zone', operator: 'In' as const, values: zones }] : []),
    ],
  };
}

describe('ReservationReader', () => {
  it('reads each group at start and again after the interval; free is capacity less allocated less reserved NodeClaims the reading cannot show', async () => {
    const r = setup(3, 1);
    const classes = [reservedClass()];
    await r.reader.refresh(classes);
    await r.reader.refresh(classes);
    expect(r.reads).toEqual([T0]);
    // One not sent yet, one sent after the reading: both in flight. One sent before it is in `allocated`.
    const claims = [reservedClaim('a'), reservedClaim('b', { 'flex.aks.azure.com/vm-attempt-at': iso(T0 + 1) }), reservedClaim('c', { 'flex.aks.azure.com/vm-attempt-at': iso(T0 - 1) })];
    expect(r.reader.ledger(classes, claims).fingerprint()).toBe('crg.h200=0');
    expect(r.reader.ledger(classes, []).fingerprint()).toBe('crg.h200=2');
    r.advance(5 * 60_000);
    await r.reader.refresh(classes);
    expect(r.reads).toEqual([T0, T0 + 5 * 60_000]);
  });

  it('fails open: no reading, or a stale one, offers nothing reserved; a group in another location neither', async () => {
    const r = setup(2, 0);
    r.failReads();
    await r.reader.refresh([reservedClass()]);
    expect(r.reader.ledger([reservedClass()], []).offers('eastus2', H200.name)).toBe(false);
    const ok = setup(2, 0);
    await ok.reader.refresh([reservedClass()]);
    expect(ok.reader.ledger([reservedClass()], []).offers('eastus2', H200.name)).toBe(true);
    expect(ok.reader.ledger([reservedClass('westus3')], []).offers('eastus2', H200.name)).toBe(false);
    ok.advance(16 * 60_000);
    expect(ok.reader.ledger([reservedClass()], []).offers('eastus2', H200.name)).toBe(false);
  });
});

describe('withinReservations', () => {
  it('pins plans to the reservation while it has room, then falls back to the NodePool\'s other capacity types', async () => {
    const r = setup(1, 0);
    await r.reader.refresh([reservedClass()]);
    const ledger = r.reader.ledger([reservedClass()], []);
    const first = withinReservations(plan(['reserved', 'on-demand']), reservedClass(), ledger)!;
    expect(first.capacityReservationGroupId).toBe(GROUP);
    expect(first.requirements).toContainEqual({ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['reserved'] });
    expect(first.requirements).toContainEqual({ key: 'karpenter.azure.com/capacity-reservation-id', operator: 'In', values: ['crg.h200'] });
    // A regional reservation: the VM names no zone.
    expect(first.requirements).toContainEqual({ key: 'karpenter.azure.com/placement-scope', operator: 'In', values: ['regional'] });
    const second = withinReservations(plan(['reserved', 'on-demand']), reservedClass(), ledger)!;
    expect(second.capacityReservationGroupId).toBeUndefined();
    expect(second.requirements).toContainEqual({ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] });
    expect(withinReservations(plan(['reserved']), reservedClass(), ledger)).toBeUndefined();
    expect(withinReservations(plan(['on-demand']), reservedClass(), ledger)).toEqual(plan(['on-demand']));
  });

  it('takes a zonal reservation only for a plan whose zones include it, and pins that zone', async () => {
    const r = setup(2, 0, { zone: '2' });
    await r.reader.refresh([reservedClass()]);
    const ledger = r.reader.ledger([reservedClass()], []);
    expect(withinReservations(plan(['reserved'], ['eastus2-1']), reservedClass(), ledger)).toBeUndefined();
    const pinned = withinReservations(plan(['reserved'], ['eastus2-1', 'eastus2-2']), reservedClass(), ledger)!;
    expect(pinned.requirements).toContainEqual({ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['eastus2-2'] });
  });
});

describe('reservationLabelValue', () => {
  it('is group.reservation where that is a label value, else a hash of the id', () => {
    expect(reservationLabelValue('CRG', { id: 'x', name: 'H200' })).toBe('crg.h200');
    expect(reservationLabelValue('g'.repeat(70), { id: 'x', name: 'r' })).toMatch(/^crg-[0-9a-f]{8}$/);
  });
});
