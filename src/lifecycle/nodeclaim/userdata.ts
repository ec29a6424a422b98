import { renderCustomData, userDataInputFor, type BootstrapSource, type NodeAgentPin } from '../../azure/userdata/index.js';
import type { UserDataRequest } from '../deps.js';

const MAX_CACHED = 64;

/**
 * RuntimeDeps.userData: bootstrap config from the (cached, refreshed) source, then gzip+base64
 * cloud-init with the pinned node agent. Every NodeClaim of one NodePool, SKU and zone renders
 * the same bytes while the token is the same, so renders are memoised by their input, token
 * included (a rotated token must reach the next VM).
 */
export function createUserDataRenderer(bootstrap: BootstrapSource, agent: NodeAgentPin): (req: UserDataRequest) => Promise<string> {
  const cache = new Map<string, string>();
  return async (req) => {
    const input = userDataInputFor(req, await bootstrap.get(), agent);
    const b = input.bootstrap;
    const key = JSON.stringify([input.region, input.instanceType, input.nodePool, input.nodeClass, input.labels, input.taints, input.startupTaints, input.maxPods, input.nvidiaRuntime, input.arch, b.apiServerEndpoint, b.caCertData, b.kubernetesVersion, b.token]);
    let out = cache.get(key);
    if (out === undefined) {
      out = renderCustomData(input);
      if (cache.size >= MAX_CACHED) cache.clear();
      cache.set(key, out);
    }
    return out;
  };
}
