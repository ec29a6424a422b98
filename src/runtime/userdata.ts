import { renderCustomData, type BootstrapSource, type UserDataInput } from '../azure/userdata/index.js';
import type { UserDataRequest } from './deps.js';
import { LABEL_NODEPOOL } from '../apis/well-known.js';

const MAX_CACHED = 64;

/**
 * Turns a NodeClaim + NodeClass + SKU into the VM's custom data. Every NodeClaim of one
 * NodePool and SKU renders the same bytes, so renders are memoised by their input.
 */
export function createUserDataRenderer(bootstrap: BootstrapSource): (req: UserDataRequest) => Promise<string> {
  const cache = new Map<string, string>();
  return async ({ nodeClaim, nodeClass, instanceType }) => {
    const labels: Record<string, string> = { ...nodeClaim.metadata.labels };
    for (const r of nodeClaim.spec.requirements) if (r.operator === 'In' && r.values?.length === 1) labels[r.key] = r.values[0]!;
    const input: UserDataInput = {
      bootstrap: await bootstrap.get(),
      region: nodeClass.spec.location,
      instanceType: instanceType.name,
      nodePool: nodeClaim.metadata.labels[LABEL_NODEPOOL] ?? '',
      nodeClass: nodeClass.metadata.name,
      capacityType: 'on-demand',
      labels,
      taints: nodeClaim.spec.taints,
      startupTaints: nodeClaim.spec.startupTaints,
      maxPods: Math.min(nodeClass.spec.maxPodsPerNode, instanceType.maxPods),
      nvidiaRuntime: instanceType.gpuCount > 0,
      arch: instanceType.arch,
    };
    const key = JSON.stringify([input.region, input.instanceType, input.nodePool, input.nodeClass, labels, input.taints, input.startupTaints, input.maxPods, input.bootstrap.apiServerEndpoint]);
    let out = cache.get(key);
    if (out === undefined) {
      out = renderCustomData(input);
      if (cache.size >= MAX_CACHED) cache.clear();
      cache.set(key, out);
    }
    return out;
  };
}
