import type { AzureFlexNodeClassSpec } from '../ports/cluster.js';
import { ArmIdError, isGuid, isResourceGroupName, parseCapacityReservationGroupId, parseImageId, parseSubnetId } from './arm-id.js';

/**
 * Static NodeClass validation: everything that can be decided without calling ARM. The CRD's
 * CEL rules catch most of it at admission; this repeats them (objects created before a CRD
 * upgrade, or served by a cluster running an older CRD, never passed those rules) and adds
 * what CEL cannot express, such as unsupported-but-schema-valid settings.
 */

export interface ValidationResult {
  ok: boolean;
  /** CamelCase condition reason. */
  reason: string;
  message: string;
}

const OK: ValidationResult = { ok: true, reason: 'ValidationSucceeded', message: 'NodeClass spec is valid' };

function fail(reason: string, message: string): ValidationResult {
  return { ok: false, reason, message };
}

/** Checked before every create and on every provisioning pass; specs are replaced, never mutated, on a write. */
const validated = new WeakMap<AzureFlexNodeClassSpec, ValidationResult>();

export function validateNodeClassSpec(spec: AzureFlexNodeClassSpec): ValidationResult {
  let result = validated.get(spec);
  if (result === undefined) validated.set(spec, (result = validate(spec)));
  return result;
}

function validate(spec: AzureFlexNodeClassSpec): ValidationResult {
  if (!spec.subscriptionID) return fail('MissingSubscriptionID', 'subscriptionID is required');
  if (!isGuid(spec.subscriptionID)) return fail('InvalidSubscriptionID', `subscriptionID "${spec.subscriptionID}" is not a GUID`);
  if (!spec.location) return fail('MissingLocation', 'location is required');
  if (!/^[a-z0-9]+$/.test(spec.location)) return fail('InvalidLocation', `location "${spec.location}" must be a lower-case Azure region name like eastus2`);
  if (!spec.resourceGroup) return fail('MissingResourceGroup', 'resourceGroup is required');
  if (!isResourceGroupName(spec.resourceGroup)) return fail('InvalidResourceGroup', `resourceGroup "${spec.resourceGroup}" is not a valid name`);
  if (!spec.subnetID) return fail('MissingSubnetID', 'subnetID is required');
  try {
    const subnet = parseSubnetId(spec.subnetID);
    if (subnet.subscriptionId.toLowerCase() !== spec.subscriptionID.toLowerCase())
      return fail(
        'SubnetSubscriptionMismatch',
        `subnetID is in subscription ${subnet.subscriptionId} but subscriptionID is ${spec.subscriptionID}: a NIC cannot attach to another subscription's VNet`,
      );
  } catch (e) {
    return fail('InvalidSubnetID', e instanceof ArmIdError ? e.message : String(e));
  }
  const hasRef = spec.imageReference !== undefined;
  const hasId = spec.imageID !== undefined && spec.imageID !== '';
  if (hasRef === hasId) return fail('InvalidImage', 'exactly one of imageReference or imageID must be set');
  if (spec.imageReference) {
    const missing = (['publisher', 'offer', 'sku', 'version'] as const).filter((k) => !spec.imageReference?.[k]);
    if (missing.length) return fail('InvalidImage', `imageReference is missing ${missing.join(', ')}`);
  }
  if (hasId) {
    try {
      parseImageId(spec.imageID as string);
    } catch (e) {
      return fail('InvalidImageID', e instanceof ArmIdError ? e.message : String(e));
    }
  }
  if (!Number.isInteger(spec.osDiskSizeGB) || spec.osDiskSizeGB < 30 || spec.osDiskSizeGB > 4095)
    return fail('InvalidOSDiskSize', `osDiskSizeGB ${spec.osDiskSizeGB} must be an integer in [30, 4095]`);
  if (!Number.isInteger(spec.maxPodsPerNode) || spec.maxPodsPerNode < 10 || spec.maxPodsPerNode > 250)
    return fail('InvalidMaxPods', `maxPodsPerNode ${spec.maxPodsPerNode} must be an integer in [10, 250]`);
  // ARM's billingProfile.maxPrice: -1, or a positive price with at most 5 decimals.
  if (spec.spotMaxPrice !== undefined && !(spec.spotMaxPrice === -1 || (spec.spotMaxPrice > 0 && Math.abs(Math.round(spec.spotMaxPrice * 1e5) - spec.spotMaxPrice * 1e5) < 1e-6)))
    return fail('InvalidSpotMaxPrice', `spotMaxPrice ${spec.spotMaxPrice} must be -1 or a positive USD/hour price with at most 5 decimals`);
  for (const id of spec.capacityReservationGroupIDs ?? []) {
    try {
      const group = parseCapacityReservationGroupId(id);
      // A VM can only be created into a group of its own subscription.
      if (group.subscriptionId.toLowerCase() !== spec.subscriptionID.toLowerCase())
        return fail('InvalidCapacityReservationGroupID', `capacity reservation group "${id}" is not in subscription ${spec.subscriptionID}`);
    } catch (e) {
      return fail('InvalidCapacityReservationGroupID', e instanceof ArmIdError ? e.message : String(e));
    }
  }
  // The ARM layer creates private NICs only. Accepting the flag and ignoring it was a bug
  // the upstream PR shipped; refuse it until public IPs are implemented.
  if (spec.allocateNodePublicIP) return fail('UnsupportedPublicIP', 'allocateNodePublicIP=true is not supported yet');
  const badKey = spec.sshPublicKeys.find((k) => !/^(ssh-rsa|ssh-ed25519|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com) [A-Za-z0-9+/=]+( .*)?$/.test(k));
  if (badKey !== undefined) return fail('InvalidSSHPublicKey', `sshPublicKeys entry "${badKey.slice(0, 40)}…" is not an OpenSSH public key`);
  const badTag = Object.keys(spec.tags).find((k) => k.length === 0 || k.length > 512 || /[<>%&\\?/]/.test(k));
  if (badTag !== undefined) return fail('InvalidTags', `tag key "${badTag}" is not allowed by Azure`);
  return OK;
}
