import { SUPPORTED_API_VERSIONS } from './defaults.js';
import { HttpError, invalidResourceType, lower, notModelled } from './rest-errors.js';

/** The resource types the fake serves, as their lower-cased path segments. */
export const NIC_TYPE = 'networkinterfaces';
export const VM_TYPE = 'virtualmachines';
export const DISK_TYPE = 'disks';
export const CRG_TYPE = 'capacityreservationgroups';

/** ARM takes JSON only: a PUT or PATCH whose body is declared as anything else (or not at all) is 415. */
export function checkContentType(header: string | undefined): void {
  const media = header?.split(';')[0]?.trim().toLowerCase();
  if (media === 'application/json') return;
  throw new HttpError(415, 'UnsupportedMediaType', `The content media type '${header === undefined || header === '' ? '<null>' : header}' is not supported. Only 'application/json' is supported.`);
}

/** ARM's answers to a missing or malformed Authorization header (any Bearer token is accepted). */
export function checkAuthorization(header: string | undefined): void {
  if (header === undefined || header.trim() === '') throw new HttpError(401, 'AuthenticationFailed', "Authentication failed. The 'Authorization' header is missing.");
  if (!/^Bearer\s+\S+/i.test(header)) {
    throw new HttpError(401, 'AuthenticationFailedInvalidHeader', "Authentication failed. The 'Authorization' header is provided in an invalid format.");
  }
}

/**
 * ARM's api-version check: a version that is not a date (YYYY-MM-DD[-preview]) is 400
 * InvalidApiVersionParameter. A well-formed one the resource type does not serve is, for a
 * read, 404 InvalidResourceType ("could not be found in the namespace … for api version");
 * for a write, where ARM routes by the resource's location, 400 NoRegisteredProviderFound
 * naming that location. Both list the supported versions.
 */
export function checkApiVersion(method: string, segs: string[], apiVersion: string, location: () => string): void {
  const providersAt = segs.map((s) => s.toLowerCase()).indexOf('providers');
  const nsName = providersAt >= 0 ? (segs[providersAt + 1] ?? '') : 'Microsoft.Resources';
  const type = providersAt >= 0 ? (segs[providersAt + 2] ?? '') : 'resourceGroups';
  const supported = SUPPORTED_API_VERSIONS[nsName.toLowerCase()];
  if (!supported) return; // routing answers unknown providers
  if (!/^\d{4}-\d{2}-\d{2}(-preview)?$/.test(apiVersion)) {
    throw new HttpError(400, 'InvalidApiVersionParameter', `The api-version '${apiVersion}' is invalid. The supported versions are '${supported.join(',')}'.`);
  }
  if (supported.includes(apiVersion)) return;
  if (method === 'GET' || method === 'HEAD') throw invalidResourceType(nsName, type, apiVersion, supported);
  throw new HttpError(
    400,
    'NoRegisteredProviderFound',
    `No registered resource provider found for location '${location()}' and API version '${apiVersion}' for type '${type}'. The supported api-versions are '${supported.join(', ')}'.`,
  );
}

/** Resource types the fake serves per namespace (lower case). */
export const SERVED_TYPES: Readonly<Record<string, ReadonlySet<string>>> = {
  'microsoft.compute': new Set([VM_TYPE, DISK_TYPE, CRG_TYPE, 'skus', 'locations']),
  'microsoft.network': new Set([NIC_TYPE, 'locations']),
};

/**
 * Other top-level types these namespaces have in ARM (from the Compute and Network REST
 * references): a request for one is a real ARM call the fake does not model (501), not an
 * unknown type. A type in neither list is ARM's InvalidResourceType.
 */
export const UNMODELLED_TYPES: Readonly<Record<string, ReadonlySet<string>>> = {
  'microsoft.compute': new Set([
    'availabilitysets', 'virtualmachinescalesets', 'images', 'snapshots', 'galleries', 'sshpublickeys', 'proximityplacementgroups',
    'hostgroups', 'restorepointcollections', 'diskencryptionsets', 'diskaccesses', 'cloudservices', 'operations',
  ]),
  'microsoft.network': new Set([
    'virtualnetworks', 'publicipaddresses', 'publicipprefixes', 'networksecuritygroups', 'applicationsecuritygroups', 'loadbalancers', 'routetables',
    'natgateways', 'applicationgateways', 'privateendpoints', 'privatelinkservices', 'bastionhosts', 'networkwatchers', 'virtualnetworkgateways',
    'localnetworkgateways', 'connections', 'azurefirewalls', 'firewallpolicies', 'ddosprotectionplans', 'dnszones', 'privatednszones', 'operations',
  ]),
};

/**
 * 404 InvalidResourceNamespace for a namespace ARM does not have, InvalidResourceType for a
 * type the namespace lacks, 501 for a real type the fake does not model.
 */
export function requireServedType(ns: string, nsName: string | undefined, typeName: string | undefined, apiVersion: string, method: string, url: URL): void {
  const served = SERVED_TYPES[ns];
  if (!served) throw new HttpError(404, 'InvalidResourceNamespace', `The resource namespace '${nsName ?? ''}' is invalid.`);
  const type = (typeName ?? '').toLowerCase();
  if (served.has(type)) return;
  if (UNMODELLED_TYPES[ns]?.has(type)) throw notModelled(method, url);
  throw invalidResourceType(nsName ?? '', typeName ?? '', apiVersion);
}

/**
 * Compute's optimistic concurrency on a VM PUT: `If-Match` must name the VM's current etag
 * (or be `*` for an existing VM), `If-None-Match: *` refuses an existing VM; otherwise 412
 * PreconditionFailed, before anything else is checked.
 */
export function checkPreconditions(headers: Record<string, string>, etag: number | undefined): void {
  const current = etag === undefined ? undefined : `"${etag}"`;
  const ifMatch = headers['if-match'];
  if (ifMatch !== undefined) {
    const wanted = ifMatch.split(',').map((t) => t.trim().replace(/^W\//, ''));
    if (current === undefined || !(wanted.includes('*') || wanted.includes(current))) {
      throw new HttpError(412, 'PreconditionFailed', `Etag provided in if-match header ${ifMatch} does not match etag ${current ?? '(none: the resource does not exist)'} of resource.`);
    }
  }
  const ifNoneMatch = headers['if-none-match'];
  if (ifNoneMatch !== undefined && current !== undefined) {
    const unwanted = ifNoneMatch.split(',').map((t) => t.trim().replace(/^W\//, ''));
    if (unwanted.includes('*') || unwanted.includes(current)) {
      throw new HttpError(412, 'PreconditionFailed', `Etag provided in if-none-match header ${ifNoneMatch} matches etag ${current} of resource.`);
    }
  }
}

/**
 * What `$filter`, `$expand` and `statusOnly` ask of a VM list. Compute takes one filter,
 * `virtualMachineScaleSet/id eq '…'`; `$expand=instanceView` and `statusOnly=true` add
 * each VM's instance view. Another filter is refused (InvalidParameter, target $filter).
 */
export function vmListView(url: URL): { inScaleSet: boolean; instanceView: boolean } {
  const filter = url.searchParams.get('$filter');
  let inScaleSet = false;
  if (filter !== null && filter.trim() !== '') {
    if (!/^\s*'?virtualMachineScaleSet\/id'?\s+eq\s+'[^']*'\s*$/i.test(filter)) {
      throw new HttpError(400, 'InvalidParameter', `The value of parameter $filter is invalid: only 'virtualMachineScaleSet/id' eq '<scale set id>' is supported.`, {}, '$filter');
    }
    inScaleSet = true;
  }
  const instanceView = lower(url.searchParams.get('$expand') ?? undefined) === 'instanceview' || lower(url.searchParams.get('statusOnly') ?? undefined) === 'true';
  return { inScaleSet, instanceView };
}
