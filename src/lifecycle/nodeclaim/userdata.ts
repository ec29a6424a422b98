import { renderCustomData, userDataInputFor, type BootstrapSource } from '../../azure/userdata/index.js';
import type { UserDataRequest } from '../deps.js';

const MAX_CACHED = 64;

/**
 * RuntimeDeps.userData: bootstrap config from the (cached) source, then gzip+base64
 * cloud-init. Every NodeClaim of one NodePool, SKU and zone renders the same bytes, so renders
 * are memoised by their input.
 */
export function createUserDataRenderer(bootstrap: BootstrapSource): (req: UserDataRequest) => Promise<string> {
  const cache = new Map<string, string>();
  return async (req) => {
    const input = userDataInputFor(req, await bootstrap.get());
    const key = JSON.stringify([input.region, input.instanceType, input.nodePool, input.nodeClass, input.labels, input.taints, input.startupTaints, input.maxPods, input.nvidiaRuntime, input.bootstrap.apiServerEndpoint]);
    let out = cache.get(key);
    if (out === undefined) {
      out = renderCustomData(input);
      if (cache.size >= MAX_CACHED) cache.clear();
      cache.set(key, out);
    }
    return out;
  };
}
