import type { ResourceRef } from '../ports/azure.js';

/**
 * Node providerIDs: `azure-flex:///subscriptions/<sub>/resourceGroups/<rg>/providers/
 * Microsoft.Compute/virtualMachines/<name>`, the full ARM id behind an empty host (three
 * slashes, as in the upstream PR). Parsing is strict so a providerID from another cloud
 * provider, or one that smuggles something into the host position, can never be mistaken
 * for one of our VMs (and so never deleted by us). Keyword casing is the canonical ARM
 * casing, which keeps format(parse(x)) === x.
 */
export const PROVIDER_ID_SCHEME = 'azure-flex';
const PREFIX = `${PROVIDER_ID_SCHEME}://`;

const SUBSCRIPTION = /^[A-Za-z0-9-]{1,64}$/;
/** Azure: 1-90 of letters, digits, '_', '-', '.', '(', ')', not ending in '.'. */
const RESOURCE_GROUP = /^[A-Za-z0-9_.()-]{0,89}[A-Za-z0-9_()-]$/;
/** Linux VM names: 1-64 of letters, digits, '-', '_', '.' (azflex's own are narrower). */
const VM_NAME = /^[A-Za-z0-9._-]{1,64}$/;

export class ProviderIdError extends Error {
  override readonly name = 'ProviderIdError';
}

export function formatProviderId(ref: ResourceRef): string {
  validateRef(ref);
  return `${PREFIX}${vmArmId(ref)}`;
}

/** ARM id → providerID; an empty id (VM not created yet) stays empty rather than becoming "azure-flex:///". */
export function armIdToProviderId(armId: string): string {
  if (armId === '') return '';
  return formatProviderId(parseVmArmId(armId));
}

export function providerIdToArmId(providerId: string): string {
  return vmArmId(parseProviderId(providerId));
}

export function parseProviderId(providerId: string): ResourceRef {
  if (!providerId.startsWith(PREFIX)) throw new ProviderIdError(`not an ${PROVIDER_ID_SCHEME} providerID: ${JSON.stringify(providerId)}`);
  const rest = providerId.slice(PREFIX.length);
  // The host position (between "//" and the next "/") must be empty.
  if (!rest.startsWith('/')) throw new ProviderIdError(`providerID has a host part: ${JSON.stringify(providerId)}`);
  return parseVmArmId(rest);
}

export function isProviderId(value: string): boolean {
  try {
    parseProviderId(value);
    return true;
  } catch {
    return false;
  }
}

/** `/subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachines/<name>`, exactly. */
export function parseVmArmId(armId: string): ResourceRef {
  const parts = armId.split('/');
  const [empty, subs, subscriptionId, rgs, resourceGroup, providers, namespace, type, name] = parts;
  const ok =
    parts.length === 9 &&
    empty === '' &&
    subs === 'subscriptions' &&
    rgs === 'resourceGroups' &&
    providers === 'providers' &&
    namespace === 'Microsoft.Compute' &&
    type === 'virtualMachines' &&
    subscriptionId !== undefined &&
    resourceGroup !== undefined &&
    name !== undefined;
  if (!ok) throw new ProviderIdError(`not a Microsoft.Compute/virtualMachines ARM id: ${JSON.stringify(armId)}`);
  const ref = { subscriptionId, resourceGroup, name };
  validateRef(ref);
  return ref;
}

function vmArmId(ref: ResourceRef): string {
  return `/subscriptions/${ref.subscriptionId}/resourceGroups/${ref.resourceGroup}/providers/Microsoft.Compute/virtualMachines/${ref.name}`;
}

function validateRef(ref: ResourceRef): void {
  if (!SUBSCRIPTION.test(ref.subscriptionId)) throw new ProviderIdError(`invalid subscription id ${JSON.stringify(ref.subscriptionId)}`);
  if (!RESOURCE_GROUP.test(ref.resourceGroup)) throw new ProviderIdError(`invalid resource group ${JSON.stringify(ref.resourceGroup)}`);
  if (!VM_NAME.test(ref.name)) throw new ProviderIdError(`invalid VM name ${JSON.stringify(ref.name)}`);
}
