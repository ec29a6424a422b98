import { sameId, type RegionState } from './model.js';
import type { ArmCalls } from './calls.js';
import type { Vms } from './compute-vms.js';
import type { Regions } from './regions.js';
import type { ArmState } from './state.js';
import type { ArmFault, BucketKind, VmActionFault } from './types.js';
import type { VmPower } from './vm-power.js';
import { ALL_SIZES } from './spot.js';

type Fault<K extends ArmFault['kind']> = Extract<ArmFault, { kind: K }>;

/** What a scenario's faults change: quota, capacity, throttling, SKUs, and the VMs themselves. */
export class Faults {
  constructor(
    private readonly state: ArmState,
    private readonly regions: Regions,
    private readonly calls: ArmCalls,
    private readonly vms: Vms,
    private readonly power: VmPower,
  ) {}

  inject(f: ArmFault): void {
    switch (f.kind) {
      case 'quota':
        for (const r of this.match(f)) {
          if (f.family === undefined) r.regionalQuota = f.cores;
          else r.familyQuota.set(f.family, f.cores);
        }
        break;
      case 'capacity':
        for (const r of this.match(f)) {
          if (f.allocationFailureRate !== undefined) r.allocationFailureRate = f.allocationFailureRate;
          if (f.zonalAllocationFailureRate !== undefined) r.zonalAllocationFailureRate = f.zonalAllocationFailureRate;
          if (f.overconstrainedAllocationFailureRate !== undefined) r.overconstrainedAllocationFailureRate = f.overconstrainedAllocationFailureRate;
        }
        break;
      case 'computeThrottle':
        for (const r of this.match(f)) this.calls.compute.saturate(r.subscriptionId, r.location, f.policy);
        break;
      case 'throttle':
        this.throttle(f);
        break;
      case 'transient':
        if (f.transientFaultRate !== undefined) this.calls.transientFaultRate = f.transientFaultRate;
        if (f.timeoutRate !== undefined) this.calls.timeoutRate = f.timeoutRate;
        break;
      case 'skuUnavailable':
        for (const r of this.match(f)) {
          if (f.unavailable === false) r.unavailable.delete(f.sku.toLowerCase());
          else r.unavailable.add(f.sku.toLowerCase());
        }
        break;
      case 'spotCapacity':
        for (const r of this.match(f)) {
          const sku = f.sku?.toLowerCase() ?? ALL_SIZES;
          if (f.available) r.spotUnavailable.delete(sku);
          else r.spotUnavailable.add(sku);
        }
        break;
      case 'vmAction':
        for (const r of this.match(f)) this.vmAction(r, f);
        break;
      case 'spotEviction':
        for (const r of this.match(f)) this.spotEviction(r, f);
        break;
      default: {
        const never: never = f;
        throw new Error(`unknown fault ${JSON.stringify(never)}`);
      }
    }
    this.state.emit('fault.injected', f.kind, 'Injected');
  }

  private match(f: { location: string; subscriptionId?: string | undefined }): RegionState[] {
    return this.regions.match(f.location, f.subscriptionId);
  }

  private throttle(f: Fault<'throttle'>): void {
    if (f.enabled !== undefined) this.calls.throttling = f.enabled;
    if (!f.drain) return;
    const regions = f.location === undefined ? [...this.regions.values()].filter((r) => f.subscriptionId === undefined || sameId(r.subscriptionId, f.subscriptionId)) : this.regions.match(f.location, f.subscriptionId);
    const kinds: BucketKind[] = f.bucket ? [f.bucket] : ['reads', 'writes', 'deletes'];
    for (const r of regions) for (const kind of kinds) this.calls.buckets.get(r.subscriptionId, r.location, kind).drain(this.state.clock.now());
  }

  /** Deletes, deallocates or powers off a drawn fraction of a region's running VMs (of one size, if named). */
  private vmAction(r: RegionState, f: VmActionFault): void {
    const sku = f.sku?.toLowerCase();
    // A snapshot in map order (a delete changes the map), so a seed picks the same VMs.
    for (const vm of [...this.state.vms.values()]) {
      if (vm.region !== r || (sku !== undefined && vm.vmSize.toLowerCase() !== sku)) continue;
      if (vm.provisioningState !== 'Succeeded' || vm.power !== 'running' || !(f.fraction > 0) || this.state.random.next() >= f.fraction) continue;
      this.state.emit('vm.power', vm.name, f.action);
      if (f.action === 'delete') this.vms.startDelete(vm);
      else this.power.forceOff(vm, f.action === 'deallocate' ? 'deallocating' : 'stopping');
    }
  }

  /** Sets a region's Spot eviction rate (of one size, if named) and evicts a drawn fraction of its running Spot VMs now. */
  private spotEviction(r: RegionState, f: Fault<'spotEviction'>): void {
    const sku = f.sku?.toLowerCase();
    if (f.ratePerHour !== undefined) {
      if (sku === undefined) {
        r.spotEvictionRatePerHour = f.ratePerHour;
        r.spotEvictionRateBySku.clear();
      } else r.spotEvictionRateBySku.set(sku, f.ratePerHour);
    }
    // In ARM's order of the VMs (map order), so a seed gives the same victims.
    for (const vm of this.state.vms.values()) {
      if (vm.region !== r || (sku !== undefined && vm.vmSize.toLowerCase() !== sku)) continue;
      if (vm.priority !== 'Spot' || vm.provisioningState !== 'Succeeded' || vm.power !== 'running') continue;
      if (vm.evictionNoticed) continue;
      if (f.evictFraction !== undefined && f.evictFraction > 0 && this.state.random.next() < f.evictFraction) this.power.noticeEviction(vm);
      else if (f.ratePerHour !== undefined) this.power.scheduleEviction(vm);
    }
  }
}
