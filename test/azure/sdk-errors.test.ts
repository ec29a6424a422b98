import { describe, expect, it } from 'vitest';
import { RestError, createHttpHeaders } from '@azure/core-rest-pipeline';
import { AzureError, type AzureErrorCode } from '../../src/ports/azure.js';
import { armErrorDetails, parseRetryAfterSeconds, toAzureError } from '../../src/azure/sdk-errors.js';
import { classifyAzureError, parseQuotaMessage, type FailureAction } from '../../src/azure/errors.js';

const FAMILY_MSG =
  'Operation could not be completed as it results in exceeding approved standardNDSH200v5Family Cores quota. Additional details - Deployment Model: Resource Manager, Location: eastus2, Current Limit: 0, Current Usage: 0, Additional Required: 96, (Minimum) New Limit Required: 96.';
const FAMILY_EXHAUSTED_MSG =
  'Operation could not be completed as it results in exceeding approved Standard NCADSA100v4 Family Cores quota. Additional details - Deployment Model: Resource Manager, Location: westeurope, Current Limit: 48, Current Usage: 48, Additional Required: 24';
const REGIONAL_MSG =
  'Operation could not be completed as it results in exceeding approved Total Regional Cores quota. Additional details - Deployment Model: Resource Manager, Location: eastus2, Current Limit: 100, Current Usage: 96, Additional Required: 96';
const LOW_PRIORITY_MSG =
  'Operation could not be completed as it results in exceeding approved LowPriorityCores quota. Additional details - Deployment Model: Resource Manager, Location: eastus2, Current Limit: 3, Current Usage: 0, Additional Required: 6';

function restError(status: number | undefined, code: string | undefined, message: string, headers?: Record<string, string>): RestError {
  return new RestError(message, {
    ...(status !== undefined ? { statusCode: status } : {}),
    ...(code !== undefined ? { code } : {}),
    ...(headers ? { response: { headers: createHttpHeaders(headers), status: status ?? 0, request: undefined as never } } : {}),
  });
}

/** The shape @azure/core-lro gives an async failure: only the message carries the code. */
const lroFailure = (code: string, message: string): Error => new Error(`The long-running operation has failed. ${code}. ${message}`);

interface Row {
  name: string;
  err: unknown;
  code: AzureErrorCode;
  status: number;
  kind: FailureAction['kind'];
  extra?: Record<string, unknown>;
}

const rows: Row[] = [
  { name: 'family quota (sync 409)', err: restError(409, 'OperationNotAllowed', FAMILY_MSG), code: 'OperationNotAllowed', status: 409, kind: 'insufficientCapacity', extra: { ttlSeconds: 3600, quota: { scope: 'family', family: 'standardNDSH200v5Family', currentLimit: 0 } } },
  { name: 'family quota exhausted (async)', err: lroFailure('OperationNotAllowed', FAMILY_EXHAUSTED_MSG), code: 'OperationNotAllowed', status: 409, kind: 'insufficientCapacity', extra: { ttlSeconds: 1800, quota: { scope: 'family', family: 'StandardNCADSA100v4Family', location: 'westeurope', currentLimit: 48 } } },
  { name: 'regional quota', err: restError(409, 'OperationNotAllowed', REGIONAL_MSG), code: 'OperationNotAllowed', status: 409, kind: 'insufficientCapacity', extra: { ttlSeconds: 1800, quota: { scope: 'regional', location: 'eastus2' } } },
  { name: 'low-priority quota', err: restError(403, 'OperationNotAllowed', LOW_PRIORITY_MSG), code: 'OperationNotAllowed', status: 403, kind: 'insufficientCapacity', extra: { ttlSeconds: 3600, quota: { scope: 'lowPriority' } } },
  { name: 'QuotaExceeded', err: restError(409, 'QuotaExceeded', 'Quota exceeded for resource'), code: 'QuotaExceeded', status: 409, kind: 'insufficientCapacity' },
  { name: 'SkuNotAvailable', err: restError(409, 'SkuNotAvailable', "The requested VM size is currently not available in location 'eastus2'."), code: 'SkuNotAvailable', status: 409, kind: 'insufficientCapacity', extra: { ttlSeconds: 23 * 3600 } },
  { name: 'AllocationFailed (async)', err: lroFailure('AllocationFailed', 'Allocation failed. We do not have sufficient capacity.'), code: 'AllocationFailed', status: 409, kind: 'insufficientCapacity', extra: { ttlSeconds: 180 } },
  { name: 'ZonalAllocationFailed (async)', err: lroFailure('ZonalAllocationFailed', 'Allocation failed in this zone.'), code: 'ZonalAllocationFailed', status: 409, kind: 'insufficientCapacity' },
  { name: 'OverconstrainedAllocationRequest', err: lroFailure('OverconstrainedAllocationRequest', 'Allocation failed. VM(s) with the following constraints cannot be allocated'), code: 'OverconstrainedAllocationRequest', status: 409, kind: 'insufficientCapacity' },
  { name: 'OverconstrainedZonalAllocationRequest', err: restError(409, 'OverconstrainedZonalAllocationRequest', 'zonal constraints'), code: 'OverconstrainedZonalAllocationRequest', status: 409, kind: 'insufficientCapacity' },
  { name: 'NicReservedForAnotherVm', err: restError(400, 'NicReservedForAnotherVm', 'Nic(s) in request is reserved for another Virtual Machine for 180 seconds.'), code: 'NicReservedForAnotherVm', status: 400, kind: 'reserved' },
  { name: 'NicInUse', err: restError(400, 'NicInUse', 'Network Interface is used by existing VM'), code: 'NicInUse', status: 400, kind: 'inUse' },
  { name: 'SubnetIsFull', err: restError(400, 'SubnetIsFull', 'Subnet nodes with address prefix 10.1.0.0/28 does not have enough capacity for 1 IP addresses.'), code: 'SubnetIsFull', status: 400, kind: 'subnetFull' },
  { name: 'SubnetIsFull hidden under a generic code', err: Object.assign(restError(400, 'InvalidRequestFormat', 'bad'), { details: { error: { code: 'InvalidRequestFormat', details: [{ code: 'SubnetIsFull', message: 'full' }] } } }), code: 'SubnetIsFull', status: 400, kind: 'subnetFull' },
  { name: '429 TooManyRequests', err: restError(429, 'TooManyRequests', 'throttled', { 'retry-after': '17' }), code: 'TooManyRequests', status: 429, kind: 'throttled', extra: { retryAfterSeconds: 17 } },
  { name: '429 SubscriptionRequestsThrottled', err: restError(429, 'SubscriptionRequestsThrottled', 'throttled', { 'retry-after': '42' }), code: 'TooManyRequests', status: 429, kind: 'throttled', extra: { retryAfterSeconds: 42 } },
  { name: '429 without a code', err: restError(429, undefined, 'Unexpected status code: 429'), code: 'TooManyRequests', status: 429, kind: 'throttled' },
  // Compute's own throttling: OperationNotAllowed (no "quota" in it) on a 429, with a long Retry-After that must hold.
  {
    name: '429 OperationNotAllowed from the Compute RP',
    err: restError(429, 'OperationNotAllowed', 'The server rejected the request because too many requests have been received for this subscription.', {
      'retry-after': '1200',
      'x-ms-ratelimit-remaining-resource': 'Microsoft.Compute/PutVM3Min;0,Microsoft.Compute/PutVM30Min;0',
    }),
    code: 'TooManyRequests',
    status: 429,
    kind: 'throttled',
    extra: { retryAfterSeconds: 1200 },
  },
  { name: '404 ResourceNotFound', err: restError(404, 'ResourceNotFound', 'not found'), code: 'ResourceNotFound', status: 404, kind: 'notFound' },
  { name: '404 NotFound (network RP)', err: restError(404, 'NotFound', 'not found'), code: 'ResourceNotFound', status: 404, kind: 'notFound' },
  // A 404 that names no absent resource: ARM could not route the request (api-version or type it does not serve).
  { name: '404 InvalidResourceType is not absence', err: restError(404, 'InvalidResourceType', "The resource type 'virtualMachines' could not be found in the namespace 'Microsoft.Compute' for api version '2099-01-01'."), code: 'InvalidParameter', status: 404, kind: 'invalid' },
  { name: '404 InvalidResourceNamespace is not absence', err: restError(404, 'InvalidResourceNamespace', "The resource namespace 'Microsoft.Compte' is invalid."), code: 'InvalidParameter', status: 404, kind: 'invalid' },
  { name: '500 InternalServerError', err: restError(500, 'InternalServerError', 'boom'), code: 'InternalServerError', status: 500, kind: 'transient' },
  { name: '503 without a code', err: restError(503, undefined, 'Unexpected status code: 503'), code: 'InternalServerError', status: 503, kind: 'transient' },
  { name: '504 GatewayTimeout', err: restError(504, 'GatewayTimeout', 'gateway timeout'), code: 'RequestTimeout', status: 504, kind: 'transient' },
  { name: 'async InternalServerError', err: lroFailure('InternalExecutionError', 'An internal execution error occurred.'), code: 'InternalServerError', status: 500, kind: 'transient' },
  { name: 'connection reset', err: restError(undefined, 'ECONNRESET', 'socket hang up'), code: 'RequestTimeout', status: 408, kind: 'transient' },
  { name: 'send error', err: restError(undefined, 'REQUEST_SEND_ERROR', 'connect ECONNREFUSED'), code: 'RequestTimeout', status: 408, kind: 'transient' },
  { name: 'abort', err: Object.assign(new Error('The operation was aborted.'), { name: 'AbortError' }), code: 'RequestTimeout', status: 408, kind: 'transient' },
  { name: '400 InvalidParameter', err: restError(400, 'InvalidParameter', "The value of parameter imageReference is invalid."), code: 'InvalidParameter', status: 400, kind: 'invalid' },
  { name: 'OperationNotAllowed without quota (VM marked for deletion)', err: restError(409, 'OperationNotAllowed', "Operation 'PUT' is not allowed on VM 'x' since the VM is marked for deletion."), code: 'OperationNotAllowed', status: 409, kind: 'transient' },
  { name: 'unknown plain error', err: new Error('something odd'), code: 'Unknown', status: 0, kind: 'transient' },
];

describe('toAzureError + classifyAzureError: every row of the taxonomy', () => {
  for (const row of rows) {
    it(row.name, () => {
      const mapped = toAzureError(row.err, 1_700_000_000_000);
      expect(mapped).toBeInstanceOf(AzureError);
      expect(mapped.code).toBe(row.code);
      expect(mapped.statusCode).toBe(row.status);
      const action = classifyAzureError(mapped);
      expect(action.kind).toBe(row.kind);
      if (row.extra) expect(action).toMatchObject(row.extra);
    });
  }

  it('keeps an AzureError as it is and carries the ARM message (not the LRO prefix)', () => {
    const original = new AzureError('SubnetIsFull', 400, 'full');
    expect(toAzureError(original)).toBe(original);
    expect(toAzureError(lroFailure('AllocationFailed', 'No capacity.')).message).toBe('AllocationFailed: No capacity.');
  });

  it('scrubs secrets an ARM message might echo (bootstrap token, customData)', () => {
    const err = restError(400, 'InvalidParameter', 'customData H4sIAAAAAAAAA2NgGAWjYBSMglEwCkbBUAEAAP is invalid near abcdef.0123456789abcdef');
    const mapped = toAzureError(err);
    expect(mapped.code).toBe('InvalidParameter');
    expect(mapped.message).not.toContain('abcdef.0123456789abcdef');
    expect(mapped.message).not.toContain('H4sIAAAAAAAAA2NgGAWjYBSMglEwCkbBUAEAAP');
    expect(mapped.message).toContain('is invalid');
  });

  it('tells who throttled: Compute (x-ms-ratelimit-remaining-resource) or ARM itself (SubscriptionRequestsThrottled)', () => {
    const compute = toAzureError(restError(429, 'OperationNotAllowed', 'too many', { 'retry-after': '600', 'x-ms-ratelimit-remaining-resource': 'Microsoft.Compute/DeleteVM30Min;0' }));
    expect(compute.info).toMatchObject({ throttledBy: 'Microsoft.Compute', armCode: 'OperationNotAllowed' });
    const arm = toAzureError(restError(429, 'SubscriptionRequestsThrottled', 'too many', { 'retry-after': '3' }));
    expect(arm.info).toMatchObject({ throttledBy: 'arm', armCode: 'SubscriptionRequestsThrottled' });
  });

  it('an OperationNotAllowed without "quota" that carries a Retry-After keeps it (never a plain transient)', () => {
    const err = new AzureError('OperationNotAllowed', 409, 'The server rejected the request', 300);
    expect(classifyAzureError(err)).toEqual({ kind: 'throttled', retryAfterSeconds: 300, code: 'OperationNotAllowed' });
  });

  it('SkuNotAvailable is shorter for spot (the Karpenter provider: 1 h spot, 23 h on-demand)', () => {
    const err = new AzureError('SkuNotAvailable', 409, 'not available');
    expect(classifyAzureError(err, { capacityType: 'spot' })).toMatchObject({ ttlSeconds: 3600 });
    expect(classifyAzureError(err, { capacityType: 'on-demand' })).toMatchObject({ ttlSeconds: 23 * 3600 });
  });
});

describe('parseRetryAfterSeconds', () => {
  const h = (headers: Record<string, string>) => createHttpHeaders(headers);
  it('reads delta-seconds, HTTP dates against the injected clock, and the millisecond variants', () => {
    expect(parseRetryAfterSeconds(h({ 'retry-after': '30' }))).toBe(30);
    expect(parseRetryAfterSeconds(h({ 'retry-after': 'Wed, 21 Oct 2015 07:28:30 GMT' }), Date.UTC(2015, 9, 21, 7, 28, 0))).toBe(30);
    expect(parseRetryAfterSeconds(h({ 'retry-after-ms': '1500' }))).toBe(2);
    expect(parseRetryAfterSeconds(h({ 'x-ms-retry-after-ms': '200' }))).toBe(1);
    expect(parseRetryAfterSeconds(h({}))).toBeUndefined();
    expect(parseRetryAfterSeconds(undefined)).toBeUndefined();
  });
});

describe('parseQuotaMessage', () => {
  it('tells family, regional and low-priority quotas apart and reads the numbers', () => {
    expect(parseQuotaMessage(FAMILY_MSG)).toEqual({ scope: 'family', family: 'standardNDSH200v5Family', location: 'eastus2', currentLimit: 0, currentUsage: 0, additionalRequired: 96 });
    expect(parseQuotaMessage(REGIONAL_MSG)).toMatchObject({ scope: 'regional', currentLimit: 100, currentUsage: 96 });
    expect(parseQuotaMessage(LOW_PRIORITY_MSG)).toMatchObject({ scope: 'lowPriority', currentLimit: 3 });
    expect(parseQuotaMessage('Total Regional Low Priority Cores quota exceeded')).toMatchObject({ scope: 'lowPriority' });
    expect(parseQuotaMessage('quota exceeded')).toEqual({ scope: 'unknown' });
  });
});

describe('armErrorDetails', () => {
  const policy = '{"operationGroup":"PutVM3Min","startTime":"2026-01-01T00:00:00Z","endTime":"2026-01-01T00:03:00Z","allowedRequestCount":240}';
  it("reads error.details[] from a refused response's text, keeping only well-formed entries", () => {
    const body = JSON.stringify({ error: { code: 'OperationNotAllowed', message: 'throttled', details: [{ code: 'TooManyRequests', target: 'PutVM3Min', message: policy }, { code: 7 }, null] } });
    expect(armErrorDetails(body)).toEqual([{ code: 'TooManyRequests', target: 'PutVM3Min', message: policy }]);
  });
  it('is undefined for text that is not an ARM error with details', () => {
    for (const text of [undefined, null, '', 'not json', '[]', '{"error":{"code":"X"}}', '{"error":{"details":{}}}', '{"error":{"details":[{"code":"A"}]}}']) {
      expect(armErrorDetails(text)).toBeUndefined();
    }
  });
  it('toAzureError attaches details the SDK error lacks, and keeps what it carries', () => {
    const details = [{ code: 'TooManyRequests', target: 'PutVM3Min', message: policy }];
    const mapped = toAzureError(restError(429, 'OperationNotAllowed', 'throttled', { 'retry-after': '30' }), 0, details);
    expect(mapped).toMatchObject({ code: 'TooManyRequests', retryAfterSeconds: 30, info: { armCode: 'OperationNotAllowed', details } });
    const own = new AzureError('TooManyRequests', 429, 'x', 5, { details: [{ code: 'Own', message: '{}' }] });
    expect(toAzureError(own, 0, details)).toBe(own);
  });
});
