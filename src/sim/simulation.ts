import { createHash } from 'node:crypto';
import pino from 'pino';
import { STATIC_INSTANCE_TYPES, StaticInstanceTypeCatalog } from '../catalog/skus.js';
import { UnavailableOfferings } from '../azure/offerings.js';
import { drainWith, periodicControllers } from '../controllers/periodic.js';
import type { AzurePort, ResourceGroupScope } from '../ports/azure.js';
import { Runtime } from '../runtime/runtime.js';
import { DEFAULT_RUNTIME_CONFIG, type StrategyName } from '../runtime/deps.js';
import { MemoryEventLog } from '../runtime/event-log.js';
import { FakeArm } from './arm/fake-arm.js';
import type { ArmEvent, FakeArmConfig } from './arm/types.js';
import { FakeCluster } from './cluster.js';
import { SimKubelet } from './kubelet.js';
import { SimVolumeProvisioner } from './volume-provisioner.js';
import { scenarioSubnetId, type Scenario } from './scenario.js';
import { clusterOfScenario, type ClusterSetup } from './cluster-setup.js';
import { adoptSnapshot } from './snapshot-adopt.js';
import { ControllerSession } from './session.js';
import { seedCluster } from './seed-cluster.js';
import { CrossClusterWrites, NeighbourCluster } from './neighbour.js';
import { stuckNodeClaims, worldLeaks, type SharedResourceGroups } from './settled.js';
import { renderSimUserData } from './userdata.js';
import { SimBootstrapTokens } from './bootstrap-token.js';
import { SeededRandom, VirtualClock } from './virtual-clock.js';
import { Workload } from './workload.js';
import { scheduleNodeHealthFaults } from './node-health.js';
import { LABEL_NODEPOOL } from '../apis/well-known.js';

/** Every simulation starts at the same instant, so logs from the same seed are identical. */
export const SIM_EPOCH_MS = Date.UTC(2026, 0, 1);
const KUBELET_TICK_MS = 10_000;
/**
 * After the run, provisioning and disruption stop and the world settles until it is
 * quiescent (no operation in flight, every NodeClaim registered or gone, every NIC, VM and
 * disk owned), looked at every SETTLE_STEP_MS and for at most MAX_SETTLE_MS: longer than any
 * legitimate wait (launch and registration deadlines, reservations, GPU VM deletes, a long
 * Retry-After), so what is left then is stuck or leaked.
 */
export const MAX_SETTLE_MS = 2 * 3_600_000;
const SETTLE_STEP_MS = 60_000;

export interface SimulationOptions {
  scenario: Scenario;
  /**
   * The cluster to start with (from `--manifests`); replaces the scenario's nodeClasses,
   * nodePools and workload, which then describe nothing.
   */
  cluster?: ClusterSetup;
  seed: number;
  strategy: StrategyName;
  /** Overrides the scenario's restart count. */
  restarts?: number;
  /** Explicit crash schedule: [atMs, skipCalls] pairs (property tests); replaces `restarts`. */
  crashes?: Array<[number, number]>;
  /**
   * The unavailable-offerings cache: on by default for every strategy, so a comparison credits
   * the cleanup strategy alone (`--no-offerings-cache` turns it off for all of them).
   */
  offeringsCache?: boolean;
  /** Wraps the ARM port (e.g. the SDK adapter over the in-process REST route). */
  armAdapter?: (arm: FakeArm, clock: VirtualClock) => AzurePort;
  hours?: number;
  keepEventLog?: boolean;
  onProgress?: (fraction: number) => void;
  /**
   * Paces the run (the live view's pause/step/speed): awaited before every step of virtual
   * time; the step is `stepMs` long. Without it the run goes as fast as it can.
   */
  pace?: SimulationPace;
  /** Called with each controller incarnation's runtime and the world, for live views. */
  onWorld?: (world: SimulationWorld) => void;
}

export interface SimulationPace {
  stepMs: number;
  beforeStep(simulatedMs: number): Promise<void>;
}

export interface SimulationWorld {
  clock: VirtualClock;
  arm: FakeArm;
  cluster: FakeCluster;
  eventLog: MemoryEventLog;
  runtime: Runtime;
  incarnation: number;
}

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

export interface SimulationRun {
  result: SimulationResult;
  eventLog: MemoryEventLog;
  arm: FakeArm;
  cluster: FakeCluster;
  /** Problems the world shows after settling (empty when all is well). */
  invariantViolations: string[];
  /** The scenario's rotating bootstrap token, when it has one. */
  bootstrapTokens?: SimBootstrapTokens;
  /** The scenario's neighbour cluster's API server, when it has one. */
  neighbourCluster?: FakeCluster;
}

export function armConfigOf(scenario: Scenario, cluster?: ClusterSetup): FakeArmConfig {
  const nodeClasses = cluster?.nodeClasses ?? clusterOfScenario(scenario, '').nodeClasses;
  const subnets = new Map<string, { id: string; addressPrefix: string }>();
  for (const nc of nodeClasses) {
    const id = nc.spec.subnetID;
    if (!subnets.has(id.toLowerCase())) subnets.set(id.toLowerCase(), { id, addressPrefix: subnetPrefixOf(scenario, id) });
  }
  const a = scenario.arm;
  return {
    regions: scenario.regions.map((r) => ({ ...r })),
    subnets: [...subnets.values()],
    // The NodeClasses' resource groups exist (someone created them before installing azflex).
    resourceGroups: nodeClasses.map((nc) => ({ subscriptionId: nc.spec.subscriptionID, name: nc.spec.resourceGroup, location: nc.spec.location })),
    throttling: scenario.faults.throttling,
    transientFaultRate: scenario.faults.transientFaultRate,
    timeoutRate: scenario.faults.timeoutRate,
    failedVmRecords: a.failedVmRecords,
    cascadeDeletesReservedNic: a.cascadeDeletesReservedNic,
    reservation: { ...a.reservation },
    listPageSize: a.listPageSize,
    listLagSeconds: { ...a.listLagSeconds },
    immutableVmProperties: a.immutableVmProperties,
    computeThrottling: a.computeThrottling,
    defaultQuota: { ...a.defaultQuota },
    requireResourceGroups: a.requireResourceGroups,
    validateApiVersions: a.validateApiVersions,
    usages: { ...a.usages },
  };
}

/** A subnet's size: the world's `subnets` entry, the scenario NodeClass's `subnetPrefix`, or the world's default. */
function subnetPrefixOf(scenario: Scenario, subnetId: string): string {
  const id = subnetId.toLowerCase();
  const listed = scenario.subnets.find((s) => s.id.toLowerCase() === id);
  if (listed) return listed.addressPrefix;
  const own = scenario.nodeClasses.find((c) => scenarioSubnetId(c).toLowerCase() === id);
  return own?.subnetPrefix ?? scenario.defaultSubnetPrefix;
}

export async function runSimulation(opts: SimulationOptions): Promise<SimulationRun> {
  const wallStart = process.hrtime.bigint();
  const { scenario, seed, strategy } = opts;
  const hours = opts.hours ?? scenario.hours;
  const mainMs = hours * 3_600_000;
  // The in-memory ARM and cluster queue no nextTick callbacks: the cheaper drain is exact
  // there. An adapter (the SDK pipeline) may, so it gets a turn of the event loop per timer.
  const clock = new VirtualClock(SIM_EPOCH_MS, { drain: opts.armAdapter ? 'macrotask' : 'microtasks' });
  const random = new SeededRandom(seed);
  const eventLog = new MemoryEventLog(opts.keepEventLog ?? true);
  const hash = new LineHash();
  let transitions = 0;
  eventLog.subscribe((e) => {
    hash.line(JSON.stringify(e));
    if (e.kind === 'transition') transitions++;
  });

  const counters = { nicsCreated: 0, nicsDeleted: 0, createFailures: 0, launched: 0, writes: 0, deletesWhileAttached: 0 };
  const failuresByCode: Record<string, number> = {};
  const onArmEvent = (e: ArmEvent): void => {
    const status = Number(e.status);
    if (e.op === 'nic.created') counters.nicsCreated++;
    if (e.op === 'nic.removed') counters.nicsDeleted++;
    if ((e.op === 'vm.put' && status === 409) || e.op === 'vm.failed') {
      counters.createFailures++;
      const code = e.code ?? 'Unknown';
      failuresByCode[code] = (failuresByCode[code] ?? 0) + 1;
    }
    if (e.op === 'vm.provisioned') counters.launched++;
    if (e.op === 'nic.delete' && e.code === 'NicInUse') counters.deletesWhileAttached++;
    if ((e.op === 'nic.put' || e.op === 'vm.put' || e.op === 'nic.delete' || e.op === 'vm.delete' || e.op === 'disk.delete') && status !== 429) counters.writes++;
    eventLog.record({ t: e.t, actor: `arm/${e.name}`, kind: 'world', event: e.op, detail: e.code ? `${e.status} ${e.code}` : String(e.status) });
  };
  const setup = opts.cluster ?? clusterOfScenario(scenario, new Date(SIM_EPOCH_MS).toISOString());
  const arm = new FakeArm({ clock, random: random.fork('arm'), config: armConfigOf(scenario, setup), instanceTypes: STATIC_INSTANCE_TYPES, onEvent: onArmEvent });
  const reads = new Map<string, number>();
  const steadyReads = new Map<string, number>();
  const steadyFrom = SIM_EPOCH_MS + mainMs / 2;
  const armPort: AzurePort = countReads(
    opts.armAdapter ? opts.armAdapter(arm, clock) : arm,
    (sub, n) => {
      if (!provisioning) return;
      reads.set(sub, (reads.get(sub) ?? 0) + n);
      if (clock.now() >= steadyFrom) steadyReads.set(sub, (steadyReads.get(sub) ?? 0) + n);
    },
    Math.max(1, scenario.arm.listPageSize),
  );
  const cluster = new FakeCluster(clock, { informerLagMs: scenario.controller.informerLagSeconds * 1000 });
  seedCluster(cluster, setup);
  if (setup.existing) adoptSnapshot(arm, cluster, setup.existing, setup.nodeClasses, scenario.clusterName, clock.now());
  const catalog = new StaticInstanceTypeCatalog();
  const tokens = scenario.bootstrapToken ? new SimBootstrapTokens(clock, scenario.bootstrapToken) : undefined;
  const kubelet = new SimKubelet(
    arm,
    cluster,
    clock,
    random.fork('kubelet'),
    new Map(STATIC_INSTANCE_TYPES.map((t) => [t.name.toLowerCase(), t])),
    { min: scenario.controller.bootSeconds[0] * 1000, max: scenario.controller.bootSeconds[1] * 1000 },
    scenario.faults.nodeNeverJoinsRate,
    tokens,
  );
  const workload = new Workload(cluster, clock, setup.workloads);
  const every = (ms: number, fn: () => void): void => {
    const tick = (): void => {
      fn();
      clock.setTimer(ms, tick);
    };
    clock.setTimer(ms, tick);
  };
  const volumes = new SimVolumeProvisioner(cluster, scenario.clusterLocation);
  every(KUBELET_TICK_MS, () => {
    volumes.tick();
    kubelet.tick();
    workload.tick();
    neighbour?.tick();
  });
  workload.start(SIM_EPOCH_MS + mainMs);
  // Forked as the first incarnation's controller random is (below): the neighbour's NodeClaim names are the main cluster's.
  const crossWrites = new CrossClusterWrites();
  const neighbour = scenario.neighbour && new NeighbourCluster({ scenario, neighbour: scenario.neighbour, setup, clock, arm, strategy,
    controllerRandom: random.fork('controller-1'), kubeletRandom: random.fork('neighbour-kubelet'), enabled: () => provisioning, crossWrites });
  const controllerArm = neighbour ? crossWrites.port(arm, armPort, scenario.clusterName) : armPort;
  neighbour?.start(SIM_EPOCH_MS + mainMs);
  for (const { at, fault } of scenario.faults.schedule) clock.setTimer(at * 1000, () => arm.injectFault(fault));
  if (scenario.faults.unhealthyNodes?.length) scheduleNodeHealthFaults(clock, cluster, random.fork('node-health'), scenario.faults.unhealthyNodes);

  const useCache = opts.offeringsCache ?? true;
  const silent = pino({ level: 'silent' });
  let provisioning = true;
  let incarnation = 0;
  let restarts = 0;
  let session: ControllerSession | undefined;
  const pendingCrashes: number[] = [];
  let runtime: Runtime | undefined;
  const restartDelayMs = scenario.faults.restartDelaySeconds * 1000;

  const crashes = opts.crashes ?? randomCrashes(random.fork('crashes'), opts.restarts ?? scenario.faults.restarts, mainMs);
  const startController = (): void => {
    const s = new ControllerSession(++incarnation, clock, () => {
      runtime?.stop();
      restarts++;
      eventLog.record({ t: clock.now(), actor: 'controller', kind: 'controller', event: 'crash', detail: `incarnation ${s.incarnation} after ${s.calls} calls` });
      clock.setTimer(restartDelayMs, startController);
    }, crashes.length > 0);
    session = s;
    const pending = pendingCrashes.shift();
    if (pending !== undefined && provisioning) s.crashAfter(pending);
    const offerings = useCache ? new UnavailableOfferings(s.clock) : undefined;
    const controllerRandom = random.fork(`controller-${s.incarnation}`);
    const simCluster = s.wrap(cluster);
    const controllers = periodicControllers({
      arm: s.wrap(controllerArm),
      cluster: simCluster,
      catalog,
      clock: s.clock,
      random: controllerRandom,
      offerings,
      clusterName: scenario.clusterName,
      log: silent,
      intervals: {
        provisionMs: scenario.controller.provisionIntervalSeconds * 1000,
        disruptionMs: scenario.controller.disruptionIntervalSeconds * 1000,
        livenessMs: scenario.controller.disruptionIntervalSeconds * 1000,
      },
      enabled: () => provisioning,
      // The simulated Resource SKUs view: a SKU is restricted where the fake ARM refuses it
      // (always current: the simulated listing never trails ARM).
      skuRestricted: ({ sku, region }) => {
        const regions = scenario.regions.filter((r) => r.location.toLowerCase() === region.toLowerCase())
          .flatMap((r) => arm.regionsOf(r.subscriptionId)).filter((r) => r.location.toLowerCase() === region.toLowerCase());
        return regions.length === 0 ? undefined : regions.some((r) => r.unavailableSkus.includes(sku.toLowerCase()));
      },
    });
    runtime = new Runtime({
      arm: s.wrap(controllerArm),
      cluster: simCluster,
      clock: s.clock,
      random: controllerRandom,
      catalog,
      offerings,
      userData: tokens ? tokens.renderer(s.clock) : (req) => renderSimUserData(req),
      drain: drainWith(simCluster, s.clock),
      eventLog,
      controllers,
      config: { ...DEFAULT_RUNTIME_CONFIG, clusterName: scenario.clusterName, strategy, resyncMs: scenario.controller.resyncSeconds * 1000, ...(scenario.controller.legacyNames ? { legacyNames: true } : {}) },
    });
    opts.onWorld?.({ clock, arm, cluster, eventLog, runtime, incarnation: s.incarnation });
    void runtime.start();
  };
  startController();

  for (const [at, skip] of crashes) {
    clock.setTimer(at, () => {
      // A crash that falls while the controller is down (or already doomed) hits the next incarnation.
      if (session?.alive && !session.crashArmed) session.crashAfter(skip);
      else pendingCrashes.push(skip);
    });
  }

  const end = SIM_EPOCH_MS + mainMs;
  const step = opts.pace?.stepMs ?? Math.max(60_000, Math.floor(mainMs / 100));
  for (let t = SIM_EPOCH_MS; t < end; t += step) {
    await opts.pace?.beforeStep(t - SIM_EPOCH_MS);
    await clock.runUntil(Math.min(end, t + step));
    opts.onProgress?.((Math.min(end, t + step) - SIM_EPOCH_MS) / mainMs);
  }
  // Settle: no new pods, no provisioning or disruption, no more crashes; in-flight work finishes.
  provisioning = false;
  workload.freeze();
  neighbour?.freeze();
  const shared = neighbour && { clusterName: scenario.clusterName, other: neighbour, crossWrites };
  let settled = end;
  while (settled < end + MAX_SETTLE_MS && !quiescent(arm, cluster, shared)) {
    settled += SETTLE_STEP_MS;
    await clock.runUntil(settled);
  }
  runtime?.stop();
  neighbour?.stop();

  const stuck = stuckNodeClaims(cluster);
  const leaks = worldLeaks(arm, cluster, stuck, shared);
  const reap = percentiles(arm.reapTimesSeconds());
  const snapshot = arm.snapshot();
  const failedVms = snapshot.vms.filter((v) => v.provisioningState === 'Failed');
  const pods = [...cluster.pods.values()];
  const armCalls = arm.armCalls();
  const wallSeconds = Number(process.hrtime.bigint() - wallStart) / 1e9;
  const failedAttempts = counters.createFailures;
  const result: SimulationResult = {
    scenario: scenario.name,
    seed,
    strategy,
    simulatedSeconds: mainMs / 1000,
    wallSeconds: Math.round(wallSeconds * 1000) / 1000,
    restarts,
    offeringsCache: useCache,
    settleSeconds: (settled - end) / 1000,
    nodeClaimsCreated: cluster.stats.nodeClaimsCreated,
    nodeClaimsLaunched: counters.launched,
    createFailures: failedAttempts,
    createFailuresByCode: failuresByCode,
    createsRefusedForQuota: quotaRefusals(failuresByCode),
    createsRefusedForCapacity: failedAttempts - quotaRefusals(failuresByCode),
    createAttemptsPerHour: Math.round(((counters.launched + failedAttempts) / hours) * 10) / 10,
    nicsCreated: counters.nicsCreated,
    nicsDeleted: counters.nicsDeleted,
    leakedNics: leaks.nics.length,
    leakedVms: leaks.vms.length,
    leakedDisks: leaks.disks.length,
    stuckNodeClaims: stuck.length,
    failedVmsLeft: failedVms.length,
    nicDeletesWhileAttached: counters.deletesWhileAttached,
    peakSubnetIpsUsed: arm.peakSubnetIpsUsed(),
    subnetIpsUsedAtEnd: snapshot.subnets.reduce((n, s) => n + s.used, 0),
    armCalls,
    armWrites: counters.writes,
    armReadsPerHourBySubscription: Object.fromEntries([...reads].sort().map(([sub, n]) => [sub, Math.round((n / hours) * 10) / 10])),
    armReadsPerHourPerSubscription: Math.round((Math.max(0, ...reads.values()) / hours) * 10) / 10,
    armReadsPerHourSteadyState: Math.round((Math.max(0, ...steadyReads.values()) / (hours / 2)) * 10) / 10,
    timeToReapSeconds: reap,
    podTimeToRunningSeconds: podTimeToRunning(kubelet.podStarts),
    reapAfterReservationSeconds: percentiles(arm.reapAfterReservationSeconds()),
    podsRunning: pods.filter((p) => p.spec.nodeName).length,
    podsPending: pods.filter((p) => !p.spec.nodeName).length,
    nodePools: nodePoolFigures(cluster),
    eventLogSha256: hash.digest(),
    transitions,
  };
  return { result, eventLog, arm, cluster, invariantViolations: settledInvariants(arm, cluster, shared), ...(tokens ? { bootstrapTokens: tokens } : {}), ...(neighbour ? { neighbourCluster: neighbour.cluster } : {}) };
}

/**
 * What a settled world must look like under the machine strategy: every NodeClaim
 * registered or gone, every NIC attached to a VM of a live NodeClaim, every VM Succeeded and
 * owned, every disk owned, subnet addresses returned. Resources of a stuck NodeClaim count
 * as leaked: nothing will ever release them.
 */
export function settledInvariants(arm: FakeArm, cluster: FakeCluster, shared?: SharedResourceGroups): string[] {
  const problems: string[] = [];
  const snap = arm.snapshot();
  const stuck = stuckNodeClaims(cluster);
  const leaks = worldLeaks(arm, cluster, stuck, shared);
  if (shared) for (const name of stuckNodeClaims(shared.other.cluster)) problems.push(`NodeClaim ${name} of cluster ${shared.other.name} stuck`);
  for (const write of shared?.crossWrites.writes ?? []) problems.push(`a write to another cluster's resource: ${write}`);
  for (const n of leaks.nics) problems.push(`leaked NIC ${n.name}`);
  for (const v of leaks.vms) problems.push(`leaked VM ${v.name}`);
  for (const d of leaks.disks) problems.push(`leaked disk ${d.name}`);
  for (const name of stuck) {
    const nc = cluster.nodeClaims.get(name)!;
    problems.push(`NodeClaim ${name} stuck ${nc.metadata.deletionTimestamp ? 'terminating' : nc.status.providerID ? 'unregistered' : 'unlaunched'}`);
  }
  for (const v of snap.vms) if (v.provisioningState !== 'Succeeded') problems.push(`VM ${v.name} left ${v.provisioningState}`);
  const attached = snap.nics.filter((n) => n.virtualMachineId).length;
  if (attached !== snap.nics.length) problems.push(`${snap.nics.length - attached} NIC(s) without a VM`);
  const used = snap.subnets.reduce((n, s) => n + s.used, 0);
  if (used !== snap.nics.length) problems.push(`subnet addresses used ${used} != NICs ${snap.nics.length}`);
  return problems;
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

/**
 * Counts the controller's ARM reads (GETs, and every page of a list, as ARM charges them) by
 * subscription. Calls the gate answered locally never reach here.
 */
function countReads(port: AzurePort, read: (subscription: string, n: number) => void, pageSize: number): AzurePort {
  const sub = (scope: ResourceGroupScope): string => scope.subscriptionId.toLowerCase();
  const get = (scope: ResourceGroupScope): void => read(sub(scope), 1);
  const pages = <T>(scope: ResourceGroupScope, list: Promise<T[]>): Promise<T[]> =>
    list.then(
      (items) => {
        read(sub(scope), Math.max(1, Math.ceil(items.length / pageSize)));
        return items;
      },
      (err: unknown) => {
        read(sub(scope), 1);
        throw err;
      },
    );
  // Spelled out, not a Proxy: every ARM call of a run passes here.
  return {
    getNic: (ref) => (get(ref), port.getNic(ref)),
    createNic: (spec) => port.createNic(spec),
    deleteNic: (ref) => port.deleteNic(ref),
    listNics: (scope) => pages(scope, port.listNics(scope)),
    getVm: (ref) => (get(ref), port.getVm(ref)),
    createVm: (spec) => port.createVm(spec),
    deleteVm: (ref) => port.deleteVm(ref),
    listVms: (scope) => pages(scope, port.listVms(scope)),
    listDisks: (scope) => pages(scope, port.listDisks(scope)),
    getDisk: (ref) => (get(ref), port.getDisk(ref)),
    deleteDisk: (ref) => port.deleteDisk(ref),
    listUsages: (subscriptionId, location) => (read(subscriptionId.toLowerCase(), 1), port.listUsages(subscriptionId, location)),
    // Two reads: the group with its instance view, and its reservations.
    getCapacityReservationGroup: (ref) => (read(ref.subscriptionId.toLowerCase(), 2), port.getCapacityReservationGroup(ref)),
  };
}

/** Create failures ARM gave for quota: the codes its quota refusals carry (Compute throttling's 429s are not create failures). */
function quotaRefusals(byCode: Record<string, number>): number {
  return (byCode.OperationNotAllowed ?? 0) + (byCode.QuotaExceeded ?? 0);
}

/**
 * SHA-256 of newline-terminated lines, fed to the hash in large chunks: the same digest as
 * one update per line, but a run logs ~40,000 lines and per-line updates showed in profiles.
 */
class LineHash {
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

/** Settled: no ARM operation in flight and nothing the invariants object to. */
function quiescent(arm: FakeArm, cluster: FakeCluster, shared: SharedResourceGroups | undefined): boolean {
  return arm.snapshot().operations.inProgress === 0 && settledInvariants(arm, cluster, shared).length === 0;
}

function randomCrashes(random: SeededRandom, count: number, mainMs: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 0; i < count; i++) out.push([Math.floor(random.next() * mainMs), Math.floor(random.next() * 20)]);
  return out.sort((a, b) => a[0] - b[0]);
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
