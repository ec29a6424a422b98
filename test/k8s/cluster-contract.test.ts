import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { ClusterError, type CachedKind, type ClusterPort, type NodeClaim, type Taint } from '../../src/ports/cluster.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { loadManifests } from '../../src/sim/manifests.js';
import { KubeApiError } from '../../src/k8s/client.js';
import { adminKubeConfig, adminRequest, eventually } from './harness.js';
import { ensureNamespace, forceDelete, makeAdapter, ManualClock, nodeClaimObject, nodeClassBody, type Adapter } from './fixtures.js';

/**
 * Engineering rule 4 for the one fake cluster: every scenario below runs against FakeCluster
 * (src/sim/cluster.ts) and against KubeCluster on the real kube-apiserver with upstream
 * Karpenter's CRDs, and asserts the same observable results. Where the two legitimately
 * differ (a real informer learns of foreign writes and deletions through its watch), the
 * difference lives in the hooks (`caughtUp` waits for the watch), never in the assertions.
 */

const info = inject('k8s');
const NS = 'cluster-contract';
const NC = '/apis/karpenter.sh/v1/nodeclaims';

type SettledKind = Extract<CachedKind, 'nodeClaims' | 'nodes' | 'pods'>;

interface Hooks {
  port: ClusterPort;
  /** A NodeClaim written by someone else (another controller, kubectl). */
  foreignNodeClaim(name: string): Promise<void>;
  foreignLabel(name: string, labels: Record<string, string>): Promise<void>;
  /** A Node registered by its kubelet. */
  putNode(name: string, taints: Taint[]): Promise<void>;
  /** A Running pod bound to `nodeName` (namespace NS). */
  putRunningPod(name: string, labels: Record<string, string>, nodeName: string): Promise<void>;
  putPdb(name: string, matchLabels: Record<string, string>, minAvailable: number): Promise<void>;
  /** A user applies a NodePool manifest: undefined when accepted, else the ClusterError reason. */
  applyNodePool(body: Record<string, unknown>): Promise<string | undefined>;
  /** Returns once the port's cache of `kind` shows every write made so far. */
  caughtUp(kind: SettledKind): Promise<void>;
}

function fakeHooks(): Hooks {
  const clock = new ManualClock();
  const fake = new FakeCluster(clock);
  const pdbs: Parameters<FakeCluster['setPodDisruptionBudgets']>[0][number][] = [];
  return {
    port: fake,
    async foreignNodeClaim(name) {
      const nc = nodeClaimObject(name, 'cls');
      fake.putNodeClaim({ ...nc, metadata: { ...nc.metadata, uid: fake.newUid(), creationTimestamp: new Date(clock.now()).toISOString() } });
    },
    async foreignLabel(name, labels) {
      const nc = fake.nodeClaims.get(name)!;
      fake.putNodeClaim({ ...nc, metadata: { ...nc.metadata, labels: { ...nc.metadata.labels, ...labels } } });
    },
    async putNode(name, taints) {
      fake.putNode({
        metadata: { name, uid: fake.newUid(), labels: {}, annotations: {}, finalizers: [], creationTimestamp: new Date(clock.now()).toISOString() },
        spec: { taints },
        status: { capacity: {}, allocatable: {}, conditions: [] },
      });
    },
    async putRunningPod(name, labels, nodeName) {
      fake.putPod({
        metadata: { name, namespace: NS, uid: fake.newUid(), labels, annotations: {}, finalizers: [], creationTimestamp: new Date(clock.now()).toISOString() },
        spec: { nodeName, nodeSelector: {}, tolerations: [], containers: [{ name: 'c', resources: { requests: {} } }], initContainers: [] },
        status: { phase: 'Running', conditions: [] },
        ownerKind: 'ReplicaSet',
      });
    },
    async putPdb(name, matchLabels, minAvailable) {
      pdbs.push({ name, namespace: NS, matchLabels, matchExpressions: [], minAvailable });
      fake.setPodDisruptionBudgets(pdbs);
    },
    async applyNodePool(body) {
      // The simulator's NodePools come from manifests, validated against the CRD (schema + CEL).
      const dir = mkdtempSync(join(tmpdir(), 'contract-'));
      try {
        const file = join(dir, 'pool.yaml');
        // The simulator also checks that the referenced NodeClass is among the manifests (the
        // API server does not): give it one, so only the NodePool's own validity decides.
        writeFileSync(file, `${stringify(nodeClassBody('cls'))}---\n${stringify(body)}`);
        for (const np of loadManifests([file]).nodePools) fake.putNodePool(np);
        return undefined;
      } catch (e) {
        if (e instanceof Error && e.name === 'ScenarioError') return 'Invalid';
        throw e;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    async caughtUp() {
      // No informer lag configured: reads show every write at once.
    },
  };
}

function realHooks(a: Adapter, prefix: string): Hooks {
  const k = a.cluster;
  const collections: Record<SettledKind, { path: string; list: () => Promise<Array<{ metadata: { name: string; resourceVersion?: string } }>> }> = {
    nodeClaims: { path: NC, list: () => k.listNodeClaims() },
    nodes: { path: '/api/v1/nodes', list: () => k.listNodes() },
    pods: { path: `/api/v1/namespaces/${NS}/pods`, list: () => k.listPods() },
  };
  const mine = (items: Array<{ metadata: { name: string; resourceVersion?: string } }>): string =>
    items.filter((o) => o.metadata.name.startsWith(prefix)).map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort().join(',');
  return {
    port: k,
    async foreignNodeClaim(name) {
      await adminRequest(info, 'POST', NC, {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodeClaim',
        metadata: { name, labels: { 'karpenter.sh/nodepool': 'np' } },
        spec: nodeClaimObject(name, 'cls').spec,
      });
    },
    async foreignLabel(name, labels) {
      await adminRequest(info, 'PATCH', `${NC}/${name}`, { metadata: { labels } });
    },
    async putNode(name, taints) {
      await adminRequest(info, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { taints } });
    },
    async putRunningPod(name, labels, nodeName) {
      await adminRequest(info, 'POST', `/api/v1/namespaces/${NS}/pods`, {
        apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, labels }, spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }] },
      });
      await adminRequest(info, 'PATCH', `/api/v1/namespaces/${NS}/pods/${name}/status`, { status: { phase: 'Running' } });
    },
    async putPdb(name, matchLabels, minAvailable) {
      await adminRequest(info, 'POST', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`, {
        apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name, namespace: NS }, spec: { minAvailable, selector: { matchLabels } },
      });
    },
    async applyNodePool(body) {
      const c = a.client;
      try {
        await c.call('apply nodepool', (o) => c.custom.createClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', body }, o));
        return undefined;
      } catch (e) {
        if (e instanceof KubeApiError || e instanceof ClusterError) return e.reason;
        throw e;
      }
    },
    async caughtUp(kind) {
      const { path, list } = collections[kind];
      const server = mine(((await adminRequest(info, 'GET', path)) as { items: Array<{ metadata: { name: string; resourceVersion: string } }> }).items);
      await eventually(`${kind} cache shows ${server || 'none of ours'}`, async () => mine(await list()) === server);
    },
  };
}

const names = (items: Array<{ metadata: { name: string } }>, prefix: string): string[] =>
  items.map((o) => o.metadata.name).filter((n) => n.startsWith(prefix)).sort();
const reason = (p: Promise<unknown>): Promise<unknown> => p.then(() => 'ok', (e: unknown) => (e instanceof ClusterError ? e.reason : e));
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function nodePoolBody(name: string, patch: (spec: Record<string, unknown>, template: Record<string, unknown>) => void = () => undefined): Record<string, unknown> {
  const templateSpec: Record<string, unknown> = {
    nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'cls' },
    requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_ND96isr_H200_v5'] }],
  };
  const template: Record<string, unknown> = { metadata: { labels: { team: 'ml' } }, spec: templateSpec };
  const spec: Record<string, unknown> = { template, limits: { 'nvidia.com/gpu': '16' } };
  patch(spec, template);
  return { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name }, spec };
}

/** Each scenario gets hooks and a name prefix of its own (the real API server is shared). */
const scenarios: Array<[string, (h: Hooks, p: string) => Promise<void>]> = [
  ['create then read your own write at once; a second create of the name is AlreadyExists', async ({ port }, p) => {
    const created = await port.createNodeClaim(nodeClaimObject(`${p}-a`, 'cls', { annotations: { note: 'x' } }));
    expect(created.metadata.uid).not.toBe('');
    expect(created.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(created.metadata.creationTimestamp).toMatch(RFC3339);
    const read = await port.getNodeClaim(`${p}-a`);
    expect(read?.metadata.uid).toBe(created.metadata.uid);
    expect(read?.metadata.annotations).toEqual({ note: 'x' });
    expect(read?.spec.requirements).toEqual(nodeClaimObject('x', 'cls').spec.requirements);
    expect(names(await port.listNodeClaims(), p)).toEqual([`${p}-a`]);
    expect(await reason(port.createNodeClaim(nodeClaimObject(`${p}-a`, 'cls')))).toBe('AlreadyExists');
  }],
  ['lists what was written: own and foreign creates, minus a delete without finalizers', async (h, p) => {
    const { port } = h;
    await port.createNodeClaim(nodeClaimObject(`${p}-a`, 'cls'));
    await port.createNodeClaim(nodeClaimObject(`${p}-b`, 'cls'));
    await h.foreignNodeClaim(`${p}-c`);
    await port.deleteNodeClaim(`${p}-b`);
    await h.caughtUp('nodeClaims');
    expect(names(await port.listNodeClaims(), p)).toEqual([`${p}-a`, `${p}-c`]);
    expect(await port.getNodeClaim(`${p}-b`)).toBeUndefined();
    expect((await port.getNodeClaim(`${p}-c`))?.metadata.labels).toEqual({ 'karpenter.sh/nodepool': 'np' });
  }],
  ['adds and removes finalizers; labels merge and null removes a key', async ({ port }, p) => {
    await port.createNodeClaim(nodeClaimObject(`${p}-a`, 'cls', { labels: { keep: '1', drop: '1' } }));
    const added = await port.patchNodeClaimMetadata(`${p}-a`, { finalizers: ['karpenter.sh/termination'], labels: { drop: null, stage: 'launched' } });
    expect(added.metadata.finalizers).toEqual(['karpenter.sh/termination']);
    expect(added.metadata.labels).toEqual({ keep: '1', stage: 'launched' });
    expect((await port.getNodeClaim(`${p}-a`))?.metadata.finalizers).toEqual(['karpenter.sh/termination']);
    const removed = await port.patchNodeClaimMetadata(`${p}-a`, { finalizers: [] });
    expect(removed.metadata.finalizers).toEqual([]);
    expect(removed.metadata.labels).toEqual({ keep: '1', stage: 'launched' });
    const read = await port.getNodeClaim(`${p}-a`);
    expect(read?.metadata.finalizers).toEqual([]);
    expect(read?.metadata.deletionTimestamp).toBeUndefined();
  }],
  ['status through the subresource replaces the whole status: omitted fields are gone, spec and metadata untouched', async ({ port }, p) => {
    await port.createNodeClaim(nodeClaimObject(`${p}-a`, 'cls', { labels: { l: 'v' } }));
    const cond = { type: 'Launched', status: 'True' as const, reason: 'Launched', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' };
    const first = await port.updateNodeClaimStatus(`${p}-a`, { providerID: 'azure-flex:///x', imageID: 'img', capacity: { cpu: '8' }, conditions: [cond] });
    expect(first.status).toEqual({ providerID: 'azure-flex:///x', imageID: 'img', capacity: { cpu: '8' }, conditions: [cond] });
    const second = await port.updateNodeClaimStatus(`${p}-a`, { nodeName: 'n1', conditions: [] });
    expect(second.status.providerID).toBeUndefined();
    expect(second.status.imageID).toBeUndefined();
    expect(second.status.capacity).toBeUndefined();
    expect(second.status.nodeName).toBe('n1');
    expect(second.status.conditions).toEqual([]);
    const read = await port.getNodeClaim(`${p}-a`);
    expect(read?.status.nodeName).toBe('n1');
    expect(read?.status.providerID).toBeUndefined();
    expect(read?.metadata.labels).toEqual({ l: 'v' });
    expect(read?.spec.requirements).toEqual(nodeClaimObject('x', 'cls').spec.requirements);
  }],
  ['a status change puts and removes conditions by type and sets lastPodEventTime, keeping the rest; no change, no write; a missing claim is NotFound', async ({ port }, p) => {
    await port.createNodeClaim(nodeClaimObject(`${p}-a`, 'cls'));
    const at = '2026-01-01T00:00:00Z';
    const launched = { type: 'Launched', status: 'True' as const, reason: 'Launched', message: '', lastTransitionTime: at };
    await port.updateNodeClaimStatus(`${p}-a`, { providerID: 'azure-flex:///x', conditions: [launched] });
    const drifted = { type: 'Drifted', status: 'True' as const, reason: 'NodePoolDrifted', message: 'NodePoolDrifted', lastTransitionTime: '2026-01-01T00:05:00.000Z' };
    const consolidatable = { type: 'Consolidatable', status: 'True' as const, reason: 'Consolidatable', message: '', lastTransitionTime: '2026-01-01T00:06:00.000Z' };
    const first = await port.patchNodeClaimStatus(`${p}-a`, { set: [drifted, consolidatable], lastPodEventTime: '2026-01-01T00:01:00.000Z' });
    expect(first.status).toEqual({ providerID: 'azure-flex:///x', conditions: [launched, drifted, consolidatable], lastPodEventTime: '2026-01-01T00:01:00.000Z' });
    const second = await port.patchNodeClaimStatus(`${p}-a`, { remove: ['Consolidatable', 'Empty'] });
    expect(second.status.conditions).toEqual([launched, drifted]);
    expect(second.status.lastPodEventTime).toBe('2026-01-01T00:01:00.000Z');
    // The same again changes nothing: nothing is written (the resourceVersion stays).
    const same = await port.patchNodeClaimStatus(`${p}-a`, { set: [drifted], remove: ['Consolidatable'] });
    expect(same.metadata.resourceVersion).toBe(second.metadata.resourceVersion);
    const read = await port.getNodeClaim(`${p}-a`);
    expect(read?.status.conditions).toEqual([launched, drifted]);
    expect(read?.spec.requirements).toEqual(nodeClaimObject('x', 'cls').spec.requirements);
    expect(await reason(port.patchNodeClaimStatus(`${p}-missing`, { remove: ['Drifted'] }))).toBe('NotFound');
  }],
  ['delete with a finalizer pending sets deletionTimestamp and keeps it listed; removing the finalizer deletes it; deleting a missing object succeeds', async (h, p) => {
    const { port } = h;
    await port.createNodeClaim(nodeClaimObject(`${p}-a`, 'cls', { finalizers: ['karpenter.sh/termination'] }));
    await port.deleteNodeClaim(`${p}-a`);
    const terminating = await port.getNodeClaim(`${p}-a`);
    expect(terminating?.metadata.deletionTimestamp).toMatch(RFC3339);
    expect(terminating?.metadata.finalizers).toEqual(['karpenter.sh/termination']);
    expect(names(await port.listNodeClaims(), p)).toEqual([`${p}-a`]);
    // A second delete changes nothing (the timestamp stays).
    await port.deleteNodeClaim(`${p}-a`);
    expect((await port.getNodeClaim(`${p}-a`))?.metadata.deletionTimestamp).toBe(terminating?.metadata.deletionTimestamp);
    await port.patchNodeClaimMetadata(`${p}-a`, { finalizers: [] });
    await h.caughtUp('nodeClaims');
    expect(await port.getNodeClaim(`${p}-a`)).toBeUndefined();
    expect(names(await port.listNodeClaims(), p)).toEqual([]);
    await expect(port.deleteNodeClaim(`${p}-a`)).resolves.toBeUndefined();
    await expect(port.deleteNodeClaim(`${p}-never`)).resolves.toBeUndefined();
    await expect(port.deleteNode(`${p}-never`)).resolves.toBeUndefined();
  }],
  ['cacheVersion moves on an own write and on a foreign write, and not when nothing happened; seenThrough covers what the cache applied', async (h, p) => {
    const { port } = h;
    await h.caughtUp('nodeClaims');
    const before = port.cacheVersion!('nodeClaims');
    expect(before).toBeDefined();
    expect(port.cacheVersion!('nodeClaims')).toBe(before);
    const created = await port.createNodeClaim(nodeClaimObject(`${p}-a`, 'cls'));
    // Read-your-writes: the view changed at once, whatever the watch has delivered.
    expect(port.cacheVersion!('nodeClaims')).not.toBe(before);
    await h.caughtUp('nodeClaims');
    const seen = port.seenThrough!('nodeClaims');
    expect(seen).toMatch(/^\d+$/);
    expect(BigInt(seen!)).toBeGreaterThanOrEqual(BigInt(created.metadata.resourceVersion!));
    const settled = port.cacheVersion!('nodeClaims');
    expect(port.cacheVersion!('nodeClaims')).toBe(settled);
    await h.foreignLabel(`${p}-a`, { foreign: 'yes' });
    await h.caughtUp('nodeClaims');
    expect((await port.getNodeClaim(`${p}-a`))?.metadata.labels.foreign).toBe('yes');
    expect(port.cacheVersion!('nodeClaims')).not.toBe(settled);
    const relabelled = (await port.getNodeClaim(`${p}-a`))!;
    expect(BigInt(port.seenThrough!('nodeClaims')!)).toBeGreaterThanOrEqual(BigInt(relabelled.metadata.resourceVersion!));
    expect(BigInt(port.seenThrough!('nodeClaims')!)).toBeGreaterThanOrEqual(BigInt(seen!));
    // Another kind's cache is not moved by NodeClaim writes.
    const nodes = port.cacheVersion!('nodes');
    await port.patchNodeClaimMetadata(`${p}-a`, { annotations: { a: 'b' } });
    expect(port.cacheVersion!('nodes')).toBe(nodes);
  }],
  ['a Node with a finalizer stays Terminating when deleted; the write that releases the last finalizer deletes it', async (h, p) => {
    const { port } = h;
    const name = `${p}-n`;
    await h.putNode(name, []);
    await h.caughtUp('nodes');
    await port.patchNode(name, { metadata: { finalizers: ['karpenter.sh/termination'] } });
    await port.deleteNode(name);
    await h.caughtUp('nodes');
    const deleting = (await port.listNodes()).find((n) => n.metadata.name === name);
    expect(deleting?.metadata.deletionTimestamp).toMatch(RFC3339);
    expect(deleting?.metadata.finalizers).toEqual(['karpenter.sh/termination']);
    await port.deleteNode(name);
    await port.patchNode(name, { metadata: { finalizers: [] } });
    await h.caughtUp('nodes');
    expect(names(await port.listNodes(), p)).toEqual([]);
    expect(await reason(port.deleteNode(name))).toBe('ok');
  }],
  ['patches node taints and cordons; labels merge', async (h, p) => {
    const { port } = h;
    await h.putNode(`${p}-n`, [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }]);
    await h.caughtUp('nodes');
    const node = (await port.listNodes()).find((n) => n.metadata.name === `${p}-n`)!;
    // The real API server's admission adds node.kubernetes.io/not-ready on registration; the
    // controller computes its taints from what it read, as here.
    expect(node.spec.taints).toContainEqual({ key: 'karpenter.sh/unregistered', effect: 'NoExecute' });
    expect(node.spec.unschedulable).toBeFalsy();
    const taints: Taint[] = [...node.spec.taints.filter((t) => t.key !== 'karpenter.sh/unregistered'), { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }];
    const patched = await port.patchNode(`${p}-n`, { unschedulable: true, taints, metadata: { labels: { 'karpenter.sh/registered': 'true' } } });
    expect(patched.spec.unschedulable).toBe(true);
    expect(patched.spec.taints).toEqual(taints);
    expect(patched.metadata.labels['karpenter.sh/registered']).toBe('true');
    const listed = (await port.listNodes()).find((n) => n.metadata.name === `${p}-n`)!;
    expect(listed.spec.taints).toEqual(taints);
    expect(listed.spec.unschedulable).toBe(true);
    // A metadata-only patch leaves the spec alone.
    const relabelled = await port.patchNode(`${p}-n`, { metadata: { labels: { 'karpenter.sh/registered': null } } });
    expect(relabelled.spec).toMatchObject({ unschedulable: true, taints });
    expect(relabelled.metadata.labels['karpenter.sh/registered']).toBeUndefined();
    await port.deleteNode(`${p}-n`);
    await h.caughtUp('nodes');
    expect(names(await port.listNodes(), p)).toEqual([]);
  }],
  ['eviction: a PodDisruptionBudget refusal is false and keeps the pod bound; an allowed one unbinds it; a missing pod is true', async (h, p) => {
    const { port } = h;
    await h.putNode(`${p}-n`, []);
    await h.putRunningPod(`${p}-guarded`, { app: `${p}-guarded` }, `${p}-n`);
    await h.putRunningPod(`${p}-free`, { app: `${p}-free` }, `${p}-n`);
    await h.putPdb(`${p}-guard`, { app: `${p}-guarded` }, 1);
    await h.caughtUp('pods');
    expect(await port.evictPod(NS, `${p}-guarded`)).toBe(false);
    expect(await port.evictPod(NS, `${p}-free`)).toBe(true);
    await h.caughtUp('pods');
    // Evicted: no longer a running pod of the node. Without a kubelet the real pod stays
    // listed as terminating (deletionTimestamp); the fake's ReplicaSet stand-in is unbound.
    const pods = (await port.listPods()).filter((x) => x.metadata.namespace === NS && x.metadata.name.startsWith(p));
    const active = pods.filter((x) => x.spec.nodeName === `${p}-n` && !x.metadata.deletionTimestamp).map((x) => x.metadata.name);
    expect(active).toEqual([`${p}-guarded`]);
    expect(pods.find((x) => x.metadata.name === `${p}-guarded`)?.status.phase).toBe('Running');
    expect(await port.evictPod(NS, `${p}-never`)).toBe(true);
    await port.deleteNode(`${p}-n`);
  }],
  ['writes to missing objects are NotFound', async ({ port }, p) => {
    expect(await reason(port.patchNodeClaimMetadata(`${p}-x`, { finalizers: ['karpenter.sh/termination'] }))).toBe('NotFound');
    expect(await reason(port.patchNodeClaimMetadata(`${p}-x`, { labels: { a: 'b' } }))).toBe('NotFound');
    expect(await reason(port.updateNodeClaimStatus(`${p}-x`, { conditions: [] }))).toBe('NotFound');
    expect(await reason(port.patchNode(`${p}-x`, { unschedulable: true }))).toBe('NotFound');
    expect(await reason(port.patchNodeClassMetadata(`${p}-x`, { finalizers: ['x'] }))).toBe('NotFound');
    expect(await reason(port.updateNodePoolStatus(`${p}-x`, { conditions: [] }))).toBe('NotFound');
    expect(await reason(port.updateNodeClassStatus(`${p}-x`, { conditions: [] }))).toBe('NotFound');
  }],
  ['a NodePool the upstream CRD refuses is Invalid (schema and CEL rules) and never listed; a valid one is listed', async ({ port, applyNodePool }, p) => {
    const refused: Array<[string, Record<string, unknown>]> = [
      ['unknown consolidationPolicy', nodePoolBody(`${p}-policy`, (s) => { s.disruption = { consolidationPolicy: 'Sometimes' }; })],
      ['In without values', nodePoolBody(`${p}-in`, (_s, t) => { (t.spec as Record<string, unknown>).requirements = [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: [] }]; })],
      ['Gt with a non-integer', nodePoolBody(`${p}-gt`, (_s, t) => { (t.spec as Record<string, unknown>).requirements = [{ key: 'karpenter.azure.com/sku-gpu-count', operator: 'Gt', values: ['eight'] }]; })],
      ['a karpenter.sh label in the template', nodePoolBody(`${p}-label`, (_s, t) => { t.metadata = { labels: { 'karpenter.sh/custom': 'x' } }; })],
      ['the hostname requirement', nodePoolBody(`${p}-host`, (_s, t) => { (t.spec as Record<string, unknown>).requirements = [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['a'] }]; })],
      ['a budget schedule without a duration', nodePoolBody(`${p}-budget`, (s) => { s.disruption = { budgets: [{ nodes: '10%', schedule: '@daily' }] }; })],
      ['a static NodePool with a weight', nodePoolBody(`${p}-static-weight`, (s) => { s.replicas = 2; s.weight = 10; })],
      ['a static NodePool with a cpu limit', nodePoolBody(`${p}-static-limit`, (s) => { s.replicas = 2; s.limits = { cpu: '64' }; })],
    ];
    for (const [what, body] of refused) expect([what, await applyNodePool(body)]).toEqual([what, 'Invalid']);
    expect(await applyNodePool(nodePoolBody(`${p}-ok`))).toBeUndefined();
    const valid = await eventually('the valid NodePool is listed', async () => {
      const pools = (await port.listNodePools()).filter((np) => np.metadata.name.startsWith(p));
      return pools.length > 0 ? pools : undefined;
    });
    expect(valid.map((np) => np.metadata.name)).toEqual([`${p}-ok`]);
    expect(valid[0]!.spec.disruption.consolidateAfter).toBe('0s');
    expect(valid[0]!.spec.template.metadata.labels).toEqual({ team: 'ml' });
  }],
  ['a NodeClaim the upstream CRD refuses is Invalid (schema and CEL rules) and never stored; a valid one gets the CRD defaults', async ({ port }, p) => {
    const claim = (name: string, patch: (spec: NodeClaim['spec']) => void): NodeClaim => {
      const nc = nodeClaimObject(name, 'cls');
      patch(nc.spec);
      return nc;
    };
    const refused: Array<[string, NodeClaim]> = [
      ['In without values', claim(`${p}-in`, (s) => { s.requirements = [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: [] }]; })],
      ['Gt with a negative value', claim(`${p}-gt`, (s) => { s.requirements = [{ key: 'karpenter.azure.com/sku-gpu-count', operator: 'Gt', values: ['-1'] }]; })],
      ['an unknown operator', claim(`${p}-op`, (s) => { s.requirements = [{ key: 'team', operator: 'Near' as NodeClaim['spec']['requirements'][number]['operator'], values: ['a'] }]; })],
      ['a karpenter.sh requirement key', claim(`${p}-key`, (s) => { s.requirements = [{ key: 'karpenter.sh/custom', operator: 'Exists' }]; })],
      ['the hostname requirement', claim(`${p}-host`, (s) => { s.requirements = [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['a'] }]; })],
      ['an empty nodeClassRef group', claim(`${p}-ref`, (s) => { s.nodeClassRef = { ...s.nodeClassRef, group: '' }; })],
    ];
    for (const [what, body] of refused) expect([what, await reason(port.createNodeClaim(body))]).toEqual([what, 'Invalid']);
    const created = await port.createNodeClaim(nodeClaimObject(`${p}-ok`, 'cls'));
    expect(created.spec.expireAfter).toBe('720h');
    expect((await port.getNodeClaim(`${p}-ok`))?.spec.expireAfter).toBe('720h');
    expect((await port.createNodeClaim(claim(`${p}-never`, (s) => { s.expireAfter = 'Never'; }))).spec.expireAfter).toBe('Never');
    expect(names(await port.listNodeClaims(), p)).toEqual([`${p}-never`, `${p}-ok`]);
  }],
];

describe('ClusterPort contract: FakeCluster and KubeCluster behave alike', () => {
  let a: Adapter;

  beforeAll(async () => {
    await ensureNamespace(info, NS);
    a = makeAdapter(adminKubeConfig(info), 'contract');
    a.cluster.start();
    await a.cluster.waitForSync();
  });

  afterAll(async () => {
    await a.cluster.stop();
    // Only this file's objects ("ct<i>-..."); the API server is shared with the other k8s files.
    for (const path of [NC, '/apis/karpenter.sh/v1/nodepools', '/api/v1/nodes']) {
      const { items } = (await adminRequest(info, 'GET', path)) as { items: Array<{ metadata: { name: string } }> };
      for (const o of items) if (/^ct\d+-/.test(o.metadata.name)) await forceDelete(info, `${path}/${o.metadata.name}`);
    }
  });

  for (const [i, [name, scenario]] of scenarios.entries()) {
    it(`fake: ${name}`, async () => {
      await scenario(fakeHooks(), `ct${i}`);
    });
    it(`real: ${name}`, async () => {
      await scenario(realHooks(a, `ct${i}`), `ct${i}`);
    });
  }
});
