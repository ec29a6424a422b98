/**
 * The one constants module: every label, annotation, taint, finalizer and API group azflex
 * reads or writes on Kubernetes objects (Karpenter keeps these in pkg/apis/v1/labels.go;
 * the karpenter.azure.com/sku-* labels follow the Azure provider's names so NodePools
 * written for it select the same sizes here).
 */
import type { Taint } from '../ports/cluster.js';

// --- API groups and kinds ---
export const NODECLASS_GROUP = 'flex.aks.azure.com';
export const NODECLASS_KIND = 'AzureFlexNodeClass';

// --- Kubernetes well-known labels ---
export const LABEL_INSTANCE_TYPE = 'node.kubernetes.io/instance-type';
export const LABEL_REGION = 'topology.kubernetes.io/region';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';
/** The Azure disk CSI driver's zone key (PV node affinity, node label); same values as LABEL_ZONE. */
export const LABEL_DISK_CSI_ZONE = 'topology.disk.csi.azure.com/zone';
/** Storage: the DefaultStorageClass admission plugin's marker. */
export const ANNOTATION_DEFAULT_STORAGE_CLASS = 'storageclass.kubernetes.io/is-default-class';
export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const LABEL_ARCH = 'kubernetes.io/arch';
export const LABEL_OS = 'kubernetes.io/os';
export const LABEL_WINDOWS_BUILD = 'node.kubernetes.io/windows-build';

// --- Karpenter (karpenter.sh) ---
export const LABEL_NODEPOOL = 'karpenter.sh/nodepool';
export const LABEL_CAPACITY_TYPE = 'karpenter.sh/capacity-type';
export const LABEL_REGISTERED = 'karpenter.sh/registered';
export const LABEL_INITIALIZED = 'karpenter.sh/initialized';
/** karpenter.sh/capacity-type values (the offerings' model is src/catalog/offerings.ts). */
export const CAPACITY_TYPE_ON_DEMAND = 'on-demand';
export const CAPACITY_TYPE_SPOT = 'spot';
export const CAPACITY_TYPE_RESERVED = 'reserved';
export const ANNOTATION_DO_NOT_DISRUPT = 'karpenter.sh/do-not-disrupt';
export const ANNOTATION_NODEPOOL_HASH = 'karpenter.sh/nodepool-hash';
export const ANNOTATION_NODEPOOL_HASH_VERSION = 'karpenter.sh/nodepool-hash-version';
export const FINALIZER_TERMINATION = 'karpenter.sh/termination';
export const UNREGISTERED_TAINT_KEY = 'karpenter.sh/unregistered';
export const TAINT_DISRUPTED: Taint = { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' };

// --- Azure provider's instance-type labels (karpenter.azure.com) ---
export const LABEL_SKU_NAME = 'karpenter.azure.com/sku-name';
export const LABEL_SKU_FAMILY = 'karpenter.azure.com/sku-family';
export const LABEL_SKU_CPU = 'karpenter.azure.com/sku-cpu';
export const LABEL_SKU_MEMORY = 'karpenter.azure.com/sku-memory';
export const LABEL_GPU_COUNT = 'karpenter.azure.com/sku-gpu-count';
export const LABEL_GPU_NAME = 'karpenter.azure.com/sku-gpu-name';
export const LABEL_GPU_MANUFACTURER = 'karpenter.azure.com/sku-gpu-manufacturer';
export const LABEL_SKU_SERIES = 'karpenter.azure.com/sku-series';
export const LABEL_SKU_VERSION = 'karpenter.azure.com/sku-version';
export const LABEL_SKU_ACCELERATED_NETWORKING = 'karpenter.azure.com/sku-networking-accelerated';
export const LABEL_SKU_STORAGE_PREMIUM_CAPABLE = 'karpenter.azure.com/sku-storage-premium-capable';
export const LABEL_SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE = 'karpenter.azure.com/sku-storage-ephemeralos-maxsize';
/** Whether the VM was pinned to an availability zone (`zonal`) or created without one (`regional`). */
/**
 * The capacity reservation a reserved NodeClaim (and its Node) holds a slot of. Upstream core
 * leaves the name to the provider (cloudprovider.ReservationIDLabel); the AWS provider's is
 * karpenter.k8s.aws/capacity-reservation-id.
 */
export const LABEL_CAPACITY_RESERVATION_ID = 'karpenter.azure.com/capacity-reservation-id';
export const LABEL_PLACEMENT_SCOPE = 'karpenter.azure.com/placement-scope';
export const PLACEMENT_SCOPE_ZONAL = 'zonal';
export const PLACEMENT_SCOPE_REGIONAL = 'regional';
/**
 * The Azure provider reserves its own domain (karpenter.sh/v1 RestrictedLabelDomains): a NodePool
 * may use only its well-known keys there. It reserves these keys too, which AKS sets on its own
 * agent pools' nodes (kubernetes.azure.com itself is not reserved: users set e.g. ebpf-dataplane).
 */
export const AZURE_RESTRICTED_LABEL_DOMAIN = 'karpenter.azure.com';
export const AZURE_RESTRICTED_LABELS: ReadonlySet<string> = new Set([
  'karpenter.azure.com/sku-hyperv-generation',
  'agentpool', 'storageprofile', 'storagetier', 'accelerator',
  'kubernetes.azure.com/accelerator', 'kubernetes.azure.com/agentpool', 'kubernetes.azure.com/agentpool-family',
  'kubernetes.azure.com/availability-zone', 'kubernetes.azure.com/network-policy',
  'kubernetes.azure.com/storageprofile', 'kubernetes.azure.com/storagetier',
]);

// --- AKS's node labels (kubernetes.azure.com), as AKS and the Azure provider write them ---
/** The cluster's node resource group (MC_…), as a label value: AKS DaemonSets require it to exist. */
export const AKS_LABEL_CLUSTER = 'kubernetes.azure.com/cluster';
/** Always `agent` on AKS nodes; written by the kubelet only (not a scheduling key). */
export const AKS_LABEL_ROLE = 'kubernetes.azure.com/role';
export const AKS_ROLE_AGENT = 'agent';
export const AKS_LABEL_MODE = 'kubernetes.azure.com/mode';
export const AKS_MODE_USER = 'user';
export const AKS_MODE_SYSTEM = 'system';
/** `regular` or `spot` from the capacity type (AKS itself writes only `spot`; the Azure provider writes both). */
export const AKS_LABEL_SCALESET_PRIORITY = 'kubernetes.azure.com/scalesetpriority';
export const AKS_LABEL_PRIORITY = 'kubernetes.azure.com/priority';
export const AKS_PRIORITY_REGULAR = 'regular';
export const AKS_PRIORITY_SPOT = 'spot';
/** Same values as karpenter.azure.com/sku-cpu and sku-memory (MiB). */
export const AKS_LABEL_SKU_CPU = 'kubernetes.azure.com/sku-cpu';
export const AKS_LABEL_SKU_MEMORY = 'kubernetes.azure.com/sku-memory';

// --- azflex (flex.aks.azure.com): the durable half of its memory ---
export const LABEL_NODECLASS = 'flex.aks.azure.com/nodeclass';
/** RFC 3339 time of the last VM PUT that referenced the NIC: ARM's reservation ends 180 s later. */
export const ANNOTATION_VM_ATTEMPT_AT = 'flex.aks.azure.com/vm-attempt-at';
/** RFC 3339 end of ARM's reservation of a failed launch's NIC (informational: vm-attempt-at is authoritative). */
/** ARM id of the capacity reservation group a reserved NodeClaim's VM is created into (too long for a label). */
export const ANNOTATION_CAPACITY_RESERVATION_GROUP = 'flex.aks.azure.com/capacity-reservation-group';
export const ANNOTATION_NIC_RESERVED_UNTIL = 'flex.aks.azure.com/nic-reserved-until';
export const ANNOTATION_NODECLASS_HASH = 'flex.aks.azure.com/nodeclass-hash';
export const ANNOTATION_NODECLASS_HASH_VERSION = 'flex.aks.azure.com/nodeclass-hash-version';
/** On a NodeClaim being consolidated by replacement: the name of its replacement. */
export const ANNOTATION_CONSOLIDATION_REPLACEMENT = 'flex.aks.azure.com/consolidation-replacement';
/** On a NodeClass: offerings ARM refused, with their expiry (provisioning/offering-marks.ts). */
export const ANNOTATION_OFFERING_MARKS = 'flex.aks.azure.com/unavailable-offerings';
/** Our finalizer on AzureFlexNodeClasses: deletion waits for the termination controller. */
export const FINALIZER_NODECLASS = 'flex.aks.azure.com/termination';

/** Where a pod's ServiceAccount token, CA and namespace are mounted (in-cluster config). */
export const IN_CLUSTER_SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
