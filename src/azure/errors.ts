import type { CapacityType } from '../catalog/offerings.js';
import { AzureError, isAzureError, type AzureErrorCode } from '../ports/azure.js';

/**
 * The error taxonomy: every Azure failure maps to what the controller does next.
 * The SDK adapter turns RestErrors and async LRO failures into AzureError first
 * (src/azure/sdk-errors.ts); the fake ARM throws AzureError directly.
 */
export type OfferingUnavailableReason = 'quota' | 'skuNotAvailable' | 'allocation';

export type FailureAction =
  /** Delete the NodeClaim and mark the offering unavailable for ttlSeconds. */
  | { kind: 'insufficientCapacity'; reason: OfferingUnavailableReason; ttlSeconds: number; code: AzureErrorCode; quota?: QuotaDetails }
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
  | { kind: 'invalid'; code: AzureErrorCode }
  /** The name is taken by a resource that is not this NodeClaim's: never adopted or deleted; the launch fails for good. */
  | { kind: 'conflict'; code: AzureErrorCode };

/**
 * Base TTLs for the unavailable-offerings cache. Quota and SKU availability as the Azure
 * Karpenter provider has them (pkg/providers/instance/offerings): SKUNotAvailableOnDemandTTL
 * 23 h (SKUNotAvailableSpotTTL 1 h), SubscriptionQuotaReachedTTL 1 h; quota-specific TTLs
 * refine `quota` below (QUOTA_TTL_SECONDS).
 *
 * Allocation failures start at Karpenter's 3 minutes (the AWS provider's
 * UnavailableOfferingsTTL for an insufficient-capacity error, and the Azure provider cache's
 * default) and double with every later attempt that fails again, up to the Azure provider's
 * AllocationFailureTTL of 1 h (ALLOCATION_TTL_MAX_SECONDS; `allocationTtlSeconds` in
 * src/provisioning/offering-marks.ts). One failed create in a large pool is usually a blip
 * that the next attempt does not meet, and a 1 h mark on a NodePool's only size stopped it
 * growing for an hour; a real capacity crunch still reaches the 1 h mark after five failed
 * canaries, and the canary rule keeps each expiry to one doomed create.
 */
export const UNAVAILABLE_TTL_SECONDS: Record<OfferingUnavailableReason, number> = {
  quota: 3600,
  skuNotAvailable: 23 * 3600,
  allocation: 180,
};

/** The longest allocation mark: the Azure provider's AllocationFailureTTL. */
export const ALLOCATION_TTL_MAX_SECONDS = 3600;

/** Spot SkuNotAvailable also means "no spot capacity now", which clears sooner (Karpenter: 1 h). */
export const SKU_NOT_AVAILABLE_SPOT_TTL_SECONDS = 3600;

/**
 * Which quota an OperationNotAllowed hit, parsed from ARM's message. It decides the blast
 * radius in the offerings cache: a family quota blocks every SKU of the family in the
 * region, a regional or low-priority quota every SKU of that capacity type in the region.
 */
export type QuotaScope = 'family' | 'regional' | 'lowPriority' | 'unknown';

export interface QuotaDetails {
  scope: QuotaScope;
  /** As ARM names it, e.g. standardNDSH200v5Family (family scope only). */
  family?: string;
  location?: string;
  currentLimit?: number;
  currentUsage?: number;
  additionalRequired?: number;
}

/**
 * TTLs per quota scope, each at least the Karpenter provider's: a zero family limit means the
 * subscription never had that quota (1 h, SubscriptionQuotaReachedTTL); a consumed family
 * quota or regional quota frees only when VMs go away (Karpenter 15 min / 30 min, here 30 min,
 * and src/azure/offerings.ts clears the mark early when azflex itself deletes a VM of the
 * family); low-priority (spot) quota 1 h.
 */
export const QUOTA_TTL_SECONDS = {
  familyZeroLimit: 3600,
  familyExhausted: 1800,
  regional: 1800,
  lowPriority: 3600,
  unknown: 3600,
} as const satisfies Record<string, number>;

/**
 * ARM repeats the same quota message for every refused attempt until usage or the limit
 * changes, and parsing one runs a dozen regular expressions over it: answers are kept per
 * message (bounded: forgotten all at once when full; callers never mutate them).
 */
const QUOTA_MESSAGE_CACHE_MAX = 1024;
const parsedQuotaMessages = new Map<string, QuotaDetails>();

/** Parses ARM's quota messages ("... exceeding approved standardNDSH200v5Family Cores quota. Additional details - ... Location: eastus2, Current Limit: 0, ..."). */
export function parseQuotaMessage(message: string): QuotaDetails {
  let details = parsedQuotaMessages.get(message);
  if (details === undefined) {
    if (parsedQuotaMessages.size >= QUOTA_MESSAGE_CACHE_MAX) parsedQuotaMessages.clear();
    parsedQuotaMessages.set(message, (details = parseQuotaMessageOnce(message)));
  }
  return details;
}

function parseQuotaMessageOnce(message: string): QuotaDetails {
  const num = (label: string): number | undefined => {
    const m = new RegExp(`${label}:\\s*(\\d+)`, 'i').exec(message);
    return m ? Number(m[1]) : undefined;
  };
  const location = /Location:\s*([A-Za-z0-9]+)/i.exec(message)?.[1]?.toLowerCase();
  const details: Omit<QuotaDetails, 'scope'> = {
    ...(location !== undefined ? { location } : {}),
    ...optionalNumber('currentLimit', num('Current Limit')),
    ...optionalNumber('currentUsage', num('Current Usage')),
    ...optionalNumber('additionalRequired', num('Additional Required')),
  };
  // Order matters: "Total Regional Low Priority Cores" is a low-priority quota, not a family one.
  if (/Low\s*Priority\s*Cores/i.test(message)) return { scope: 'lowPriority', ...details };
  if (/Total\s+Regional\s+Cores/i.test(message)) return { scope: 'regional', ...details };
  const family = /approved\s+(.+?)\s*Family\s+Cores\s+quota/i.exec(message);
  if (family) {
    const raw = family[1]!.trim();
    // ARM writes either "standardNDSH200v5Family Cores" or "Standard NDSH200v5 Family Cores".
    const name = /family$/i.test(raw) ? raw : `${raw.replace(/\s+/g, '')}Family`;
    return { scope: 'family', family: name, ...details };
  }
  if (/Family\s*Cores/i.test(message)) return { scope: 'family', ...details };
  return { scope: 'unknown', ...details };
}

function optionalNumber<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

export function quotaTtlSeconds(details: QuotaDetails): number {
  switch (details.scope) {
    case 'family':
      return details.currentLimit === 0 ? QUOTA_TTL_SECONDS.familyZeroLimit : QUOTA_TTL_SECONDS.familyExhausted;
    case 'regional':
      return QUOTA_TTL_SECONDS.regional;
    case 'lowPriority':
      return QUOTA_TTL_SECONDS.lowPriority;
    case 'unknown':
      return QUOTA_TTL_SECONDS.unknown;
  }
}

/** What the caller knows about the attempt; refines TTLs (SkuNotAvailable is shorter for spot). */
export interface ClassifyContext {
  capacityType?: CapacityType;
}

/** When a 429 carries no Retry-After (ARM's documented fallback for its buckets is to wait and retry). */
export const DEFAULT_RETRY_AFTER_SECONDS = 17;

/**
 * One error is classified several times on its way (the gate, the machine's guards and
 * actions, the offerings cache), and a quota message takes a dozen regular expressions: the
 * answer is kept per error object and capacity type (errors are never mutated once thrown).
 */
const classified = new WeakMap<object, Map<ClassifyContext['capacityType'], FailureAction>>();

export function classifyAzureError(err: unknown, context: ClassifyContext = {}): FailureAction {
  if (!isAzureError(err)) return { kind: 'transient', code: 'Unknown' };
  let byContext = classified.get(err);
  if (!byContext) classified.set(err, (byContext = new Map()));
  let action = byContext.get(context.capacityType);
  if (!action) byContext.set(context.capacityType, (action = classifyOnce(err, context)));
  return action;
}

function classifyOnce(err: AzureError, context: ClassifyContext): FailureAction {
  const code = err.code;
  // Any 429 is throttling, whatever code the provider chose.
  if (err.statusCode === 429 && code !== 'TooManyRequests' && code !== 'OperationNotAllowed') {
    return { kind: 'throttled', retryAfterSeconds: err.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS, code };
  }
  switch (code) {
    case 'OperationNotAllowed':
    case 'QuotaExceeded': {
      // Compute's own throttling is a 429 OperationNotAllowed with a Retry-After of up to
      // 20 minutes: throttling, never quota, and never a plain retry that drops the wait.
      if (err.statusCode === 429) return { kind: 'throttled', retryAfterSeconds: err.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS, code };
      // ARM also says OperationNotAllowed for "VM is marked for deletion" or "disk is attached":
      // those clear by themselves and say nothing about the offering (a Retry-After, if sent, still holds).
      if (code === 'OperationNotAllowed' && !/quota/i.test(err.message)) {
        return err.retryAfterSeconds !== undefined ? { kind: 'throttled', retryAfterSeconds: err.retryAfterSeconds, code } : { kind: 'transient', code };
      }
      const quota = parseQuotaMessage(err.message);
      return { kind: 'insufficientCapacity', reason: 'quota', ttlSeconds: quotaTtlSeconds(quota), code, quota };
    }
    case 'SkuNotAvailable': {
      const ttlSeconds = context.capacityType === 'spot' ? SKU_NOT_AVAILABLE_SPOT_TTL_SECONDS : UNAVAILABLE_TTL_SECONDS.skuNotAvailable;
      return { kind: 'insufficientCapacity', reason: 'skuNotAvailable', ttlSeconds, code };
    }
    // The size is never spot: its spot offering is marked as long as an on-demand SkuNotAvailable.
    case 'AzureSpotIsNotSupportedForThisVMSize':
      return { kind: 'insufficientCapacity', reason: 'skuNotAvailable', ttlSeconds: UNAVAILABLE_TTL_SECONDS.skuNotAvailable, code };
    // The spot price rose above the NodeClass's max price: it may fall again, as spot capacity returns.
    case 'SpotPriceGreaterThanProvidedMaxPrice':
      return { kind: 'insufficientCapacity', reason: 'skuNotAvailable', ttlSeconds: SKU_NOT_AVAILABLE_SPOT_TTL_SECONDS, code };
    case 'AllocationFailed':
    case 'ZonalAllocationFailed':
    case 'OverconstrainedAllocationRequest':
    case 'OverconstrainedZonalAllocationRequest':
      return { kind: 'insufficientCapacity', reason: 'allocation', ttlSeconds: UNAVAILABLE_TTL_SECONDS.allocation, code };
    case 'NicReservedForAnotherVm':
      return { kind: 'reserved', code };
    case 'TooManyRequests':
      return { kind: 'throttled', retryAfterSeconds: err.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS, code };
    case 'ResourceNotFound':
      return { kind: 'notFound', code };
    case 'SubnetIsFull':
      return { kind: 'subnetFull', code };
    case 'NicInUse':
      return { kind: 'inUse', code };
    case 'InvalidParameter':
      return { kind: 'invalid', code };
    case 'ResourceNameConflict':
      return { kind: 'conflict', code };
    case 'InternalServerError':
    case 'RequestTimeout':
    case 'Unknown':
      return { kind: 'transient', code };
  }
}

export function azureErrorCode(err: unknown): AzureErrorCode {
  return err instanceof AzureError ? err.code : 'Unknown';
}
