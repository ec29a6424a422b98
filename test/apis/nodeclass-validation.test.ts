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
  ])('rejects %s', (_what, over, reason) => {
    const r = validateNodeClassSpec(spec(over));
    expect(r.ok).toBe(false);
    expect(r.reason).toBe(reason);
    expect(isNodeClassUsable(nodeClass(spec(over)))).toBe(false);
  });

  it('never lets a deleting class be used', () => {
    expect(isNodeClassUsable(nodeClass(spec()))).toBe(true);
    expect(isNodeClassUsable(nodeClass(spec(), { deletionTimestamp: '2026-01-01T00:00:00Z' }))).toBe(false);
  });
});
