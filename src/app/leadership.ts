import type { PeriodicController } from '../controllers/periodic.js';
import type { Registry } from 'prom-client';
import type { AzflexMetrics, KarpenterMetrics } from '../metrics/karpenter.js';
import type { ClusterPort } from '../ports/cluster.js';
import type { Clock } from '../ports/clock.js';
import { errorMessage } from '../utils/error-message.js';
import { PeriodicLoop } from '../utils/periodic-loop.js';

/** What the caller's lifecycle runtime must offer (src/runtime's Runtime fits). */
export interface LeaderRuntime {
  start(): Promise<void>;
  stop(): void | Promise<void>;
  /** Names of its periodic loops with no finished run for their interval + `graceMs` (for /healthz). */
  stalledLoops?(graceMs: number): string[];
  /** Runs one of its periodic loops (by name) as soon as possible. */
  kick?(loop: string): void;
  /** Fills the gauges derived from cluster state, for a scrape (metrics/server.ts ScrapeHooks). */
  collectMetrics?(): Promise<void>;
}

export interface LeaderRuntimeContext {
  /** The informer-backed KubeCluster in production; any ClusterPort for the leader's work. */
  cluster: ClusterPort;
  /** Fencing check to call right before every ARM write. */
  isLeader: () => boolean;
  registry: Registry;
  karpenterMetrics: KarpenterMetrics;
  azflexMetrics: AzflexMetrics;
}

export interface LeadershipOptions {
  /** The informer-backed cluster; the leader's work starts once its caches have synced. */
  cluster: ClusterPort & { waitForSync(): Promise<void> };
  clock: Clock;
  identity: string;
  isLeader: () => boolean;
  /** The NodeClass and Node controllers, each run on its own loop while leading. */
  controllers: PeriodicController[];
  runtimeFactory?: (ctx: LeaderRuntimeContext) => LeaderRuntime;
  context: Omit<LeaderRuntimeContext, 'cluster' | 'isLeader'>;
  azflexMetrics: AzflexMetrics;
  log: (level: 'info' | 'warn' | 'error', msg: string) => void;
}

/**
 * Everything that writes, started when this replica wins the Lease and stopped the moment it
 * loses it: the controllers' loops and the leader's runtime. Transitions run one after the
 * other, so a quick lose-win never leaves two sets of writers running.
 */
export class Leadership {
  private loops: PeriodicLoop[] = [];
  private runtime: LeaderRuntime | undefined;
  private leading: Promise<void> = Promise.resolve();
  private shuttingDown = false;

  constructor(private readonly o: LeadershipOptions) {}

  /** Without leader election: this replica leads from the start. */
  leadAlone(): void {
    this.leading = this.lead();
  }

  /** Queues the start of the leader's work on winning the Lease. */
  won(): void {
    this.leading = this.leading.then(() => this.lead()).catch((e: unknown) => this.o.log('error', `starting leader work: ${errorMessage(e)}`));
  }

  /** Queues the stop of the leader's work (on losing the Lease). */
  lost(): void {
    this.leading = this.leading.then(() => this.follow()).catch((e: unknown) => this.o.log('error', `stopping leader work: ${errorMessage(e)}`));
  }

  /** Shutdown's first step: no writer starts after this, and the running ones are stopped. */
  async stopForGood(): Promise<void> {
    this.shuttingDown = true;
    await this.leading.then(() => this.follow());
  }

  /** Level-triggered loops, edge-kicked: asks every loop for a run as soon as possible. */
  kick(): void {
    for (const loop of this.loops) loop.kick();
  }

  /** Asks the leader's runtime for a run of one of its loops (e.g. the provisioner) as soon as possible; a standby has none. */
  kickRuntime(loop: string): void {
    this.runtime?.kick?.(loop);
  }

  /** The leader's cluster-state gauges, filled for a scrape; a standby reports none. */
  async collectMetrics(): Promise<void> {
    await this.runtime?.collectMetrics?.();
  }

  /** Whether some leader loop has finished no run for its interval plus `graceMs` (a standby runs none). */
  stalled(graceMs: number): boolean {
    return this.loops.some((l) => l.stalled(l.progress().intervalMs + graceMs)) || (this.runtime?.stalledLoops?.(graceMs) ?? []).length > 0;
  }

  private async lead(): Promise<void> {
    const o = this.o;
    await o.cluster.waitForSync();
    // A lease won while shutting down must not start writers after they were stopped.
    if (!o.isLeader() || this.shuttingDown) return;
    o.azflexMetrics.isLeader.set(1);
    const loopError = (e: unknown): void => o.log('error', errorMessage(e));
    this.loops = o.controllers.map((c) =>
      new PeriodicLoop({
        name: c.name,
        clock: o.clock,
        intervalMs: c.intervalMs,
        run: async () => {
          if (o.isLeader()) await c.reconcile();
        },
        onError: loopError,
        initialDelayMs: 0,
      }).start(),
    );
    if (o.runtimeFactory) {
      this.runtime = o.runtimeFactory({ ...o.context, cluster: o.cluster, isLeader: o.isLeader });
      await this.runtime.start();
    }
    o.log('info', `${o.identity} is leading`);
  }

  private async follow(): Promise<void> {
    this.o.azflexMetrics.isLeader.set(0);
    await Promise.all(this.loops.splice(0).map((loop) => loop.stop()));
    const r = this.runtime;
    this.runtime = undefined;
    if (r) await r.stop();
  }
}
