/**
 * The VM PUT body the SDK adapter sends for a port-level VmSpec, so the fake ARM's port face
 * creates VMs exactly as its REST face does for the adapter's requests.
 */
import type { VmSpec } from '../../ports/azure.js';
import { digest, type VmCreateRequest } from './model.js';

export class VmSpecRequests {
  /**
   * The custom data last digested, and its digest: the controller renders the same bytes for
   * every NodeClaim of one NodePool and size (src/lifecycle/nodeclaim/userdata.ts), and digesting a few KB
   * on every VM PUT of a quota storm showed in its profile.
   */
  private lastCustomData: { text: string; digest: string } | undefined;

  of(spec: VmSpec): VmCreateRequest {
    return {
      ref: spec.ref,
      location: spec.location,
      vmSize: spec.vmSize,
      ...(spec.zone ? { zone: spec.zone } : {}),
      nicIds: [spec.nicId],
      nicDeleteOption: 'Delete',
      osDiskName: spec.osDiskName,
      osDiskSizeGB: spec.osDiskSizeGB,
      osDiskDeleteOption: 'Delete',
      image: spec.image,
      adminUsername: spec.adminUsername,
      sshPublicKeys: spec.sshPublicKeys,
      priority: spec.priority,
      ...(spec.capacityReservationGroupId ? { capacityReservationGroupId: spec.capacityReservationGroupId } : {}),
      // As the SDK adapter asks: an evicted Spot VM is deleted, with its NIC and OS disk.
      ...(spec.priority === 'Spot' ? { evictionPolicy: 'Delete' as const, maxPrice: spec.spotMaxPrice ?? -1 } : {}),
      tags: spec.tags,
      customDataHash: this.customDataDigest(spec.customData),
    };
  }

  private customDataDigest(text: string): string {
    if (this.lastCustomData?.text !== text) this.lastCustomData = { text, digest: digest(text) };
    return this.lastCustomData.digest;
  }
}
