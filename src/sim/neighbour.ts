import pino from 'pino';
import { TAG, armId } from '../azure/naming.js';
import type { AzurePort, ResourceRef } from '../ports/azure.js';
import { STATIC_INSTANCE_TYPES, StaticInstanceTypeCatalog } from '../catalog/skus.js';
import { UnavailableOfferings } from '../azure/offerings.js';
import { drainWith, periodicControllers } from '../controllers/periodic.js';
import { Runtime } from '../runtime/runtime.js';
import { DEFAULT_RUNTIME_CONFIG, type StrategyName } from '../runtime/deps.js';
import { MemoryEventLog } from '../runtime/event-log.js';
import type { FakeArm } from './arm/fake-arm.js';
import type { ClusterSetup } from './cluster-setup.js';
import { FakeCluster } from './cluster.js';
import { SimKubelet } from './kubelet.js';
import type { Scenario } from './scenario.js';
import { seedCluster } from './seed-cluster.js';
import { renderSimUserData } from './userdata.js';
import type { SeededRandom, VirtualClock } from './virtual-clock.js';
import { SimVolumeProvisioner } from './volume-provisioner.js';
import { Workload } from './workload.js';

export interface NeighbourOptions {
  scenario: Scenario;
  neighbour: NonNullable<Scenario['neighbour']>;
  setup: ClusterSetup;
  clock: VirtualClock;
  arm: FakeArm;
  strategy: StrategyName;
  /** The main controller's first random stream: drawn alike, the two controllers' NodeClaim names collide. */
  controllerRandom: SeededRandom;
  kubeletRandom: SeededRandom;
  /** Whether provisioning and disruption run (the simulator stops them while the world settles). */
  enabled: () => boolean;
  /** Where the controllers' writes to resources that are not their cluster's are counted. */
  crossWrites: CrossClusterWrites;
}

/**
 * The scenario's second cluster (`neighbour`) sharing the resource groups: its own API server,
 * kubelet, workload and controller against the same fake ARM. It does not crash (the main
 * controller's crashes are what the restarts test), and its event log is its own, so the main
 * cluster's figures and hash stay the main cluster's; ARM's log records both.
 */
export class NeighbourCluster {
  readonly name: string;
  readonly cluster: FakeCluster;
  private readonly workload: Workload;
  private readonly kubelet: SimKubelet;
  private readonly volumes: SimVolumeProvisioner;
  private readonly runtime: Runtime;

  constructor(o: NeighbourOptions) {
    const { scenario, clock } = o;
    this.name = o.neighbour.clusterName;
    this.cluster = new FakeCluster(clock, { informerLagMs: scenario.controller.informerLagSeconds * 1000 });
    seedCluster(this.cluster, o.setup);
    const catalog = new StaticInstanceTypeCatalog();
    this.kubelet = new SimKubelet(
      o.arm, this.cluster, clock, o.kubeletRandom, new Map(STATIC_INSTANCE_TYPES.map((t) => [t.name.toLowerCase(), t])),
      { min: scenario.controller.bootSeconds[0] * 1000, max: scenario.controller.bootSeconds[1] * 1000 },
      scenario.faults.nodeNeverJoinsRate, undefined, this.name,
    );
    this.workload = new Workload(this.cluster, clock, o.setup.workloads);
    this.volumes = new SimVolumeProvisioner(this.cluster, scenario.clusterLocation);
    const offerings = new UnavailableOfferings(clock);
    const arm = o.crossWrites.port(o.arm, o.arm, this.name);
    const controllers = periodicControllers({
      arm, cluster: this.cluster, catalog, clock, random: o.controllerRandom, offerings, clusterName: this.name, log: pino({ level: 'silent' }),
      intervals: {
        provisionMs: scenario.controller.provisionIntervalSeconds * 1000,
        disruptionMs: scenario.controller.disruptionIntervalSeconds * 1000,
        livenessMs: scenario.controller.disruptionIntervalSeconds * 1000,
      },
      enabled: o.enabled,
    });
    this.runtime = new Runtime({
      arm, cluster: this.cluster, clock, random: o.controllerRandom, catalog, offerings, userData: renderSimUserData,
      drain: drainWith(this.cluster, clock), eventLog: new MemoryEventLog(false), controllers,
      config: {
        ...DEFAULT_RUNTIME_CONFIG, clusterName: this.name, strategy: o.strategy, resyncMs: scenario.controller.resyncSeconds * 1000,
        ...(o.neighbour.legacyNames ? { legacyNames: true } : {}),
      },
    });
  }

  /** Starts the controller and the workload (its pods come until `untilMs`). */
  start(untilMs: number): void {
    this.workload.start(untilMs);
    void this.runtime.start();
  }

  /** One kubelet tick, in the main cluster's rhythm. */
  tick(): void {
    this.volumes.tick();
    this.kubelet.tick();
    this.workload.tick();
  }

  /** No new pods (the world settles). */
  freeze(): void {
    this.workload.freeze();
  }

  stop(): void {
    this.runtime.stop();
  }
}


type ArmProvider = Parameters<typeof armId>[1];

/**
 * The writes either cluster's controller made to a resource that is not its own (another
 * cluster's, or untagged): a PUT over an existing NIC or VM (adoption) or a DELETE. Read from
 * the fake's uncounted snapshot just before the call, so it costs ARM nothing. Zero is what the
 * ownership checks promise; a world without them adopts or deletes across clusters.
 */
export class CrossClusterWrites {
  readonly writes: string[] = [];

  /** `inner` with its writes checked against the resources `arm` holds. */
  port(arm: FakeArm, inner: AzurePort, clusterName: string): AzurePort {
    const check = (op: string, ref: ResourceRef, provider: ArmProvider): void => {
      const id = armId(ref, provider).toLowerCase();
      const snap = arm.snapshot();
      const found = [...snap.nics, ...snap.vms, ...snap.disks].find((r) => r.id.toLowerCase() === id);
      if (found && found.tags[TAG.cluster] !== clusterName) this.writes.push(`${clusterName}: ${op} ${found.id} (${TAG.cluster}=${found.tags[TAG.cluster] ?? 'none'})`);
    };
    // Spelled out: a spread of a class instance (the fake itself) would lose its methods.
    return {
      getNic: (ref) => inner.getNic(ref),
      listNics: (scope) => inner.listNics(scope),
      getVm: (ref) => inner.getVm(ref),
      listVms: (scope) => inner.listVms(scope),
      listDisks: (scope) => inner.listDisks(scope),
      getDisk: (ref) => inner.getDisk(ref),
      listUsages: (subscriptionId, location) => inner.listUsages(subscriptionId, location),
      getCapacityReservationGroup: (ref) => inner.getCapacityReservationGroup(ref),
      createNic: (spec) => (check('PUT', spec.ref, 'Microsoft.Network/networkInterfaces'), inner.createNic(spec)),
      deleteNic: (ref) => (check('DELETE', ref, 'Microsoft.Network/networkInterfaces'), inner.deleteNic(ref)),
      createVm: (spec) => (check('PUT', spec.ref, 'Microsoft.Compute/virtualMachines'), inner.createVm(spec)),
      deleteVm: (ref) => (check('DELETE', ref, 'Microsoft.Compute/virtualMachines'), inner.deleteVm(ref)),
      deleteDisk: (ref) => (check('DELETE', ref, 'Microsoft.Compute/disks'), inner.deleteDisk(ref)),
    };
  }
}
