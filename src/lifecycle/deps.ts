import type { OfferingsCache } from '../azure/offerings.js';
// The offerings cache's interface lives beside its implementation; the lifecycles' users import it from here too.
export type { OfferingsCache };
import type { InstanceType, InstanceTypeCatalog } from '../catalog/skus.js';
import type { AzurePort, Disk, Nic, Vm } from '../ports/azure.js';
import type { AzureFlexNodeClass, ClusterPort, Node, NodeClaim } from '../ports/cluster.js';
import type { Clock } from '../ports/clock.js';
import type { ReportedLoss } from './nodeclaim/machine.js';

/**
 * What the lifecycles need from the process that hosts their actors (the runtime): the world
 * as last observed and the ports. Declared here so the lifecycles depend on no host.
 */

/** One consistent-enough look at ARM and the cluster; everything actors decide comes from here. */
export interface WorldView {
  at: number;
  nodeClaims: Map<string, NodeClaim>;
  nodeClasses: Map<string, AzureFlexNodeClass>;
  /** Nodes by providerID. */
  nodesByProviderId: Map<string, Node>;
  nics: Map<string, Nic>;
  vms: Map<string, Vm>;
  disks: Map<string, Disk> | undefined;
  /** Whether a VM in the view uses the NIC. */
  isAttached(nic: Nic): boolean;
  /** Whether ARM itself said the NIC is gone (a GET's 404, a finished DELETE) and nothing since showed it (see ArmView.answeredGone). */
  nicAnsweredGone(name: string): boolean;
}

export { vmAttemptAt } from '../apis/vm-attempt.js';

export interface UserDataRequest {
  nodeClaim: NodeClaim;
  nodeClass: AzureFlexNodeClass;
  instanceType: InstanceType;
}

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
  instanceLost?(lost: { nodeClaim: string; nodePool: string; reason: ReportedLoss; message: string }): void;
}

/** How NIC cleanup after a failed VM create works; `naive` and `delayed` reproduce upstream's bugs for comparison. */
export type StrategyName = 'naive' | 'delayed' | 'machine';

export interface LifecycleConfig {
  clusterName: string;
  /** The AKS node resource group: its label value is kubernetes.azure.com/cluster on every node (none: no such label). */
  nodeResourceGroup?: string;
  strategy: StrategyName;
  adminUsername: string;
  /**
   * Creates under the first version's names (`azflex-<nodeclaim>`, nothing of the cluster), as
   * a controller from before cluster names did: the simulator's not-yet-upgraded cluster. Off
   * in production; the first version's resources are recognised either way.
   */
  legacyNames?: boolean;
}

export interface LifecycleDeps {
  arm: AzurePort;
  cluster: ClusterPort;
  clock: Clock;
  /**
   * Stamps NodeClaim conditions (lastTransitionTime), which Kubernetes-side controllers
   * (disruption's consolidateAfter, liveness) compare with their own clock. Default: `clock`;
   * `azflex dev` skips ARM's clock ahead of the wall clock the others run on.
   */
  statusClock?: Clock;
  catalog: InstanceTypeCatalog;
  offerings?: OfferingsCache;
  userData(req: UserDataRequest): Promise<string>;
  /** Cordon and evict; resolves true once the node has no pods left to evict. */
  drain?(nodeName: string, deadline: number): Promise<boolean>;
  /** Fencing: a deposed leader issues no ARM writes. */
  isLeader?(): boolean;
  observer?: RuntimeObserver;
  config: LifecycleConfig;
}
