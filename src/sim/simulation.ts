import pino from 'pino';
import { STATIC_INSTANCE_TYPES, StaticInstanceTypeCatalog } from '../catalog/skus.js';
import { UnavailableOfferings } from '../azure/offerings.js';
import { drainWith, periodicControllers } from '../controllers/periodic.js';
import type { AzurePort, ResourceGroupScope } from '../ports/azure.js';
import { Runtime } from '../runtime/runtime.js';
import { DEFAULT_RUNTIME_CONFIG, type StrategyName } from '../runtime/deps.js';
import { MemoryEventLog } from '../runtime/event-log.js';
import { FakeArm } from './arm/fake-arm.js';
import type { FakeArmConfig } from './arm/types.js';
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
import { ArmTally, LineHash, simulationResult, type SimulationResult } from './result.js';

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
  const end = SIM_EPOCH_MS + mainMs;
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
  const tally = new ArmTally(eventLog);
  const setup = opts.cluster ?? clusterOfScenario(scenario, new Date(SIM_EPOCH_MS).toISOString());
  const arm = new FakeArm({ clock, random: random.fork('arm'), config: armConfigOf(scenario, setup), instanceTypes: STATIC_INSTANCE_TYPES, onEvent: tally.onArmEvent });
  const reads = new Map<string, number>();
  const steadyReads = new Map<string, number>();
  const steadyFrom = SIM_EPOCH_MS + mainMs / 2;
  let provisioning = true;
  const armPort: AzurePort = countReads(
    opts.armAdapter ? opts.armAdapter(arm, clock) : arm,
    (sub, n) => {
      if (!provisioning) return;
      reads.set(sub, (reads.get(sub) ?? 0) + n);
      if (clock.now() >= steadyFrom) steadyReads.set(sub, (steadyReads.get(sub) ?? 0) + n);
    },
    Math.max(1, scenario.arm.listPageSize),
  );
  const world = startWorld({ scenario, setup, clock, random, arm, armPort, strategy, end, enabled: () => provisioning });
  const { cluster, kubelet, workload, neighbour, tokens, controllerArm } = world;
  const controllers = new Incarnations({
    scenario, strategy, clock, random, arm, cluster, controllerArm, tokens, eventLog,
    useCache: opts.offeringsCache ?? true,
    enabled: () => provisioning,
    ...(opts.onWorld ? { onWorld: opts.onWorld } : {}),
  });
  controllers.start(opts.crashes ?? randomCrashes(random.fork('crashes'), opts.restarts ?? scenario.faults.restarts, mainMs));

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
  const shared = neighbour && { clusterName: scenario.clusterName, other: neighbour, crossWrites: world.crossWrites };
  let settled = end;
  while (settled < end + MAX_SETTLE_MS && !quiescent(arm, cluster, shared)) {
    settled += SETTLE_STEP_MS;
    await clock.runUntil(settled);
  }
  controllers.stop();
  neighbour?.stop();

  const result = simulationResult({
    scenario: scenario.name, seed, strategy, hours, restarts: controllers.restarts, offeringsCache: opts.offeringsCache ?? true,
    wallSeconds: Number(process.hrtime.bigint() - wallStart) / 1e9, settleMs: settled - end,
    arm, cluster, kubelet, tally, shared, reads, steadyReads, eventLogSha256: hash.digest(), transitions,
  });
  return { result, eventLog, arm, cluster, invariantViolations: settledInvariants(arm, cluster, shared), ...(tokens ? { bootstrapTokens: tokens } : {}), ...(neighbour ? { neighbourCluster: neighbour.cluster } : {}) };
}

interface WorldOptions {
  scenario: Scenario;
  setup: ClusterSetup;
  clock: VirtualClock;
  random: SeededRandom;
  arm: FakeArm;
  /** The ARM port as the controller reaches it (reads counted). */
  armPort: AzurePort;
  strategy: StrategyName;
  end: number;
  enabled: () => boolean;
}

/** The world around the controller: the API server, kubelets, workload, volumes, faults and a neighbour cluster, ticking. */
function startWorld(o: WorldOptions) {
  const { scenario, setup, clock, random, arm } = o;
  const cluster = new FakeCluster(clock, { informerLagMs: scenario.controller.informerLagSeconds * 1000 });
  seedCluster(cluster, setup);
  if (setup.existing) adoptSnapshot(arm, cluster, setup.existing, setup.nodeClasses, scenario.clusterName, clock.now());
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
  const volumes = new SimVolumeProvisioner(cluster, scenario.clusterLocation);
  const tick = (): void => {
    volumes.tick();
    kubelet.tick();
    workload.tick();
    neighbour?.tick();
    clock.setTimer(KUBELET_TICK_MS, tick);
  };
  clock.setTimer(KUBELET_TICK_MS, tick);
  workload.start(o.end);
  // Forked as the first incarnation's controller random is (Incarnations): the neighbour's NodeClaim names are the main cluster's.
  const crossWrites = new CrossClusterWrites();
  const neighbour = scenario.neighbour && new NeighbourCluster({ scenario, neighbour: scenario.neighbour, setup, clock, arm, strategy: o.strategy,
    controllerRandom: random.fork('controller-1'), kubeletRandom: random.fork('neighbour-kubelet'), enabled: o.enabled, crossWrites });
  const controllerArm = neighbour ? crossWrites.port(arm, o.armPort, scenario.clusterName) : o.armPort;
  neighbour?.start(o.end);
  for (const { at, fault } of scenario.faults.schedule) clock.setTimer(at * 1000, () => arm.injectFault(fault));
  if (scenario.faults.unhealthyNodes?.length) scheduleNodeHealthFaults(clock, cluster, random.fork('node-health'), scenario.faults.unhealthyNodes);
  return { cluster, kubelet, workload, neighbour, tokens, crossWrites, controllerArm };
}

interface IncarnationOptions {
  scenario: Scenario;
  strategy: StrategyName;
  clock: VirtualClock;
  random: SeededRandom;
  arm: FakeArm;
  cluster: FakeCluster;
  controllerArm: AzurePort;
  tokens: SimBootstrapTokens | undefined;
  eventLog: MemoryEventLog;
  useCache: boolean;
  enabled: () => boolean;
  onWorld?: (world: SimulationWorld) => void;
}

/** The controller process, crashing on schedule and restarting after the scenario's delay: each incarnation rebuilt from the world. */
class Incarnations {
  restarts = 0;
  private incarnation = 0;
  private session: ControllerSession | undefined;
  private runtime: Runtime | undefined;
  private readonly pendingCrashes: number[] = [];
  private crashing = false;
  private readonly catalog = new StaticInstanceTypeCatalog();
  private readonly silent = pino({ level: 'silent' });

  constructor(private readonly o: IncarnationOptions) {}

  /** Starts the first incarnation; `crashes` are [atMs, skipCalls] pairs. */
  start(crashes: ReadonlyArray<[number, number]>): void {
    this.crashing = crashes.length > 0;
    this.startOne();
    for (const [at, skip] of crashes) {
      this.o.clock.setTimer(at, () => {
        // A crash that falls while the controller is down (or already doomed) hits the next incarnation.
        if (this.session?.alive && !this.session.crashArmed) this.session.crashAfter(skip);
        else this.pendingCrashes.push(skip);
      });
    }
  }

  stop(): void {
    this.runtime?.stop();
  }

  private startOne(): void {
    const { o } = this;
    const s = new ControllerSession(++this.incarnation, o.clock, () => {
      this.runtime?.stop();
      this.restarts++;
      o.eventLog.record({ t: o.clock.now(), actor: 'controller', kind: 'controller', event: 'crash', detail: `incarnation ${s.incarnation} after ${s.calls} calls` });
      o.clock.setTimer(o.scenario.faults.restartDelaySeconds * 1000, () => this.startOne());
    }, this.crashing);
    this.session = s;
    const pending = this.pendingCrashes.shift();
    if (pending !== undefined && o.enabled()) s.crashAfter(pending);
    this.runtime = this.runtimeFor(s);
    o.onWorld?.({ clock: o.clock, arm: o.arm, cluster: o.cluster, eventLog: o.eventLog, runtime: this.runtime, incarnation: s.incarnation });
    void this.runtime.start();
  }

  private runtimeFor(s: ControllerSession): Runtime {
    const { o, catalog } = this;
    const { scenario, arm } = o;
    const offerings = o.useCache ? new UnavailableOfferings(s.clock) : undefined;
    const controllerRandom = o.random.fork(`controller-${s.incarnation}`);
    const simCluster = s.wrap(o.cluster);
    const controllers = periodicControllers({
      arm: s.wrap(o.controllerArm),
      cluster: simCluster,
      catalog,
      clock: s.clock,
      random: controllerRandom,
      offerings,
      clusterName: scenario.clusterName,
      log: this.silent,
      intervals: {
        provisionMs: scenario.controller.provisionIntervalSeconds * 1000,
        disruptionMs: scenario.controller.disruptionIntervalSeconds * 1000,
        livenessMs: scenario.controller.disruptionIntervalSeconds * 1000,
      },
      enabled: o.enabled,
      // The simulated Resource SKUs view: a SKU is restricted where the fake ARM refuses it
      // (always current: the simulated listing never trails ARM).
      skuRestricted: ({ sku, region }) => {
        const regions = scenario.regions.filter((r) => r.location.toLowerCase() === region.toLowerCase())
          .flatMap((r) => arm.regionsOf(r.subscriptionId)).filter((r) => r.location.toLowerCase() === region.toLowerCase());
        return regions.length === 0 ? undefined : regions.some((r) => r.unavailableSkus.includes(sku.toLowerCase()));
      },
    });
    return new Runtime({
      arm: s.wrap(o.controllerArm),
      cluster: simCluster,
      clock: s.clock,
      random: controllerRandom,
      catalog,
      offerings,
      userData: o.tokens ? o.tokens.renderer(s.clock) : (req) => renderSimUserData(req),
      drain: drainWith(simCluster, s.clock),
      eventLog: o.eventLog,
      controllers,
      config: { ...DEFAULT_RUNTIME_CONFIG, clusterName: scenario.clusterName, strategy: o.strategy, resyncMs: scenario.controller.resyncSeconds * 1000, ...(scenario.controller.legacyNames ? { legacyNames: true } : {}) },
    });
  }
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

/** Settled: no ARM operation in flight and nothing the invariants object to. */
function quiescent(arm: FakeArm, cluster: FakeCluster, shared: SharedResourceGroups | undefined): boolean {
  return arm.snapshot().operations.inProgress === 0 && settledInvariants(arm, cluster, shared).length === 0;
}

function randomCrashes(random: SeededRandom, count: number, mainMs: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 0; i < count; i++) out.push([Math.floor(random.next() * mainMs), Math.floor(random.next() * 20)]);
  return out.sort((a, b) => a[0] - b[0]);
}
