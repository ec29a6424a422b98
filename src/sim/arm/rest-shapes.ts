import type { Nic } from '../../ports/azure.js';
import type { DiskDetails, QuotaUsage, VmDetails } from './fake-arm.js';
import type { OperationStatus } from './types.js';

/**
 * ARM wire JSON for the resources the fake serves, in the shapes Microsoft.Network
 * (2024+) and Microsoft.Compute (2024+) return and the TypeSpec-generated SDKs
 * (@azure/arm-network 39, @azure/arm-compute 25) deserialize. Only what azflex and the
 * SDK read is rendered; customData is never rendered (ARM never returns it either).
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const iso = (ms: number): string => new Date(ms).toISOString();

/** A stable pseudo-GUID from a resource id, so repeated GETs agree and runs are reproducible. */
export function stableGuid(seed: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < seed.length; i++) {
    const c = seed.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  }
  const hex = (n: number): string => n.toString(16).padStart(8, '0');
  const a = hex(h1);
  const b = hex(h2);
  const c = hex(Math.imul(h1 ^ h2, 0x27d4eb2d) >>> 0);
  const d = hex(Math.imul(h2 + 0x9e3779b9, h1 | 1) >>> 0);
  return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-a${c.slice(1, 4)}-${c.slice(4)}${d}`;
}

export function nicJson(nic: Nic): JsonObject {
  const ipConfigId = `${nic.id}/ipConfigurations/ipconfig1`;
  const properties: JsonObject = {
    provisioningState: nic.provisioningState,
    resourceGuid: stableGuid(nic.id.toLowerCase()),
    ipConfigurations: [
      {
        id: ipConfigId,
        name: 'ipconfig1',
        type: 'Microsoft.Network/networkInterfaces/ipConfigurations',
        properties: {
          provisioningState: 'Succeeded',
          privateIPAddress: nic.privateIpAddress ?? null,
          privateIPAllocationMethod: 'Dynamic',
          subnet: { id: nic.subnetId },
          primary: true,
          privateIPAddressVersion: 'IPv4',
        },
      },
    ],
    dnsSettings: { dnsServers: [], appliedDnsServers: [] },
    enableAcceleratedNetworking: false,
    enableIPForwarding: false,
    disableTcpStateTracking: false,
    nicType: 'Standard',
    auxiliaryMode: 'None',
    auxiliarySku: 'None',
  };
  if (nic.virtualMachineId !== undefined) {
    properties['virtualMachine'] = { id: nic.virtualMachineId };
    properties['primary'] = true;
  }
  return {
    name: nic.name,
    id: nic.id,
    // Network's etag changes with every change of the NIC (here: its VM and its tags).
    etag: `W/"${stableGuid(nic.id + (nic.virtualMachineId ?? '') + JSON.stringify(nic.tags))}"`,
    type: 'Microsoft.Network/networkInterfaces',
    location: nic.location,
    tags: { ...nic.tags },
    kind: 'Regular',
    properties,
  };
}

export function vmJson(vm: VmDetails): JsonObject {
  const diskId = `/subscriptions/${vm.subscriptionId}/resourceGroups/${vm.resourceGroup}/providers/Microsoft.Compute/disks/${vm.osDiskName ?? ''}`;
  const image: JsonObject =
    'id' in vm.image
      ? { id: vm.image.id }
      : { publisher: vm.image.reference.publisher, offer: vm.image.reference.offer, sku: vm.image.reference.sku, version: vm.image.reference.version };
  const managedDisk: JsonObject = { storageAccountType: vm.shown?.osDiskStorageAccountType ?? 'Premium_LRS' };
  // ARM fills managedDisk.id once the disk exists.
  if (vm.provisioningState !== 'Creating') managedDisk['id'] = diskId;
  return {
    name: vm.name,
    id: vm.id,
    etag: `"${vm.etag}"`,
    type: 'Microsoft.Compute/virtualMachines',
    location: vm.location,
    ...(vm.zone ? { zones: [vm.zone] } : {}),
    tags: { ...vm.tags },
    properties: {
      vmId: stableGuid(vm.id.toLowerCase()),
      hardwareProfile: { vmSize: vm.vmSize },
      ...(vm.capacityReservationGroupId ? { capacityReservation: { capacityReservationGroup: { id: vm.capacityReservationGroupId } } } : {}),
      storageProfile: {
        imageReference: image,
        osDisk: {
          osType: 'Linux',
          name: vm.osDiskName ?? null,
          createOption: 'FromImage',
          caching: 'ReadWrite',
          managedDisk,
          deleteOption: vm.osDiskDeleteOption,
          diskSizeGB: vm.osDiskSizeGB,
        },
        dataDisks: [],
      },
      osProfile: {
        computerName: vm.shown?.computerName ?? vm.name,
        adminUsername: vm.adminUsername,
        linuxConfiguration: {
          disablePasswordAuthentication: true,
          ssh: { publicKeys: vm.sshPublicKeys.map((keyData) => ({ path: `/home/${vm.adminUsername}/.ssh/authorized_keys`, keyData })) },
          provisionVMAgent: true,
        },
        secrets: [],
        allowExtensionOperations: true,
        requireGuestProvisionSignal: true,
      },
      networkProfile: {
        networkInterfaces: vm.nicIds.map((id, i) => ({ id, properties: { primary: i === 0, deleteOption: vm.nicDeleteOption } })),
      },
      priority: vm.priority,
      ...(vm.evictionPolicy !== undefined ? { evictionPolicy: vm.evictionPolicy } : {}),
      ...(vm.maxPrice !== undefined ? { billingProfile: { maxPrice: vm.maxPrice } } : {}),
      provisioningState: vm.provisioningState,
      timeCreated: iso(vm.timeCreated),
    },
  };
}

/**
 * A VM's instance view (GET …/instanceView, `$expand=instanceView`, `statusOnly=true`): its
 * statuses in the codes of "States and billing status of Azure Virtual Machines"
 * (ProvisioningState/creating|succeeded|deleting, ProvisioningState/failed/<code> at level
 * Error with the failure's message, and a provisioned VM's PowerState/<code>: running,
 * starting, stopping, stopped, deallocating, deallocated). Power states of VMs being created,
 * deleted or failed are not published, so a VM that is not Succeeded shows none.
 */
export function vmInstanceViewJson(vm: VmDetails): JsonObject {
  const statuses: Json[] = [];
  switch (vm.provisioningState) {
    case 'Creating':
      statuses.push({ code: 'ProvisioningState/creating', level: 'Info', displayStatus: 'Creating' });
      break;
    case 'Deleting':
      statuses.push({ code: 'ProvisioningState/deleting', level: 'Info', displayStatus: 'Deleting' });
      break;
    case 'Failed': {
      const error = vm.provisioningError ?? { code: 'InternalOperationError', message: 'Operation abandoned due to internal error. Please try again later.' };
      statuses.push({ code: `ProvisioningState/failed/${error.code}`, level: 'Error', displayStatus: 'Provisioning failed', message: error.message });
      break;
    }
    case 'Succeeded':
      statuses.push({ code: 'ProvisioningState/succeeded', level: 'Info', displayStatus: 'Provisioning succeeded' });
      const power = vm.power ?? 'running';
      statuses.push({ code: `PowerState/${power}`, level: 'Info', displayStatus: `VM ${power}` });
      break;
  }
  const out: JsonObject = { computerName: vm.shown?.computerName ?? vm.name, hyperVGeneration: 'V2', statuses };
  if (vm.provisioningState !== 'Creating' && vm.osDiskName !== undefined) {
    out['disks'] = [{ name: vm.osDiskName, statuses: [{ code: 'ProvisioningState/succeeded', level: 'Info', displayStatus: 'Provisioning succeeded' }] }];
  }
  return out;
}

/** The VM with its instance view in `properties.instanceView`, as `$expand=instanceView` returns it. */
export function vmWithInstanceViewJson(vm: VmDetails): JsonObject {
  const out = vmJson(vm);
  (out['properties'] as JsonObject)['instanceView'] = vmInstanceViewJson(vm);
  return out;
}

/**
 * GET …/providers/Microsoft.Compute/locations/{l}/usages: `{unit, currentValue, limit,
 * name: {value, localizedValue}}` per counter, named as `az vm list-usage` prints them
 * (`cores` "Total Regional vCPUs", `lowPriorityCores` "Total Regional Low-priority vCPUs"
 * (Spot), `virtualMachines`, and each family, e.g. `standardDSv5Family` "Standard DSv5
 * Family vCPUs"). The fake keeps no scale sets or availability sets, so it lists no counters for them.
 */
export function usageListJson(usage: QuotaUsage): JsonObject {
  const row = (value: string, localizedValue: string, currentValue: number, limit: number): Json => ({ unit: 'Count', currentValue, limit, name: { value, localizedValue } });
  return {
    value: [
      row('cores', 'Total Regional vCPUs', usage.regional.used, usage.regional.limit),
      row('lowPriorityCores', 'Total Regional Low-priority vCPUs', usage.lowPriority.used, usage.lowPriority.limit),
      row('virtualMachines', 'Virtual Machines', usage.virtualMachines, VMS_PER_REGION),
      ...usage.families.map((f) => row(f.family, familyDisplayName(f.family), f.used, f.limit)),
    ],
  };
}

/** Azure's default (and maximum) count of VMs per subscription and region. */
const VMS_PER_REGION = 25_000;

function familyDisplayName(family: string): string {
  const m = /^standard(.+?)_?Family$/i.exec(family);
  return m ? `Standard ${m[1]} Family vCPUs` : `${family} vCPUs`;
}

export function diskJson(disk: DiskDetails): JsonObject {
  const out: JsonObject = {
    name: disk.name,
    id: disk.id,
    type: 'Microsoft.Compute/disks',
    location: disk.location,
    tags: { ...disk.tags },
    sku: diskSku(disk.storageAccountType ?? 'Premium_LRS'),
    properties: {
      osType: 'Linux',
      hyperVGeneration: 'V2',
      creationData: { createOption: 'FromImage' },
      diskSizeGB: disk.diskSizeGB,
      provisioningState: 'Succeeded',
      diskState: disk.managedBy === undefined ? 'Unattached' : 'Attached',
      timeCreated: iso(disk.timeCreated),
      uniqueId: stableGuid(disk.id.toLowerCase()),
    },
  };
  if (disk.managedBy !== undefined) out['managedBy'] = disk.managedBy;
  return out;
}

/** A subnet as Network returns it: prefix, state, and the NIC IP configurations holding its addresses. */
export function subnetJson(subnet: { id: string; addressPrefix: string; nicIds: string[] }): JsonObject {
  return {
    name: subnet.id.slice(subnet.id.lastIndexOf('/') + 1),
    id: subnet.id,
    etag: `W/"${stableGuid(subnet.id + subnet.nicIds.join(','))}"`,
    type: 'Microsoft.Network/virtualNetworks/subnets',
    properties: {
      provisioningState: 'Succeeded',
      addressPrefix: subnet.addressPrefix,
      ipConfigurations: subnet.nicIds.map((id) => ({ id: `${id}/ipConfigurations/ipconfig1` })),
      privateEndpointNetworkPolicies: 'Disabled',
      privateLinkServiceNetworkPolicies: 'Enabled',
    },
  };
}

/** A managed disk's `sku`: the storage type and its tier (Premium_LRS → Premium, StandardSSD_LRS → Standard, …). */
function diskSku(name: string): JsonObject {
  return { name, tier: /^premium/i.test(name) ? 'Premium' : /^ultra/i.test(name) ? 'Ultra' : 'Standard' };
}

/** The Azure-AsyncOperation status document. */
export function operationJson(id: string, status: OperationStatus, startMs: number, endMs: number | undefined): JsonObject {
  const out: JsonObject = { name: id, status: status.status, startTime: iso(startMs) };
  if (endMs !== undefined && status.status !== 'InProgress') out['endTime'] = iso(endMs);
  if (status.status === 'Failed') out['error'] = { code: status.error.code, message: status.error.message };
  return out;
}

export function errorJson(code: string, message: string, target?: string): JsonObject {
  return { error: target === undefined ? { code, message } : { code, message, target } };
}
