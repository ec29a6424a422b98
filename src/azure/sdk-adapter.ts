import type {
  ComputeManagementClient, Usage, VirtualMachine, Disk as ArmDisk, SecurityProfile, ImageReference as ArmImageReference,
  CapacityReservationGroup as ArmCapacityReservationGroup, CapacityReservation as ArmCapacityReservation,
} from '@azure/arm-compute';
import type { NetworkInterface } from '@azure/arm-network';
import type { HttpClient } from '@azure/core-rest-pipeline';
import type { TokenCredential } from '@azure/identity';
import {
  AzureError,
  type AzurePort,
  type CapacityReservationGroup,
  type ComputeUsages,
  type CoreUsage,
  type Disk,
  type Nic,
  type NicSpec,
  type ResourceGroupScope,
  type ResourceRef,
  type Tags,
  type Vm,
  type VmPowerState,
  type VmProvisioningState,
  type VmSpec,
} from '../ports/azure.js';
import type { Clock } from '../ports/clock.js';
import type { ArmRequestMetrics } from './metrics.js';
import { createArmClients, type ArmClients } from './clients.js';
import { DEFAULT_LRO_TIMING, DEFAULT_READ_RETRY, driveLro, submitLro, type LroPoller, type LroTiming, type ReadRetryOptions } from './lro.js';
import { toAzureError } from './sdk-errors.js';

/**
 * The production AzurePort on the official TypeSpec-generated SDKs (@azure/arm-network 39,
 * @azure/arm-compute 25). Every method throws only AzureError. Creates are GET-before-PUT so
 * a retry never re-PUTs (re-PUTting a VM re-reserves its NIC for 180 s); deletes treat 404
 * as success; every wait (LRO polls, read retries) runs on the injected Clock.
 */

export type SecurityType = 'Standard' | 'TrustedLaunch' | 'ConfidentialVM';

/** VmSpec plus what the port does not carry yet (the NodeClass's securityType). */
export interface SdkVmSpec extends VmSpec {
  securityType?: SecurityType;
}

export type OsDiskStorageType = 'Standard_LRS' | 'StandardSSD_LRS' | 'Premium_LRS' | 'PremiumV2_LRS';

export interface SdkAzureOptions {
  /** All waiting happens on this clock (src/platform/real-clock.ts in production). */
  clock: Clock;
  /**
   * Defaults to DefaultAzureCredential, created on first use: it reads the standard env
   * (the chart sets AZURE_TOKEN_CREDENTIALS to the one credential its `azure.credentials`
   * mode means; the AKS workload-identity webhook adds AZURE_CLIENT_ID, AZURE_TENANT_ID and
   * AZURE_FEDERATED_TOKEN_FILE). test/k8s/chart-credentials.test.ts shows each mode's path.
   */
  credential?: TokenCredential;
  /** ARM endpoint; default https://management.azure.com. The bearer-token policy refuses http://. */
  endpoint?: string;
  /** In-process transport (the simulator's ARM REST handler); no socket is opened. */
  httpClient?: HttpClient;
  /** PEM CA(s) to trust for `endpoint` (the simulator's self-signed CA). */
  tlsCa?: string | Buffer | Array<string | Buffer>;
  lroTiming?: Partial<LroTiming>;
  readRetry?: Partial<ReadRetryOptions>;
  /** Security type when the spec does not say (the seed: Standard; TrustedLaunch breaks the DSVM image). */
  defaultSecurityType?: SecurityType;
  osDiskStorageType?: OsDiskStorageType;
  enableAcceleratedNetworking?: boolean;
  userAgentPrefix?: string;
  /** HTTP-level counters (metrics.ts createArmRequestMetrics); port-level ones come from instrumentAzure. */
  requestMetrics?: ArmRequestMetrics;
}

export class SdkAzure implements AzurePort {
  private readonly clients = new Map<string, ArmClients>();
  private readonly lroTiming: LroTiming;
  private readonly readRetry: ReadRetryOptions;
  private credential: Promise<TokenCredential> | undefined;

  constructor(private readonly options: SdkAzureOptions) {
    this.credential = options.credential ? Promise.resolve(options.credential) : undefined;
    this.lroTiming = { ...DEFAULT_LRO_TIMING, ...options.lroTiming };
    this.readRetry = { ...DEFAULT_READ_RETRY, ...options.readRetry };
  }

  async getNic(ref: ResourceRef): Promise<Nic | undefined> {
    const { network } = await this.clientsFor(ref.subscriptionId);
    try {
      return toNic(await network.networkInterfaces.get(ref.resourceGroup, ref.name), ref);
    } catch (err) {
      return this.undefinedIfNotFound(err);
    }
  }

  async createNic(spec: NicSpec): Promise<Nic> {
    const existing = await this.getNic(spec.ref);
    if (existing) return existing;
    const { network } = await this.clientsFor(spec.ref.subscriptionId);
    const body: NetworkInterface = {
      location: spec.location,
      tags: { ...spec.tags },
      enableAcceleratedNetworking: this.options.enableAcceleratedNetworking ?? false,
      ipConfigurations: [
        { name: 'ipconfig1', primary: true, privateIPAllocationMethod: 'Dynamic', subnet: { id: spec.subnetId } },
      ],
    };
    const created = await this.create(`NIC ${spec.ref.name}`, () =>
      network.networkInterfaces.createOrUpdate(spec.ref.resourceGroup, spec.ref.name, body),
    );
    return created ? toNic(created, spec.ref) : this.mustGet(() => this.getNic(spec.ref), spec.ref);
  }

  async deleteNic(ref: ResourceRef): Promise<void> {
    const { network } = await this.clientsFor(ref.subscriptionId);
    await this.delete(`NIC ${ref.name}`, () => network.networkInterfaces.delete(ref.resourceGroup, ref.name));
  }

  async listNics(scope: ResourceGroupScope): Promise<Nic[]> {
    const { network } = await this.clientsFor(scope.subscriptionId);
    return this.collect(network.networkInterfaces.list(scope.resourceGroup), (nic) => toNic(nic, undefined));
  }

  async getVm(ref: ResourceRef): Promise<Vm | undefined> {
    const { compute } = await this.clientsFor(ref.subscriptionId);
    try {
      // With the instance view: the only place ARM shows a VM stopped or deallocated.
      return toVm(await compute.virtualMachines.get(ref.resourceGroup, ref.name, { expand: 'instanceView' }), ref);
    } catch (err) {
      return this.undefinedIfNotFound(err);
    }
  }

  /**
   * An existing VM is returned as ARM has it (Creating, Succeeded or Failed): the lifecycle
   * decides. A re-PUT would restart provisioning and re-reserve the NIC. The PUT is
   * create-only (`If-None-Match: *`, which Compute honours on a VM PUT): a VM of the name that
   * appeared after the GET is refused with 412, never written over, and read instead; whose it
   * is the lifecycle checks by its tags.
   */
  async createVm(spec: VmSpec | SdkVmSpec): Promise<Vm> {
    const existing = await this.getVm(spec.ref);
    if (existing) return existing;
    const { compute } = await this.clientsFor(spec.ref.subscriptionId);
    const body = this.vmBody(spec);
    const created = await this.create(`VM ${spec.ref.name}`, () =>
      compute.virtualMachines.createOrUpdate(spec.ref.resourceGroup, spec.ref.name, body, { ifNoneMatch: '*' }),
    ).catch((err: unknown) => {
      if (err instanceof AzureError && err.statusCode === 412) return undefined;
      throw err;
    });
    return created ? toVm(created, spec.ref) : this.mustGet(() => this.getVm(spec.ref), spec.ref);
  }

  /** Sends the DELETE and returns once ARM accepted it: the caller observes the VM go (minutes for a GPU VM). */
  async deleteVm(ref: ResourceRef): Promise<void> {
    const { compute } = await this.clientsFor(ref.subscriptionId);
    await this.delete(`VM ${ref.name}`, () => compute.virtualMachines.delete(ref.resourceGroup, ref.name), { wait: false });
  }

  async listVms(scope: ResourceGroupScope): Promise<Vm[]> {
    const { compute } = await this.clientsFor(scope.subscriptionId);
    return this.collect(compute.virtualMachines.list(scope.resourceGroup), (vm) => toVm(vm, undefined));
  }

  async listDisks(scope: ResourceGroupScope): Promise<Disk[]> {
    const { compute } = await this.clientsFor(scope.subscriptionId);
    return this.collect(compute.disks.listByResourceGroup(scope.resourceGroup), toDisk);
  }

  async getDisk(ref: ResourceRef): Promise<Disk | undefined> {
    const { compute } = await this.clientsFor(ref.subscriptionId);
    try {
      return toDisk(await compute.disks.get(ref.resourceGroup, ref.name));
    } catch (err) {
      return this.undefinedIfNotFound(err);
    }
  }

  async deleteDisk(ref: ResourceRef): Promise<void> {
    const { compute } = await this.clientsFor(ref.subscriptionId);
    await this.delete(`disk ${ref.name}`, () => compute.disks.delete(ref.resourceGroup, ref.name));
  }

  async listUsages(subscriptionId: string, location: string): Promise<ComputeUsages> {
    const { compute } = await this.clientsFor(subscriptionId);
    const usages = await this.collect(compute.usage.list(location), (u: Usage) => u);
    const regional = usages.find((u) => u.name.value === 'cores');
    if (!regional) throw new AzureError('Unknown', 0, `no Total Regional vCPUs counter in the usages of ${location}`);
    return toComputeUsages(usages, regional);
  }

  /**
   * Two reads on the official operations: the group with its instance view (each reservation's
   * utilisation, by name) and its reservations (each one's size and zone).
   */
  async getCapacityReservationGroup(ref: ResourceRef): Promise<CapacityReservationGroup | undefined> {
    const { compute } = await this.clientsFor(ref.subscriptionId);
    let group: ArmCapacityReservationGroup;
    try {
      group = await compute.capacityReservationGroups.get(ref.resourceGroup, ref.name, { expand: 'instanceView' });
    } catch (err) {
      return this.undefinedIfNotFound(err);
    }
    const members = await this.collect(compute.capacityReservations.listByCapacityReservationGroup(ref.resourceGroup, ref.name), (r: ArmCapacityReservation) => r);
    const utilization = new Map((group.instanceView?.capacityReservations ?? []).map((v) => [(v.name ?? '').toLowerCase(), v.utilizationInfo]));
    return {
      id: group.id ?? '', name: group.name ?? ref.name, location: group.location,
      reservations: members.map((r) => {
        const used = utilization.get((r.name ?? '').toLowerCase());
        return {
          id: r.id ?? '', name: r.name ?? '', vmSize: r.sku.name ?? '', ...(r.zones?.[0] ? { zone: r.zones[0] } : {}),
          capacity: used?.currentCapacity ?? r.sku.capacity ?? 0,
          allocatedVmIds: (used?.virtualMachinesAllocated ?? []).map((v) => v.id ?? '').filter((id) => id !== ''),
        };
      }),
    };
  }

  /** The Compute client for a subscription (the Resource SKUs catalog shares it). */
  async computeClient(subscriptionId: string): Promise<ComputeManagementClient> {
    return (await this.clientsFor(subscriptionId)).compute;
  }

  // --- request bodies -------------------------------------------------------------------

  private vmBody(spec: VmSpec | SdkVmSpec): VirtualMachine {
    const securityType = ('securityType' in spec ? spec.securityType : undefined) ?? this.options.defaultSecurityType ?? 'Standard';
    const spot = spec.priority === 'Spot';
    return {
      location: spec.location,
      // An availability zone id ("1"), not the "<region>-1" label: VirtualMachine.zones.
      ...(spec.zone ? { zones: [spec.zone] } : {}),
      tags: { ...spec.tags },
      hardwareProfile: { vmSize: spec.vmSize },
      storageProfile: {
        imageReference: imageReferenceOf(spec.image),
        osDisk: {
          name: spec.osDiskName,
          createOption: 'FromImage',
          // The disk goes with the VM: one VM delete cascades the whole trio, nothing to leak.
          deleteOption: 'Delete',
          caching: 'ReadWrite',
          diskSizeGB: spec.osDiskSizeGB,
          managedDisk: {
            storageAccountType: this.options.osDiskStorageType ?? 'StandardSSD_LRS',
            ...(securityType === 'ConfidentialVM' ? { securityProfile: { securityEncryptionType: 'VMGuestStateOnly' } } : {}),
          },
        },
      },
      osProfile: {
        computerName: spec.ref.name,
        adminUsername: spec.adminUsername,
        customData: spec.customData,
        linuxConfiguration: {
          disablePasswordAuthentication: true,
          ssh: {
            publicKeys: spec.sshPublicKeys.map((keyData) => ({ path: `/home/${spec.adminUsername}/.ssh/authorized_keys`, keyData })),
          },
        },
      },
      networkProfile: {
        networkInterfaces: [{ id: spec.nicId, primary: true, deleteOption: 'Delete' }],
      },
      securityProfile: securityProfileFor(securityType),
      priority: spec.priority,
      ...(spec.capacityReservationGroupId ? { capacityReservation: { capacityReservationGroup: { id: spec.capacityReservationGroupId } } } : {}),
      // A spot eviction must not leave a deallocated VM (and its NIC) behind.
      ...(spot ? { evictionPolicy: 'Delete', billingProfile: { maxPrice: 'spotMaxPrice' in spec ? spec.spotMaxPrice ?? -1 : -1 } } : {}),
    };
  }

  // --- plumbing ---------------------------------------------------------------------------

  private async create<T>(what: string, start: () => LroPoller<T>): Promise<T | undefined> {
    try {
      return await driveLro(this.options.clock, this.lroTiming, `create ${what}`, start);
    } catch (err) {
      const mapped = toAzureError(err, this.options.clock.now());
      // A 404 on PUT means a missing resource group, subnet or image: configuration, not absence.
      if (mapped.code === 'ResourceNotFound') throw new AzureError('InvalidParameter', mapped.statusCode, mapped.message);
      throw mapped;
    }
  }

  private async delete(what: string, start: () => LroPoller<void>, opts: { wait: boolean } = { wait: true }): Promise<void> {
    try {
      if (opts.wait) await driveLro(this.options.clock, this.lroTiming, `delete ${what}`, start);
      else await submitLro(this.options.clock, start);
    } catch (err) {
      const mapped = toAzureError(err, this.options.clock.now());
      if (mapped.code !== 'ResourceNotFound') throw mapped;
    }
  }

  private undefinedIfNotFound(err: unknown): undefined {
    const mapped = toAzureError(err, this.options.clock.now());
    if (mapped.code === 'ResourceNotFound') return undefined;
    throw mapped;
  }

  /** A list under a missing resource group is empty: nothing of ours can be there. */
  private async collect<A, B>(pages: AsyncIterable<A>, map: (item: A) => B): Promise<B[]> {
    const out: B[] = [];
    try {
      for await (const item of pages) out.push(map(item));
    } catch (err) {
      const mapped = toAzureError(err, this.options.clock.now());
      if (mapped.code === 'ResourceNotFound') return [];
      throw mapped;
    }
    return out;
  }

  private async mustGet<T>(get: () => Promise<T | undefined>, ref: ResourceRef): Promise<T> {
    const found = await get();
    if (!found) throw new AzureError('Unknown', 0, `${ref.name} created but not readable`);
    return found;
  }

  private async clientsFor(subscriptionId: string): Promise<ArmClients> {
    const credential = await this.resolveCredential();
    let clients = this.clients.get(subscriptionId);
    if (!clients) {
      clients = createArmClients(subscriptionId, {
        clock: this.options.clock,
        credential,
        readRetry: this.readRetry,
        ...(this.options.endpoint !== undefined ? { endpoint: this.options.endpoint } : {}),
        ...(this.options.httpClient !== undefined ? { httpClient: this.options.httpClient } : {}),
        ...(this.options.tlsCa !== undefined ? { tlsCa: this.options.tlsCa } : {}),
        ...(this.options.userAgentPrefix !== undefined ? { userAgentPrefix: this.options.userAgentPrefix } : {}),
        ...(this.options.requestMetrics !== undefined ? { requestMetrics: this.options.requestMetrics } : {}),
      });
      this.clients.set(subscriptionId, clients);
    }
    return clients;
  }

  /** Real-credential boundary: DefaultAzureCredential is loaded only when none is injected. */
  private resolveCredential(): Promise<TokenCredential> {
    // One credential per process even when the first calls race (it caches tokens).
    this.credential ??= import('@azure/identity').then(({ DefaultAzureCredential }) => new DefaultAzureCredential());
    return this.credential;
  }
}

// --- mapping ARM models → port shapes -------------------------------------------------------

function imageReferenceOf(image: VmSpec['image']): ArmImageReference {
  if ('reference' in image) {
    const { publisher, offer, sku, version } = image.reference;
    return { publisher, offer, sku, version };
  }
  // Gallery images shared outside the subscription use their own id fields.
  if (/\/communityGalleries\//i.test(image.id)) return { communityGalleryImageId: image.id };
  if (/\/sharedGalleries\//i.test(image.id)) return { sharedGalleryImageId: image.id };
  return { id: image.id };
}

function securityProfileFor(type: SecurityType): SecurityProfile {
  // Explicit Standard: newer API versions default to TrustedLaunch when securityType is absent.
  if (type === 'Standard') return { securityType: 'Standard' };
  return { securityType: type, uefiSettings: { secureBootEnabled: true, vTpmEnabled: true } };
}

function tagsOf(tags: Record<string, string> | undefined): Tags {
  return { ...(tags ?? {}) };
}

function nameOf(id: string | undefined, fallback: ResourceRef | undefined): string {
  return id ? id.slice(id.lastIndexOf('/') + 1) : (fallback?.name ?? '');
}

const NIC_STATES: ReadonlySet<Nic['provisioningState']> = new Set(['Updating', 'Succeeded', 'Failed', 'Deleting']);

export function toNic(nic: NetworkInterface, ref: ResourceRef | undefined): Nic {
  const ipConfig = nic.ipConfigurations?.find((c) => c.primary) ?? nic.ipConfigurations?.[0];
  const state = nic.provisioningState as Nic['provisioningState'] | undefined;
  return {
    id: nic.id ?? '',
    name: nic.name ?? nameOf(nic.id, ref),
    location: nic.location ?? '',
    subnetId: ipConfig?.subnet?.id ?? '',
    ...(ipConfig?.privateIPAddress ? { privateIpAddress: ipConfig.privateIPAddress } : {}),
    ...(nic.virtualMachine?.id ? { virtualMachineId: nic.virtualMachine.id } : {}),
    // ARM's NIC states also include Creating/Provisioning: all are "not settled yet".
    provisioningState: state && NIC_STATES.has(state) ? state : 'Updating',
    tags: tagsOf(nic.tags),
  };
}

export function toVmState(state: string | undefined): VmProvisioningState {
  switch (state) {
    case 'Succeeded':
    case 'Failed':
    case 'Deleting':
    case 'Creating':
      return state;
    default:
      // Updating, Migrating, Canceled... or absent: in flight from the lifecycle's point of view.
      return 'Creating';
  }
}

export function toVm(vm: VirtualMachine, ref: ResourceRef | undefined): Vm {
  const osDiskName = vm.storageProfile?.osDisk?.name;
  return {
    id: vm.id ?? '',
    name: vm.name ?? nameOf(vm.id, ref),
    location: vm.location,
    vmSize: vm.hardwareProfile?.vmSize ?? '',
    ...(vm.zones?.[0] ? { zone: vm.zones[0] } : {}),
    nicIds: (vm.networkProfile?.networkInterfaces ?? []).map((n) => n.id ?? '').filter((id) => id !== ''),
    ...(osDiskName ? { osDiskName } : {}),
    provisioningState: toVmState(vm.provisioningState),
    ...powerStateOf(vm),
    tags: tagsOf(vm.tags),
  };
}

/**
 * A provisioned VM's power state from its instance view (`PowerState/<code>`), when it is not
 * running; nothing for a running VM or an answer without an instance view (lists).
 */
export function powerStateOf(vm: VirtualMachine): { powerState?: VmPowerState } {
  const code = vm.instanceView?.statuses?.find((st) => st.code?.startsWith('PowerState/'))?.code?.slice('PowerState/'.length).toLowerCase();
  switch (code) {
    case 'starting':
    case 'stopping':
    case 'stopped':
    case 'deallocating':
    case 'deallocated':
      return { powerState: code };
    default:
      return {};
  }
}

export function toDisk(disk: ArmDisk): Disk {
  return {
    id: disk.id ?? '',
    name: disk.name ?? nameOf(disk.id, undefined),
    ...(disk.managedBy ? { managedBy: disk.managedBy } : {}),
    tags: tagsOf(disk.tags),
  };
}

/** Usages as the port gives them: the regional and low-priority counters, and every `…Family` counter by its name. */
function toComputeUsages(usages: readonly Usage[], regional: Usage): ComputeUsages {
  const core = (u: Usage): CoreUsage => ({ used: u.currentValue, limit: u.limit });
  const lowPriority = usages.find((u) => u.name.value === 'lowPriorityCores');
  const families = new Map<string, CoreUsage>();
  for (const u of usages) if (u.name.value?.endsWith('Family')) families.set(u.name.value, core(u));
  return { regional: core(regional), ...(lowPriority ? { lowPriority: core(lowPriority) } : {}), families };
}
