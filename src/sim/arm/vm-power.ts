import type { ResourceRef } from '../../ports/azure.js';
import { armId } from '../../azure/naming.js';
import * as msg from './messages.js';
import type { OpRecord, PowerAction, VmRecord } from './model.js';
import type { ArmCalls } from './calls.js';
import type { Operations } from './operations.js';
import type { ResourceGroups } from './resource-groups.js';
import type { ArmState } from './state.js';
import type { LatencyRangeMs } from './types.js';

/** The power states a VM shows while an action or an eviction moves it. */
export type VmPowerTransit = 'starting' | 'stopping' | 'deallocating';

/**
 * A Spot VM's Preempt Scheduled Event comes at least this long before ARM evicts it ("a minimum
 * of 30 seconds"); the fake evicts exactly then.
 */
export const SPOT_EVICTION_NOTICE_MS = 30_000;

/** How long deleting a VM takes: GPU hosts take minutes to deprovision; a VM that never allocated has nothing to release. */
export function vmDeleteLatency(state: ArmState, vm: VmRecord, allocated: boolean): LatencyRangeMs {
  const gpu = (state.types.get(vm.vmSize.toLowerCase())?.gpuCount ?? 0) > 0;
  return allocated && gpu ? state.settings.latency.gpuVmDelete : state.settings.latency.vmDelete;
}

/** A VM's power: the POST actions (deallocate, powerOff, start, restart) and Spot evictions. */
export class VmPower {
  constructor(
    private readonly state: ArmState,
    private readonly calls: ArmCalls,
    private readonly groups: ResourceGroups,
    private readonly ops: Operations,
    /** Starts deleting a VM (an eviction with policy Delete). */
    private readonly startDelete: (rec: VmRecord) => void,
  ) {}

  /**
   * A VM power action (POST …/deallocate, powerOff, start, restart): a counted write that
   * starts an operation, or refuses (409 OperationNotAllowed) a VM that is not provisioned or
   * is in a state the action does not apply to. Undefined when the VM does not exist.
   */
  beginAction(ref: ResourceRef, action: PowerAction): { operationId: string } | undefined {
    const rec = this.record(ref);
    return this.calls.invoke('vm.action', 'writes', ref.subscriptionId, rec?.location, ref.name, () => {
      this.groups.require(ref);
      if (!rec) return { status: 404, value: undefined };
      if (rec.provisioningState === 'Deleting') throw msg.vmBeingDeleted(rec.name, action);
      if (rec.provisioningState !== 'Succeeded') throw msg.powerActionNotAllowed(rec.name, action, `the VM is in provisioning state '${rec.provisioningState}'`);
      const from = rec.power;
      const stopped = from === 'stopped' || from === 'stopping';
      const deallocated = from === 'deallocated' || from === 'deallocating';
      if (action === 'powerOff' && deallocated) throw msg.powerActionNotAllowed(rec.name, action, 'the VM is deallocated');
      if (action === 'restart' && (stopped || deallocated)) throw msg.powerActionNotAllowed(rec.name, action, `the VM is ${stopped ? 'stopped' : 'deallocated'}; start it first`);
      const op = this.ops.start('action');
      // What the action leads to, and the state it shows meanwhile; an action that finds the VM there already just succeeds.
      const plan: { via: VmPowerTransit; to: 'running' | 'stopped' | 'deallocated' } | undefined =
        action === 'deallocate' ? (from === 'deallocated' ? undefined : { via: 'deallocating', to: 'deallocated' })
        : action === 'powerOff' ? (from === 'stopped' ? undefined : { via: 'stopping', to: 'stopped' })
        : action === 'start' ? (from === 'running' ? undefined : { via: 'starting', to: 'running' })
        : { via: 'starting', to: 'running' };
      if (!plan) {
        this.ops.finish(op, { status: 'Succeeded' });
        return { status: 202, value: { operationId: op.id } };
      }
      this.change(rec, plan.via, op, this.state.draw(this.latency(rec, plan.via)), plan.to);
      this.state.emit('vm.power', rec.name, action);
      return { status: 202, value: { operationId: op.id } };
    });
  }

  /**
   * POST …/simulateEviction of a running Spot VM (a counted write, 204): ARM evicts it as if it
   * needed the capacity back, after the notice a Preempt Scheduled Event gives the VM. A VM
   * that is not a running Spot VM is refused (409 OperationNotAllowed).
   */
  simulateEviction(ref: ResourceRef): boolean {
    const rec = this.record(ref);
    return this.calls.invoke('vm.action', 'writes', ref.subscriptionId, rec?.location, ref.name, () => {
      this.groups.require(ref);
      if (!rec) return { status: 404, value: false };
      if (rec.priority !== 'Spot') throw msg.powerActionNotAllowed(rec.name, 'simulateEviction', 'it is not an Azure Spot VM');
      if (rec.provisioningState !== 'Succeeded' || rec.power !== 'running') throw msg.powerActionNotAllowed(rec.name, 'simulateEviction', 'it is not running');
      if (!rec.evictionNoticed) this.noticeEviction(rec);
      return { status: 204, value: true };
    });
  }

  /** A fault moves a running VM: deallocated or powered off, after the transition's latency. */
  forceOff(rec: VmRecord, via: 'deallocating' | 'stopping'): void {
    this.change(rec, via, undefined, this.state.draw(this.latency(rec, via)), via === 'deallocating' ? 'deallocated' : 'stopped');
  }

  /** Ends what runs on a VM's power: an action in flight (preempted) and a pending eviction. */
  stopWork(rec: VmRecord): void {
    if (rec.powerTimer !== undefined) this.state.clock.clearTimer(rec.powerTimer);
    rec.powerTimer = undefined;
    if (rec.powerOp) this.ops.preempt(rec.powerOp);
    rec.powerOp = undefined;
    if (rec.evictionTimer !== undefined) this.state.clock.clearTimer(rec.evictionTimer);
    rec.evictionTimer = undefined;
    rec.evictionNoticed = false;
  }

  /**
   * A running Spot VM's eviction, drawn from its region's rate (memoryless: an exponential wait,
   * so a rate change may simply draw again). No draw at all while the rate is 0, so a world
   * without evictions makes exactly the random draws it made before they existed.
   */
  scheduleEviction(rec: VmRecord): void {
    if (rec.priority !== 'Spot' || rec.provisioningState !== 'Succeeded' || rec.power !== 'running' || rec.evictionNoticed) return;
    if (rec.evictionTimer !== undefined) this.state.clock.clearTimer(rec.evictionTimer);
    rec.evictionTimer = undefined;
    const r = rec.region;
    const rate = r.spotEvictionRateBySku.get(rec.vmSize.toLowerCase()) ?? r.spotEvictionRatePerHour;
    if (rate <= 0) return;
    const waitMs = Math.max(1, Math.round((-Math.log(1 - this.state.random.next()) / rate) * 3_600_000));
    rec.evictionTimer = this.state.clock.setTimer(waitMs, () => {
      rec.evictionTimer = undefined;
      this.noticeEviction(rec);
    });
  }

  /**
   * ARM decided to evict: the VM gets a Preempt Scheduled Event (seen only inside the VM, through
   * the instance metadata service) at least SPOT_EVICTION_NOTICE_MS before ARM acts on it.
   */
  noticeEviction(rec: VmRecord): void {
    if (rec.evictionTimer !== undefined) this.state.clock.clearTimer(rec.evictionTimer);
    rec.evictionNoticed = true;
    this.state.emit('vm.evicted', rec.name, 'Preempt');
    rec.evictionTimer = this.state.clock.setTimer(SPOT_EVICTION_NOTICE_MS, () => {
      rec.evictionTimer = undefined;
      rec.evictionNoticed = false;
      this.evict(rec);
    });
  }

  /** The VM shows `via` now and `to` after `delayMs`; `op` (if any) ends then. A running Spot VM may be evicted again. */
  private change(rec: VmRecord, via: VmPowerTransit, op: OpRecord | undefined, delayMs: number, to: 'running' | 'stopped' | 'deallocated'): void {
    this.stopWork(rec);
    rec.power = via;
    this.state.vmChanged(rec);
    rec.powerOp = op;
    rec.powerTimer = this.state.clock.setTimer(delayMs, () => {
      rec.powerTimer = undefined;
      rec.powerOp = undefined;
      rec.power = to;
      this.state.vmChanged(rec);
      this.state.emit('vm.power', rec.name, to);
      if (op) this.ops.finish(op, { status: 'Succeeded' });
      if (to === 'running') this.scheduleEviction(rec);
    });
  }

  /**
   * How long a power transition takes. Azure publishes no figures: deallocating releases the
   * host as a delete does (minutes for a GPU host), starting allocates one as a create does,
   * stopping shuts the guest down like a delete of a VM that holds no host.
   */
  private latency(rec: VmRecord, via: VmPowerTransit): LatencyRangeMs {
    if (via === 'deallocating') return vmDeleteLatency(this.state, rec, true);
    if (via === 'starting') return this.state.settings.latency.vmCreate;
    return this.state.settings.latency.vmDelete;
  }

  /** The eviction itself, per the VM's policy: deleted (with its cascade), or deallocated (its cores still count against quota). */
  private evict(rec: VmRecord): void {
    if (this.state.vms.get(rec.key) !== rec || rec.provisioningState !== 'Succeeded' || rec.power !== 'running') return;
    this.state.emit('vm.evicted', rec.name, rec.evictionPolicy === 'Delete' ? 'Deleted' : 'Deallocated');
    if (rec.evictionPolicy === 'Delete') this.startDelete(rec);
    else this.change(rec, 'deallocating', undefined, this.state.draw(vmDeleteLatency(this.state, rec, true)), 'deallocated');
  }

  private record(ref: ResourceRef): VmRecord | undefined {
    return this.state.vms.get(armId(ref, 'Microsoft.Compute/virtualMachines').toLowerCase());
  }
}
