import type { VirtualClock } from '../virtual-clock.js';
import type { FakeArm } from './fake-arm.js';
import { normalizeLocation } from './model.js';
import { at } from './rest-bodies.js';
import { checkApiVersion, checkAuthorization, checkContentType, CRG_TYPE, DISK_TYPE, NIC_TYPE, requireServedType, VM_TYPE } from './rest-checks.js';
import { capacityReservationRoute } from './rest-capacity-reservations.js';
import { errorResponse, HttpError, lower, lowerKeys, notModelled, requireMethod, withHeaders } from './rest-errors.js';
import { ArmResourceRoutes } from './rest-resources.js';
import { stableGuid } from './rest-shapes.js';
import type { ArmHttpRequest, ArmHttpResponse } from './rest-http.js';
import { simRoute } from './rest-sim.js';

/**
 * An ARM REST dialect over FakeArm, close enough to management.azure.com that the official
 * @azure/arm-network 39 and @azure/arm-compute 25 clients (and their core-lro pollers) run
 * against it unchanged, in-process through the SDK's `httpClient` or over HTTPS.
 *
 * What the SDKs rely on and this face reproduces:
 * - PUT answers 201 (created) or 200 (existing) with the resource body; a VM PUT that
 *   starts work carries `Azure-AsyncOperation` and `Location` (+ `Retry-After`); core-lro
 *   polls the first until `status` is Succeeded/Failed, then GETs the second for the VM.
 * - Request bodies are checked against the SDKs' own REST models (request-validation.ts).
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
export type { ArmHttpRequest, ArmHttpResponse } from './rest-http.js';

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

export function createArmRestHandler(arm: FakeArm, opts: ArmRestOptions): ArmRestHandler {
  const face = new ArmRestFace(arm, opts);
  return (req) => face.handle(req);
}

/** The REST face: common headers, authentication, api-version and content checks, then routing. */
class ArmRestFace {
  private readonly routes: ArmResourceRoutes;
  private readonly requireAuth: boolean;
  private readonly instance: string;
  private readonly clock: VirtualClock | undefined;
  private requestSeq = 0;

  constructor(private readonly arm: FakeArm, opts: ArmRestOptions) {
    this.routes = new ArmResourceRoutes(arm, opts.baseUrl.replace(/\/+$/, ''), opts.lroRetryAfterSeconds ?? 10);
    this.requireAuth = opts.requireAuth ?? true;
    this.instance = opts.instanceId ?? 'in-process';
    this.clock = opts.clock;
  }

  async handle(req: ArmHttpRequest): Promise<ArmHttpResponse> {
    const res = await this.answer(req);
    if (req.method.toUpperCase() !== 'HEAD') return res;
    // A HEAD answer never has a body, errors included.
    const headers = { ...res.headers };
    delete headers['content-type'];
    return { status: res.status, headers };
  }

  private async answer(req: ArmHttpRequest): Promise<ArmHttpResponse> {
    const headers = lowerKeys(req.headers);
    const requestId = stableGuid(`${this.instance}/request-${++this.requestSeq}`);
    const common: Record<string, string> = {
      'x-ms-request-id': requestId,
      'x-ms-correlation-request-id': headers['x-ms-correlation-request-id'] ?? requestId,
    };
    // Rate-limit headers only when this request reached ARM's counters (the fake keeps the last call's).
    const before = this.arm.lastCallHeaders().seq;
    const limits = (): Record<string, string> => {
      const last = this.arm.lastCallHeaders();
      return last.seq === before ? {} : last.headers;
    };
    try {
      const url = new URL(req.url, 'https://fake-arm.invalid');
      const method = req.method.toUpperCase();
      const segs = url.pathname.split('/').filter((s) => s.length > 0).map(decodeSegment);
      if (segs[0] === '_sim') return withHeaders(await simRoute(this.arm, this.clock, method, segs, url, req.body), common);
      if (this.requireAuth) checkAuthorization(headers['authorization']);
      const apiVersion = url.searchParams.get('api-version');
      if (!apiVersion) {
        throw new HttpError(400, 'MissingApiVersionParameter', 'The api-version query parameter (?api-version=) is required for all requests.');
      }
      if (this.arm.validateApiVersions) checkApiVersion(method, segs, apiVersion, () => this.writeLocation(method, segs, req.body));
      if (method === 'PUT' || method === 'PATCH') checkContentType(headers['content-type']);
      const res = method === 'HEAD' ? this.headRoute(segs, url, apiVersion, headers) : this.armRoute(method, segs, url, apiVersion, req.body, headers);
      return withHeaders(res, { ...common, ...limits() });
    } catch (err) {
      return withHeaders(errorResponse(err), { ...common, ...limits() });
    }
  }

  // ------------------------------------------------------------------ ARM routes

  /**
   * HEAD: ARM answers it for resource groups (Check Existence: 204 or 404, no body); the
   * resource providers the fake models do not serve it (405, no body).
   */
  private headRoute(segs: string[], url: URL, apiVersion: string, headers: Record<string, string>): ArmHttpResponse {
    if (segs.length !== 4 || lower(segs[2]) !== 'resourcegroups') return { status: 405, headers: {} };
    const res = this.armRoute('GET', segs, url, apiVersion, undefined, headers);
    return { ...res, status: res.status === 200 ? 204 : res.status };
  }

  private armRoute(method: string, segs: string[], url: URL, apiVersion: string, body: string | undefined, headers: Record<string, string>): ArmHttpResponse {
    // Tenant-level routes (/providers, /tenants, …) are ARM's too, but not modelled.
    if (lower(segs[0]) !== 'subscriptions' || segs[1] === undefined) throw notModelled(method, url);
    const sub = segs[1];
    if (this.arm.regionsOf(sub).length === 0) throw new HttpError(404, 'SubscriptionNotFound', `The subscription '${sub}' could not be found.`);
    if (lower(segs[2]) === 'resourcegroups' && segs[3] !== undefined && segs.length === 4) return this.routes.resourceGroupRoute(method, sub, segs[3], body, url);
    if (lower(segs[2]) === 'resourcegroups' && segs[3] !== undefined && lower(segs[4]) === 'providers') {
      const rg = segs[3];
      const ns = lower(segs[5]);
      const type = lower(segs[6]);
      const name = segs[7];
      if (segs.length === 6) throw notModelled(method, url); // the provider's registration
      if (ns === 'microsoft.network' && type === 'virtualnetworks' && segs.length === 10 && lower(segs[8]) === 'subnets' && method === 'GET') {
        return this.routes.subnetRoute(sub, `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.Network/virtualNetworks/${segs[7]}/subnets/${segs[9]}`);
      }
      requireServedType(ns, segs[5], segs[6], apiVersion, method, url);
      if (segs.length === 7) return this.routes.listRoute(method, ns, type, { subscriptionId: sub, resourceGroup: rg }, url);
      if (name === undefined) throw notModelled(method, url);
      const ref = { subscriptionId: sub, resourceGroup: rg, name };
      if (ns === 'microsoft.compute' && type === CRG_TYPE) return capacityReservationRoute(this.arm, method, ref, segs.slice(8), url);
      if (segs.length === 9 && ns === 'microsoft.compute' && type === VM_TYPE) return this.routes.vmChildRoute(method, ref, lower(segs[8]), url, apiVersion);
      if (segs.length !== 8) throw notModelled(method, url);
      if (ns === 'microsoft.network' && type === NIC_TYPE) return this.routes.nicRoute(method, ref, apiVersion, body, url);
      if (ns === 'microsoft.compute' && type === VM_TYPE) return this.routes.vmRoute(method, ref, apiVersion, body, url, headers);
      if (ns === 'microsoft.compute' && type === DISK_TYPE) return this.routes.diskRoute(method, ref, apiVersion, url);
      throw notModelled(method, url);
    }
    if (lower(segs[2]) === 'providers') {
      const ns = lower(segs[3]);
      const type = lower(segs[4]);
      if (segs.length === 4) throw notModelled(method, url); // the provider's registration
      requireServedType(ns, segs[3], segs[4], apiVersion, method, url);
      if (segs.length === 5 && ns === 'microsoft.compute' && type === 'skus') {
        requireMethod(method, 'GET');
        return this.routes.skuList(sub, url);
      }
      if (segs.length === 5) return this.routes.listRoute(method, ns, type, { subscriptionId: sub }, url);
      if (type === 'locations' && segs.length === 7 && ns === 'microsoft.compute' && segs[5] !== undefined) {
        requireMethod(method, 'GET');
        return this.routes.computeLocationRoute(sub, segs[5], lower(segs[6]), url);
      }
      if (type === 'locations' && segs.length === 8 && segs[7] !== undefined) {
        requireMethod(method, 'GET');
        const kind = lower(segs[6]);
        const monitor = kind === 'operationresults' || url.searchParams.get('monitor') === 'true';
        if (kind !== 'operations' && kind !== 'operationresults') throw notModelled(method, url);
        return this.routes.operationRoute(sub, segs[7], monitor, url);
      }
    }
    throw notModelled(method, url);
  }

  /** The location a write names (a PUT's body) or acts in (the resource's), for NoRegisteredProviderFound. */
  private writeLocation(method: string, segs: string[], body: string | undefined): string {
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
      key === `microsoft.network/${NIC_TYPE}` ? this.arm.nicLocation(ref) : key === `microsoft.compute/${VM_TYPE}` ? this.arm.vmLocation(ref) : key === `microsoft.compute/${DISK_TYPE}` ? this.arm.diskLocation(ref) : undefined;
    return found ?? 'global';
  }
}


/** A path segment, percent-decoded; a malformed escape (`%zz`, a lone `%E2`) is the client's error, not the server's. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, 'BadRequest', `The request URI is invalid: the path segment '${segment}' has a malformed percent-encoding.`);
  }
}
