import type { Random } from '../ports/clock.js';
import type { LifecycleConfig, LifecycleDeps, StrategyName } from '../lifecycle/deps.js';
import type { PeriodicController } from '../controllers/periodic.js';
import type { EventLog } from './event-log.js';

// What the lifecycles need of their host is declared beside them; these names stay here for the host's other users.
export type { OfferingsCache, RuntimeObserver, StrategyName, UserDataRequest, VmCreateAttempt } from '../lifecycle/deps.js';

export const STRATEGIES: readonly StrategyName[] = ['naive', 'delayed', 'machine'];

export interface RuntimeConfig extends LifecycleConfig {
  /** Level-triggered resync period: how often ARM and the cluster are observed. */
  resyncMs: number;
  /** Resources without a NodeClaim are left alone this long after creation (creates in flight). */
  orphanGraceMs: number;
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



/** The runtime's dependencies: the lifecycles' (ports, clocks, catalog, observer, config) and the host's own. */
export interface RuntimeDeps extends LifecycleDeps {
  random: Random;
  eventLog: EventLog;
  controllers?: PeriodicController[];
  /**
   * A periodic controller's reconcile (or the resync) threw. The runtime keeps going; the
   * process logs it at error level, rate-limited, and counts it (src/metrics).
   */
  onControllerError?(controller: string, err: unknown): void;
  config: RuntimeConfig;
}
