import type { ImageReference } from '../../ports/azure.js';
import type { EvictionPolicy, VmCreateRequest } from './model.js';
import { normalizeLocation } from './model.js';
import { HttpError } from './rest-errors.js';
import type { DeleteOption } from './types.js';

export type Path = Array<string | number>;

export function parseBody(body: string | undefined): unknown {
  if (body === undefined || body.trim() === '') throw new HttpError(400, 'InvalidRequestContent', 'The request content was invalid and could not be deserialized: the body is empty.');
  try {
    return JSON.parse(body) as unknown;
  } catch (err) {
    throw new HttpError(400, 'InvalidRequestContent', `The request content was invalid and could not be deserialized: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** ARM itself refuses a PUT of a tracked resource without a location, before any provider sees it. */
export function requiredLocation(doc: unknown): string {
  const v = at(doc, ['location']);
  if (typeof v !== 'string' || v.trim() === '') throw new HttpError(400, 'LocationRequired', 'The location property is required for this definition.');
  return v;
}

/** A resource keeps the location it was created in: a PUT naming another is InvalidResourceLocation. */
export function sameLocation(ref: { resourceGroup: string; name: string }, existing: string | undefined, requested: string): void {
  if (existing === undefined || existing === normalizeLocation(requested)) return;
  throw new HttpError(
    400,
    'InvalidResourceLocation',
    `The resource '${ref.name}' already exists in location '${existing}' in resource group '${ref.resourceGroup}'. A resource with the same name cannot be created in location '${normalizeLocation(requested)}'. Please select a new resource name.`,
  );
}

export function at(doc: unknown, path: Path): unknown {
  let cur: unknown = doc;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return cur;
}

export function missing(name: string): HttpError {
  return new HttpError(400, 'InvalidParameter', `Required parameter '${name}' is missing (null).`);
}

export function str(doc: unknown, path: Path, name: string): string {
  const v = at(doc, path);
  if (typeof v !== 'string' || v === '') throw missing(name);
  return v;
}

export function optStr(doc: unknown, path: Path): string | undefined {
  const v = at(doc, path);
  return typeof v === 'string' ? v : undefined;
}

/**
 * A PATCH the fake models changes tags only (and replaces them whole, as ARM does for the
 * `tags` property); any other property in it is a change the simulator does not model.
 */
export function patchedTags(doc: unknown, url: URL): Record<string, string> {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new HttpError(400, 'InvalidRequestContent', 'The request content was invalid and could not be deserialized: a JSON object is expected.');
  const empty = (v: unknown): boolean => v === null || v === undefined || (typeof v === 'object' && Object.keys(v).length === 0);
  const other = Object.entries(doc).filter(([k, v]) => k !== 'tags' && k !== 'id' && k !== 'name' && k !== 'type' && !empty(v)).map(([k]) => k);
  if (other.length > 0) throw new HttpError(501, 'NotImplemented', `The azflex simulator models a PATCH of tags only, not of '${other.join("', '")}' (${url.pathname}).`);
  if (!('tags' in doc)) throw new HttpError(501, 'NotImplemented', `The azflex simulator models a PATCH of tags only (${url.pathname}).`);
  return tagsOf(doc);
}

export function tagsOf(doc: unknown): Record<string, string> {
  const t = at(doc, ['tags']);
  const out: Record<string, string> = {};
  if (t && typeof t === 'object') for (const [k, v] of Object.entries(t)) if (typeof v === 'string') out[k] = v;
  return out;
}

export function deleteOption(v: unknown): DeleteOption | undefined {
  if (v === undefined) return undefined;
  if (v === 'Delete' || v === 'Detach') return v;
  throw new HttpError(400, 'InvalidParameter', `The value '${String(v)}' of parameter 'deleteOption' is not valid. Allowed values: Delete, Detach.`);
}

/** `zones`: at most one zone id per VM (ARM refuses more with InvalidParameter). */
export function zoneOf(doc: unknown): { zone?: string } {
  const zones = at(doc, ['zones']);
  if (zones === undefined || zones === null) return {};
  if (!Array.isArray(zones) || zones.some((z) => typeof z !== 'string')) throw new HttpError(400, 'InvalidParameter', 'zones must be an array of zone ids.');
  if (zones.length === 0) return {};
  if (zones.length > 1) throw new HttpError(400, 'InvalidParameter', `A virtual machine can be deployed to one availability zone only; got zones ${JSON.stringify(zones)}.`);
  return { zone: zones[0] as string };
}

export function parseVmPut(ref: { subscriptionId: string; resourceGroup: string; name: string }, doc: unknown): VmCreateRequest {
  const nicsRaw = at(doc, ['properties', 'networkProfile', 'networkInterfaces']);
  if (!Array.isArray(nicsRaw) || nicsRaw.length === 0) throw missing('properties.networkProfile.networkInterfaces');
  const nicIds = nicsRaw.map((_, i) => str(doc, ['properties', 'networkProfile', 'networkInterfaces', i, 'id'], `networkInterfaces[${i}].id`));
  const nicDeleteOption = deleteOption(at(nicsRaw[0], ['properties', 'deleteOption']));
  const imageId = optStr(doc, ['properties', 'storageProfile', 'imageReference', 'id']);
  let image: { reference: ImageReference } | { id: string };
  if (imageId !== undefined) image = { id: imageId };
  else {
    const ir = ['properties', 'storageProfile', 'imageReference'];
    image = {
      reference: {
        publisher: str(doc, [...ir, 'publisher'], 'imageReference.publisher'),
        offer: str(doc, [...ir, 'offer'], 'imageReference.offer'),
        sku: str(doc, [...ir, 'sku'], 'imageReference.sku'),
        version: optStr(doc, [...ir, 'version']) ?? 'latest',
      },
    };
  }
  const keys = at(doc, ['properties', 'osProfile', 'linuxConfiguration', 'ssh', 'publicKeys']);
  const sshPublicKeys = Array.isArray(keys) ? keys.map((k) => at(k, ['keyData'])).filter((k): k is string => typeof k === 'string') : [];
  const size = at(doc, ['properties', 'storageProfile', 'osDisk', 'diskSizeGB']);
  const priority = optStr(doc, ['properties', 'priority']);
  // An extensible enum in the SDK's model, but Compute knows three values ('Low' is the old name of Spot).
  if (priority !== undefined && priority !== 'Regular' && priority !== 'Spot' && priority !== 'Low') {
    throw new HttpError(400, 'InvalidParameter', `The value '${priority}' of parameter 'priority' is not valid (Regular, Spot or Low).`, {}, 'priority');
  }
  const evictionPolicy = optStr(doc, ['properties', 'evictionPolicy']);
  if (evictionPolicy !== undefined && evictionPolicy !== 'Delete' && evictionPolicy !== 'Deallocate') {
    throw new HttpError(400, 'InvalidParameter', `The value '${evictionPolicy}' of parameter 'evictionPolicy' is not valid (Delete or Deallocate).`, {}, 'evictionPolicy');
  }
  const computerName = optStr(doc, ['properties', 'osProfile', 'computerName']);
  const storageType = optStr(doc, ['properties', 'storageProfile', 'osDisk', 'managedDisk', 'storageAccountType']);
  const shown = { ...(computerName ? { computerName } : {}), ...(storageType ? { osDiskStorageAccountType: storageType } : {}) };
  const group = optStr(doc, ['properties', 'capacityReservation', 'capacityReservationGroup', 'id']);
  // osProfile.customData is read by nobody here: the fake must never keep or echo the secret.
  return {
    ref,
    location: requiredLocation(doc),
    vmSize: str(doc, ['properties', 'hardwareProfile', 'vmSize'], 'properties.hardwareProfile.vmSize'),
    ...zoneOf(doc),
    nicIds,
    nicDeleteOption,
    // ARM names an unnamed OS disk after the VM.
    osDiskName: optStr(doc, ['properties', 'storageProfile', 'osDisk', 'name']) ?? `${ref.name}_OsDisk_1`,
    osDiskSizeGB: typeof size === 'number' ? size : 30,
    osDiskDeleteOption: deleteOption(at(doc, ['properties', 'storageProfile', 'osDisk', 'deleteOption'])),
    image,
    adminUsername: optStr(doc, ['properties', 'osProfile', 'adminUsername']) ?? 'azureuser',
    sshPublicKeys,
    priority: priority === 'Spot' || priority === 'Low' ? 'Spot' : 'Regular',
    ...(evictionPolicy !== undefined ? { evictionPolicy: evictionPolicy as EvictionPolicy } : {}),
    ...maxPriceOf(doc),
    tags: tagsOf(doc),
    ...(Object.keys(shown).length > 0 ? { shown } : {}),
    ...(group ? { capacityReservationGroupId: group } : {}),
  };
}

/** properties.billingProfile.maxPrice: a number (ARM's model is a double), or absent. */
function maxPriceOf(doc: unknown): { maxPrice?: number } {
  const v = at(doc, ['properties', 'billingProfile', 'maxPrice']);
  if (v === undefined || v === null) return {};
  if (typeof v !== 'number') throw new HttpError(400, 'InvalidParameter', `The value '${String(v)}' of parameter 'billingProfile.maxPrice' is not valid.`, {}, 'billingProfile.maxPrice');
  return { maxPrice: v };
}
