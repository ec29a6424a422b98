import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { KubeApiError } from '../../src/k8s/client.js';
import { adminKubeConfig, adminRequest, compactEtcd, eventually } from './harness.js';
import { ensureNamespace, forceDelete, makeAdapter, nodeClaimObject, type Adapter } from './fixtures.js';

const info = inject('k8s');
const NC = '/apis/karpenter.sh/v1/nodeclaims';
const ns = 'adapter-test';

describe('KubeCluster adapter (admin credentials)', () => {
  let a: Adapter;

  beforeAll(async () => {
    await ensureNamespace(info, ns);
    a = makeAdapter(adminKubeConfig(info), 'adapter-test');
    a.cluster.start();
    await a.cluster.waitForSync();
  });

  afterAll(async () => {
    await a.cluster.stop();
  });

  it('serves list calls from the informer cache, without requests', async () => {
    const before = a.records.filter((r) => !r.watch).length;
    await a.cluster.listNodeClaims();
    await a.cluster.listNodes();
    await a.cluster.listPods();
    await a.cluster.listNodePools();
    await a.cluster.listNodeClasses();
    expect(a.records.filter((r) => !r.watch).length).toBe(before);
  });

  it('creates a NodeClaim, reads its own write at once, and sees foreign writes through the watch', async () => {
    const created = await a.cluster.createNodeClaim(nodeClaimObject('ad-create', 'cls'));
    expect(created.metadata.uid).not.toBe('');
    expect((await a.cluster.getNodeClaim('ad-create'))?.metadata.uid).toBe(created.metadata.uid);
    await adminRequest(info, 'POST', NC, {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: 'ad-foreign' },
      spec: { nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'cls' }, requirements: [] },
    });
    const foreign = await eventually('watch delivers ad-foreign', async () => a.cluster.getNodeClaim('ad-foreign'));
    expect(foreign.spec.requirements).toEqual([]);
    expect(foreign.metadata.labels).toEqual({});
    await forceDelete(info, `${NC}/ad-create`);
    await forceDelete(info, `${NC}/ad-foreign`);
  });

  it('moves a kind\'s cacheVersion on its own overlaid write and on a foreign write through the watch; seenThrough follows the watch', async () => {
    const before = a.cluster.cacheVersion('nodeClaims');
    expect(before).toBeDefined();
    expect(a.cluster.cacheVersion('nodeClaims')).toBe(before);
    const created = await a.cluster.createNodeClaim(nodeClaimObject('ad-version', 'cls'));
    // Read-your-writes: the view changed at once, before the watch delivers the event.
    expect(a.cluster.cacheVersion('nodeClaims')).not.toBe(before);
    await eventually('the watch gets past the create', async () => (BigInt(a.cluster.seenThrough('nodeClaims') ?? '0') >= BigInt(created.metadata.resourceVersion!)) || undefined);
    const settled = a.cluster.cacheVersion('nodeClaims');
    await adminRequest(info, 'PATCH', `${NC}/ad-version`, { metadata: { labels: { foreign: 'yes' } } });
    await eventually('watch delivers the foreign label', async () => (await a.cluster.getNodeClaim('ad-version'))?.metadata.labels.foreign);
    expect(a.cluster.cacheVersion('nodeClaims')).not.toBe(settled);
    await forceDelete(info, `${NC}/ad-version`);
  });

  it('re-applies a finalizer change on conflict instead of clobbering another controller', async () => {
    await a.cluster.createNodeClaim(nodeClaimObject('ad-fin', 'cls', { finalizers: ['example.com/first'] }));
    const cached = await a.cluster.getNodeClaim('ad-fin');
    if (!cached) throw new Error('not cached');
    // Another controller adds its finalizer; make sure our cache cannot have seen it.
    await a.cluster.informers.nodeClaims.stop();
    await adminRequest(info, 'PATCH', `${NC}/ad-fin`, { metadata: { finalizers: ['example.com/first', 'other.io/keep'] } });
    const conflictsBefore = a.records.filter((r) => r.status === 409).length;
    const patched = await a.cluster.patchNodeClaimMetadata('ad-fin', {
      finalizers: [...cached.metadata.finalizers, 'karpenter.sh/termination'],
      labels: { stage: 'launched' },
    });
    expect(a.records.filter((r) => r.status === 409).length).toBe(conflictsBefore + 1);
    expect(patched.metadata.finalizers.sort()).toEqual(['example.com/first', 'karpenter.sh/termination', 'other.io/keep']);
    expect(patched.metadata.labels.stage).toBe('launched');
    // Removal computed from a stale view also keeps the foreign finalizer.
    await adminRequest(info, 'PATCH', `${NC}/ad-fin`, { metadata: { finalizers: ['example.com/first', 'other.io/keep', 'karpenter.sh/termination', 'late.io/x'] } });
    const removed = await a.cluster.patchNodeClaimMetadata('ad-fin', { finalizers: ['other.io/keep', 'karpenter.sh/termination'] });
    expect(removed.metadata.finalizers.sort()).toEqual(['karpenter.sh/termination', 'late.io/x', 'other.io/keep']);
    a.cluster.informers.nodeClaims.start();
    await forceDelete(info, `${NC}/ad-fin`);
  });

  it('updates status through the subresource, nulls omitted fields, and retries a conflict', async () => {
    await a.cluster.createNodeClaim(nodeClaimObject('ad-status', 'cls'));
    const first = await a.cluster.updateNodeClaimStatus('ad-status', { providerID: 'azure-flex:///x', conditions: [] });
    expect(first.status.providerID).toBe('azure-flex:///x');
    await a.cluster.informers.nodeClaims.stop();
    await adminRequest(info, 'PATCH', `${NC}/ad-status/status`, { status: { imageID: 'img' } });
    const cond = { type: 'Launched', status: 'True' as const, reason: 'Launched', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' };
    const second = await a.cluster.updateNodeClaimStatus('ad-status', { conditions: [cond] });
    expect(second.status.conditions).toEqual([cond]);
    expect(second.status.providerID).toBeUndefined();
    expect(second.status.imageID).toBeUndefined();
    a.cluster.informers.nodeClaims.start();
    await forceDelete(info, `${NC}/ad-status`);
  });

  it('refuses to write a stale status onto a recreated object of the same name', async () => {
    await a.cluster.createNodeClaim(nodeClaimObject('ad-recreate', 'cls'));
    await eventually('cached', async () => a.cluster.getNodeClaim('ad-recreate'));
    await a.cluster.informers.nodeClaims.stop();
    await adminRequest(info, 'DELETE', `${NC}/ad-recreate`);
    await adminRequest(info, 'POST', NC, {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: 'ad-recreate' },
      spec: { nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'cls' }, requirements: [] },
    });
    await expect(a.cluster.updateNodeClaimStatus('ad-recreate', { conditions: [] })).rejects.toMatchObject({ reason: 'NotFound' });
    a.cluster.informers.nodeClaims.start();
    await forceDelete(info, `${NC}/ad-recreate`);
  });

  it('deletes with finalizers pending (deletionTimestamp), then the object goes away; 404 is success', async () => {
    await a.cluster.createNodeClaim(nodeClaimObject('ad-del', 'cls', { finalizers: ['karpenter.sh/termination'] }));
    await a.cluster.deleteNodeClaim('ad-del');
    const terminating = await a.cluster.getNodeClaim('ad-del');
    expect(terminating?.metadata.deletionTimestamp).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    await a.cluster.patchNodeClaimMetadata('ad-del', { finalizers: [] });
    await eventually('ad-del removed from the cache', async () => (await a.cluster.getNodeClaim('ad-del')) === undefined);
    await expect(a.cluster.deleteNodeClaim('ad-del')).resolves.toBeUndefined();
  });

  it('patches node taints as a delta on conflict and cordons', async () => {
    await adminRequest(info, 'POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'ad-node' },
      spec: { taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] },
    });
    const node = await eventually('node cached', async () => (await a.cluster.listNodes()).find((n) => n.metadata.name === 'ad-node'));
    await a.cluster.informers.nodes.stop();
    await adminRequest(info, 'PATCH', '/api/v1/nodes/ad-node', {
      spec: { taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] },
    });
    const patched = await a.cluster.patchNode('ad-node', {
      unschedulable: true,
      taints: [...node.spec.taints.filter((t) => t.key !== 'karpenter.sh/unregistered'), { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }],
    });
    expect(patched.spec.unschedulable).toBe(true);
    expect(patched.spec.taints.map((t) => t.key).sort()).toEqual(['karpenter.sh/disrupted', 'node.kubernetes.io/not-ready']);
    a.cluster.informers.nodes.start();
    await a.cluster.deleteNode('ad-node');
    await eventually('node gone', async () => !(await a.cluster.listNodes()).some((n) => n.metadata.name === 'ad-node'));
  });

  it('records events.k8s.io Events for cluster-scoped and namespaced objects', async () => {
    await a.cluster.recordEvent({ involvedObject: { kind: 'NodeClaim', name: 'ad-evt', uid: 'u-1' }, type: 'Warning', reason: 'LaunchFailed', message: 'quota' });
    await a.cluster.recordEvent({ involvedObject: { kind: 'Pod', name: 'p', namespace: ns }, type: 'Normal', reason: 'Evicted', message: 'drain' });
    expect(a.errors.map(String)).toEqual([]);
    const inDefault = (await adminRequest(info, 'GET', '/apis/events.k8s.io/v1/namespaces/default/events')) as {
      items: Array<{ regarding: { name: string; kind: string; apiVersion?: string }; reason: string; note: string; type: string; reportingController: string }>;
    };
    const e = inDefault.items.find((x) => x.regarding.name === 'ad-evt');
    expect(e).toMatchObject({ reason: 'LaunchFailed', note: 'quota', type: 'Warning', reportingController: 'flex.aks.azure.com/azflex' });
    expect(e?.regarding.apiVersion).toBe('karpenter.sh/v1');
    const inNs = (await adminRequest(info, 'GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`)) as { items: Array<{ reason: string }> };
    expect(inNs.items.map((x) => x.reason)).toContain('Evicted');
    expect(a.errors).toEqual([]);
  });

  it('evicts through the Eviction API: false on a PDB refusal (429), true otherwise', async () => {
    const pod = (name: string, app: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: ns, labels: { app } },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    for (const [name, app] of [['guarded', 'guarded'], ['free', 'free']] as const) {
      await adminRequest(info, 'POST', `/api/v1/namespaces/${ns}/pods`, pod(name, app));
      // A Pending pod may always be evicted; make it Running so the PDB applies.
      await adminRequest(info, 'PATCH', `/api/v1/namespaces/${ns}/pods/${name}/status`, { status: { phase: 'Running' } });
    }
    await adminRequest(info, 'POST', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'guard', namespace: ns },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } },
    });
    await eventually('pods cached', async () => (await a.cluster.listPods()).filter((p) => p.metadata.namespace === ns).length === 2);
    expect(await a.cluster.evictPod(ns, 'guarded')).toBe(false);
    expect(a.records.some((r) => r.status === 429 && r.path.endsWith('/guarded/eviction'))).toBe(true);
    expect(await a.cluster.evictPod(ns, 'free')).toBe(true);
    await eventually('evicted pod gone', async () => !(await a.cluster.listPods()).some((p) => p.metadata.name === 'free'));
    expect(await a.cluster.evictPod(ns, 'never-existed')).toBe(true);
  });

  it('maps API errors to ClusterError reasons', async () => {
    await expect(a.cluster.patchNodeClassMetadata('does-not-exist', { finalizers: ['x'] })).rejects.toMatchObject({ reason: 'NotFound' });
    const c = a.client;
    const body = { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', metadata: { name: 'Bad_Name' }, spec: {} };
    const err = await c
      .call('create', (o) => c.custom.createClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims', body }, o))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).reason).toBe('Invalid');
    expect((err as KubeApiError).code).toBe(422);
  });
});

describe('client-node ListWatch caches: resume and 410 relist', () => {
  it('resumes a stopped watch from its resourceVersion without relisting', async () => {
    const a = makeAdapter(adminKubeConfig(info), 'resume');
    const inf = a.cluster.informers.nodeClaims;
    inf.start();
    await inf.waitForSync();
    await inf.stop();
    await adminRequest(info, 'POST', NC, {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: 'inf-resume' },
      spec: { nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'cls' }, requirements: [] },
    });
    inf.start();
    await eventually('resumed watch delivers inf-resume', async () => inf.get('inf-resume'));
    expect(inf.stats.lists).toBe(1);
    expect(inf.stats.relists).toBe(0);
    await inf.stop();
    await forceDelete(info, `${NC}/inf-resume`);
  });

  it('renews server-closed watches (timeoutSeconds) from the last resourceVersion, never relisting', async () => {
    const a = makeAdapter(adminKubeConfig(info), 'renew', { watchTimeoutSeconds: 1 });
    const inf = a.cluster.informers.nodeClaims;
    inf.start();
    await inf.waitForSync();
    await new Promise((r) => setTimeout(r, 2500));
    await adminRequest(info, 'POST', NC, {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: 'inf-renew' },
      spec: { nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'cls' }, requirements: [] },
    });
    await eventually('delivered over a renewed watch', async () => inf.get('inf-renew'));
    expect(inf.stats.watches).toBeGreaterThanOrEqual(3);
    expect(inf.stats.lists).toBe(1);
    await inf.stop();
    await forceDelete(info, `${NC}/inf-renew`);
  });

  it('relists after 410 Gone (etcd compacted) and emits the deletions it missed', async () => {
    const mk = (name: string) =>
      adminRequest(info, 'POST', NC, {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodeClaim',
        metadata: { name },
        spec: { nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'cls' }, requirements: [] },
      });
    await mk('inf-gone-old');
    const a = makeAdapter(adminKubeConfig(info), 'relist');
    const inf = a.cluster.informers.nodeClaims;
    const deleted: string[] = [];
    inf.onEvent((type, obj) => {
      if (type === 'delete') deleted.push(obj.metadata.name);
    });
    inf.start();
    await inf.waitForSync();
    expect(inf.get('inf-gone-old')).toBeDefined();
    await inf.stop();
    await adminRequest(info, 'DELETE', `${NC}/inf-gone-old`);
    await mk('inf-gone-new');
    await compactEtcd(info);
    inf.start();
    await eventually('relisted', async () => inf.stats.relists >= 1 && inf.get('inf-gone-new') !== undefined);
    expect(inf.get('inf-gone-old')).toBeUndefined();
    expect(deleted).toContain('inf-gone-old');
    expect(a.errors).toEqual([]);
    await inf.stop();
    await forceDelete(info, `${NC}/inf-gone-new`);
  });
});
