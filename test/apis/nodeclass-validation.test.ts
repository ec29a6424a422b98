import { describe, expect, it } from 'vitest';
import { validateNodeClassSpec } from '../../src/apis/nodeclass-validation.js';
import { isNodeClassUsable } from '../../src/controllers/nodeclass/status.js';
import type { AzureFlexNodeClassSpec } from '../../src/ports/cluster.js';
import { SUB } from '../k8s/fixtures.js';
import { nodeClass, spec, subnet } from './nodeclass-spec.js';

describe('NodeClass validation', () => {
  it('accepts a complete spec', () => {
    expect(validateNodeClassSpec(spec())).toEqual({ ok: true, reason: 'ValidationSucceeded', message: 'NodeClass spec is valid' });
  });

  it.each<[string, Partial<AzureFlexNodeClassSpec>, string]>([
    ['prefix-only subnet (the upstream bug)', { subnetID: '/subscriptions/garbage' }, 'InvalidSubnetID'],
    ['subnet in another subscription', { subnetID: subnet.replace(SUB, '99999999-1111-2222-3333-444455556666') }, 'SubnetSubscriptionMismatch'],
    ['both images', { imageID: `/subscriptions/${SUB}/resourceGroups/i/providers/Microsoft.Compute/images/x` }, 'InvalidImage'],
    ['no image', { imageReference: undefined }, 'InvalidImage'],
    ['bad imageID', { imageReference: undefined, imageID: '/subscriptions/x' }, 'InvalidImageID'],
    ['public IP requested (silently ignored upstream)', { allocateNodePublicIP: true }, 'UnsupportedPublicIP'],
    ['bad ssh key', { sshPublicKeys: ['nope'] }, 'InvalidSSHPublicKey'],
    ['bad tag key', { tags: { 'a/b': 'x' } }, 'InvalidTags'],
    ['tiny disk', { osDiskSizeGB: 10 }, 'InvalidOSDiskSize'],
    ['missing subscription', { subscriptionID: '' }, 'MissingSubscriptionID'],
    ['bad location', { location: 'East US 2' }, 'InvalidLocation'],
    ['spot max price of 0 (ARM: -1 or above zero)', { spotMaxPrice: 0 }, 'InvalidSpotMaxPrice'],
    ['spot max price below -1', { spotMaxPrice: -2 }, 'InvalidSpotMaxPrice'],
    ['spot max price with 6 decimals', { spotMaxPrice: 0.123456 }, 'InvalidSpotMaxPrice'],
    ['capacity reservation group id of another type', { capacityReservationGroupIDs: [subnet] }, 'InvalidCapacityReservationGroupID'],
    ['capacity reservation group in another subscription', { capacityReservationGroupIDs: ['/subscriptions/99999999-1111-2222-3333-444455556666/resourceGroups/r/providers/Microsoft.Compute/capacityReservationGroups/g'] }, 'InvalidCapacityReservationGroupID'],
  ])('rejects %s', (_what, over, reason) => {
    const r = validateNodeClassSpec(spec(over));
    expect(r.ok).toBe(false);
    expect(r.reason).toBe(reason);
    expect(isNodeClassUsable(nodeClass(spec(over)))).toBe(false);
  });

  it('accepts spot max prices ARM takes: -1 and positive prices with up to 5 decimals', () => {
    for (const spotMaxPrice of [-1, 0.01538, 12.5]) expect(validateNodeClassSpec(spec({ spotMaxPrice })).ok).toBe(true);
  });

  it('accepts capacity reservation groups of its subscription', () => {
    expect(validateNodeClassSpec(spec({ capacityReservationGroupIDs: [`/subscriptions/${SUB}/resourceGroups/r/providers/Microsoft.Compute/capacityReservationGroups/g`] })).ok).toBe(true);
  });

  it('never lets a deleting class be used', () => {
    expect(isNodeClassUsable(nodeClass(spec()))).toBe(true);
    expect(isNodeClassUsable(nodeClass(spec(), { deletionTimestamp: '2026-01-01T00:00:00Z' }))).toBe(false);
  });
});
