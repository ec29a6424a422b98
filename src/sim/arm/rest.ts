import { z } from 'zod';
import { AzureError, type ImageReference } from '../../ports/azure.js';
import type { VirtualClock } from '../virtual-clock.js';
import type { EvictionPolicy, FakeArm, ListPage, ListScope, OperationInfo, PowerAction, VmCreateRequest } from './fake-arm.js';
import { SUPPORTED_API_VERSIONS } from './defaults.js';
import { digest, normalizeLocation } from './model.js';
import { diskJson, errorJson, nicJson, operationJson, stableGuid, subnetJson, usageListJson, vmInstanceViewJson, vmJson, vmWithInstanceViewJson, type Json } from './rest-shapes.js';
import { resourceSkuList, vmSizeList } from './resource-skus.js';
import type { ArmFault, DeleteOption } from './types.js';

/**
 * An ARM REST dialect over FakeArm, close enough to management.azure.com that the official
 * @azure/arm-network 39 and @azure/arm-compute 25 clients (and their core-lro pollers) run
 * against it unchanged, in-process through the SDK's `httpClient` or over HTTPS.
 *
 * What the SDKs rely on and this face reproduces:
 * - PUT answers 201 (created) or 200 (existing) with the resource body; a VM PUT that
 *   starts work carries `Azure-AsyncOperation` (+ `Retry-After`), which core-lro polls
 *   until `status` is Succeeded/Failed, then GETs the PUT's URL for the final resource.
 * - DELETE answers 202 with `Azure-AsyncOperation` and `Location`, or 204 when the
 *   resource does not exist (ARM's "already gone" answer).
 * - Errors are `{"error":{"code","message"}}` with ARM's statuses; 429 carries
 *   `Retry-After` and `x-ms-ratelimit-remaining-subscription-{reads|writes|deletes}`.
 * - Calls azflex does not make but other clients do (instance views, usages, VM sizes,
 *   list options, preconditions, HEAD) answer as ARM does (docs/fidelity.md, "The ARM face
 *   for other clients"); real ARM paths the fake does not model answer 501, never a 404.
 * NIC and disk writes complete synchronously in the fake; they still return an
 * Azure-AsyncOperation URL (already Succeeded) as Microsoft.Network does, so the SDK's
 * polling path is the one production takes.
 */
export interface ArmHttpRequest {
  method: string;
  /** Path and query, e.g. /subscriptions/…?api-version=2024-07-01 */
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface ArmHttpResponse {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

export interface ArmRestOptions {
  /** Scheme + host (+ port) that clients use; prefixes every URL the face hands out. */
  baseUrl: string;
  /** The clock behind `arm`, for POST /_sim/clock/advance (absent: that route answers 501). */
  clock?: VirtualClock;
  /**
   * Retry-After (seconds) on accepted LROs and in-progress polls. ARM sends ~10; core-lro
   * honours it over its own interval, so in-process tests on a manual clock may set 0,
   * which omits the header.
   */
  lroRetryAfterSeconds?: number;
  /** Answer 401 to ARM calls without `Authorization: Bearer …` (default true; any token is accepted). */
  requireAuth?: boolean;
  /**
   * Mixed into every x-ms-request-id so ids never repeat across server instances (the HTTPS
   * face passes a random one per start); in-process runs keep the default for determinism.
   */
  instanceId?: string;
}

export type ArmRestHandler = (req: ArmHttpRequest) => Promise<ArmHttpResponse>;

const NIC_TYPE = 'networkinterfaces';
/** The VM power actions the fake serves, by their lower-cased path segment. */
const POWER_ACTIONS: Readonly<Record<string, PowerAction>> = { deallocate: 'deallocate', poweroff: 'powerOff', start: 'start', restart: 'restart' };
const VM_TYPE = 'virtualmachines';
const DISK_TYPE = 'disks';

/** Raised inside the handler for REST-level refusals that are not FakeArm answers. */
class HttpError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly headers: Record<string, string> = {}, readonly target?: string) {
    super(message);
  }
}

export function createArmRestHandler(arm: FakeArm, opts: ArmRestOptions): ArmRestHandler {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const retryAfter = opts.lroRetryAfterSeconds ?? 10;
  const requireAuth = opts.requireAuth ?? true;
  let requestSeq = 0;
  const instance = opts.instanceId ?? 'in-process';

  const handle = async (req: ArmHttpRequest): Promise<ArmHttpResponse> => {
    const res = await answer(req);
    if (req.method.toUpperCase() !== 'HEAD') return res;
    // A HEAD answer never has a body, errors included.
    const headers = { ...res.headers };
    delete headers['content-type'];
    return { status: res.status, headers };
  };

  const answer = async (req: ArmHttpRequest): Promise<ArmHttpResponse> => {
    const headers = lowerKeys(req.headers);
    const requestId = stableGuid(`${instance}/request-${++requestSeq}`);
    const common: Record<string, string> = {
      'x-ms-request-id': requestId,
      'x-ms-correlation-request-id': headers['x-ms-correlation-request-id'] ?? requestId,
    };
    // Rate-limit headers only when this request reached ARM's counters (the fake keeps the last call's).
    const before = arm.lastCallHeaders().seq;
    const limits = (): Record<string, string> => {
      const last = arm.lastCallHeaders();
      return last.seq === before ? {} : last.headers;
    };
    try {
      const url = new URL(req.url, 'https://fake-arm.invalid');
      const method = req.method.toUpperCase();
      const segs = url.pathname.split('/').filter((s) => s.length > 0).map(decodeURIComponent);
      if (segs[0] === '_sim') return withHeaders(await simRoute(method, segs, url, req.body), common);
      if (requireAuth) checkAuthorization(headers['authorization']);
      const apiVersion = url.searchParams.get('api-version');
      if (!apiVersion) {
        throw new HttpError(400, 'MissingApiVersionParameter', 'The api-version query parameter (?api-version=) is required for all requests.');
      }
      if (arm.validateApiVersions) checkApiVersion(method, segs, apiVersion, () => writeLocation(method, segs, req.body));
      if (method === 'PUT' || method === 'PATCH') checkContentType(headers['content-type']);
      const res = method === 'HEAD' ? headRoute(segs, url, apiVersion, headers) : armRoute(method, segs, url, apiVersion, req.body, headers);
      return withHeaders(res, { ...common, ...limits() });
    } catch (err) {
      return withHeaders(errorResponse(err), { ...common, ...limits() });
    }
  };

  // ------------------------------------------------------------------ ARM routes

  /**
   * HEAD: ARM answers it for resource groups (Check Existence: 204 or 404, no body); the
   * resource providers the fake models do not serve it (405, no body).
   */
  function headRoute(segs: string[], url: URL, apiVersion: string, headers: Record<string, string>): ArmHttpResponse {
    if (segs.length !== 4 || lower(segs[2]) !== 'resourcegroups') return { status: 405, headers: {} };
    const res = armRoute('GET', segs, url, apiVersion, undefined, headers);
    return { ...res, status: res.status === 200 ? 204 : res.status };
  }

  function armRoute(method: string, segs: string[], url: URL, apiVersion: string, body: string | undefined, headers: Record<string, string>): ArmHttpResponse {
    // Tenant-level routes (/providers, /tenants, …) are ARM's too, but not modelled.
    if (lower(segs[0]) !== 'subscriptions' || segs[1] === undefined) throw notModelled(method, url);
    const sub = segs[1];
    if (arm.regionsOf(sub).length === 0) throw new HttpError(404, 'SubscriptionNotFound', `The subscription '${sub}' could not be found.`);
    if (lower(segs[2]) === 'resourcegroups' && segs[3] !== undefined && segs.length === 4) return resourceGroupRoute(method, sub, segs[3], body, url);
    if (lower(segs[2]) === 'resourcegroups' && segs[3] !== undefined && lower(segs[4]) === 'providers') {
      const rg = segs[3];
      const ns = lower(segs[5]);
      const type = lower(segs[6]);
      const name = segs[7];
      if (segs.length === 6) throw notModelled(method, url); // the provider's registration
      if (ns === 'microsoft.network' && type === 'virtualnetworks' && segs.length === 10 && lower(segs[8]) === 'subnets' && method === 'GET') {
        return subnetRoute(sub, `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.Network/virtualNetworks/${segs[7]}/subnets/${segs[9]}`);
      }
      requireServedType(ns, segs[5], segs[6], apiVersion, method, url);
      if (segs.length === 7) return listRoute(method, ns, type, { subscriptionId: sub, resourceGroup: rg }, url);
      if (name === undefined) throw notModelled(method, url);
      const ref = { subscriptionId: sub, resourceGroup: rg, name };
      if (segs.length === 9 && ns === 'microsoft.compute' && type === VM_TYPE) return vmChildRoute(method, ref, lower(segs[8]), url, apiVersion);
      if (segs.length !== 8) throw notModelled(method, url);
      if (ns === 'microsoft.network' && type === NIC_TYPE) return nicRoute(method, ref, apiVersion, body, url);
      if (ns === 'microsoft.compute' && type === VM_TYPE) return vmRoute(method, ref, apiVersion, body, url, headers);
      if (ns === 'microsoft.compute' && type === DISK_TYPE) return diskRoute(method, ref, apiVersion, url);
      throw notModelled(method, url);
    }
    if (lower(segs[2]) === 'providers') {
      const ns = lower(segs[3]);
      const type = lower(segs[4]);
      if (segs.length === 4) throw notModelled(method, url); // the provider's registration
      requireServedType(ns, segs[3], segs[4], apiVersion, method, url);
      if (segs.length === 5 && ns === 'microsoft.compute' && type === 'skus') {
        requireMethod(method, 'GET');
        return skuList(sub, url);
      }
      if (segs.length === 5) return listRoute(method, ns, type, { subscriptionId: sub }, url);
      if (type === 'locations' && segs.length === 7 && ns === 'microsoft.compute' && segs[5] !== undefined) {
        requireMethod(method, 'GET');
        return computeLocationRoute(sub, segs[5], lower(segs[6]), url);
      }
      if (type === 'locations' && segs.length === 8 && segs[7] !== undefined) {
        requireMethod(method, 'GET');
        const kind = lower(segs[6]);
        const monitor = kind === 'operationresults' || url.searchParams.get('monitor') === 'true';
        if (kind !== 'operations' && kind !== 'operationresults') throw notModelled(method, url);
        return operationRoute(sub, segs[7], monitor, url);
      }
    }
    throw notModelled(method, url);
  }

  /**
   * A list page. ARM pages every list: `nextLink` is an absolute URL (same path, the
   * api-version and a $skiptoken) on every page but the last, which has none.
   */
  function listRoute(method: string, ns: string, type: string, scope: ListScope, url: URL): ArmHttpResponse {
    requireMethod(method, 'GET');
    const token = url.searchParams.get('$skiptoken');
    const skip = token === null ? 0 : Number(token);
    if (!Number.isInteger(skip) || skip < 0) throw new HttpError(400, 'InvalidSkipToken', `The $skiptoken '${token}' is not valid.`);
    let page: ListPage<Json>;
    const render = <V>(p: ListPage<V>, f: (v: V) => Json): ListPage<Json> => ({ value: p.value.map(f), ...(p.nextSkip !== undefined ? { nextSkip: p.nextSkip } : {}) });
    if (ns === 'microsoft.network' && type === NIC_TYPE) page = render(arm.nicListPage(scope, skip), nicJson);
    else if (ns === 'microsoft.compute' && type === VM_TYPE) {
      const view = vmListView(url);
      const vms = arm.vmListPage(scope, skip);
      // No VM of the fake belongs to a scale set: the one filter Compute takes matches none.
      page = view.inScaleSet ? { value: [] } : render(vms, view.instanceView ? vmWithInstanceViewJson : vmJson);
    } else if (ns === 'microsoft.compute' && type === DISK_TYPE) page = render(arm.diskListPage(scope, skip), diskJson);
    else throw notModelled(method, url);
    return pageResponse(page, url);
  }

  /** A page as ARM sends it: `value`, and an absolute `nextLink` (same path and query, a $skiptoken) unless it is the last. */
  function pageResponse(page: ListPage<Json>, url: URL): ArmHttpResponse {
    const out: { [key: string]: Json } = { value: page.value };
    if (page.nextSkip !== undefined) {
      const next = new URL(`${base}${url.pathname}${url.search}`);
      next.searchParams.set('$skiptoken', String(page.nextSkip));
      out['nextLink'] = next.toString();
    }
    return json(200, out);
  }

  /**
   * GET /subscriptions/{s}/providers/Microsoft.Compute/locations/{l}/…: `usages` (quota),
   * `vmSizes` (the sizes offered there) and `virtualMachines` (the subscription's VMs in
   * that location, paged like any list).
   */
  function computeLocationRoute(sub: string, location: string, kind: string, url: URL): ArmHttpResponse {
    const loc = normalizeLocation(location);
    switch (kind) {
      case 'usages': {
        const usage = arm.quotaUsage(sub, loc);
        if (!usage) throw locationNotServed(loc, sub);
        return json(200, usageListJson(usage));
      }
      case 'vmsizes':
        arm.countSkuList(sub);
        return json(200, vmSizeList(arm.instanceTypes(), loc));
      case VM_TYPE: {
        const token = url.searchParams.get('$skiptoken');
        const skip = token === null ? 0 : Number(token);
        if (!Number.isInteger(skip) || skip < 0) throw new HttpError(400, 'InvalidSkipToken', `The $skiptoken '${token}' is not valid.`);
        const vms = arm.vmListPage({ subscriptionId: sub }, skip);
        const value = vms.value.filter((vm) => vm.location === loc).map(vmJson);
        return pageResponse({ value, ...(vms.nextSkip !== undefined ? { nextSkip: vms.nextSkip } : {}) }, url);
      }
      default:
        throw notModelled('GET', url);
    }
  }

  /**
   * GET …/virtualMachines/{vm}/instanceView and …/vmSizes; POST …/deallocate, powerOff, start,
   * restart (202 and an operation, as Compute answers them) and simulateEviction (204). The
   * VM's other actions (redeploy, reimage, capture, runCommand, …) are not modelled.
   */
  function vmChildRoute(method: string, ref: { subscriptionId: string; resourceGroup: string; name: string }, child: string, url: URL, apiVersion: string): ArmHttpResponse {
    if (child === 'instanceview' || child === 'vmsizes') {
      requireMethod(method, 'GET');
      const vm = arm.vmGet(ref);
      if (!vm) throw resourceNotFound('Microsoft.Compute/virtualMachines', ref);
      return json(200, child === 'instanceview' ? vmInstanceViewJson(vm) : vmSizeList(arm.instanceTypes(), vm.location));
    }
    const action = POWER_ACTIONS[child];
    if (action !== undefined) {
      requireMethod(method, 'POST');
      // Hibernation is a deallocate the fake does not model.
      if (action === 'deallocate' && lower(url.searchParams.get('hibernate') ?? undefined) === 'true') throw notModelled(method, url);
      const location = arm.vmLocation(ref);
      const begun = arm.beginPowerAction(ref, action);
      if (!begun) throw resourceNotFound('Microsoft.Compute/virtualMachines', ref);
      return { status: 202, headers: asyncHeaders('Microsoft.Compute', ref.subscriptionId, location ?? 'global', begun.operationId, apiVersion, true) };
    }
    if (child === 'simulateeviction') {
      requireMethod(method, 'POST');
      if (!arm.simulateEviction(ref)) throw resourceNotFound('Microsoft.Compute/virtualMachines', ref);
      return { status: 204, headers: {} };
    }
    throw notModelled(method, url);
  }

  /** The location a write names (a PUT's body) or acts in (the resource's), for NoRegisteredProviderFound. */
  function writeLocation(method: string, segs: string[], body: string | undefined): string {
    if (method === 'PUT' || method === 'PATCH') {
      try {
        const loc = at(JSON.parse(body ?? 'null') as unknown, ['location']);
        if (typeof loc === 'string' && loc !== '') return normalizeLocation(loc);
      } catch {
        // Malformed bodies are refused later, as InvalidRequestContent.
      }
    }
    const [s0, sub, s2, rg, s4, ns, type, name] = segs;
    if (lower(s0) !== 'subscriptions' || lower(s2) !== 'resourcegroups' || lower(s4) !== 'providers' || !sub || !rg || !name) return 'global';
    const ref = { subscriptionId: sub, resourceGroup: rg, name };
    const key = `${lower(ns)}/${lower(type)}`;
    const found =
      key === `microsoft.network/${NIC_TYPE}` ? arm.nicLocation(ref) : key === `microsoft.compute/${VM_TYPE}` ? arm.vmLocation(ref) : key === `microsoft.compute/${DISK_TYPE}` ? arm.diskLocation(ref) : undefined;
    return found ?? 'global';
  }

  /** GET of a subnet the fake allocates NIC addresses from (its virtual network is not modelled). */
  function subnetRoute(sub: string, id: string): ArmHttpResponse {
    const subnet = arm.subnetGet(sub, id);
    if (!subnet) throw new HttpError(404, 'NotFound', `Resource ${id} not found.`);
    return json(200, subnetJson(subnet));
  }

  /** Microsoft.Resources resource groups: enough for a client to create the group it deploys into. */
  function resourceGroupRoute(method: string, sub: string, name: string, body: string | undefined, url: URL): ArmHttpResponse {
    const id = `/subscriptions/${sub}/resourceGroups/${name}`;
    const render = (rg: { location: string }): Json => ({ id, name, type: 'Microsoft.Resources/resourceGroups', location: rg.location, properties: { provisioningState: 'Succeeded' } });
    switch (method) {
      case 'GET':
        return json(200, render(arm.getResourceGroup(sub, name)));
      case 'PUT': {
        const location = requiredLocation(parseBody(body));
        const out = arm.putResourceGroup(sub, name, location);
        if (!out.created && out.location !== normalizeLocation(location)) {
          throw new HttpError(409, 'InvalidResourceGroupLocation', `Invalid resource group location '${normalizeLocation(location)}'. The Resource group already exists in location '${out.location}'.`);
        }
        return json(out.created ? 201 : 200, render(out));
      }
      default:
        throw methodNotAllowed(method, url);
    }
  }

  function nicRoute(method: string, ref: { subscriptionId: string; resourceGroup: string; name: string }, apiVersion: string, body: string | undefined, url: URL): ArmHttpResponse {
    switch (method) {
      case 'GET': {
        const nic = arm.nicGet(ref);
        if (!nic) throw resourceNotFound('Microsoft.Network/networkInterfaces', ref);
        return json(200, nicJson(nic));
      }
      case 'PUT': {
        const doc = parseBody(body);
        const location = requiredLocation(doc);
        sameLocation(ref, arm.nicLocation(ref), location);
        const subnetId = str(doc, ['properties', 'ipConfigurations', 0, 'properties', 'subnet', 'id'], 'properties.ipConfigurations[0].properties.subnet.id');
        const { nic, created } = arm.nicPut({ ref, location, subnetId, tags: tagsOf(doc) });
        const opId = arm.completedOperation('create');
        return json(created ? 201 : 200, nicJson(nic), asyncHeaders('Microsoft.Network', ref.subscriptionId, location, opId, apiVersion, false, true));
      }
      case 'PATCH': {
        const nic = arm.nicPatchTags(ref, patchedTags(parseBody(body), url));
        if (!nic) throw resourceNotFound('Microsoft.Network/networkInterfaces', ref);
        return json(200, nicJson(nic));
      }
      case 'DELETE': {
        const existing = arm.nicLocation(ref);
        const begun = arm.nicDelete(ref);
        if (begun === 'notFound') return { status: 204, headers: {} };
        return { status: 202, headers: asyncHeaders('Microsoft.Network', ref.subscriptionId, existing ?? 'global', begun.operationId, apiVersion, true) };
      }
      default:
        throw methodNotAllowed(method, url);
    }
  }

  function vmRoute(
    method: string,
    ref: { subscriptionId: string; resourceGroup: string; name: string },
    apiVersion: string,
    body: string | undefined,
    url: URL,
    headers: Record<string, string>,
  ): ArmHttpResponse {
    switch (method) {
      case 'GET': {
        const expand = url.searchParams.get('$expand');
        const vm = arm.vmGet(ref);
        if (!vm) throw resourceNotFound('Microsoft.Compute/virtualMachines', ref);
        return json(200, lower(expand ?? undefined) === 'instanceview' ? vmWithInstanceViewJson(vm) : vmJson(vm));
      }
      case 'PUT': {
        checkPreconditions(headers, arm.vmEtag(ref));
        const doc = parseBody(body);
        sameLocation(ref, arm.vmLocation(ref), requiredLocation(doc));
        const request = parseVmPut(ref, doc);
        const customData = optStr(doc, ['properties', 'osProfile', 'customData']);
        if (customData !== undefined) request.customDataHash = digest(customData);
        const begun = arm.beginCreateVm(request);
        const lro = begun.operationId === undefined ? {} : asyncHeaders('Microsoft.Compute', ref.subscriptionId, begun.vm.location, begun.operationId, apiVersion, false);
        return json(begun.created ? 201 : 200, vmJson(begun.vm), lro);
      }
      case 'PATCH': {
        const vm = arm.vmPatchTags(ref, patchedTags(parseBody(body), url));
        if (!vm) throw resourceNotFound('Microsoft.Compute/virtualMachines', ref);
        // Compute answers an update as an LRO; the fake's is done at once.
        return json(200, vmJson(vm), asyncHeaders('Microsoft.Compute', ref.subscriptionId, vm.location, arm.completedOperation('create'), apiVersion, false));
      }
      case 'DELETE': {
        const location = arm.vmLocation(ref);
        const begun = arm.beginDeleteVm(ref);
        if (!begun) return { status: 204, headers: {} };
        return { status: 202, headers: asyncHeaders('Microsoft.Compute', ref.subscriptionId, location ?? 'global', begun.operationId, apiVersion, true) };
      }
      default:
        throw methodNotAllowed(method, url);
    }
  }

  function diskRoute(method: string, ref: { subscriptionId: string; resourceGroup: string; name: string }, apiVersion: string, url: URL): ArmHttpResponse {
    switch (method) {
      case 'GET': {
        const disk = arm.diskGet(ref);
        if (!disk) throw resourceNotFound('Microsoft.Compute/disks', ref);
        return json(200, diskJson(disk));
      }
      case 'DELETE': {
        const location = arm.diskLocation(ref);
        if (arm.diskDelete(ref) === 'notFound') return { status: 204, headers: {} };
        const opId = arm.completedOperation('delete');
        return { status: 202, headers: asyncHeaders('Microsoft.Compute', ref.subscriptionId, location ?? 'global', opId, apiVersion, true) };
      }
      default:
        throw methodNotAllowed(method, url);
    }
  }

  function operationRoute(sub: string, id: string, monitor: boolean, url: URL): ArmHttpResponse {
    const op = arm.pollOperation(sub, id);
    if (!op) throw new HttpError(404, 'ResourceNotFound', `The operation '${id}' was not found.`);
    const self = `${base}${url.pathname}${url.search}`;
    const progress: Record<string, string> = retryAfter > 0 ? { 'retry-after': String(retryAfter) } : {};
    if (!monitor) return json(200, operationJson(op.id, op.status, op.startedAt, op.endedAt), op.status.status === 'InProgress' ? progress : {});
    // The Location ("monitor") flavour answers 202 while running and the outcome after.
    if (op.status.status === 'InProgress') return { status: 202, headers: { location: self, ...progress } };
    if (op.status.status === 'Failed') return json(failedStatus(op), errorJson(op.status.error.code, op.status.error.message));
    // A finished VM action (start, deallocate, …) answers 200 there, as the SDK's action LROs expect; a delete 204.
    return { status: op.kind === 'action' ? 200 : 204, headers: {} };
  }

  function skuList(sub: string, url: URL): ArmHttpResponse {
    arm.countSkuList(sub);
    return json(200, resourceSkuList(arm, sub, url.searchParams.get('$filter')));
  }

  /**
   * An LRO's headers. `done`: the write already finished (a NIC PUT, whose body says
   * Succeeded): Network then sends no Retry-After, so a client that honours it before its
   * first poll (the Go SDK's PollUntilDone does) is not held back.
   */
  function asyncHeaders(provider: 'Microsoft.Network' | 'Microsoft.Compute', sub: string, location: string, opId: string, apiVersion: string, withLocation: boolean, done = false): Record<string, string> {
    const loc = location.toLowerCase();
    const api = encodeURIComponent(apiVersion);
    const out: Record<string, string> = {
      'azure-asyncoperation': `${base}/subscriptions/${sub}/providers/${provider}/locations/${loc}/operations/${opId}?api-version=${api}`,
    };
    // Compute's LROs and Network's PUTs say so (recorded answers: docs/fidelity.md).
    if (provider === 'Microsoft.Compute' || !withLocation) out['azure-asyncnotification'] = 'Enabled';
    if (withLocation) {
      out['location'] =
        provider === 'Microsoft.Network'
          ? `${base}/subscriptions/${sub}/providers/${provider}/locations/${loc}/operationResults/${opId}?api-version=${api}`
          : `${base}/subscriptions/${sub}/providers/${provider}/locations/${loc}/operations/${opId}?monitor=true&api-version=${api}`;
    }
    if (retryAfter > 0 && !done) out['retry-after'] = String(retryAfter);
    return out;
  }

  // ------------------------------------------------------------------ /_sim routes

  async function simRoute(method: string, segs: string[], url: URL, body: string | undefined): Promise<ArmHttpResponse> {
    const path = segs.join('/');
    if (path === '_sim/clock/advance') {
      requireMethod(method, 'POST');
      if (!opts.clock) throw new HttpError(501, 'NotImplemented', 'This fake ARM has no manual clock to advance.');
      const seconds = Number(url.searchParams.get('seconds'));
      if (!Number.isFinite(seconds) || seconds < 0) throw new HttpError(400, 'InvalidParameter', "Query parameter 'seconds' must be a non-negative number.");
      await opts.clock.runUntil(opts.clock.now() + seconds * 1000);
      return json(200, { t: opts.clock.now(), now: new Date(opts.clock.now()).toISOString() });
    }
    if (path === '_sim/state') {
      requireMethod(method, 'GET');
      const snapshot = arm.snapshot() as unknown as { [key: string]: Json };
      return json(200, {
        ...snapshot,
        armCalls: arm.armCalls(),
        reapTimesSeconds: arm.reapTimesSeconds(),
        peakSubnetIpsUsed: arm.peakSubnetIpsUsed(),
      });
    }
    if (path === '_sim/faults') {
      requireMethod(method, 'POST');
      const parsed = FaultSchema.safeParse(parseBody(body));
      if (!parsed.success) throw new HttpError(400, 'InvalidParameter', `Invalid fault: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
      try {
        arm.injectFault(parsed.data);
      } catch (err) {
        throw new HttpError(400, 'InvalidParameter', err instanceof Error ? err.message : String(err));
      }
      return json(200, { injected: parsed.data.kind });
    }
    throw new HttpError(404, 'NotFound', `No simulator route ${method} /${path}.`);
  }

  return handle;
}

// -------------------------------------------------------------------- parsing

const FaultSchema: z.ZodType<ArmFault> = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('quota'), location: z.string(), subscriptionId: z.string().optional(), family: z.string().optional(), cores: z.number().int().nonnegative() }),
  z.object({ kind: z.literal('capacity'), location: z.string(), subscriptionId: z.string().optional(), allocationFailureRate: z.number().min(0).max(1).optional(), zonalAllocationFailureRate: z.number().min(0).max(1).optional(), overconstrainedAllocationFailureRate: z.number().min(0).max(1).optional() }),
  z.object({ kind: z.literal('computeThrottle'), location: z.string(), subscriptionId: z.string().optional(), policy: z.string().optional() }),
  z.object({ kind: z.literal('throttle'), subscriptionId: z.string().optional(), location: z.string().optional(), bucket: z.enum(['reads', 'writes', 'deletes']).optional(), drain: z.boolean().optional(), enabled: z.boolean().optional() }),
  z.object({ kind: z.literal('transient'), transientFaultRate: z.number().min(0).max(1).optional(), timeoutRate: z.number().min(0).max(1).optional() }),
  z.object({ kind: z.literal('skuUnavailable'), location: z.string(), subscriptionId: z.string().optional(), sku: z.string(), unavailable: z.boolean().optional() }),
  z.object({ kind: z.literal('vmAction'), location: z.string(), subscriptionId: z.string().optional(), sku: z.string().optional(), action: z.enum(['deallocate', 'powerOff', 'delete']), fraction: z.number().min(0).max(1) }),
  z.object({ kind: z.literal('spotEviction'), location: z.string(), subscriptionId: z.string().optional(), sku: z.string().optional(), evictFraction: z.number().min(0).max(1).optional(), ratePerHour: z.number().min(0).max(60).optional() }),
]);

type Path = Array<string | number>;

function parseBody(body: string | undefined): unknown {
  if (body === undefined || body.trim() === '') throw new HttpError(400, 'InvalidRequestContent', 'The request content was invalid and could not be deserialized: the body is empty.');
  try {
    return JSON.parse(body) as unknown;
  } catch (err) {
    throw new HttpError(400, 'InvalidRequestContent', `The request content was invalid and could not be deserialized: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** ARM takes JSON only: a PUT or PATCH whose body is declared as anything else (or not at all) is 415. */
function checkContentType(header: string | undefined): void {
  const media = header?.split(';')[0]?.trim().toLowerCase();
  if (media === 'application/json') return;
  throw new HttpError(415, 'UnsupportedMediaType', `The content media type '${header === undefined || header === '' ? '<null>' : header}' is not supported. Only 'application/json' is supported.`);
}

/** ARM's answers to a missing or malformed Authorization header (any Bearer token is accepted). */
function checkAuthorization(header: string | undefined): void {
  if (header === undefined || header.trim() === '') throw new HttpError(401, 'AuthenticationFailed', "Authentication failed. The 'Authorization' header is missing.");
  if (!/^Bearer\s+\S+/i.test(header)) {
    throw new HttpError(401, 'AuthenticationFailedInvalidHeader', "Authentication failed. The 'Authorization' header is provided in an invalid format.");
  }
}

/** ARM itself refuses a PUT of a tracked resource without a location, before any provider sees it. */
function requiredLocation(doc: unknown): string {
  const v = at(doc, ['location']);
  if (typeof v !== 'string' || v.trim() === '') throw new HttpError(400, 'LocationRequired', 'The location property is required for this definition.');
  return v;
}

/** A resource keeps the location it was created in: a PUT naming another is InvalidResourceLocation. */
function sameLocation(ref: { resourceGroup: string; name: string }, existing: string | undefined, requested: string): void {
  if (existing === undefined || existing === normalizeLocation(requested)) return;
  throw new HttpError(
    400,
    'InvalidResourceLocation',
    `The resource '${ref.name}' already exists in location '${existing}' in resource group '${ref.resourceGroup}'. A resource with the same name cannot be created in location '${normalizeLocation(requested)}'. Please select a new resource name.`,
  );
}

function at(doc: unknown, path: Path): unknown {
  let cur: unknown = doc;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return cur;
}

function missing(name: string): HttpError {
  return new HttpError(400, 'InvalidParameter', `Required parameter '${name}' is missing (null).`);
}

function str(doc: unknown, path: Path, name: string): string {
  const v = at(doc, path);
  if (typeof v !== 'string' || v === '') throw missing(name);
  return v;
}

function optStr(doc: unknown, path: Path): string | undefined {
  const v = at(doc, path);
  return typeof v === 'string' ? v : undefined;
}

/**
 * A PATCH the fake models changes tags only (and replaces them whole, as ARM does for the
 * `tags` property); any other property in it is a change the simulator does not model.
 */
function patchedTags(doc: unknown, url: URL): Record<string, string> {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new HttpError(400, 'InvalidRequestContent', 'The request content was invalid and could not be deserialized: a JSON object is expected.');
  const empty = (v: unknown): boolean => v === null || v === undefined || (typeof v === 'object' && Object.keys(v).length === 0);
  const other = Object.entries(doc).filter(([k, v]) => k !== 'tags' && k !== 'id' && k !== 'name' && k !== 'type' && !empty(v)).map(([k]) => k);
  if (other.length > 0) throw new HttpError(501, 'NotImplemented', `The azflex simulator models a PATCH of tags only, not of '${other.join("', '")}' (${url.pathname}).`);
  if (!('tags' in doc)) throw new HttpError(501, 'NotImplemented', `The azflex simulator models a PATCH of tags only (${url.pathname}).`);
  return tagsOf(doc);
}

function tagsOf(doc: unknown): Record<string, string> {
  const t = at(doc, ['tags']);
  const out: Record<string, string> = {};
  if (t && typeof t === 'object') for (const [k, v] of Object.entries(t)) if (typeof v === 'string') out[k] = v;
  return out;
}

function deleteOption(v: unknown): DeleteOption | undefined {
  if (v === undefined) return undefined;
  if (v === 'Delete' || v === 'Detach') return v;
  throw new HttpError(400, 'InvalidParameter', `The value '${String(v)}' of parameter 'deleteOption' is not valid. Allowed values: Delete, Detach.`);
}

/** `zones`: at most one zone id per VM (ARM refuses more with InvalidParameter). */
function zoneOf(doc: unknown): { zone?: string } {
  const zones = at(doc, ['zones']);
  if (zones === undefined || zones === null) return {};
  if (!Array.isArray(zones) || zones.some((z) => typeof z !== 'string')) throw new HttpError(400, 'InvalidParameter', 'zones must be an array of zone ids.');
  if (zones.length === 0) return {};
  if (zones.length > 1) throw new HttpError(400, 'InvalidParameter', `A virtual machine can be deployed to one availability zone only; got zones ${JSON.stringify(zones)}.`);
  return { zone: zones[0] as string };
}

function parseVmPut(ref: { subscriptionId: string; resourceGroup: string; name: string }, doc: unknown): VmCreateRequest {
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
  const evictionPolicy = optStr(doc, ['properties', 'evictionPolicy']);
  if (evictionPolicy !== undefined && evictionPolicy !== 'Delete' && evictionPolicy !== 'Deallocate') {
    throw new HttpError(400, 'InvalidParameter', `The value '${evictionPolicy}' of parameter 'evictionPolicy' is not valid (Delete or Deallocate).`, {}, 'evictionPolicy');
  }
  const computerName = optStr(doc, ['properties', 'osProfile', 'computerName']);
  const storageType = optStr(doc, ['properties', 'storageProfile', 'osDisk', 'managedDisk', 'storageAccountType']);
  const shown = { ...(computerName ? { computerName } : {}), ...(storageType ? { osDiskStorageAccountType: storageType } : {}) };
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
    tags: tagsOf(doc),
    ...(Object.keys(shown).length > 0 ? { shown } : {}),
  };
}

// ------------------------------------------------------------------ responses

function json(status: number, body: Json, headers: Record<string, string> = {}): ArmHttpResponse {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers }, body: JSON.stringify(body) };
}

function withHeaders(res: ArmHttpResponse, extra: Record<string, string>): ArmHttpResponse {
  return { ...res, headers: { ...extra, ...res.headers } };
}

function errorResponse(err: unknown): ArmHttpResponse {
  if (err instanceof HttpError) return json(err.status, errorJson(err.code, err.message, err.target), err.headers);
  if (err instanceof AzureError) {
    const prefix = `${err.code}: `;
    const message = err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
    const headers: Record<string, string> = { ...err.info.headers };
    if (err.retryAfterSeconds !== undefined) headers['retry-after'] = String(err.retryAfterSeconds);
    const body = errorJson(err.info.armCode ?? err.code, message);
    if (err.info.details) (body['error'] as { [key: string]: Json })['details'] = err.info.details.map((d) => ({ ...d }));
    return json(err.statusCode, body, headers);
  }
  const message = err instanceof Error ? err.message : String(err);
  return json(500, errorJson('InternalServerError', `Fake ARM failure: ${message}`));
}

/**
 * ARM's api-version check: a version that is not a date (YYYY-MM-DD[-preview]) is 400
 * InvalidApiVersionParameter. A well-formed one the resource type does not serve is, for a
 * read, 404 InvalidResourceType ("could not be found in the namespace … for api version");
 * for a write, where ARM routes by the resource's location, 400 NoRegisteredProviderFound
 * naming that location. Both list the supported versions.
 */
function checkApiVersion(method: string, segs: string[], apiVersion: string, location: () => string): void {
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
const SERVED_TYPES: Readonly<Record<string, ReadonlySet<string>>> = {
  'microsoft.compute': new Set([VM_TYPE, DISK_TYPE, 'skus', 'locations']),
  'microsoft.network': new Set([NIC_TYPE, 'locations']),
};

/**
 * Other top-level types these namespaces have in ARM (from the Compute and Network REST
 * references): a request for one is a real ARM call the fake does not model (501), not an
 * unknown type. A type in neither list is ARM's InvalidResourceType.
 */
const UNMODELLED_TYPES: Readonly<Record<string, ReadonlySet<string>>> = {
  'microsoft.compute': new Set([
    'availabilitysets', 'virtualmachinescalesets', 'images', 'snapshots', 'galleries', 'sshpublickeys', 'proximityplacementgroups',
    'hostgroups', 'capacityreservationgroups', 'restorepointcollections', 'diskencryptionsets', 'diskaccesses', 'cloudservices', 'operations',
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
function requireServedType(ns: string, nsName: string | undefined, typeName: string | undefined, apiVersion: string, method: string, url: URL): void {
  const served = SERVED_TYPES[ns];
  if (!served) throw new HttpError(404, 'InvalidResourceNamespace', `The resource namespace '${nsName ?? ''}' is invalid.`);
  const type = (typeName ?? '').toLowerCase();
  if (served.has(type)) return;
  if (UNMODELLED_TYPES[ns]?.has(type)) throw notModelled(method, url);
  throw invalidResourceType(nsName ?? '', typeName ?? '', apiVersion);
}

function invalidResourceType(nsName: string, type: string, apiVersion: string, supported?: readonly string[]): HttpError {
  const versions = supported ? ` The supported api-versions are '${supported.join(',')}'.` : '';
  return new HttpError(404, 'InvalidResourceType', `The resource type '${type}' could not be found in the namespace '${nsName}' for api version '${apiVersion}'.${versions}`);
}

function locationNotServed(location: string, sub: string): AzureError {
  return new AzureError('InvalidParameter', 400, `Location '${location}' is not configured for subscription '${sub}' in the fake ARM.`);
}

/** A real ARM path the simulator does not model (VM power actions, NIC sub-resources, …): said plainly, never a 404 a client could take for "gone". */
function notModelled(method: string, url: URL): HttpError {
  return new HttpError(501, 'NotImplemented', `The azflex simulator does not model ${method} ${url.pathname}.`);
}

/**
 * Compute's optimistic concurrency on a VM PUT: `If-Match` must name the VM's current etag
 * (or be `*` for an existing VM), `If-None-Match: *` refuses an existing VM; otherwise 412
 * PreconditionFailed, before anything else is checked.
 */
function checkPreconditions(headers: Record<string, string>, etag: number | undefined): void {
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
function vmListView(url: URL): { inScaleSet: boolean; instanceView: boolean } {
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

function failedStatus(op: OperationInfo): number {
  return op.status.status === 'Failed' && op.status.error.code === 'InternalServerError' ? 500 : 409;
}

function resourceNotFound(type: string, ref: { resourceGroup: string; name: string }): HttpError {
  return new HttpError(
    404,
    'ResourceNotFound',
    `The Resource '${type}/${ref.name}' under resource group '${ref.resourceGroup}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
  );
}


/**
 * GET, PUT, PATCH and DELETE exist in ARM for every resource (and group) the fake keeps,
 * so one the fake does not serve (a disk PUT, a group DELETE, …) is not modelled; other
 * methods do not exist there.
 */
function methodNotAllowed(method: string, url: URL): HttpError {
  if (method === 'GET' || method === 'PUT' || method === 'PATCH' || method === 'DELETE') return notModelled(method, url);
  return new HttpError(405, 'MethodNotAllowed', `The requested resource does not support http method '${method}' (${url.pathname}).`);
}

function requireMethod(method: string, expected: string): void {
  if (method !== expected) throw new HttpError(405, 'MethodNotAllowed', `The requested resource does not support http method '${method}'.`);
}

function lower(s: string | undefined): string {
  return (s ?? '').toLowerCase();
}

function lowerKeys(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}
