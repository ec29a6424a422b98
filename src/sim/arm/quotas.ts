import { zoneLabel, zonesIn, type InstanceType } from '../../catalog/skus.js';
import { isGpuFamily } from './defaults.js';
import * as msg from './messages.js';
import { normalizeLocation, type QuotaUsage, type RegionState, type SnapshotJson, type VmCreateRequest, type VmRecord } from './model.js';
import type { ArmCalls } from './calls.js';
import type { Regions } from './regions.js';
import type { ArmState } from './state.js';

/**
 * Why the subscription may not deploy the size in the region (or zone), if it may not: the
 * size is not offered or is restricted there, or (a zonal VM) not in that zone, as Resource
 * SKUs' locationInfo lists the zones; a regional region has none, so any zone is refused.
 */
export function skuRestriction(type: InstanceType, region: RegionState, zone: string | undefined): 'location' | 'zone' | undefined {
  const loc = region.location.toLowerCase();
  if (region.unavailable.has(type.name.toLowerCase()) || !type.locations.some((l) => l.toLowerCase() === loc)) return 'location';
  if (zone !== undefined && !zonesIn(type, loc).includes(zoneLabel(loc, zone))) return 'zone';
  return undefined;
}

/**
 * Compute quotas and usages: the synchronous admission of a VM PUT (size, SKU availability,
 * then family, regional or low-priority cores), the cores VMs hold, and the usages API.
 */
export class Quotas {
  /** Changes in held cores not yet shown by the usages API (only with a usages lag). */
  private readonly unshown: Array<{ at: number; region: RegionState; family: string; cores: number; spot: boolean }> = [];

  constructor(private readonly state: ArmState, private readonly regions: Regions, private readonly calls: ArmCalls) {}

  /**
   * Sync admission of an accepted-looking VM PUT: size, SKU availability, then quota (unless a
   * capacity reservation's free slot takes it: the reservation already holds its cores).
   */
  admit(req: VmCreateRequest, region: RegionState, reserved = false): void {
    const type = this.state.types.get(req.vmSize.toLowerCase());
    if (!type) throw msg.invalid(`The value ${req.vmSize} provided for the VM size is not valid.`);
    const restricted = skuRestriction(type, region, req.zone);
    if (restricted === 'location') throw msg.skuNotAvailable(type.name, req.location);
    if (restricted === 'zone') throw msg.skuNotAvailable(type.name, req.location, req.zone);
    if (reserved) return;
    if (req.priority === 'Spot') {
      const lowPriority = this.lowPriorityLimit(region);
      if (region.lowPriorityUsed + type.vcpu > lowPriority) {
        throw msg.quotaExceeded('LowPriorityCores', req.location, lowPriority, region.lowPriorityUsed, type.vcpu, 'spot-quota');
      }
      return;
    }
    const limit = this.familyLimit(region, type.family);
    const used = region.familyUsed.get(type.family) ?? 0;
    if (used + type.vcpu > limit) {
      throw msg.quotaExceeded(type.family + ' Cores', req.location, limit, used, type.vcpu, 'per-vm-quota-requests');
    }
    const regional = this.regionalLimit(region);
    if (region.totalUsed + type.vcpu > regional) {
      throw msg.quotaExceeded('Total Regional Cores', req.location, regional, region.totalUsed, type.vcpu, 'regional-quota-requests');
    }
  }

  /** A capacity reservation's cores, held against the family and regional quota from its creation. */
  holdReserved(region: RegionState, family: string, cores: number): void {
    region.familyUsed.set(family, (region.familyUsed.get(family) ?? 0) + cores);
    region.totalUsed += cores;
  }

  /** Holds (sign 1) or frees (-1) a VM's cores: a Spot VM's in the low-priority quota only, others in their family's and the regional. */
  addCores(vm: VmRecord, sign: 1 | -1): void {
    const region = vm.region;
    const cores = sign * vm.cores;
    this.prune();
    if (this.state.settings.usagesLagMs > 0) this.unshown.push({ at: this.state.clock.now(), region, family: vm.family, cores, spot: vm.priority === 'Spot' });
    if (vm.priority === 'Spot') {
      region.lowPriorityUsed += cores;
      return;
    }
    region.familyUsed.set(vm.family, (region.familyUsed.get(vm.family) ?? 0) + cores);
    region.totalUsed += cores;
  }

  /**
   * Compute usages of a region (GET …/locations/{l}/usages, a counted read): cores used and
   * allowed per VM family (every family offered there, plus any with a quota or usage) and
   * in total, and the region's VM count. Undefined for a region the fake does not serve.
   */
  usage(subscriptionId: string, location: string): QuotaUsage | undefined {
    const loc = normalizeLocation(location);
    const region = this.regions.get(subscriptionId, loc);
    return this.calls.invoke('usage.list', 'reads', subscriptionId, region ? loc : undefined, loc, () => {
      if (!this.state.settings.usagesReadable) throw msg.usagesForbidden(subscriptionId, loc);
      if (!region) return { status: 404, value: undefined };
      const families = new Set<string>([...region.familyQuota.keys(), ...region.familyUsed.keys()]);
      for (const t of this.state.types.values()) if (t.locations.some((l) => l.toLowerCase() === loc)) families.add(t.family);
      let vms = 0;
      for (const vm of this.state.vms.values()) if (vm.region === region) vms++;
      const shown = this.shownUsage(region);
      return {
        status: 200,
        value: {
          regional: { used: shown.total, limit: this.regionalLimit(region) },
          lowPriority: { used: shown.lowPriority, limit: this.lowPriorityLimit(region) },
          families: [...families].sort().map((family) => ({ family, used: shown.families.get(family) ?? 0, limit: this.familyLimit(region, family) })),
          virtualMachines: vms,
        },
      };
    });
  }

  private prune(): void {
    const since = this.state.clock.now() - this.state.settings.usagesLagMs;
    while (this.unshown.length > 0 && this.unshown[0]!.at <= since) this.unshown.shift();
  }

  /** What the usages API shows of a region's held cores: the changes of the last `usagesLagMs` are not in it yet. */
  private shownUsage(region: RegionState): { total: number; lowPriority: number; families: Map<string, number> } {
    const out = { total: region.totalUsed, lowPriority: region.lowPriorityUsed, families: new Map(region.familyUsed) };
    this.prune();
    for (const c of this.unshown) {
      if (c.region !== region) continue;
      if (c.spot) {
        out.lowPriority -= c.cores;
        continue;
      }
      out.total -= c.cores;
      out.families.set(c.family, (out.families.get(c.family) ?? 0) - c.cores);
    }
    return out;
  }

  /** Every region's family and regional cores, as the snapshot shows them. */
  snapshot(): Pick<SnapshotJson, 'quota' | 'regionalCores'> {
    const quota: SnapshotJson['quota'] = [];
    const regionalCores: SnapshotJson['regionalCores'] = [];
    for (const r of this.regions.values()) {
      const families = new Set([...r.familyQuota.keys(), ...r.familyUsed.keys()]);
      for (const family of families) {
        quota.push({ subscriptionId: r.subscriptionId, location: r.location, family, usedCores: r.familyUsed.get(family) ?? 0, limitCores: this.familyLimit(r, family) });
      }
      regionalCores.push({ subscriptionId: r.subscriptionId, location: r.location, usedCores: r.totalUsed, limitCores: this.regionalLimit(r) });
    }
    return { quota, regionalCores };
  }

  private familyLimit(region: RegionState, family: string): number {
    const d = this.state.settings.defaultQuota;
    return region.familyQuota.get(family) ?? (isGpuFamily(family) ? d.gpuFamilyCores : d.familyCores);
  }

  private regionalLimit(region: RegionState): number {
    return region.regionalQuota ?? this.state.settings.defaultQuota.regionalCores;
  }

  private lowPriorityLimit(region: RegionState): number {
    return region.lowPriorityQuota ?? this.state.settings.defaultQuota.lowPriorityCores;
  }
}
