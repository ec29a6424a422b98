import type { FakeArm, ListPage, ListScope, OperationInfo, PowerAction } from './fake-arm.js';
import { digest, normalizeLocation } from './model.js';
import { optStr, parseBody, parseVmPut, patchedTags, requiredLocation, sameLocation, str, tagsOf } from './rest-bodies.js';
import { checkPreconditions, CRG_TYPE, DISK_TYPE, NIC_TYPE, vmListView, VM_TYPE } from './rest-checks.js';
import { groupJson } from './rest-capacity-reservations.js';
import { HttpError, json, locationNotServed, lower, methodNotAllowed, notModelled, requireMethod, resourceNotFound } from './rest-errors.js';
import { diskJson, errorJson, nicJson, operationJson, subnetJson, usageListJson, vmInstanceViewJson, vmJson, vmWithInstanceViewJson, type Json } from './rest-shapes.js';
import { validateNicPatch, validateNicPut, validateVmPatch, validateVmPut } from './request-validation.js';
import { resourceSkuList, vmSizeList } from './resource-skus.js';
import type { ArmHttpResponse } from './rest-http.js';

/** The VM power actions the fake serves, by their lower-cased path segment. */
const POWER_ACTIONS: Readonly<Record<string, PowerAction>> = { deallocate: 'deallocate', poweroff: 'powerOff', start: 'start', restart: 'restart' };

/** The resource providers' routes of the REST face, once the request is routed to a resource, a list or an operation. */
export class ArmResourceRoutes {
  constructor(
    private readonly arm: FakeArm,
    /** Scheme + host (+ port) that prefixes every URL handed out. */
    private readonly base: string,
    /** Retry-After (seconds) on accepted LROs and in-progress polls; 0 omits it. */
    private readonly retryAfter: number,
  ) {}

  /**
   * A list page. ARM pages every list: `nextLink` is an absolute URL (same path, the
   * api-version and a $skiptoken) on every page but the last, which has none.
   */
  listRoute(method: string, ns: string, type: string, scope: ListScope, url: URL): ArmHttpResponse {
    requireMethod(method, 'GET');
    const token = url.searchParams.get('$skiptoken');
    const skip = token === null ? 0 : Number(token);
    if (!Number.isInteger(skip) || skip < 0) throw new HttpError(400, 'InvalidSkipToken', `The $skiptoken '${token}' is not valid.`);
    let page: ListPage<Json>;
    const render = <V>(p: ListPage<V>, f: (v: V) => Json): ListPage<Json> => ({ value: p.value.map(f), ...(p.nextSkip !== undefined ? { nextSkip: p.nextSkip } : {}) });
    if (ns === 'microsoft.network' && type === NIC_TYPE) page = render(this.arm.nicListPage(scope, skip), nicJson);
    else if (ns === 'microsoft.compute' && type === VM_TYPE) {
      const view = vmListView(url);
      const vms = this.arm.vmListPage(scope, skip);
      // No VM of the fake belongs to a scale set: the one filter Compute takes matches none.
      page = view.inScaleSet ? { value: [] } : render(vms, view.instanceView ? vmWithInstanceViewJson : vmJson);
    } else if (ns === 'microsoft.compute' && type === DISK_TYPE) page = render(this.arm.diskListPage(scope, skip), diskJson);
    else if (ns === 'microsoft.compute' && type === CRG_TYPE) page = skip > 0 ? { value: [] } : { value: this.arm.capacityReservationGroupList(scope).map((g) => groupJson(g, false)) };
    else throw notModelled(method, url);
    return this.pageResponse(page, url);
  }

  /** A page as ARM sends it: `value`, and an absolute `nextLink` (same path and query, a $skiptoken) unless it is the last. */
  private pageResponse(page: ListPage<Json>, url: URL): ArmHttpResponse {
    const out: { [key: string]: Json } = { value: page.value };
    if (page.nextSkip !== undefined) {
      const next = new URL(`${this.base}${url.pathname}${url.search}`);
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
  computeLocationRoute(sub: string, location: string, kind: string, url: URL): ArmHttpResponse {
    const loc = normalizeLocation(location);
    switch (kind) {
      case 'usages': {
        const usage = this.arm.quotaUsage(sub, loc);
        if (!usage) throw locationNotServed(loc, sub);
        return json(200, usageListJson(usage));
      }
      case 'vmsizes':
        this.arm.countSkuList(sub);
        return json(200, vmSizeList(this.arm.instanceTypes(), loc));
      case VM_TYPE: {
        const token = url.searchParams.get('$skiptoken');
        const skip = token === null ? 0 : Number(token);
        if (!Number.isInteger(skip) || skip < 0) throw new HttpError(400, 'InvalidSkipToken', `The $skiptoken '${token}' is not valid.`);
        const vms = this.arm.vmListPage({ subscriptionId: sub }, skip);
        const value = vms.value.filter((vm) => vm.location === loc).map(vmJson);
        return this.pageResponse({ value, ...(vms.nextSkip !== undefined ? { nextSkip: vms.nextSkip } : {}) }, url);
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
  vmChildRoute(method: string, ref: { subscriptionId: string; resourceGroup: string; name: string }, child: string, url: URL, apiVersion: string): ArmHttpResponse {
    if (child === 'instanceview' || child === 'vmsizes') {
      requireMethod(method, 'GET');
      const vm = this.arm.vmGet(ref);
      if (!vm) throw resourceNotFound('Microsoft.Compute/virtualMachines', ref);
      return json(200, child === 'instanceview' ? vmInstanceViewJson(vm) : vmSizeList(this.arm.instanceTypes(), vm.location));
    }
    const action = POWER_ACTIONS[child];
    if (action !== undefined) {
      requireMethod(method, 'POST');
      // Hibernation is a deallocate the fake does not model.
      if (action === 'deallocate' && lower(url.searchParams.get('hibernate') ?? undefined) === 'true') throw notModelled(method, url);
      const location = this.arm.vmLocation(ref);
      const begun = this.arm.beginPowerAction(ref, action);
      if (!begun) throw resourceNotFound('Microsoft.Compute/virtualMachines', ref);
      return { status: 202, headers: this.asyncHeaders('Microsoft.Compute', ref.subscriptionId, location ?? 'global', begun.operationId, apiVersion, true) };
    }
    if (child === 'simulateeviction') {
      requireMethod(method, 'POST');
      if (!this.arm.simulateEviction(ref)) throw resourceNotFound('Microsoft.Compute/virtualMachines', ref);
      return { status: 204, headers: {} };
    }
    throw notModelled(method, url);
  }

  /** The location a write names (a PUT's body) or acts in (the resource's), for NoRegisteredProviderFound. */

  /** GET of a subnet the fake allocates NIC addresses from (its virtual network is not modelled). */
  subnetRoute(sub: string, id: string): ArmHttpResponse {
    const subnet = this.arm.subnetGet(sub, id);
    if (!subnet) throw new HttpError(404, 'NotFound', `Resource ${id} not found.`);
    return json(200, subnetJson(subnet));
  }

  /** Microsoft.Resources resource groups: enough for a client to create the group it deploys into. */
  resourceGroupRoute(method: string, sub: string, name: string, body: string | undefined, url: URL): ArmHttpResponse {
    const id = `/subscriptions/${sub}/resourceGroups/${name}`;
    const render = (rg: { location: string }): Json => ({ id, name, type: 'Microsoft.Resources/resourceGroups', location: rg.location, properties: { provisioningState: 'Succeeded' } });
    switch (method) {
      case 'GET':
        return json(200, render(this.arm.getResourceGroup(sub, name)));
      case 'PUT': {
        const location = requiredLocation(parseBody(body));
        const out = this.arm.putResourceGroup(sub, name, location);
        if (!out.created && out.location !== normalizeLocation(location)) {
          throw new HttpError(409, 'InvalidResourceGroupLocation', `Invalid resource group location '${normalizeLocation(location)}'. The Resource group already exists in location '${out.location}'.`);
        }
        return json(out.created ? 201 : 200, render(out));
      }
      default:
        throw methodNotAllowed(method, url);
    }
  }

  nicRoute(method: string, ref: { subscriptionId: string; resourceGroup: string; name: string }, apiVersion: string, body: string | undefined, url: URL): ArmHttpResponse {
    switch (method) {
      case 'GET': {
        const nic = this.arm.nicGet(ref);
        if (!nic) throw resourceNotFound('Microsoft.Network/networkInterfaces', ref);
        return json(200, nicJson(nic));
      }
      case 'PUT': {
        const doc = parseBody(body);
        const location = requiredLocation(doc);
        this.validated('nic.put', ref.name, () => validateNicPut(doc));
        sameLocation(ref, this.arm.nicLocation(ref), location);
        const subnetId = str(doc, ['properties', 'ipConfigurations', 0, 'properties', 'subnet', 'id'], 'properties.ipConfigurations[0].properties.subnet.id');
        const { nic, created } = this.arm.nicPut({ ref, location, subnetId, tags: tagsOf(doc) });
        const opId = this.arm.completedOperation('create');
        return json(created ? 201 : 200, nicJson(nic), this.asyncHeaders('Microsoft.Network', ref.subscriptionId, location, opId, apiVersion, false, true));
      }
      case 'PATCH': {
        const doc = parseBody(body);
        this.validated('nic.patch', ref.name, () => validateNicPatch(doc));
        const nic = this.arm.nicPatchTags(ref, patchedTags(doc, url));
        if (!nic) throw resourceNotFound('Microsoft.Network/networkInterfaces', ref);
        return json(200, nicJson(nic));
      }
      case 'DELETE': {
        const existing = this.arm.nicLocation(ref);
        const begun = this.arm.nicDelete(ref);
        if (begun === 'notFound') return { status: 204, headers: {} };
        return { status: 202, headers: this.asyncHeaders('Microsoft.Network', ref.subscriptionId, existing ?? 'global', begun.operationId, apiVersion, true) };
      }
      default:
        throw methodNotAllowed(method, url);
    }
  }

  vmRoute(
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
        const vm = this.arm.vmGet(ref);
        if (!vm) throw resourceNotFound('Microsoft.Compute/virtualMachines', ref);
        return json(200, lower(expand ?? undefined) === 'instanceview' ? vmWithInstanceViewJson(vm) : vmJson(vm));
      }
      case 'PUT': {
        checkPreconditions(headers, this.arm.vmEtag(ref));
        const doc = parseBody(body);
        const location = requiredLocation(doc);
        this.validated('vm.put', ref.name, () => validateVmPut(doc));
        sameLocation(ref, this.arm.vmLocation(ref), location);
        const request = parseVmPut(ref, doc);
        const customData = optStr(doc, ['properties', 'osProfile', 'customData']);
        if (customData !== undefined) request.customDataHash = digest(customData);
        const begun = this.arm.beginCreateVm(request);
        // The spec declares both for a VM create (final-state-via: location); Location leads to the VM once it is done.
        const lro = begun.operationId === undefined ? {} : this.asyncHeaders('Microsoft.Compute', ref.subscriptionId, begun.vm.location, begun.operationId, apiVersion, true);
        return json(begun.created ? 201 : 200, vmJson(begun.vm), lro);
      }
      case 'PATCH': {
        const doc = parseBody(body);
        this.validated('vm.patch', ref.name, () => validateVmPatch(doc));
        const vm = this.arm.vmPatchTags(ref, patchedTags(doc, url));
        if (!vm) throw resourceNotFound('Microsoft.Compute/virtualMachines', ref);
        // Compute answers an update as an LRO (final-state-via: location, like a create); the fake's is done at once.
        return json(200, vmJson(vm), this.asyncHeaders('Microsoft.Compute', ref.subscriptionId, vm.location, this.arm.completedOperation('create', ref), apiVersion, true));
      }
      case 'DELETE': {
        const location = this.arm.vmLocation(ref);
        const begun = this.arm.beginDeleteVm(ref);
        if (!begun) return { status: 204, headers: {} };
        return { status: 202, headers: this.asyncHeaders('Microsoft.Compute', ref.subscriptionId, location ?? 'global', begun.operationId, apiVersion, true) };
      }
      default:
        throw methodNotAllowed(method, url);
    }
  }

  diskRoute(method: string, ref: { subscriptionId: string; resourceGroup: string; name: string }, apiVersion: string, url: URL): ArmHttpResponse {
    switch (method) {
      case 'GET': {
        const disk = this.arm.diskGet(ref);
        if (!disk) throw resourceNotFound('Microsoft.Compute/disks', ref);
        return json(200, diskJson(disk));
      }
      case 'DELETE': {
        const location = this.arm.diskLocation(ref);
        if (this.arm.diskDelete(ref) === 'notFound') return { status: 204, headers: {} };
        const opId = this.arm.completedOperation('delete');
        return { status: 202, headers: this.asyncHeaders('Microsoft.Compute', ref.subscriptionId, location ?? 'global', opId, apiVersion, true) };
      }
      default:
        throw methodNotAllowed(method, url);
    }
  }

  operationRoute(sub: string, id: string, monitor: boolean, url: URL): ArmHttpResponse {
    const op = this.arm.pollOperation(sub, id);
    if (!op) throw new HttpError(404, 'ResourceNotFound', `The operation '${id}' was not found.`);
    const self = `${this.base}${url.pathname}${url.search}`;
    const progress: Record<string, string> = this.retryAfter > 0 ? { 'retry-after': String(this.retryAfter) } : {};
    if (!monitor) return json(200, operationJson(op.id, op.status, op.startedAt, op.endedAt), op.status.status === 'InProgress' ? progress : {});
    // The Location ("monitor") flavour answers 202 while running and the outcome after.
    if (op.status.status === 'InProgress') return { status: 202, headers: { location: self, ...progress } };
    if (op.status.status === 'Failed') return json(failedStatus(op), errorJson(op.status.error.code, op.status.error.message));
    if (op.target !== undefined) {
      const vm = this.arm.vmGet(op.target);
      if (!vm) throw resourceNotFound('Microsoft.Compute/virtualMachines', op.target);
      return json(200, vmJson(vm));
    }
    // A finished VM action (start, deallocate, …) answers 200 there, as the SDK's action LROs expect; a delete 204.
    return { status: op.kind === 'action' ? 200 : 204, headers: {} };
  }

  skuList(sub: string, url: URL): ArmHttpResponse {
    this.arm.countSkuList(sub);
    return json(200, resourceSkuList(this.arm, sub, url.searchParams.get('$filter')));
  }

  /**
   * An LRO's headers. `done`: the write already finished (a NIC PUT, whose body says
   * Succeeded): Network then sends no Retry-After, so a client that honours it before its
   * first poll (the Go SDK's PollUntilDone does) is not held back.
   */
  private asyncHeaders(provider: 'Microsoft.Network' | 'Microsoft.Compute', sub: string, location: string, opId: string, apiVersion: string, withLocation: boolean, done = false): Record<string, string> {
    const loc = location.toLowerCase();
    const api = encodeURIComponent(apiVersion);
    const out: Record<string, string> = {
      'azure-asyncoperation': `${this.base}/subscriptions/${sub}/providers/${provider}/locations/${loc}/operations/${opId}?api-version=${api}`,
    };
    // Compute's LROs and Network's PUTs say so (recorded answers: docs/fidelity.md).
    if (provider === 'Microsoft.Compute' || !withLocation) out['azure-asyncnotification'] = 'Enabled';
    if (withLocation) {
      out['location'] =
        provider === 'Microsoft.Network'
          ? `${this.base}/subscriptions/${sub}/providers/${provider}/locations/${loc}/operationResults/${opId}?api-version=${api}`
          : `${this.base}/subscriptions/${sub}/providers/${provider}/locations/${loc}/operations/${opId}?monitor=true&api-version=${api}`;
    }
    if (this.retryAfter > 0 && !done) out['retry-after'] = String(this.retryAfter);
    return out;
  }

  /** Runs a body check; a refusal is also noted in the fake ARM, where a run can tell the controller sent a body ARM refuses. */
  private validated(op: 'nic.put' | 'vm.put' | 'nic.patch' | 'vm.patch', name: string, check: () => void): void {
    try {
      check();
    } catch (err) {
      if (err instanceof HttpError) this.arm.noteRefusedBody(`${op} ${name}: ${err.code}: ${err.details?.[0]?.message ?? err.message}`);
      throw err;
    }
  }
}

function failedStatus(op: OperationInfo): number {
  return op.status.status === 'Failed' && op.status.error.code === 'InternalServerError' ? 500 : 409;
}
