import type { Nic } from '../../ports/azure.js';
import type { Clock, Random } from '../../ports/clock.js';
import type { InstanceType } from '../../catalog/skus.js';
import {
  COMPUTE_THROTTLE_POLICIES,
  DEFAULT_LATENCY_MS,
  DEFAULT_LIST_LAG_SECONDS,
  DEFAULT_LIST_PAGE_SIZE,
  DEFAULT_QUOTA,
  DEFAULT_RESERVATION_SECONDS,
  DEFAULT_TIMEOUT_AFTER_EFFECT_RATE,
} from './defaults.js';
import { ResourceIndex } from './resource-index.js';
import type { DiskRecord, NicRecord, VmRecord } from './model.js';
import type { ArmEvent, ArmStateChange, ComputeThrottlePolicy, FakeArmConfig, FakeArmLatency, LatencyRangeMs } from './types.js';

/** A deleted record lists on until `hiddenAt` (ARM's list cache lags behind deletes). */
export interface Tomb<R> {
  rec: R;
  hiddenAt: number;
}

/** The fake ARM's configuration with every default applied (defaults.ts, docs/fidelity.md). */
export interface ArmSettings {
  latency: FakeArmLatency;
  reservationSeconds: number;
  reservationMs: number;
  reservationJitterMs: number;
  reservationDelayMs: number;
  reservationFrom: 'attempt' | 'completion';
  failedVmRecords: boolean;
  cascadeDeletesReservedNic: boolean;
  pageSize: number;
  appearLagMs: number;
  disappearLagMs: number;
  immutableVmProperties: boolean;
  computePolicies: readonly ComputeThrottlePolicy[];
  defaultQuota: { familyCores: number; gpuFamilyCores: number; regionalCores: number; lowPriorityCores: number };
  requireResourceGroups: boolean;
  validateApiVersions: boolean;
  timeoutAfterEffectRate: number;
  usagesReadable: boolean;
  usagesLagMs: number;
}

export function settingsOf(config: FakeArmConfig): ArmSettings {
  const reservationSeconds = config.reservation?.seconds ?? config.reservationSeconds ?? DEFAULT_RESERVATION_SECONDS;
  return {
    latency: { ...DEFAULT_LATENCY_MS, ...config.latencyMs },
    reservationSeconds,
    reservationMs: reservationSeconds * 1000,
    reservationJitterMs: (config.reservation?.jitterSeconds ?? 0) * 1000,
    reservationDelayMs: (config.reservation?.startDelaySeconds ?? 0) * 1000,
    reservationFrom: config.reservation?.from ?? 'attempt',
    failedVmRecords: config.failedVmRecords ?? true,
    cascadeDeletesReservedNic: config.cascadeDeletesReservedNic ?? false,
    pageSize: Math.max(1, config.listPageSize ?? DEFAULT_LIST_PAGE_SIZE),
    appearLagMs: (config.listLagSeconds?.appearSeconds ?? DEFAULT_LIST_LAG_SECONDS.appearSeconds) * 1000,
    disappearLagMs: (config.listLagSeconds?.disappearSeconds ?? DEFAULT_LIST_LAG_SECONDS.disappearSeconds) * 1000,
    immutableVmProperties: config.immutableVmProperties ?? true,
    computePolicies: config.computeThrottling === false ? [] : Array.isArray(config.computeThrottling) ? config.computeThrottling : COMPUTE_THROTTLE_POLICIES,
    defaultQuota: { ...DEFAULT_QUOTA, ...config.defaultQuota },
    usagesReadable: config.usages?.readable ?? true,
    usagesLagMs: (config.usages?.lagSeconds ?? 0) * 1000,
    requireResourceGroups: config.requireResourceGroups ?? true,
    validateApiVersions: config.validateApiVersions ?? true,
    timeoutAfterEffectRate: config.timeoutAfterEffectRate ?? DEFAULT_TIMEOUT_AFTER_EFFECT_RATE,
  };
}

/**
 * What every part of the fake ARM shares: time, randomness, settings, the event sink and the
 * records of the three resource types, keyed by lower-cased ARM id (ARM compares ids
 * case-insensitively). Time comes only from `clock` and randomness only from `random`.
 */
export class ArmState {
  readonly types = new Map<string, InstanceType>();
  readonly nics = new ResourceIndex<NicRecord>();
  readonly vms = new ResourceIndex<VmRecord>();
  readonly disks = new ResourceIndex<DiskRecord>();
  readonly nicTombs = new ResourceIndex<Tomb<NicRecord>>();
  readonly vmTombs = new ResourceIndex<Tomb<VmRecord>>();
  readonly diskTombs = new ResourceIndex<Tomb<DiskRecord>>();
  /** Bumped on every write that changes a VM's view or the VM map (currentVms' cache key). */
  vmWrites = 0;

  constructor(
    readonly clock: Clock,
    readonly random: Random,
    readonly settings: ArmSettings,
    readonly onEvent: ((e: ArmEvent) => void) | undefined,
    instanceTypes: readonly InstanceType[],
  ) {
    for (const t of instanceTypes) this.types.set(t.name.toLowerCase(), t);
  }

  now(): number {
    return this.clock.now();
  }

  draw(range: LatencyRangeMs): number {
    if (range.max <= range.min) return range.min;
    return Math.round(range.min + this.random.next() * (range.max - range.min));
  }

  emit(op: ArmStateChange, name: string, status: string, code?: string): void {
    if (!this.onEvent) return;
    const e: ArmEvent = { t: this.clock.now(), op, name, status };
    if (code !== undefined) e.code = code;
    this.onEvent(e);
  }

  /** A VM's state changed: its cached view and etag go stale, and so does currentVms' list. */
  vmChanged(vm: VmRecord): void {
    vm.view = undefined;
    vm.getView = undefined;
    vm.etag++;
    this.vmWrites++;
  }

  attach(nic: NicRecord, vmKey: string | undefined): void {
    nic.attachedVmKey = vmKey;
    nic.view = undefined;
  }

  /** Frozen and cached like vmView/diskView (see model.ts); attach() clears the cache. */
  nicView(rec: NicRecord): Nic {
    if (rec.view) return rec.view;
    const nic: Nic = {
      id: rec.id, name: rec.name, location: rec.location, subnetId: rec.subnetId, privateIpAddress: rec.ip,
      provisioningState: rec.deleteOp ? 'Deleting' : 'Succeeded', tags: Object.freeze({ ...rec.tags }),
    };
    const vm = rec.attachedVmKey === undefined ? undefined : this.vms.get(rec.attachedVmKey);
    if (vm) nic.virtualMachineId = vm.id;
    return (rec.view = Object.freeze(nic));
  }

  /** Puts a removed record in its tomb while the list cache still shows it. */
  bury<R>(tombs: ResourceIndex<Tomb<R>>, key: string, rec: R): void {
    if (this.settings.disappearLagMs > 0) tombs.set(key, { rec, hiddenAt: this.clock.now() + this.settings.disappearLagMs });
  }
}
