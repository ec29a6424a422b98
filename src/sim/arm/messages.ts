import { AzureError, type AzureErrorCode, type AzureErrorInfo } from '../../ports/azure.js';

/**
 * Azure's own error texts (as seen in the wild), so code and humans that match on the
 * message (log greps, classifiers) see what production would show them.
 */

/**
 * Builds an AzureError without capturing a stack trace. Refusals are ordinary answers on
 * the simulator's hot path (thousands per run) and a stack, mapped through source maps,
 * costs ~50 µs each while saying nothing about the fake's caller that the code does not.
 */
export function armError(code: AzureErrorCode, status: number, message: string, retryAfterSeconds?: number, info?: AzureErrorInfo): AzureError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new AzureError(code, status, message, retryAfterSeconds, info);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

const QUOTA_PORTAL = 'https://aka.ms/ProdportalCRP/#blade/Microsoft_Azure_Capacity/UsageAndQuota.ReactView';

export function quotaExceeded(
  what: string,
  location: string,
  limit: number,
  usage: number,
  required: number,
  docs: 'per-vm-quota-requests' | 'regional-quota-requests' | 'spot-quota',
): AzureError {
  // Spot's page moved under azure-portal; the message links where ARM's does.
  const page = docs === 'spot-quota' ? 'azure-portal/supportability/low-priority-quota' : `azure-supportability/${docs}`;
  return armError(
    'OperationNotAllowed',
    409,
    `Operation could not be completed as it results in exceeding approved ${what} quota. Additional details - ` +
      `Deployment Model: Resource Manager, Location: ${location}, Current Limit: ${limit}, Current Usage: ${usage}, ` +
      `Additional Required: ${required}, (Minimum) New Limit Required: ${usage + required}. Submit a request for Quota ` +
      `increase at ${QUOTA_PORTAL} by specifying parameters listed in the ‘Details’ section for deployment to succeed. ` +
      `Please read more about quota limits at https://docs.microsoft.com/en-us/azure/${page}`,
  );
}

export function nicReserved(reservedVmId: string, seconds: number): AzureError {
  return armError(
    'NicReservedForAnotherVm',
    400,
    `Nic(s) in request is reserved for another Virtual Machine for ${seconds} seconds. Please provide another nic(s) ` +
      `or retry after ${seconds} seconds. Reserved VM: ${reservedVmId}`,
  );
}

export function nicInUse(nicId: string, vmId: string): AzureError {
  return armError(
    'NicInUse',
    400,
    `Network Interface ${nicId} is used by existing resource ${vmId}. In order to delete the network interface, it must be dissociated from the resource. To learn more, see aka.ms/deletenic.`,
  );
}

export function skuNotAvailable(vmSize: string, location: string, zone?: string): AzureError {
  return armError(
    'SkuNotAvailable',
    409,
    `The requested VM size for resource 'Following SKUs have failed for Capacity Restrictions: ${vmSize}' is currently ` +
      `not available in location '${location}'${zone !== undefined ? ` zones '${zone}'` : ''}. Please try another size or deploy to a different location or different ` +
      `zone. See https://aka.ms/azureskunotavailable for details.`,
  );
}

export function subnetIsFull(subnetId: string, addressPrefix: string): AzureError {
  const name = subnetId.slice(subnetId.lastIndexOf('/') + 1);
  return armError(
    'SubnetIsFull',
    400,
    `Subnet ${name} with address prefix ${addressPrefix} does not have enough capacity for 1 IP addresses.`,
  );
}

export const ALLOCATION_FAILED_MESSAGE =
  'Allocation failed. We do not have sufficient capacity for the requested VM size in this region. Read more about ' +
  'improving likelihood of allocation success at http://aka.ms/allocation-guidance';

export const ZONAL_ALLOCATION_FAILED_MESSAGE =
  'Allocation failed. We do not have sufficient capacity for the requested VM size in this zone. Read more about ' +
  'improving likelihood of allocation success at http://aka.ms/allocation-guidance';

export const OPERATION_PREEMPTED_MESSAGE = 'Operation execution has been preempted by a more recent operation.';

/**
 * A power action (or simulateEviction) a VM's state does not allow. ARM's own text for these
 * cases is not published; the code is the one Compute uses for a refused operation on a VM.
 */
export function powerActionNotAllowed(vmName: string, action: string, why: string): AzureError {
  return armError('OperationNotAllowed', 409, `Operation '${action}' is not allowed on VM '${vmName}' since ${why}.`);
}

export function vmBeingDeleted(vmName: string, method: string = 'PUT'): AzureError {
  // Real ARM answers this with OperationNotAllowed too (the same code as a quota refusal).
  return armError(
    'OperationNotAllowed',
    409,
    `Operation '${method}' is not allowed on VM '${vmName}' since the VM is marked for deletion. You can only retry the Delete operation (or wait for an ongoing one to complete).`,
  );
}

/**
 * Microsoft.Network refusing a write while another operation on the resource (here: its
 * delete) runs. ARM's text goes on with "To retrieve status of the operation use uri: …",
 * a URL this model does not know (the REST face's host); the code and first sentence are ARM's.
 */
export function anotherOperationInProgress(): AzureError {
  return armError('Unknown', 409, 'Another operation on this or dependent resource is in progress.', undefined, { armCode: 'AnotherOperationInProgress' });
}

export function diskAttached(diskName: string, vmId: string): AzureError {
  return armError('OperationNotAllowed', 409, `Disk ${diskName} is attached to VM ${vmId}.`);
}

/** A caller whose role lacks Microsoft.Compute/locations/usages/read (ARM's 403). */
export function usagesForbidden(subscriptionId: string, location: string): AzureError {
  return armError('Unknown', 403,
    `The client does not have authorization to perform action 'Microsoft.Compute/locations/usages/read' over scope '/subscriptions/${subscriptionId}/providers/Microsoft.Compute/locations/${location}' or the scope is invalid.`,
    undefined, { armCode: 'AuthorizationFailed' });
}

export function invalid(message: string): AzureError {
  return armError('InvalidParameter', 400, message);
}

/** ARM's own throttling (token buckets per subscription): 429 SubscriptionRequestsThrottled. */
export function throttled(bucket: string, subscriptionId: string, retryAfterSeconds: number): AzureError {
  return armError(
    'TooManyRequests',
    429,
    `Number of '${bucket}' requests for subscription '${subscriptionId}' actor '00000000-0000-0000-0000-000000000000' exceeded. ` +
      `Please try again after '${retryAfterSeconds}' seconds after additional tokens are available. ` +
      'Refer to https://aka.ms/arm-throttling for additional information.',
    retryAfterSeconds,
    { armCode: 'SubscriptionRequestsThrottled', throttledBy: 'arm' },
  );
}

/**
 * The Compute resource provider's own throttling: 429 with top-level code OperationNotAllowed
 * (the same code as a quota refusal), the exceeded policy in details[], and a Retry-After
 * that can reach 20 minutes.
 */
export function computeThrottled(policy: string, windowStart: number, windowEnd: number, allowed: number, measured: number, retryAfterSeconds: number): AzureError {
  const detail = JSON.stringify({
    operationGroup: policy,
    startTime: new Date(windowStart).toISOString(),
    endTime: new Date(windowEnd).toISOString(),
    allowedRequestCount: allowed,
    measuredRequestCount: measured,
  });
  return armError(
    'TooManyRequests',
    429,
    'The server rejected the request because too many requests have been received for this subscription.',
    retryAfterSeconds,
    { armCode: 'OperationNotAllowed', throttledBy: 'Microsoft.Compute', details: [{ code: 'TooManyRequests', target: policy, message: detail }] },
  );
}

export function resourceGroupNotFound(resourceGroup: string): AzureError {
  return armError('ResourceNotFound', 404, `Resource group '${resourceGroup}' could not be found.`, undefined, { armCode: 'ResourceGroupNotFound' });
}

/** A new VM's OS disk name is taken: Compute's ConflictingUserInput (createOption FromImage cannot reuse a disk). */
export function osDiskNameTaken(disk: string, resourceGroup: string): AzureError {
  return armError('ResourceNameConflict', 409, `Disk ${disk} already exists in resource group ${resourceGroup.toUpperCase()}. Only CreateOption.Attach is supported.`, undefined, {
    armCode: 'ConflictingUserInput',
  });
}

export function propertyChangeNotAllowed(property: string): AzureError {
  return armError(
    'InvalidParameter',
    409,
    `Changing property '${property}' is not allowed.`,
    undefined,
    { armCode: 'PropertyChangeNotAllowed' },
  );
}

export const OVERCONSTRAINED_ALLOCATION_MESSAGE =
  'Allocation failed. VM(s) with the following constraints cannot be allocated, because the condition is too restrictive. ' +
  'Please remove some constraints and try again. Read more about improving likelihood of allocation success at http://aka.ms/allocation-guidance';

export function internalError(): AzureError {
  return armError('InternalServerError', 500, 'An internal server error occurred. Please try again later.');
}

export function requestTimeout(): AzureError {
  return armError('RequestTimeout', 408, 'The request timed out. The operation may or may not have completed.');
}

/*
 * Spot refusals, with the codes and texts of "Error messages for Azure Spot Virtual Machines
 * and scale sets" (learn.microsoft.com/azure/virtual-machines/error-codes-spot). That page
 * gives no HTTP status: the parameter errors answer 400 as ARM's other invalid parameters do.
 */
const SPOT_DOCS = 'See https://learn.microsoft.com/azure/virtual-machines/spot-vms.';

export function evictionPolicyOnlyOnSpot(): AzureError {
  return armError('InvalidParameter', 400, 'Eviction policy can be set only on Azure Spot Virtual Machines.', undefined, { armCode: 'EvictionPolicyCanBeSetOnlyOnAzureSpotVirtualMachines' });
}

export function maxPriceOnlyOnSpot(): AzureError {
  return armError('InvalidParameter', 400, `Max price is supported only for Azure Spot Virtual Machines. ${SPOT_DOCS}`, undefined, { armCode: 'MaxPriceIsSupportedOnlyForAzureSpotVirtualMachines' });
}

export function maxPriceValueInvalid(): AzureError {
  return armError('InvalidParameter', 400,
    'Invalid max price value. The only supported values for max price are -1 or a decimal greater than zero. Max price value of -1 indicates the Azure Spot Virtual Machine will not be evicted for price reasons.',
    undefined, { armCode: 'MaxPriceValueInvalid' });
}

export function spotNotSupportedForSize(vmSize: string): AzureError {
  return armError('AzureSpotIsNotSupportedForThisVMSize', 400, `Azure Spot Virtual Machine is not supported for this VM size ${vmSize}. ${SPOT_DOCS}`);
}

export function spotPriceAboveMaxPrice(maxPrice: number, spotPrice: number, vmSize: string): AzureError {
  return armError('SpotPriceGreaterThanProvidedMaxPrice', 400,
    `Unable to perform operation 'Create VM' since the provided max price '${maxPrice} USD' is lower than the current spot price '${spotPrice} USD' for Azure Spot Virtual Machine size '${vmSize}'.`);
}

/** No spot capacity for the size in the location (the spot page's SkuNotAvailable). */
export function spotCapacityNotAvailable(resource: string, location: string, subscriptionId: string): AzureError {
  return armError('SkuNotAvailable', 409,
    `The requested tier for resource '${resource}' is currently not available in location '${location}' for subscription '${subscriptionId}'. Try another tier or deploy to a different location.`);
}
