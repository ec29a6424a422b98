import { CoreV1Api, ListWatch, Watch, createConfiguration, Observable, ServerConfiguration, type KubernetesListObject, type KubernetesObject, type RequestContext, type ResponseContext } from '@kubernetes/client-node';
import { describe, expect, inject, it } from 'vitest';
import { KubeClient } from '../../src/k8s/client.js';
import { kindApi, RESOURCES } from '../../src/k8s/resources.js';
import { adminKubeConfig, adminRequest, eventually } from './harness.js';
import { forceDelete, makeAdapter } from './fixtures.js';

/**
 * Measured defects of @kubernetes/client-node 2.0.1 that src/k8s works around, each shown
 * against the real API server, next to the workaround's behaviour.
 */
const info = inject('k8s');
const NC = '/apis/karpenter.sh/v1/nodeclaims';

const nodeClaim = (name: string) => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodeClaim',
  metadata: { name },
  spec: { nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'cls' }, requirements: [] },
});

class CountingWatch extends Watch {
  opened = 0;
  override async watch(...args: Parameters<Watch['watch']>): Promise<AbortController> {
    this.opened++;
    return super.watch(...args);
  }
}

describe('client-node ListWatch, stopped while its initial list is in flight', () => {
  it('still opens the watch after the list and keeps updating its cache (defect)', async () => {
    const kc = adminKubeConfig(info);
    const client = new KubeClient(kc);
    const api = kindApi(client, RESOURCES.nodeClaims);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let listed = false;
    const watch = new CountingWatch(kc);
    const lw = new ListWatch<KubernetesObject>(NC, watch, async (): Promise<KubernetesListObject<KubernetesObject>> => {
      listed = true;
      await gate;
      return api.listPage(undefined);
    }, false);
    const started = lw.start();
    await eventually('list in flight', async () => listed);
    await lw.stop();
    release();
    await started;
    // Stopped, yet a watch was opened after the list came back...
    expect(watch.opened).toBe(1);
    await adminRequest(info, 'POST', NC, nodeClaim('defect-stopped-lw'));
    // ...and it keeps delivering events into the stopped ListWatch's cache.
    await eventually('stopped ListWatch still receives events', async () => lw.get('defect-stopped-lw') !== undefined);
    (lw as unknown as { _stop(): void })._stop();
    await forceDelete(info, `${NC}/defect-stopped-lw`);
  });

  it('ResourceCache (src/k8s/cache.ts) opens no watch once stopped', async () => {
    const a = makeAdapter(adminKubeConfig(info), 'defect-cache');
    const inf = a.cluster.informers.nodeClaims;
    let listing: () => void = () => undefined;
    const listed = new Promise<void>((r) => (listing = r));
    a.client.use({ before: (req) => void (req.path === NC && !req.watch && listing()) });
    inf.start();
    await listed;
    await inf.stop();
    await new Promise((r) => setTimeout(r, 500));
    expect(a.records.filter((r) => r.watch)).toEqual([]);
    await adminRequest(info, 'POST', NC, nodeClaim('defect-stopped-cache'));
    await new Promise((r) => setTimeout(r, 500));
    expect(inf.get('defect-stopped-cache')).toBeUndefined();
    await forceDelete(info, `${NC}/defect-stopped-cache`);
  });
});

describe('client-node KubeConfig, one request after another', () => {
  /** Each request's dispatcher (undici Agent), as the request context carries it to fetch. */
  const dispatchersOf = async (api: CoreV1Api, n: number): Promise<Set<unknown>> => {
    const seen = new Set<unknown>();
    const capture = {
      pre: (ctx: RequestContext) => (seen.add(ctx.getDispatcher()), new Observable(Promise.resolve(ctx))),
      post: (rsp: ResponseContext) => new Observable(Promise.resolve(rsp)),
    };
    for (let i = 0; i < n; i++) await api.readNamespace({ name: 'default' }, { middleware: [capture], middlewareMergeStrategy: 'append' });
    return seen;
  };

  it('gives every request a new undici Agent, so a new TLS connection (defect)', async () => {
    const kc = adminKubeConfig(info);
    const api = new CoreV1Api(createConfiguration({ baseServer: new ServerConfiguration(kc.getCurrentCluster()!.server, {}), authMethods: { default: kc } }));
    expect((await dispatchersOf(api, 5)).size).toBe(5);
  });

  it('KubeClient (src/k8s/client.ts) sends them all through one', async () => {
    const client = new KubeClient(adminKubeConfig(info));
    const seen = await dispatchersOf(client.core, 5);
    expect(seen.size).toBe(1);
    expect([...seen][0]).toBeDefined();
  });
});
