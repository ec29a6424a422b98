import { describe, expect, it } from 'vitest';
import { NIC_ROUTES, NODECLAIM_ROUTES, routeFrom, type NicActor, type NodeClaimActor, type RouteTargets } from '../../src/lifecycle/routing.js';

/** Targets that record what each actor was sent. */
function targets(): { to: RouteTargets; sent: string[] } {
  const sent: string[] = [];
  const actor = (name: string) => ({ send: (e: { type: string }) => sent.push(`${name} <- ${JSON.stringify(e)}`) });
  const to: RouteTargets = {
    nic: (name) => (name === 'nic-a' ? (actor(name) as unknown as NicActor) : undefined),
    nicOrSpawn: (name) => actor(`${name} (spawned if new)`) as unknown as NicActor,
    ownerOf: (nic) => (nic === 'nic-a' ? (actor('claim-a') as unknown as NodeClaimActor) : undefined),
  };
  return { to, sent };
}

describe('the routing table between NodeClaim and NIC actors', () => {
  it('delivers each NodeClaim event to its NIC', () => {
    const { to, sent } = targets();
    NODECLAIM_ROUTES['nic.requested']({ type: 'nic.requested', nodeClaim: 'claim-a', nic: 'nic-a' }, to);
    NODECLAIM_ROUTES['vm.launched']({ type: 'vm.launched', nodeClaim: 'claim-a', nic: 'nic-a' }, to);
    NODECLAIM_ROUTES['vm.failed']({ type: 'vm.failed', nodeClaim: 'claim-a', nic: 'nic-a', reservedUntil: 180_000, code: 'AllocationFailed' }, to);
    expect(sent).toEqual([
      'nic-a (spawned if new) <- {"type":"CREATE"}',
      'nic-a <- {"type":"VM_ATTACHED"}',
      'nic-a <- {"type":"VM_FAILED","reservedUntil":180000}',
    ]);
  });

  it('delivers each NIC event to the NodeClaim that owns the NIC, and nowhere when none does', () => {
    const { to, sent } = targets();
    NIC_ROUTES['nic.ready']({ type: 'nic.ready', name: 'nic-a' }, to);
    NIC_ROUTES['nic.createFailed']({ type: 'nic.createFailed', name: 'nic-a', code: 'SubnetIsFull', kind: 'subnetFull' }, to);
    NIC_ROUTES['nic.reaped']({ type: 'nic.reaped', name: 'nic-a' }, to);
    NIC_ROUTES['nic.reaped']({ type: 'nic.reaped', name: 'orphan' }, to);
    expect(sent).toEqual([
      'claim-a <- {"type":"NIC_READY"}',
      'claim-a <- {"type":"NIC_FAILED","code":"SubnetIsFull","kind":"subnetFull"}',
      'claim-a <- {"type":"NIC_REAPED"}',
    ]);
  });

  it('listens on an actor for every event of its table', () => {
    const types: string[] = [];
    routeFrom({ on: (type: string) => types.push(type) }, NIC_ROUTES, targets().to);
    expect(types.sort()).toEqual(['nic.createFailed', 'nic.ready', 'nic.reaped']);
  });
});
