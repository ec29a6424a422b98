/**
 * What the scheduling simulation takes and gives, and the shapes its parts share: a
 * NodePool's template, the instance types it may launch, and the NodeClaims planned in a pass.
 */
import type {
  AzureFlexNodeClass, Node, NodeClaim, NodePool, NodeSelectorRequirement, Pod, ResourceList, Taint,
} from '../../ports/cluster.js';
import type { InstanceType } from '../../catalog/skus.js';
import type { Resources } from '../resources.js';
import type { Requirements } from '../requirements.js';
import type { FirstFitIndex } from './first-fit-index.js';
import type { DomainSource } from './topology.js';
import type { InFlightClaim, SchedulingMemo } from './memo.js';

export interface SchedulingInput {
  pendingPods: readonly Pod[];
  /** All NodePools; those not referencing AzureFlexNodeClass are ignored. */
  nodePools: readonly NodePool[];
  nodeClasses: readonly AzureFlexNodeClass[];
  instanceTypes: readonly InstanceType[];
  /** All NodeClaims: in-flight capacity for pending pods and NodePool limit usage. */
  existingNodeClaims: readonly NodeClaim[];
  /** Pods already bound to nodes (their requests use up the NodeClaims' capacity; they count for topology). */
  boundPods?: readonly Pod[];
  /** Nodes, for the topology domains (zone, hostname, …) of pods already running. */
  nodes?: readonly Node[];
  /**
   * Node requirements a pod's volumes impose (a zonal disk pins region and zone), or a reason
   * the pod cannot be placed (e.g. its PVC does not exist). See volume-topology.ts.
   */
  volumeRequirements?: (pod: Pod) => NodeSelectorRequirement[] | { error: string } | undefined;
  /** One representative pod per DaemonSet: its requests are overhead on every node it fits. */
  daemonSetPods: readonly Pod[];
  /** kube-reserved + eviction threshold per instance type; defaults to the AKS formula. */
  kubeReserved?: (instanceType: InstanceType, maxPods: number) => Resources;
  isOfferingUnavailable: (sku: string, region: string, capacityType: string) => boolean;
  /** The AKS node resource group: its label value is kubernetes.azure.com/cluster on every node (none: no such label). */
  nodeResourceGroup?: string;
  /** Whether a capacity reservation the NodeClass names has room for the size (the `reserved` capacity type; absent: none). */
  isReservable?: (nodeClassName: string, sku: string) => boolean;
  /** Per-zone marks (a zonal allocation failure) of a capacity type: the SKU's other zones stay offered. */
  isZoneUnavailable?: (sku: string, region: string, zone: string, capacityType: string) => boolean;
  /**
   * What earlier passes derived from each existing NodeClaim, for a caller that schedules
   * again and again (the provisioner): only NodeClaims that changed are rebuilt. The result
   * is the same with or without it.
   */
  memo?: SchedulingMemo;
}

export interface NodeClaimPlan {
  nodePoolName: string;
  nodeClassName: string;
  /** Cheapest option: what the plan is priced at and launched with first. */
  instanceType: InstanceType;
  /** Every SKU that satisfies the requirements and holds all the pods, cheapest first. */
  instanceTypeOptions: InstanceType[];
  /** NodePool ∩ pods' requirements, narrowed to the options' instance types and region. */
  requirements: NodeSelectorRequirement[];
  /** Summed pod requests plus DaemonSet overhead. */
  requests: ResourceList;
  /** "namespace/name" of the pods this claim is for. */
  podKeys: string[];
  /** ARM id of the capacity reservation group it took a slot of (plan-limits.ts), when it launches as reserved. */
  capacityReservationGroupId?: string;
}

export interface ExistingPlacement {
  nodeClaimName: string;
  podKeys: string[];
}

export interface UnschedulablePod {
  pod: Pod;
  reason: string;
}

export interface SchedulingResult {
  nodeClaims: NodeClaimPlan[];
  /** Pending pods expected to land on in-flight NodeClaims: no new capacity needed. */
  existingPlacements: ExistingPlacement[];
  unschedulable: UnschedulablePod[];
}

/** An instance type a pool may launch, with what it brings. */
export interface Candidate {
  instanceType: InstanceType;
  requirements: Requirements;
  capacity: Resources;
  /** Capacity minus kube-reserved; DaemonSet overhead is charged as usage. */
  allocatable: Resources;
  /** Its cheapest offering the pool allows and the marks leave (catalog/offerings.ts): what it ranks by. */
  pricePerHour: number;
}

/** A NodePool as a pass sees it: what it may launch, and what it holds and plans. */
export interface PoolTemplate {
  nodePool: NodePool;
  name: string;
  nodeClass: AzureFlexNodeClass;
  region: string;
  requirements: Requirements;
  taints: readonly Taint[];
  daemonOverhead: Resources;
  candidates: Candidate[];
  /** Would-be candidates the unavailable-offerings cache rules out (for messages only). */
  unavailable: Candidate[];
  limits: Resources | undefined;
  /** limits − usage of every NodeClaim of this pool, existing and planned. */
  remaining: Resources | undefined;
  inFlight: InFlightClaim[];
  inFlightIndex: FirstFitIndex;
  planned: PlannedClaim[];
  plannedIndex: FirstFitIndex;
}

/** A NodeClaim this pass plans: its pods, and the options that can still hold them all. */
export interface PlannedClaim {
  pool: PoolTemplate;
  /** The hostname domain this claim will be (unique within the run). */
  hostname: string;
  /** Topology domains per key, recomputed when requirements or options change. */
  domainCache: Map<string, readonly string[] | undefined>;
  requirements: Requirements;
  options: Candidate[];
  used: Resources;
  /** Max capacity across options: what this claim holds against the pool's limits. */
  reservation: Resources;
  podKeys: string[];
  /** Position in the pool's plannedIndex. */
  position: number;
  /** Largest allocatable over the options in index dimensions (cached; reset when options change). */
  maxAllocatable?: Float64Array | undefined;
  /** The claim's topology view (reads the claim live). */
  source?: DomainSource | undefined;
}
