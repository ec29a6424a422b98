/** Keys azflex writes on Kubernetes objects (the durable half of its memory). */
export const ANNOTATION = {
  /** RFC 3339 time of the last VM PUT that referenced the NIC: ARM's reservation ends 180 s later. */
  vmAttemptAt: 'flex.aks.azure.com/vm-attempt-at',
  /** RFC 3339 end of ARM's reservation of a failed launch's NIC (informational: vmAttemptAt is authoritative). */
  nicReservedUntil: 'flex.aks.azure.com/nic-reserved-until',
  nodeClassHash: 'flex.aks.azure.com/nodeclass-hash',
  nodePoolHash: 'karpenter.sh/nodepool-hash',
} as const;

export const LABEL = {
  nodePool: 'karpenter.sh/nodepool',
  nodeClass: 'flex.aks.azure.com/nodeclass',
  instanceType: 'node.kubernetes.io/instance-type',
  region: 'topology.kubernetes.io/region',
  capacityType: 'karpenter.sh/capacity-type',
} as const;

export const TERMINATION_FINALIZER = 'karpenter.sh/termination';
export const NODECLASS_GROUP = 'flex.aks.azure.com';
export const NODECLASS_KIND = 'AzureFlexNodeClass';
