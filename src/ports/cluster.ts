/**
 * The Kubernetes port: typed subsets of the objects azflex reads and writes.
 * Implemented by src/k8s (real API server) and src/sim/cluster (in-memory fake).
 * Shapes follow karpenter.sh/v1 and core/v1 so the real adapter is a thin mapping.
 */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  finalizers: string[];
  /** RFC 3339. */
  creationTimestamp: string;
  deletionTimestamp?: string;
  /** Read and written for NodeClaims only (their NodePool owns them, so deleting it deletes them). */
  ownerReferences?: OwnerReference[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  blockOwnerDeletion?: boolean;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
}

export type ResourceList = Record<string, string>;

/** karpenter.sh/v1's operators: core/v1's six plus the inclusive Gte and Lte (Karpenter ≥ 1.9). */
export type SelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | 'Gte' | 'Lte';

export interface NodeSelectorRequirement {
  key: string;
  operator: SelectorOperator;
  values?: string[];
  /** karpenter.sh/v1 NodePool requirements may carry a minimum flexibility. */
  minValues?: number;
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: '' | 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

export interface NodeClassRef {
  group: string;
  kind: string;
  name: string;
}

export interface NodeClaim {
  metadata: ObjectMeta;
  spec: {
    nodeClassRef: NodeClassRef;
    requirements: NodeSelectorRequirement[];
    resources: { requests: ResourceList };
    taints: Taint[];
    startupTaints: Taint[];
    expireAfter?: string;
    terminationGracePeriod?: string;
  };
  status: {
    providerID?: string;
    nodeName?: string;
    imageID?: string;
    capacity?: ResourceList;
    allocatable?: ResourceList;
    conditions: Condition[];
    /** RFC 3339: the last time a pod was bound to its node or left it (upstream's podevents controller writes it; consolidateAfter counts from it). */
    lastPodEventTime?: string;
  };
}

/**
 * A change to some of a NodeClaim's status: conditions put (replacing the one of the same type)
 * or removed by type, and lastPodEventTime. Applied to the object as the API server holds it, so
 * the conditions other writers own (Launched, Registered, Initialized, Ready) are kept.
 */
export interface NodeClaimStatusChange {
  set?: Condition[];
  remove?: string[];
  lastPodEventTime?: string;
}

export interface Node {
  metadata: ObjectMeta;
  spec: { providerID?: string; taints: Taint[]; unschedulable?: boolean };
  /** `phase` is the deprecated NodeStatus.phase, which kubelets leave unset; kept for metrics (upstream labels by it). */
  status: { capacity: ResourceList; allocatable: ResourceList; conditions: Condition[]; phase?: string };
}

export interface Container {
  name: string;
  resources: { requests: ResourceList; limits?: ResourceList };
}

export interface NodeAffinityTerm {
  matchExpressions: NodeSelectorRequirement[];
}

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

/** metav1.LabelSelector: both parts AND'ed; an empty selector matches everything. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface PodAffinityTerm {
  labelSelector?: LabelSelector;
  namespaces?: string[];
  /** Only the empty selector (every namespace) can be evaluated without Namespace objects. */
  namespaceSelector?: LabelSelector;
  topologyKey: string;
  matchLabelKeys?: string[];
  mismatchLabelKeys?: string[];
}

export interface WeightedPodAffinityTerm {
  weight: number;
  podAffinityTerm: PodAffinityTerm;
}

export interface PodAffinityRules {
  requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[];
  preferredDuringSchedulingIgnoredDuringExecution?: WeightedPodAffinityTerm[];
}

export interface PreferredSchedulingTerm {
  weight: number;
  preference: NodeAffinityTerm;
}

export interface Affinity {
  nodeAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeAffinityTerm[] };
    preferredDuringSchedulingIgnoredDuringExecution?: PreferredSchedulingTerm[];
  };
  podAffinity?: PodAffinityRules;
  podAntiAffinity?: PodAffinityRules;
}

export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  labelSelector?: LabelSelector;
  minDomains?: number;
  nodeAffinityPolicy?: 'Honor' | 'Ignore';
  nodeTaintsPolicy?: 'Honor' | 'Ignore';
  matchLabelKeys?: string[];
}

export interface Volume {
  name: string;
  persistentVolumeClaim?: { claimName: string };
  /** A generic ephemeral volume: its PVC is "<pod>-<volume>", created from this template. */
  ephemeral?: { storageClassName?: string };
}

/** core/v1 PersistentVolumeClaim, the parts volume topology reads. */
export interface PersistentVolumeClaim {
  metadata: ObjectMeta & { namespace: string };
  spec: { storageClassName?: string; volumeName?: string };
  status: { phase?: 'Pending' | 'Bound' | 'Lost' };
}

/** core/v1 PersistentVolume: where its data lives (required node affinity) and what kind it is. */
export interface PersistentVolume {
  metadata: ObjectMeta;
  spec: {
    storageClassName?: string;
    nodeAffinity?: { required?: { nodeSelectorTerms: NodeAffinityTerm[] } };
    /** Local and hostPath volumes: their hostname affinity does not bind a replacement node. */
    local?: boolean;
    hostPath?: boolean;
  };
}

/** storage.k8s.io/v1 StorageClass: when volumes bind and where they may be provisioned. */
export interface StorageClass {
  metadata: ObjectMeta;
  provisioner: string;
  volumeBindingMode?: 'Immediate' | 'WaitForFirstConsumer';
  /** The provisioner's parameters (the disk CSI driver reads `skuName` and `location`). */
  parameters?: Record<string, string>;
  allowedTopologies?: Array<{ matchLabelExpressions: Array<{ key: string; values: string[] }> }>;
}

export interface Pod {
  metadata: ObjectMeta & { namespace: string };
  spec: {
    nodeName?: string;
    nodeSelector: Record<string, string>;
    affinity?: Affinity;
    topologySpreadConstraints?: TopologySpreadConstraint[];
    volumes?: Volume[];
    tolerations: Toleration[];
    containers: Container[];
    initContainers: Container[];
    overhead?: ResourceList;
    priority?: number;
  };
  status: {
    phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
    conditions: Condition[];
  };
  /** Owner kinds matter for DaemonSet overhead and eviction. */
  ownerKind?: 'DaemonSet' | 'ReplicaSet' | 'Job' | 'StatefulSet';
  /** The first ownerReference (metrics: karpenter_pods_state{owner}). */
  owner?: { apiVersion: string; kind: string; name: string };
}

export interface DisruptionBudget {
  nodes: string;
  reasons?: Array<'Empty' | 'Drifted' | 'Underutilized'>;
  schedule?: string;
  duration?: string;
}

export interface NodePool {
  metadata: ObjectMeta;
  spec: {
    template: {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: {
        nodeClassRef: NodeClassRef;
        requirements: NodeSelectorRequirement[];
        taints: Taint[];
        startupTaints: Taint[];
        expireAfter?: string;
        terminationGracePeriod?: string;
      };
    };
    disruption: {
      consolidationPolicy: ConsolidationPolicy;
      consolidateAfter: string;
      budgets: DisruptionBudget[];
    };
    limits: ResourceList;
    weight?: number;
    /** Static capacity (karpenter.sh/v1 ≥ 1.7): a fixed node count instead of pod-driven provisioning. */
    replicas?: number;
  };
  status: { resources?: ResourceList; nodes?: number; conditions: Condition[] };
}

/** Every value upstream's NodePool CRD accepts; src/provisioning/nodepool-support.ts says which azflex honours. */
export type ConsolidationPolicy = 'WhenEmpty' | 'WhenEmptyOrUnderutilized' | 'Balanced';

export interface AzureFlexNodeClassSpec {
  subscriptionID: string;
  location: string;
  resourceGroup: string;
  subnetID: string;
  imageReference?: { publisher: string; offer: string; sku: string; version: string };
  imageID?: string;
  securityType: 'Standard' | 'TrustedLaunch' | 'ConfidentialVM';
  osDiskSizeGB: number;
  sshPublicKeys: string[];
  allocateNodePublicIP: boolean;
  maxPodsPerNode: number;
  /**
   * Spot VMs' billingProfile.maxPrice in USD/hour: ARM evicts a VM whose spot price rises above
   * it. Absent or -1: pay up to the on-demand price (evicted for capacity only). Applies to
   * VMs created after it is set; not part of the drift hash.
   */
  spotMaxPrice?: number;
  /**
   * ARM ids of On-demand Capacity Reservation Groups in the NodeClass's location: their free
   * reservations are offered as Karpenter's `reserved` capacity type, and a VM launched into
   * one names its group.
   */
  capacityReservationGroupIDs?: string[];
  tags: Record<string, string>;
}

export interface AzureFlexNodeClass {
  metadata: ObjectMeta;
  spec: AzureFlexNodeClassSpec;
  status: { conditions: Condition[] };
}

export interface KubeEvent {
  involvedObject: { kind: string; name: string; namespace?: string; uid?: string };
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** A merge patch on metadata: undefined keys are left alone, null removes. */
export interface MetadataPatch {
  labels?: Record<string, string | null>;
  annotations?: Record<string, string | null>;
  finalizers?: string[];
}

/** The kinds a ClusterPort serves from informer caches (list*, getNodeClaim, cachedNodeClaim). */
export type CachedKind =
  | 'nodeClaims' | 'nodes' | 'pods' | 'nodePools' | 'nodeClasses'
  | 'persistentVolumeClaims' | 'persistentVolumes' | 'storageClasses';

export interface ClusterPort {
  listNodeClaims(): Promise<NodeClaim[]>;
  getNodeClaim(name: string): Promise<NodeClaim | undefined>;
  createNodeClaim(nodeClaim: NodeClaim): Promise<NodeClaim>;
  patchNodeClaimMetadata(name: string, patch: MetadataPatch): Promise<NodeClaim>;
  updateNodeClaimStatus(name: string, status: NodeClaim['status']): Promise<NodeClaim>;
  /**
   * Applies `change` to the NodeClaim's status as the server holds it now (on a conflict, to the
   * fresh object again: never a stale whole status). No write when it changes nothing. 404 throws.
   */
  patchNodeClaimStatus(name: string, change: NodeClaimStatusChange): Promise<NodeClaim>;
  /** Sets deletionTimestamp while finalizers remain; 404 is success. */
  deleteNodeClaim(name: string): Promise<void>;
  /**
   * Ports that read from a cache: the resourceVersion through which the cache of `kind` has
   * applied the API server's events (its last event, bookmark or LIST). An object of that kind
   * created at or before it that the cache does not hold has been deleted; one created after
   * it may simply not be shown yet. Undefined while the cache cannot say (not synced, relisting).
   */
  seenThrough?(kind: CachedKind): string | undefined;
  /**
   * Ports that read from a cache: a token for what the cache of `kind` shows now. Equal tokens
   * at two moments mean list/get of that kind returned the same objects at both, so work
   * derived from them need not be redone; unequal tokens promise nothing (a bookmark moves it
   * too). Unlike seenThrough it also moves when one of our own writes is overlaid on the cache
   * (read-your-writes). Undefined when unknown: never equal to anything.
   */
  cacheVersion?(kind: CachedKind): string | undefined;
  /** Ports that read from a cache: the NodeClaim as the cache holds it now, without waiting (metrics labels). */
  cachedNodeClaim?(name: string): NodeClaim | undefined;

  listNodes(): Promise<Node[]>;
  patchNode(name: string, patch: { metadata?: MetadataPatch; unschedulable?: boolean; taints?: Taint[] }): Promise<Node>;
  deleteNode(name: string): Promise<void>;

  listPods(): Promise<Pod[]>;
  /** Eviction API: resolves false when a PodDisruptionBudget refuses (HTTP 429). */
  evictPod(namespace: string, name: string): Promise<boolean>;

  /** Volume topology (src/provisioning/volume-topology.ts): read-only, from informers. */
  listPersistentVolumeClaims(): Promise<PersistentVolumeClaim[]>;
  listPersistentVolumes(): Promise<PersistentVolume[]>;
  listStorageClasses(): Promise<StorageClass[]>;

  listNodePools(): Promise<NodePool[]>;
  updateNodePoolStatus(name: string, status: NodePool['status']): Promise<void>;
  listNodeClasses(): Promise<AzureFlexNodeClass[]>;
  patchNodeClassMetadata(name: string, patch: MetadataPatch): Promise<AzureFlexNodeClass>;
  updateNodeClassStatus(name: string, status: AzureFlexNodeClass['status']): Promise<void>;

  recordEvent(event: KubeEvent): Promise<void>;
}

export class ClusterError extends Error {
  override readonly name = 'ClusterError';
  constructor(
    readonly reason: 'NotFound' | 'Conflict' | 'AlreadyExists' | 'Forbidden' | 'Invalid' | 'TooManyRequests' | 'ServerError',
    message: string,
  ) {
    super(`${reason}: ${message}`);
  }
}
