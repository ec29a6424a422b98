import { AzureError, isAzureError, type AzureErrorCode, type AzureErrorInfo } from '../ports/azure.js';
import { redactString } from '../log/redact.js';

/**
 * SDK failures → AzureError. The TypeSpec-generated SDKs fail in two shapes:
 *  - a synchronous `RestError` (from @typespec/ts-http-runtime, re-exported by
 *    @azure/core-rest-pipeline) with `statusCode`, `code` (ARM's error.code) and the
 *    response headers (Retry-After);
 *  - an asynchronous LRO failure from @azure/core-lro, a plain `Error` whose message is
 *    "The long-running operation has failed. <Code>. <message>": the code only lives there.
 * Network failures are RestErrors without a status (code ECONNRESET, REQUEST_SEND_ERROR, ...).
 * Everything that leaves the adapter goes through `toAzureError`.
 */

/** The subset of RestError we read; duck-typed so a second copy of the runtime still matches. */
interface RestErrorLike {
  name: string;
  message: string;
  statusCode?: number;
  code?: string;
  details?: unknown;
  response?: { headers?: { get(name: string): string | undefined } };
  request?: { url?: string };
}

function isRestErrorLike(err: unknown): err is RestErrorLike {
  return err instanceof Error && err.name === 'RestError';
}

/** ARM codes (and aliases) → the port's codes. Keys are lower-case: ARM is not consistent. */
const CODE_ALIASES: ReadonlyMap<string, AzureErrorCode> = new Map<string, AzureErrorCode>([
  ['operationnotallowed', 'OperationNotAllowed'],
  ['quotaexceeded', 'QuotaExceeded'],
  ['skunotavailable', 'SkuNotAvailable'],
  ['allocationfailed', 'AllocationFailed'],
  ['zonalallocationfailed', 'ZonalAllocationFailed'],
  ['overconstrainedallocationrequest', 'OverconstrainedAllocationRequest'],
  ['overconstrainedzonalallocationrequest', 'OverconstrainedZonalAllocationRequest'],
  ['azurespotisnotsupportedforthisvmsize', 'AzureSpotIsNotSupportedForThisVMSize'],
  ['spotpricegreaterthanprovidedmaxprice', 'SpotPriceGreaterThanProvidedMaxPrice'],
  ['nicreservedforanothervm', 'NicReservedForAnotherVm'],
  ['nicinuse', 'NicInUse'],
  ['subnetisfull', 'SubnetIsFull'],
  ['toomanyrequests', 'TooManyRequests'],
  ['subscriptionrequeststhrottled', 'TooManyRequests'],
  ['resourcerequeststhrottled', 'TooManyRequests'],
  ['tenantrequeststhrottled', 'TooManyRequests'],
  // A 404 is "absent" only with these codes. ARM also answers 404 for a request it cannot
  // route (an api-version or type it does not serve): reading that as "gone" would let a
  // finalizer go while the VM or NIC still exists, so it is a configuration error instead.
  ['invalidresourcetype', 'InvalidParameter'],
  ['invalidresourcenamespace', 'InvalidParameter'],
  ['noregisteredproviderfound', 'InvalidParameter'],
  ['invalidapiversionparameter', 'InvalidParameter'],
  ['resourcenotfound', 'ResourceNotFound'],
  ['notfound', 'ResourceNotFound'],
  ['resourcegroupnotfound', 'ResourceNotFound'],
  ['parentresourcenotfound', 'ResourceNotFound'],
  ['internalservererror', 'InternalServerError'],
  ['internalexecutionerror', 'InternalServerError'],
  ['serviceunavailable', 'InternalServerError'],
  ['badgateway', 'InternalServerError'],
  ['retryableerror', 'InternalServerError'],
  ['anotheroperationinprogress', 'InternalServerError'],
  ['requesttimeout', 'RequestTimeout'],
  ['gatewaytimeout', 'RequestTimeout'],
  ['operationtimedout', 'RequestTimeout'],
  ['invalidparameter', 'InvalidParameter'],
  ['invalidresourcereference', 'InvalidParameter'],
  ['invalidrequestcontent', 'InvalidParameter'],
  ['invalidrequestformat', 'InvalidParameter'],
  ['badrequest', 'InvalidParameter'],
  ['propertychangenotallowed', 'InvalidParameter'],
  ['conflictinguserinput', 'ResourceNameConflict'],
  ['platformimagenotfound', 'InvalidParameter'],
  ['imagenotfound', 'InvalidParameter'],
  ['invalidauthenticationtoken', 'Unknown'],
  ['authorizationfailed', 'Unknown'],
]);

/** Socket-level failures: the request may or may not have reached ARM, so it is a timeout. */
const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'REQUEST_SEND_ERROR',
]);

/** Statuses for failures that arrive without one (async LRO failures, socket errors). */
const CANONICAL_STATUS: Record<AzureErrorCode, number> = {
  OperationNotAllowed: 409,
  QuotaExceeded: 409,
  SkuNotAvailable: 409,
  AllocationFailed: 409,
  ZonalAllocationFailed: 409,
  OverconstrainedAllocationRequest: 409,
  OverconstrainedZonalAllocationRequest: 409,
  AzureSpotIsNotSupportedForThisVMSize: 400,
  SpotPriceGreaterThanProvidedMaxPrice: 400,
  NicReservedForAnotherVm: 400,
  NicInUse: 400,
  SubnetIsFull: 400,
  TooManyRequests: 429,
  ResourceNotFound: 404,
  InternalServerError: 500,
  RequestTimeout: 408,
  ResourceNameConflict: 409,
  InvalidParameter: 400,
  Unknown: 0,
};

/** Maps an ARM error code string to the port's code, or undefined when unknown. */
export function armCodeToAzureCode(code: string | undefined): AzureErrorCode | undefined {
  if (!code) return undefined;
  if (NETWORK_CODES.has(code.toUpperCase())) return 'RequestTimeout';
  return CODE_ALIASES.get(code.toLowerCase());
}

function codeFromStatus(status: number | undefined): AzureErrorCode {
  if (status === undefined) return 'Unknown';
  if (status === 429) return 'TooManyRequests';
  if (status === 404) return 'ResourceNotFound';
  if (status === 408 || status === 504) return 'RequestTimeout';
  if (status >= 500) return 'InternalServerError';
  if (status === 400) return 'InvalidParameter';
  return 'Unknown';
}

/**
 * Retry-After in seconds: delta-seconds or an HTTP date (relative to `nowMs`, the injected
 * clock, so a virtual clock stays in charge). Also reads ARM's millisecond variants.
 */
export function parseRetryAfterSeconds(
  headers: { get(name: string): string | undefined } | undefined,
  nowMs?: number,
): number | undefined {
  if (!headers) return undefined;
  for (const name of ['retry-after-ms', 'x-ms-retry-after-ms']) {
    const ms = Number(headers.get(name));
    if (headers.get(name) !== undefined && Number.isFinite(ms) && ms >= 0) return Math.ceil(ms / 1000);
  }
  const raw = headers.get('retry-after')?.trim();
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw);
  const at = Date.parse(raw);
  if (Number.isNaN(at) || nowMs === undefined) return undefined;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}

const LRO_FAILURE = /The long-running operation has failed\.\s*([A-Za-z][A-Za-z0-9_]*)\.\s*([\s\S]*)$/;

/** Inner error codes: ARM sometimes wraps the specific code in error.details[]. */
function innerCodes(details: unknown): string[] {
  const out: string[] = [];
  const visit = (node: unknown, depth: number): void => {
    if (depth > 4 || node === null || typeof node !== 'object') return;
    const rec = node as Record<string, unknown>;
    if (typeof rec.code === 'string') out.push(rec.code);
    for (const key of ['error', 'details', 'innererror', 'innerError']) {
      const child = rec[key];
      if (Array.isArray(child)) child.forEach((c) => visit(c, depth + 1));
      else visit(child, depth + 1);
    }
  };
  visit(details, 0);
  return out;
}

/**
 * Any failure → AzureError. `nowMs` (from the injected clock) resolves HTTP-date Retry-After.
 * Messages are kept as ARM wrote them: they carry quota details the taxonomy parses.
 */
export function toAzureError(err: unknown, nowMs?: number, details?: AzureErrorInfo['details']): AzureError {
  if (isAzureError(err)) return err;
  const mapped = mapError(err, nowMs);
  // Defence in depth: an ARM message that echoes request content must not carry a secret onward.
  const message = mapped.message.slice(mapped.code.length + 2);
  const clean = redactString(message);
  if (clean === message && (details === undefined || mapped.info.details !== undefined)) return mapped;
  const info = details === undefined || mapped.info.details !== undefined ? mapped.info : { ...mapped.info, details };
  return new AzureError(mapped.code, mapped.statusCode, clean, mapped.retryAfterSeconds, info);
}

/**
 * ARM's error.details[] from an error response's text. The SDKs' RestError keeps the code and
 * message of an LRO's refused initial request but drops details[], where Compute states the
 * throttling policy a 429 exceeded; a pipeline policy reads them here instead.
 */
export function armErrorDetails(bodyAsText: string | null | undefined): AzureErrorInfo['details'] {
  if (!bodyAsText || bodyAsText.length > 64 * 1024) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(bodyAsText);
  } catch {
    return undefined;
  }
  const error = body !== null && typeof body === 'object' ? (body as { error?: unknown }).error : undefined;
  const raw = error !== null && typeof error === 'object' ? (error as { details?: unknown }).details : undefined;
  if (!Array.isArray(raw)) return undefined;
  const details: NonNullable<AzureErrorInfo['details']> = [];
  for (const d of raw as unknown[]) {
    if (d === null || typeof d !== 'object') continue;
    const { code, target, message } = d as Record<string, unknown>;
    if (typeof code !== 'string' || typeof message !== 'string') continue;
    details.push(typeof target === 'string' ? { code, target, message } : { code, message });
  }
  return details.length > 0 ? details : undefined;
}

/**
 * Who throttled a 429: a resource provider names itself in x-ms-ratelimit-remaining-resource
 * ("Microsoft.Compute/PutVM3Min;0") or answers with its own code (Compute: OperationNotAllowed);
 * ARM's subscription buckets say SubscriptionRequestsThrottled.
 */
function throttledBy(err: RestErrorLike): string {
  const resource = err.response?.headers?.get('x-ms-ratelimit-remaining-resource');
  const named = resource ? /^\s*([A-Za-z]+\.[A-Za-z]+)\//.exec(resource)?.[1] : undefined;
  if (named) return named;
  const code = (err.code ?? '').toLowerCase();
  if (code === 'subscriptionrequeststhrottled' || code === 'tenantrequeststhrottled' || code === 'toomanyrequests' || code === '') return 'arm';
  const fromUrl = err.request?.url ? /\/providers\/([A-Za-z]+\.[A-Za-z]+)\//i.exec(err.request.url)?.[1] : undefined;
  return fromUrl ?? 'arm';
}

function mapError(err: unknown, nowMs: number | undefined): AzureError {

  if (isRestErrorLike(err)) {
    const status = typeof err.statusCode === 'number' && err.statusCode > 0 ? err.statusCode : undefined;
    let code = armCodeToAzureCode(err.code);
    // A generic top-level code can hide the specific one in details (e.g. BadRequest → SubnetIsFull).
    if (code === undefined || code === 'InvalidParameter' || code === 'Unknown') {
      const inner = innerCodes(err.details).map(armCodeToAzureCode).find((c) => c !== undefined && c !== 'InvalidParameter' && c !== 'Unknown');
      if (inner) code = inner;
    }
    if (code === undefined) code = status === undefined && err.code === undefined ? 'RequestTimeout' : codeFromStatus(status);
    const retryAfter = parseRetryAfterSeconds(err.response?.headers, nowMs);
    const armCode = err.code !== undefined ? { armCode: err.code } : {};
    // A 429 is throttling whatever its code says (Compute answers OperationNotAllowed), and its Retry-After is binding.
    if (status === 429) return new AzureError('TooManyRequests', 429, err.message, retryAfter, { ...armCode, throttledBy: throttledBy(err) });
    return new AzureError(code, status ?? CANONICAL_STATUS[code], err.message, retryAfter, armCode);
  }

  if (err instanceof Error) {
    const lro = LRO_FAILURE.exec(err.message);
    if (lro) {
      const code = armCodeToAzureCode(lro[1]) ?? 'Unknown';
      return new AzureError(code, CANONICAL_STATUS[code], lro[2]!.trim() || err.message);
    }
    if (err.name === 'AbortError' || /timed? ?out/i.test(err.message)) {
      return new AzureError('RequestTimeout', CANONICAL_STATUS.RequestTimeout, err.message);
    }
    const sys = (err as Error & { code?: unknown }).code;
    if (typeof sys === 'string' && NETWORK_CODES.has(sys)) {
      return new AzureError('RequestTimeout', CANONICAL_STATUS.RequestTimeout, err.message);
    }
    return new AzureError('Unknown', 0, err.message);
  }
  return new AzureError('Unknown', 0, String(err));
}
