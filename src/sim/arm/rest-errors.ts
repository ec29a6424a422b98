import { AzureError } from '../../ports/azure.js';
import { errorJson, type Json } from './rest-shapes.js';
import type { ArmHttpResponse } from './rest-http.js';

/** Raised inside the handler for REST-level refusals that are not FakeArm answers. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly target?: string,
    /** ARM's error.details[], where its answer carries them. */
    readonly details?: ReadonlyArray<{ code: string; message: string; target?: string }>,
  ) {
    super(message);
  }
}

export function json(status: number, body: Json, headers: Record<string, string> = {}): ArmHttpResponse {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers }, body: JSON.stringify(body) };
}

export function withHeaders(res: ArmHttpResponse, extra: Record<string, string>): ArmHttpResponse {
  return { ...res, headers: { ...extra, ...res.headers } };
}

export function errorResponse(err: unknown): ArmHttpResponse {
  if (err instanceof HttpError) {
    const body = errorJson(err.code, err.message, err.target);
    if (err.details) (body['error'] as { [key: string]: Json })['details'] = err.details.map((d) => ({ ...d }));
    return json(err.status, body, err.headers);
  }
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

export function invalidResourceType(nsName: string, type: string, apiVersion: string, supported?: readonly string[]): HttpError {
  const versions = supported ? ` The supported api-versions are '${supported.join(',')}'.` : '';
  return new HttpError(404, 'InvalidResourceType', `The resource type '${type}' could not be found in the namespace '${nsName}' for api version '${apiVersion}'.${versions}`);
}

export function locationNotServed(location: string, sub: string): AzureError {
  return new AzureError('InvalidParameter', 400, `Location '${location}' is not configured for subscription '${sub}' in the fake ARM.`);
}

/** A real ARM path the simulator does not model (VM power actions, NIC sub-resources, …): said plainly, never a 404 a client could take for "gone". */
export function notModelled(method: string, url: URL): HttpError {
  return new HttpError(501, 'NotImplemented', `The azflex simulator does not model ${method} ${url.pathname}.`);
}

export function resourceNotFound(type: string, ref: { resourceGroup: string; name: string }): HttpError {
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
export function methodNotAllowed(method: string, url: URL): HttpError {
  if (method === 'GET' || method === 'PUT' || method === 'PATCH' || method === 'DELETE') return notModelled(method, url);
  return new HttpError(405, 'MethodNotAllowed', `The requested resource does not support http method '${method}' (${url.pathname}).`);
}

export function requireMethod(method: string, expected: string): void {
  if (method !== expected) throw new HttpError(405, 'MethodNotAllowed', `The requested resource does not support http method '${method}'.`);
}

export function lower(s: string | undefined): string {
  return (s ?? '').toLowerCase();
}

export function lowerKeys(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}
