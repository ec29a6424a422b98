import type { Clock } from '../../ports/clock.js';
import * as msg from './messages.js';
import type { OpKind, OpRecord, OperationInfo } from './model.js';
import type { OperationStatus } from './types.js';
import type { ArmCalls } from './calls.js';

/**
 * Long-running operations: every asynchronous write (VM create and delete, power actions, NIC
 * delete) runs as one, which the REST face polls through its Azure-AsyncOperation URL and the
 * AzurePort face awaits.
 */
export class Operations {
  private readonly ops = new Map<string, OpRecord>();
  private seq = 0;
  private inProgress = 0;

  constructor(private readonly clock: Clock, private readonly calls: ArmCalls) {}

  get(id: string): OpRecord | undefined {
    return this.ops.get(id);
  }

  start(kind: OpKind): OpRecord {
    const op: OpRecord = { id: `op-${String(++this.seq).padStart(8, '0')}`, kind, startedAt: this.clock.now(), status: { status: 'InProgress' }, waiters: [] };
    this.ops.set(op.id, op);
    this.inProgress++;
    return op;
  }

  finish(op: OpRecord, status: OperationStatus): void {
    if (op.status.status !== 'InProgress') return;
    op.status = status;
    op.endedAt = this.clock.now();
    this.inProgress--;
    const waiters = op.waiters;
    op.waiters = [];
    for (const w of waiters) w();
  }

  /** The operation ended by another write that took its place (a delete of a VM still creating, a new power action). */
  preempt(op: OpRecord): void {
    this.finish(op, { status: 'Failed', error: { code: 'OperationPreempted', message: msg.OPERATION_PREEMPTED_MESSAGE } });
  }

  wait(op: OpRecord): Promise<void> {
    if (op.status.status !== 'InProgress') return Promise.resolve();
    return new Promise((resolve) => op.waiters.push(resolve));
  }

  /** Resolves when the operation has finished (immediately if it has). */
  waitFor(id: string): Promise<OperationStatus> {
    const op = this.ops.get(id);
    if (!op) return Promise.reject(msg.armError('ResourceNotFound', 404, `Operation ${id} not found.`));
    return this.wait(op).then(() => op.status);
  }

  /** An operation poll as the REST face sees it: counted and throttled like any ARM read. */
  poll(subscriptionId: string, id: string): OperationInfo | undefined {
    return this.calls.invoke('operation.get', 'reads', subscriptionId, undefined, id, () => {
      const op = this.ops.get(id);
      if (!op) return { status: 404, value: undefined };
      const info: OperationInfo = { id: op.id, kind: op.kind, status: op.status, startedAt: op.startedAt };
      if (op.endedAt !== undefined) info.endedAt = op.endedAt;
      if (op.target !== undefined) info.target = op.target;
      return { status: 200, value: info };
    });
  }

  /**
   * A finished operation for a write that completes synchronously in the fake (NIC PUT,
   * NIC and disk DELETE), so the REST face can hand out an Azure-AsyncOperation URL the way
   * Microsoft.Network does. With a target, the operation's Location URL answers with it (a VM
   * update, whose spec says `final-state-via: location`).
   */
  completed(kind: 'create' | 'delete', target?: OpRecord['target']): string {
    const op = this.start(kind);
    if (target !== undefined) op.target = target;
    this.finish(op, { status: 'Succeeded' });
    return op.id;
  }

  stats(): { inProgress: number; total: number } {
    return { inProgress: this.inProgress, total: this.ops.size };
  }
}
