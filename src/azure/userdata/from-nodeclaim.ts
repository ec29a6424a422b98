import type { InstanceType } from '../../catalog/skus.js';
import type { AzureFlexNodeClass, NodeClaim } from '../../ports/cluster.js';
import type { BootstrapSource } from './bootstrap.js';
import { UserDataError, renderCustomData, type UserDataInput } from './cloud-init.js';
import { LABEL_NODEPOOL } from '../../apis/well-known.js';

/**
 * The bridge from Karpenter objects to cloud-init: a NodeClaim carries its NodePool's
 * template labels and taints (Karpenter copies them at creation), the NodeClass the region
 * and max pods, the instance type whether the NVIDIA runtime is needed.
 */
export interface NodeUserDataRequest {
  nodeClaim: NodeClaim;
  nodeClass: AzureFlexNodeClass;
  instanceType: InstanceType;
}

export function userDataInputFor(req: NodeUserDataRequest, bootstrap: UserDataInput['bootstrap']): UserDataInput {
  const { nodeClaim, nodeClass, instanceType } = req;
  const nodePool = nodeClaim.metadata.labels[LABEL_NODEPOOL];
  if (!nodePool) throw new UserDataError(`NodeClaim ${nodeClaim.metadata.name} has no ${LABEL_NODEPOOL} label`);
  return {
    bootstrap,
    region: nodeClass.spec.location,
    instanceType: instanceType.name,
    nodePool,
    nodeClass: nodeClass.metadata.name,
    capacityType: 'on-demand',
    labels: { ...nodeClaim.metadata.labels },
    taints: nodeClaim.spec.taints,
    startupTaints: nodeClaim.spec.startupTaints,
    maxPods: nodeClass.spec.maxPodsPerNode,
    nvidiaRuntime: instanceType.gpuCount > 0 && instanceType.gpuModel !== undefined && !/^MI/i.test(instanceType.gpuModel),
    arch: instanceType.arch,
  };
}

/**
 * RuntimeDeps.userData for production: bootstrap config from the (cached) source, then
 * gzip+base64 cloud-init. Reads the cluster once per process through CachedBootstrapSource.
 */
export function createUserDataRenderer(source: BootstrapSource): (req: NodeUserDataRequest) => Promise<string> {
  return async (req) => renderCustomData(userDataInputFor(req, await source.get()));
}
