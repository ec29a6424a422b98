/**
 * What a simulation run reports (`azflex simulate --json`), and how the run's tallies become it.
 */
import { createHash } from 'node:crypto';
import { LABEL_NODEPOOL } from '../apis/well-known.js';
import type { StrategyName } from '../runtime/deps.js';
import type { MemoryEventLog } from '../runtime/event-log.js';
import type { FakeArm } from './arm/fake-arm.js';
import type { ArmEvent } from './arm/types.js';
import type { FakeCluster } from './cluster.js';
import type { SimKubelet } from './kubelet.js';
import type { SharedResourceGroups } from './settled.js';
import { stuckNodeClaims, worldLeaks } from './settled.js';

export interface Percentiles {
  p50: number;
  p99: number;
  max: number;
  count: number;
}

export interface SimulationResult {
  scenario: string;
  seed: number;
  strategy: StrategyName;
  simulatedSeconds: number;
  wallSeconds: number;
  restarts: number;
  /** Whether the unavailable-offerings cache was on (the same for every strategy of a comparison). */
  offeringsCache: boolean;
  /** How long the world took to settle after the run (MAX_SETTLE_MS if it never did). */
  settleSeconds: number;
  nodeClaimsCreated: number;
  nodeClaimsLaunched: number;
  createFailures: number;
  createFailuresByCode: Record<string, number>;
  /** VM creates refused for quota (family, regional or low-priority cores: OperationNotAllowed, QuotaExceeded). */
  createsRefusedForQuota: number;
  /** The other create failures: capacity (allocation failures, SKU not available) and the rest. */
  createsRefusedForCapacity: number;
  createAttemptsPerHour: number;
  nicsCreated: number;
  nicsDeleted: number;
  leakedNics: number;
  leakedVms: number;
  leakedDisks: number;
  /** NodeClaims that made no progress past their liveness deadline (not registered, or still terminating) once settled. */
  stuckNodeClaims: number;
  /** VMs ARM still shows in provisioningState Failed once settled. */
  failedVmsLeft: number;
  /** NIC DELETEs ARM refused with NicInUse: the controller deleted a NIC a VM still held (it must GET first). */
  nicDeletesWhileAttached: number;
  peakSubnetIpsUsed: number;
  subnetIpsUsedAtEnd: number;
  armCalls: Record<string, Record<string, number>>;
  armWrites: number;
  /**
   * GETs and LISTs the controller sent to ARM per simulated hour of the main run (settling
   * excluded), per subscription, and the largest: ARM refills 25 reads/s per subscription
   * for every tool in it.
   */
  armReadsPerHourBySubscription: Record<string, number>;
  armReadsPerHourPerSubscription: number;
  /**
   * The same over the second half of the main run only, once the first ramp is over (for the
   * fleet's 24 h: hours 12–24, 1,000 nodes with hourly churn), largest subscription. Each
   * page of a list is a read, as ARM counts it.
   */
  armReadsPerHourSteadyState: number;
  timeToReapSeconds: Percentiles;
  /** Seconds from a pod's creation to Running (bound on a Ready node), over all pods and per NodePool. */
  podTimeToRunningSeconds: Percentiles & { byNodePool: Record<string, Percentiles> };
  /** Seconds from the end of ARM's reservation on a failed attempt's NIC to the NIC gone (target: ≤ 5 at p100). */
  reapAfterReservationSeconds: Percentiles;
  podsRunning: number;
  podsPending: number;
  /** Per NodePool: NodeClaims created over the run, and those that are up (launched) at the end. */
  nodePools: Record<string, { nodeClaimsCreated: number; nodesAtEnd: number }>;
  eventLogSha256: string;
  transitions: number;
}

/** The ARM events a run counts, tallied as they happen (each also a line of the event log). */
export class ArmTally {
  nicsCreated = 0;
  nicsDeleted = 0;
  createFailures = 0;
  launched = 0;
  writes = 0;
  deletesWhileAttached = 0;
  readonly failuresByCode: Record<string, number> = {};

  constructor(private readonly eventLog: MemoryEventLog) {}

  readonly onArmEvent = (e: ArmEvent): void => {
    const status = Number(e.status);
    if (e.op === 'nic.created') this.nicsCreated++;
    if (e.op === 'nic.removed') this.nicsDeleted++;
    if ((e.op === 'vm.put' && status === 409) || e.op === 'vm.failed') {
      this.createFailures++;
      const code = e.code ?? 'Unknown';
      this.failuresByCode[code] = (this.failuresByCode[code] ?? 0) + 1;
    }
    if (e.op === 'vm.provisioned') this.launched++;
    if (e.op === 'nic.delete' && e.code === 'NicInUse') this.deletesWhileAttached++;
    if ((e.op === 'nic.put' || e.op === 'vm.put' || e.op === 'nic.delete' || e.op === 'vm.delete' || e.op === 'disk.delete') && status !== 429) this.writes++;
    this.eventLog.record({ t: e.t, actor: `arm/${e.name}`, kind: 'world', event: e.op, detail: e.code ? `${e.status} ${e.code}` : String(e.status) });
  };
}

/** A finished run as its result reads it. */
export interface FinishedRun {
  scenario: string;
  seed: number;
  strategy: StrategyName;
  hours: number;
  wallSeconds: number;
  restarts: number;
  offeringsCache: boolean;
  settleMs: number;
  arm: FakeArm;
  cluster: FakeCluster;
  kubelet: SimKubelet;
  tally: ArmTally;
  shared: SharedResourceGroups | undefined;
  /** Reads per subscription over the main run, and over its second half. */
  reads: ReadonlyMap<string, number>;
  steadyReads: ReadonlyMap<string, number>;
  eventLogSha256: string;
  transitions: number;
}

export function simulationResult(run: FinishedRun): SimulationResult {
  const { arm, cluster, tally, hours } = run;
  const stuck = stuckNodeClaims(cluster);
  const leaks = worldLeaks(arm, cluster, stuck, run.shared);
  const snapshot = arm.snapshot();
  const pods = [...cluster.pods.values()];
  const failed = tally.createFailures;
  const byCode = tally.failuresByCode;
  return {
    scenario: run.scenario,
    seed: run.seed,
    strategy: run.strategy,
    simulatedSeconds: hours * 3600,
    wallSeconds: Math.round(run.wallSeconds * 1000) / 1000,
    restarts: run.restarts,
    offeringsCache: run.offeringsCache,
    settleSeconds: run.settleMs / 1000,
    nodeClaimsCreated: cluster.stats.nodeClaimsCreated,
    nodeClaimsLaunched: tally.launched,
    createFailures: failed,
    createFailuresByCode: byCode,
    createsRefusedForQuota: quotaRefusals(byCode),
    createsRefusedForCapacity: failed - quotaRefusals(byCode),
    createAttemptsPerHour: Math.round(((tally.launched + failed) / hours) * 10) / 10,
    nicsCreated: tally.nicsCreated,
    nicsDeleted: tally.nicsDeleted,
    leakedNics: leaks.nics.length,
    leakedVms: leaks.vms.length,
    leakedDisks: leaks.disks.length,
    stuckNodeClaims: stuck.length,
    failedVmsLeft: snapshot.vms.filter((v) => v.provisioningState === 'Failed').length,
    nicDeletesWhileAttached: tally.deletesWhileAttached,
    peakSubnetIpsUsed: arm.peakSubnetIpsUsed(),
    subnetIpsUsedAtEnd: snapshot.subnets.reduce((n, s) => n + s.used, 0),
    armCalls: arm.armCalls(),
    armWrites: tally.writes,
    armReadsPerHourBySubscription: Object.fromEntries([...run.reads].sort().map(([sub, n]) => [sub, Math.round((n / hours) * 10) / 10])),
    armReadsPerHourPerSubscription: Math.round((Math.max(0, ...run.reads.values()) / hours) * 10) / 10,
    armReadsPerHourSteadyState: Math.round((Math.max(0, ...run.steadyReads.values()) / (hours / 2)) * 10) / 10,
    timeToReapSeconds: percentiles(arm.reapTimesSeconds()),
    podTimeToRunningSeconds: podTimeToRunning(run.kubelet.podStarts),
    reapAfterReservationSeconds: percentiles(arm.reapAfterReservationSeconds()),
    podsRunning: pods.filter((p) => p.spec.nodeName).length,
    podsPending: pods.filter((p) => !p.spec.nodeName).length,
    nodePools: nodePoolFigures(cluster),
    eventLogSha256: run.eventLogSha256,
    transitions: run.transitions,
  };
}

function nodePoolFigures(cluster: FakeCluster): SimulationResult['nodePools'] {
  const out: SimulationResult['nodePools'] = {};
  for (const name of [...cluster.nodePools.keys()].sort()) out[name] = { nodeClaimsCreated: cluster.stats.nodeClaimsCreatedByPool[name] ?? 0, nodesAtEnd: 0 };
  for (const nc of cluster.nodeClaims.values()) {
    const pool = out[nc.metadata.labels[LABEL_NODEPOOL] ?? ''];
    if (pool && nc.status.providerID) pool.nodesAtEnd++;
  }
  return out;
}

/** Create failures ARM gave for quota: the codes its quota refusals carry (Compute throttling's 429s are not create failures). */
function quotaRefusals(byCode: Record<string, number>): number {
  return (byCode.OperationNotAllowed ?? 0) + (byCode.QuotaExceeded ?? 0);
}

/** What `--assert-no-leaks` refuses: any leaked NIC, VM or disk, a stuck NodeClaim or a Failed VM left behind. */
export function leakSummary(r: SimulationResult): string | undefined {
  const parts: string[] = [];
  const add = (n: number, what: string) => {
    if (n > 0) parts.push(`${n} ${what}`);
  };
  add(r.leakedNics, 'NICs');
  add(r.leakedVms, 'VMs');
  add(r.leakedDisks, 'disks');
  add(r.stuckNodeClaims, 'stuck NodeClaims');
  add(r.failedVmsLeft, 'Failed VMs left');
  add(r.nicDeletesWhileAttached, 'NIC deletes sent while attached');
  return parts.length ? parts.join(', ') : undefined;
}

function podTimeToRunning(starts: ReadonlyArray<{ nodePool: string; seconds: number }>): SimulationResult['podTimeToRunningSeconds'] {
  const byPool = new Map<string, number[]>();
  for (const s of starts) {
    let list = byPool.get(s.nodePool);
    if (!list) byPool.set(s.nodePool, (list = []));
    list.push(s.seconds);
  }
  const byNodePool = Object.fromEntries([...byPool].sort(([a], [b]) => a.localeCompare(b)).map(([pool, values]) => [pool, percentiles(values)]));
  return { ...percentiles(starts.map((s) => s.seconds)), byNodePool };
}

export function percentiles(values: number[]): Percentiles {
  if (values.length === 0) return { p50: 0, p99: 0, max: 0, count: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  const round = (x: number) => Math.round(x * 10) / 10;
  return { p50: round(at(0.5)), p99: round(at(0.99)), max: round(sorted[sorted.length - 1]!), count: values.length };
}

/**
 * SHA-256 of newline-terminated lines, fed to the hash in large chunks: the same digest as
 * one update per line, but a run logs ~40,000 lines and per-line updates showed in profiles.
 */
export class LineHash {
  private readonly hash = createHash('sha256');
  private pending: string[] = [];
  private pendingChars = 0;
  line(text: string): void {
    this.pending.push(text);
    this.pendingChars += text.length + 1;
    if (this.pendingChars >= 1 << 16) this.flush();
  }
  digest(): string {
    this.flush();
    return this.hash.digest('hex');
  }
  private flush(): void {
    if (this.pending.length === 0) return;
    this.hash.update(`${this.pending.join('\n')}\n`);
    this.pending = [];
    this.pendingChars = 0;
  }
}
