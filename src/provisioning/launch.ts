/**
 * The launch of a provisioning pass's NodeClaims: each plan narrowed to what the pass may still
 * launch (one canary per offering on probation, free reservation slots, quota left), then
 * created under a fresh name; and a static NodePool's NodeClaims above its replicas deleted.
 */
import type { AzureFlexNodeClass, ClusterPort, NodeClaim, NodePool } from '../ports/cluster.js';
import { ClusterError } from '../ports/cluster.js';
import { randomSuffix, type Clock, type Random } from '../ports/clock.js';
import { LABEL_NODEPOOL } from '../apis/well-known.js';
import { forEachBounded } from '../utils/bounded.js';
import type { OfferingMarks } from './offering-marks.js';
import { oneCanaryEach, withinQuota, withinReservations } from './plan-limits.js';
import type { QuotaLedger } from './quota.js';
import type { ReservationLedger } from './reservations.js';
import type { NodeClaimPlan } from './scheduler.js';
import { buildNodeClaim } from './nodeclaim-template.js';
import type { InFlightNodeClaims } from './in-flight.js';

const MAX_NAME_ATTEMPTS = 3;

/** What a pass launches NodeClaims with: pools and classes by name, the marks, the canaries already taken, the quota left. */
export interface Launch {
  pools: ReadonlyMap<string, NodePool>;
  classes: ReadonlyMap<string, AzureFlexNodeClass>;
  marks: OfferingMarks | undefined;
  canaries: Set<string>;
  ledger: QuotaLedger | undefined;
  reserved: ReservationLedger | undefined;
}

export interface LauncherOptions {
  cluster: ClusterPort;
  clock: Clock;
  random: Random;
  log: {
    info(fields: Record<string, unknown>, message: string): void;
    error(fields: Record<string, unknown>, message: string): void;
  };
  inFlight: InFlightNodeClaims;
  nodeClassHash: (nodeClass: AzureFlexNodeClass) => string;
  /** How many NodeClaims are created at once. */
  concurrency: number;
  onNodeClaimCreated?: (claim: NodeClaim, plan: NodeClaimPlan) => void;
  /** A create or delete failed: the next reconcile must run to try again. */
  onFailure: () => void;
}

export class NodeClaimLauncher {
  constructor(private readonly options: LauncherOptions) {}

  /** Launches each plan, `concurrency` at a time, into `launched[i]` for `plans[i]`: plan order, whatever the concurrency. */
  launchEach(plans: readonly NodeClaimPlan[], launch: Launch, launched: Array<NodeClaim | undefined>): Promise<void> {
    return forEachBounded(plans.map((planned, i) => ({ planned, i })), this.options.concurrency, async ({ planned, i }) => {
      launched[i] = await this.launch(planned, launch);
    });
  }

  /** Creates a plan's NodeClaim, first narrowing it to one canary per offering on probation (offering-marks.ts). */
  async launch(planned: NodeClaimPlan, launch: Launch): Promise<NodeClaim | undefined> {
    const nodeClass = launch.classes.get(planned.nodeClassName)!;
    const canary = launch.marks ? oneCanaryEach(planned, nodeClass.spec.location, launch.marks, launch.canaries) : planned;
    // Dropped: its only offerings are canaries another NodeClaim of this pass already is, or its quota is spent.
    const reservedPlan = canary && launch.reserved ? withinReservations(canary, nodeClass, launch.reserved) : canary;
    const plan = reservedPlan && launch.ledger ? withinQuota(reservedPlan, nodeClass, launch.ledger) : reservedPlan;
    if (!plan) return undefined;
    const claim = await this.create(plan, launch.pools.get(plan.nodePoolName)!, launch.classes.get(plan.nodeClassName)!);
    if (claim) this.options.inFlight.add(claim);
    return claim;
  }

  /** A static pool's NodeClaim above its replicas: deleted, and drained by termination like any other. */
  async scaleDown(claim: NodeClaim): Promise<void> {
    const { cluster, log } = this.options;
    try {
      await cluster.deleteNodeClaim(claim.metadata.name);
      log.info({ nodeClaim: claim.metadata.name, nodePool: claim.metadata.labels[LABEL_NODEPOOL] }, 'deleted NodeClaim above its static NodePool replicas');
    } catch (error) {
      if (error instanceof ClusterError && error.reason === 'NotFound') return;
      this.options.onFailure();
      log.error({ nodeClaim: claim.metadata.name, err: error instanceof Error ? error.message : String(error) }, 'deleting NodeClaim above replicas failed');
    }
  }

  /** The NodeClaim under `<pool>-<random suffix>`, another suffix when the name is taken. */
  private async create(plan: NodeClaimPlan, nodePool: NodePool, nodeClass: AzureFlexNodeClass): Promise<NodeClaim | undefined> {
    const { cluster, clock, random, log } = this.options;
    for (let attempt = 0; attempt < MAX_NAME_ATTEMPTS; attempt++) {
      const name = `${nodePool.metadata.name}-${randomSuffix(random)}`;
      try {
        const created = await cluster.createNodeClaim(buildNodeClaim(name, plan, nodePool, nodeClass, { now: clock.now(), nodeClassHash: this.options.nodeClassHash }));
        this.options.onNodeClaimCreated?.(created, plan);
        log.info(
          { nodeClaim: name, nodePool: plan.nodePoolName, instanceType: plan.instanceType.name, options: plan.instanceTypeOptions.length, pods: plan.podKeys.length },
          'created NodeClaim',
        );
        return created;
      } catch (error) {
        if (error instanceof ClusterError && error.reason === 'AlreadyExists') continue;
        // Leave it for the next reconcile: the pods are still pending and will be re-planned.
        this.options.onFailure();
        log.error({ nodeClaim: name, err: error instanceof Error ? error.message : String(error) }, 'creating NodeClaim failed');
        return undefined;
      }
    }
    this.options.onFailure();
    log.error({ nodePool: plan.nodePoolName }, 'no free NodeClaim name after retries');
    return undefined;
  }
}
