import type { InstanceType, InstanceTypeCatalog } from '../catalog/skus.js';
import type { AzurePort } from '../ports/azure.js';
import type { AzureFlexNodeClass, ClusterPort, NodeClaim } from '../ports/cluster.js';
import type { Clock, Random } from '../ports/clock.js';
import type { FailureAction } from '../azure/errors.js';
import type { UnavailableEntry } from '../azure/offerings.js';
import type { EventLog } from './event-log.js';
import type { InstanceLoss } from '../lifecycle/nodeclaim/machine.js';

/** How NIC cleanup after a failed VM create works; `naive` and `delayed` reproduce upstream's bugs for comparison. */
export type StrategyName = 'naive' | 'delayed' | 'machine';
export const STRATEGIES: readonly StrategyName[] = ['naive', 'delayed', 'machine'];

/** The unavailable-offerings cache as the runtime uses it (src/azure/offerings.ts). */
export interface OfferingsCache {
  isUnavailable(sku: string, region: string, capacityType: 'on-demand' | 'spot', zone?: string): boolean;
  apply(action: FailureAction, attempt: { sku: string; region: string; capacityType: 'on-demand' | 'spot'; zone?: string }): void;
  /** One of our VMs went away: quota marks for its family may lift early. */
  noteCoresFreed(sku: string, region: string): void;
  /** Live marks (persisted to the NodeClass so they survive a restart, see offering-marks.ts). */
  entries(): UnavailableEntry[];
  /** Drops a SKU's marks in a region (its SkuNotAvailable restriction is gone). */
  lift(sku: string, region: string): void;
}

export interface UserDataRequest {
  nodeClaim: NodeClaim;
  nodeClass: AzureFlexNodeClass;
  instanceType: InstanceType;
}

/** A periodic controller run by the runtime on the injected clock (provisioner, disruption, nodeclass status…). */
export interface PeriodicController {
  name: string;
  intervalMs: number;
  reconcile(): Promise<void>;
}

export interface RuntimeConfig {
  clusterName: string;
  /** The AKS node resource group: its label value is kubernetes.azure.com/cluster on every node (none: no such label). */
  nodeResourceGroup?: string;
  strategy: StrategyName;
  /** Level-triggered resync period: how often ARM and the cluster are observed. */
  resyncMs: number;
  /** Resources without a NodeClaim are left alone this long after creation (creates in flight). */
  orphanGraceMs: number;
  adminUsername: string;
  /** The `delayed` strategy's detached timer (upstream: 180 s + slack). */
  delayedCleanupMs: number;
}

export const DEFAULT_RUNTIME_CONFIG: Omit<RuntimeConfig, 'clusterName'> = {
  strategy: 'machine',
  resyncMs: 15_000,
  orphanGraceMs: 5 * 60_000,
  adminUsername: 'azureuser',
  delayedCleanupMs: 210_000,
};

/** What a VM create was, for metrics and logs (src/metrics/runtime.ts). */
export interface VmCreateAttempt {
  nodeClaim: string;
  nodePool: string;
  sku: string;
  region: string;
  subscription: string;
}

/**
 * Observers of the runtime's effects: metrics and info-level logs. Optional, and called
 * synchronously after the fact, so the simulator and the event log are unaffected.
 */
export interface RuntimeObserver {
  /** A NodeClaim's cloud-provider call finished: Create (the VM PUT) or Delete (the VM DELETE). */
  cloudProviderCall?(call: { method: 'Create' | 'Delete'; nodeClaim: string; seconds: number; error?: unknown }): void;
  vmCreateFailed?(attempt: VmCreateAttempt, error: unknown): void;
  /** A launch failed for good: the NodeClaim is being deleted; `nicReservedUntil` when ARM holds its NIC. */
  launchFailed?(failure: { nodeClaim: string; nodePool: string; code: string; message: string; insufficientCapacity: boolean; nicReservedUntil?: number }): void;
  /** A launched NodeClaim's instance was found gone, deleted by someone else or stopped: the NodeClaim is being deleted. */
  instanceLost?(lost: { nodeClaim: string; nodePool: string; reason: InstanceLoss; message: string }): void;
}

export interface RuntimeDeps {
  arm: AzurePort;
  cluster: ClusterPort;
  clock: Clock;
  /**
   * Stamps NodeClaim conditions (lastTransitionTime), which Kubernetes-side controllers
   * (disruption's consolidateAfter, liveness) compare with their own clock. Default: `clock`;
   * `azflex dev` skips ARM's clock ahead of the wall clock the others run on.
   */
  statusClock?: Clock;
  random: Random;
  catalog: InstanceTypeCatalog;
  offerings?: OfferingsCache;
  userData(req: UserDataRequest): Promise<string>;
  /** Cordon and evict; resolves true once the node has no pods left to evict. */
  drain?(nodeName: string, deadline: number): Promise<boolean>;
  eventLog: EventLog;
  controllers?: PeriodicController[];
  /** Fencing: a deposed leader issues no ARM writes. */
  isLeader?(): boolean;
  /**
   * A periodic controller's reconcile (or the resync) threw. The runtime keeps going; the
   * process logs it at error level, rate-limited, and counts it (src/metrics).
   */
  onControllerError?(controller: string, err: unknown): void;
  observer?: RuntimeObserver;
  config: RuntimeConfig;
}
