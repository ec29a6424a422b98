import type { InstanceType } from '../../catalog/skus.js';
import type { AzureFlexNodeClass, NodeClaim } from '../../ports/cluster.js';
import type { UserDataInput } from './cloud-init.js';
import type { NodeAgentPin } from './node-agent.js';
import { CAPACITY_TYPE_ON_DEMAND, LABEL_CAPACITY_TYPE, LABEL_NODEPOOL } from '../../apis/well-known.js';
import { isCapacityType, type CapacityType } from '../../catalog/offerings.js';

/**
 * The bridge from Karpenter objects to cloud-init: a NodeClaim carries its NodePool's
 * template labels and taints (Karpenter copies them at creation) and the labels its launch
 * adds, its single-valued `In` requirements are node labels too; the NodeClass gives the
 * region and max pods, the instance type whether the NVIDIA runtime is needed (not on AMD
 * Instinct sizes) and how many pods its network allows.
 */
export interface NodeUserDataRequest {
  nodeClaim: NodeClaim;
  nodeClass: AzureFlexNodeClass;
  instanceType: InstanceType;
}

export function userDataInputFor(req: NodeUserDataRequest, bootstrap: UserDataInput['bootstrap'], agent: NodeAgentPin): UserDataInput {
  const { nodeClaim, nodeClass, instanceType } = req;
  const labels: Record<string, string> = { ...nodeClaim.metadata.labels };
  for (const r of nodeClaim.spec.requirements) if (r.operator === 'In' && r.values?.length === 1) labels[r.key] = r.values[0]!;
  return {
    bootstrap,
    region: nodeClass.spec.location,
    instanceType: instanceType.name,
    nodePool: nodeClaim.metadata.labels[LABEL_NODEPOOL] ?? '',
    nodeClass: nodeClass.metadata.name,
    capacityType: capacityTypeOf(nodeClaim),
    labels,
    taints: nodeClaim.spec.taints,
    startupTaints: nodeClaim.spec.startupTaints,
    maxPods: Math.min(nodeClass.spec.maxPodsPerNode, instanceType.maxPods),
    nvidiaRuntime: instanceType.gpuCount > 0 && !/^MI/i.test(instanceType.gpuModel ?? ''),
    arch: instanceType.arch,
    agent,
  };
}

/** The capacity type the launch chose (its label, written before the VM PUT); on-demand when none is recorded. */
function capacityTypeOf(nodeClaim: NodeClaim): CapacityType {
  const labelled = nodeClaim.metadata.labels[LABEL_CAPACITY_TYPE];
  return labelled !== undefined && isCapacityType(labelled) ? labelled : CAPACITY_TYPE_ON_DEMAND;
}
