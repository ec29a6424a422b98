/**
 * ARM resource ID parsing (the subset of azcore's arm.ParseResourceID we need). The upstream
 * PR first checked only a "/subscriptions/" prefix and let malformed IDs through to VM create;
 * parsing the whole shape catches them while the NodeClass is being validated instead.
 */

export interface ArmResourceId {
  subscriptionId: string;
  resourceGroup: string;
  /** Resource provider namespace, e.g. Microsoft.Network. */
  provider: string;
  /** Type/name pairs after the provider: virtualNetworks/vnet, subnets/default. */
  segments: Array<{ type: string; name: string }>;
  /** Full type, e.g. Microsoft.Network/virtualNetworks/subnets. */
  resourceType: string;
  name: string;
}

export class ArmIdError extends Error {
  override readonly name = 'ArmIdError';
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RG_NAME = /^[-\w._()]{0,89}[-\w_()]$/;

export function isGuid(s: string): boolean {
  return GUID.test(s);
}

export function isResourceGroupName(s: string): boolean {
  return RG_NAME.test(s);
}

/** Parses /subscriptions/{sub}/resourceGroups/{rg}/providers/{ns}/{type}/{name}[/{type}/{name}]... */
export function parseArmResourceId(id: string): ArmResourceId {
  if (!id.startsWith('/')) throw new ArmIdError(`"${id}" is not an ARM resource ID: it must start with "/"`);
  const parts = id.slice(1).split('/');
  if (parts.some((p) => p === '')) throw new ArmIdError(`"${id}" has an empty path segment`);
  const [subsKw, sub, rgKw, rg, provKw, provider, ...rest] = parts;
  if (subsKw?.toLowerCase() !== 'subscriptions' || !sub) throw new ArmIdError(`"${id}" must start with /subscriptions/<id>`);
  if (!isGuid(sub)) throw new ArmIdError(`subscription "${sub}" in "${id}" is not a GUID`);
  if (rgKw?.toLowerCase() !== 'resourcegroups' || !rg) throw new ArmIdError(`"${id}" lacks /resourceGroups/<name>`);
  if (!isResourceGroupName(rg)) throw new ArmIdError(`resource group "${rg}" in "${id}" is not a valid name`);
  if (provKw?.toLowerCase() !== 'providers' || !provider) throw new ArmIdError(`"${id}" lacks /providers/<namespace>`);
  if (rest.length === 0 || rest.length % 2 !== 0) throw new ArmIdError(`"${id}" must end in type/name pairs after the provider`);
  const segments: Array<{ type: string; name: string }> = [];
  for (let i = 0; i < rest.length; i += 2) segments.push({ type: rest[i] as string, name: rest[i + 1] as string });
  const last = segments[segments.length - 1] as { type: string; name: string };
  return {
    subscriptionId: sub,
    resourceGroup: rg,
    provider,
    segments,
    resourceType: [provider, ...segments.map((s) => s.type)].join('/'),
    name: last.name,
  };
}

function typeIs(id: ArmResourceId, ...types: string[]): boolean {
  return id.resourceType.toLowerCase() === types.join('/').toLowerCase();
}

/** A subnet: Microsoft.Network/virtualNetworks/{vnet}/subnets/{subnet}. */
export function parseSubnetId(id: string): ArmResourceId {
  const parsed = parseArmResourceId(id);
  if (!typeIs(parsed, 'Microsoft.Network', 'virtualNetworks', 'subnets'))
    throw new ArmIdError(`"${id}" is a ${parsed.resourceType}, not a Microsoft.Network/virtualNetworks/subnets`);
  return parsed;
}

export type ImageIdKind = 'managedImage' | 'galleryImage' | 'galleryImageVersion' | 'communityGalleryImage';

/** Managed image, Azure Compute Gallery image (version), or community gallery image (version). */
export function parseImageId(id: string): { kind: ImageIdKind } {
  const community = /^\/CommunityGalleries\/[^/]+\/Images\/[^/]+(\/Versions\/[^/]+)?$/i;
  if (community.test(id)) return { kind: 'communityGalleryImage' };
  const parsed = parseArmResourceId(id);
  if (typeIs(parsed, 'Microsoft.Compute', 'images')) return { kind: 'managedImage' };
  if (typeIs(parsed, 'Microsoft.Compute', 'galleries', 'images')) return { kind: 'galleryImage' };
  if (typeIs(parsed, 'Microsoft.Compute', 'galleries', 'images', 'versions')) return { kind: 'galleryImageVersion' };
  throw new ArmIdError(`"${id}" is a ${parsed.resourceType}, not a managed image, gallery image or community gallery image`);
}

/** A capacity reservation group: Microsoft.Compute/capacityReservationGroups/{name}. */
export function parseCapacityReservationGroupId(id: string): ArmResourceId {
  const parsed = parseArmResourceId(id);
  if (!typeIs(parsed, 'Microsoft.Compute', 'capacityReservationGroups'))
    throw new ArmIdError(`"${id}" is a ${parsed.resourceType}, not a Microsoft.Compute/capacityReservationGroups`);
  return parsed;
}
