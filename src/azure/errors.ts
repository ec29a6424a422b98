import { AzureError, isAzureError, type AzureErrorCode } from '../ports/azure.js';

/**
 * The error taxonomy: every Azure failure maps to what the controller does next.
 * The SDK adapter turns RestErrors and async LRO failures into AzureError first
 * (src/azure/sdk-errors.ts); the fake ARM throws AzureError directly.
 */
export type OfferingUnavailableReason = 'quota' | 'skuNotAvailable' | 'allocation';

export type FailureAction =
  /** Delete the NodeClaim and mark the offering unavailable for ttlSeconds. */
  | { kind: 'insufficientCapacity'; reason: OfferingUnavailableReason; ttlSeconds: number; code: AzureErrorCode }
  /** The NIC is reserved by a VM create for 180 s: wait for the deadline, then delete again. */
  | { kind: 'reserved'; code: AzureErrorCode }
  /** ARM throttled the call: wait Retry-After. */
  | { kind: 'throttled'; retryAfterSeconds: number; code: AzureErrorCode }
  /** Already gone: success for deletes. */
  | { kind: 'notFound'; code: AzureErrorCode }
  /** Retry with backoff. */
  | { kind: 'transient'; code: AzureErrorCode }
  /** The subnet has no address left: the launch fails, the NodeClaim is deleted. */
  | { kind: 'subnetFull'; code: AzureErrorCode }
  /** NIC still attached to a VM: delete the VM first (or wait for its delete). */
  | { kind: 'inUse'; code: AzureErrorCode }
  /** Permanent: surface it, do not retry the same request. */
  | { kind: 'invalid'; code: AzureErrorCode };

/**
 * TTLs for the unavailable-offerings cache. The Azure Karpenter provider uses 3 min for
 * allocation failures and 1 h for SKU-not-available; a family quota does not come back
 * by itself either, so it gets 1 h as well (quota raises are rare and manual).
 */
export const UNAVAILABLE_TTL_SECONDS: Record<OfferingUnavailableReason, number> = {
  quota: 3600,
  skuNotAvailable: 3600,
  allocation: 180,
};

export function classifyAzureError(err: unknown): FailureAction {
  if (!isAzureError(err)) return { kind: 'transient', code: 'Unknown' };
  const code = err.code;
  switch (code) {
    case 'OperationNotAllowed':
    case 'QuotaExceeded':
      return { kind: 'insufficientCapacity', reason: 'quota', ttlSeconds: UNAVAILABLE_TTL_SECONDS.quota, code };
    case 'SkuNotAvailable':
      return { kind: 'insufficientCapacity', reason: 'skuNotAvailable', ttlSeconds: UNAVAILABLE_TTL_SECONDS.skuNotAvailable, code };
    case 'AllocationFailed':
    case 'ZonalAllocationFailed':
    case 'OverconstrainedAllocationRequest':
    case 'OverconstrainedZonalAllocationRequest':
      return { kind: 'insufficientCapacity', reason: 'allocation', ttlSeconds: UNAVAILABLE_TTL_SECONDS.allocation, code };
    case 'NicReservedForAnotherVm':
      return { kind: 'reserved', code };
    case 'TooManyRequests':
      return { kind: 'throttled', retryAfterSeconds: err.retryAfterSeconds ?? 17, code };
    case 'ResourceNotFound':
      return { kind: 'notFound', code };
    case 'SubnetIsFull':
      return { kind: 'subnetFull', code };
    case 'NicInUse':
      return { kind: 'inUse', code };
    case 'InvalidParameter':
      return { kind: 'invalid', code };
    case 'InternalServerError':
    case 'RequestTimeout':
    case 'Unknown':
      return { kind: 'transient', code };
  }
}

export function azureErrorCode(err: unknown): AzureErrorCode {
  return err instanceof AzureError ? err.code : 'Unknown';
}
