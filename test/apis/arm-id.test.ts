import { describe, expect, it } from 'vitest';
import { ArmIdError, parseArmResourceId, parseImageId, parseSubnetId } from '../../src/apis/arm-id.js';
import { SUB } from '../k8s/fixtures.js';
import { subnet } from './nodeclass-spec.js';

describe('ARM ID parsing', () => {
  it('parses a subnet ID into its parts, case-insensitively', () => {
    const id = parseSubnetId(subnet.replace('resourceGroups', 'resourcegroups').replace('Microsoft.Network', 'microsoft.network'));
    expect(id).toMatchObject({ subscriptionId: SUB, resourceGroup: 'rg-net', provider: 'microsoft.network', name: 'nodes' });
    expect(id.segments).toEqual([{ type: 'virtualNetworks', name: 'vnet' }, { type: 'subnets', name: 'nodes' }]);
  });

  it.each([
    ['nodes', /must start with "\/"/],
    ['/subscriptions/not-a-guid/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/s', /not a GUID/],
    [`/subscriptions/${SUB}/providers/Microsoft.Network/virtualNetworks/v/subnets/s`, /resourceGroups/],
    [`/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v`, /not a Microsoft.Network\/virtualNetworks\/subnets/],
    [`/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets`, /type\/name pairs/],
    [`/subscriptions/${SUB}/resourceGroups/rg//providers/Microsoft.Network/virtualNetworks/v/subnets/s`, /empty path segment/],
  ])('rejects subnet %s', (id, msg) => {
    expect(() => parseSubnetId(id)).toThrow(ArmIdError);
    expect(() => parseSubnetId(id)).toThrow(msg);
  });

  it('classifies image IDs', () => {
    expect(parseImageId(`/subscriptions/${SUB}/resourceGroups/i/providers/Microsoft.Compute/images/x`).kind).toBe('managedImage');
    expect(parseImageId(`/subscriptions/${SUB}/resourceGroups/i/providers/Microsoft.Compute/galleries/g/images/x`).kind).toBe('galleryImage');
    expect(parseImageId(`/subscriptions/${SUB}/resourceGroups/i/providers/Microsoft.Compute/galleries/g/images/x/versions/1.2.3`).kind).toBe('galleryImageVersion');
    expect(parseImageId('/CommunityGalleries/nv/Images/h200/Versions/latest').kind).toBe('communityGalleryImage');
    expect(() => parseImageId(subnet)).toThrow(/not a managed image/);
    expect(parseArmResourceId(subnet).resourceType).toBe('Microsoft.Network/virtualNetworks/subnets');
  });
});
