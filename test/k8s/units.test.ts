import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { delta, microTime, toCachedPod } from '../../src/k8s/cluster.js';
import { inClusterKubeConfig, loadKubeConfig } from '../../src/k8s/client.js';
import { allows, REQUIRED_CLUSTER_RULES, requestAttributes } from '../../src/k8s/rbac.js';
import { toNodeClaim, toNodeClass } from '../../src/k8s/resources.js';
import { toPod } from '../../src/k8s/pod.js';
import { createAzflexMetrics, createKarpenterMetrics } from '../../src/metrics/karpenter.js';
import { startMetricsServer } from '../../src/metrics/server.js';
import { CryptoRandom, RealClock } from '../../src/platform/real-clock.js';
import { SUB } from './fixtures.js';

describe('adapter helpers', () => {
  it('replays a list delta onto a newer list', () => {
    const d = delta(['a', 'b'], ['b', 'c'], (x) => x);
    expect(d.applyTo(['a', 'b', 'z'])).toEqual(['b', 'z', 'c']);
    expect(d.applyTo(['c'])).toEqual(['c']);
  });

  it('formats MicroTime', () => {
    expect(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678))).toBe('2026-01-02T03:04:05.678000Z');
  });

  it('maps raw objects with the defaults the port promises', () => {
    const nc = toNodeClaim({ metadata: { name: 'n' }, spec: {} });
    expect(nc.metadata).toMatchObject({ labels: {}, annotations: {}, finalizers: [] });
    expect(nc.spec).toMatchObject({ requirements: [], taints: [], startupTaints: [], resources: { requests: {} } });
    const cls = toNodeClass({ metadata: { name: 'c' }, spec: { subscriptionID: SUB } });
    expect(cls.spec).toMatchObject({ securityType: 'Standard', osDiskSizeGB: 128, maxPodsPerNode: 110, allocateNodePublicIP: false, sshPublicKeys: [], tags: {} });
    const podRaw = {
      metadata: { name: 'p', namespace: 'ns', ownerReferences: [{ kind: 'DaemonSet', controller: true }] },
      spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }], nodeName: 'n1' },
      status: { phase: 'Running', conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True' })) },
    };
    const pod = toPod(podRaw);
    expect(pod).toMatchObject({ ownerKind: 'DaemonSet', spec: { nodeName: 'n1' }, status: { phase: 'Running' } });
    // The informer cache keeps only the conditions azflex reads.
    expect(pod.status.conditions).toHaveLength(5);
    expect(toCachedPod(podRaw).status.conditions.map((c) => c.type)).toEqual(['Ready', 'PodScheduled']);
  });

  it('derives RBAC request attributes like the API server', () => {
    const a = requestAttributes({ method: 'POST', path: '/api/v1/namespaces/ns/pods/p/eviction', watch: false });
    expect(a).toEqual({ apiGroup: '', resource: 'pods/eviction', namespace: 'ns', name: 'p', verb: 'create' });
    expect(requestAttributes({ method: 'GET', path: '/apis/karpenter.sh/v1/nodeclaims', watch: true }).verb).toBe('watch');
    expect(requestAttributes({ method: 'PATCH', path: '/apis/karpenter.sh/v1/nodeclaims/x/status', watch: false })).toMatchObject({ resource: 'nodeclaims/status', verb: 'patch' });
    expect(allows(REQUIRED_CLUSTER_RULES, requestAttributes({ method: 'DELETE', path: '/apis/flex.aks.azure.com/v1alpha1/azureflexnodeclasses/x', watch: false }))).toBe(false);
  });
});

describe('kubeconfig loading (client-node KubeConfig)', () => {
  it('loads a file, picks the named context, and refuses an unknown one', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'kc-'));
    await fs.writeFile(path.join(dir, 'token'), 'file-token\n');
    const file = path.join(dir, 'config');
    await fs.writeFile(
      file,
      [
        'apiVersion: v1',
        'clusters:',
        '- name: a',
        '  cluster: { server: "https://10.0.0.1:6443", certificate-authority-data: "' + Buffer.from('CA').toString('base64') + '" }',
        'users:',
        '- name: u',
        '  user: { exec: { apiVersion: client.authentication.k8s.io/v1, command: kubelogin, args: [get-token] } }',
        '- name: v',
        '  user: { token: inline }',
        'contexts:',
        '- name: one',
        '  context: { cluster: a, user: u }',
        '- name: two',
        '  context: { cluster: a, user: v }',
        'current-context: one',
      ].join('\n'),
    );
    const one = loadKubeConfig({ file });
    expect(one.getCurrentCluster()?.server).toBe('https://10.0.0.1:6443');
    expect(one.getCurrentUser()?.exec).toMatchObject({ command: 'kubelogin', args: ['get-token'] });
    expect(loadKubeConfig({ file, context: 'two' }).getCurrentUser()?.token).toBe('inline');
    expect(() => loadKubeConfig({ file, context: 'three' })).toThrow(/no context "three"/);
    expect(() => loadKubeConfig({ file: path.join(dir, 'missing') })).toThrow(/does not exist/);
  });

  it('builds the in-cluster config from KUBERNETES_SERVICE_HOST/PORT and the ServiceAccount files', async () => {
    const prefix = await fs.mkdtemp(path.join(os.tmpdir(), 'sa-'));
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    try {
      delete process.env.KUBERNETES_SERVICE_HOST;
      expect(() => inClusterKubeConfig(prefix)).toThrow(/KUBERNETES_SERVICE_HOST/);
      process.env.KUBERNETES_SERVICE_HOST = 'fd00::1';
      process.env.KUBERNETES_SERVICE_PORT = '443';
      const kc = inClusterKubeConfig(prefix);
      expect(kc.getCurrentCluster()?.server).toBe('https://[fd00::1]:443');
      expect(kc.getCurrentUser()?.authProvider?.config?.tokenFile).toBe(`${prefix}/var/run/secrets/kubernetes.io/serviceaccount/token`);
    } finally {
      if (saved.host === undefined) delete process.env.KUBERNETES_SERVICE_HOST;
      else process.env.KUBERNETES_SERVICE_HOST = saved.host;
      if (saved.port === undefined) delete process.env.KUBERNETES_SERVICE_PORT;
      else process.env.KUBERNETES_SERVICE_PORT = saved.port;
    }
  });
});

describe('metrics and health server', () => {
  it('serves Karpenter-named metrics from its own registry, /healthz and /readyz', async () => {
    const registry = new Registry();
    const k = createKarpenterMetrics(registry);
    const ours = createAzflexMetrics(registry);
    k.nodeClaimsCreated.inc({ reason: 'provisioned', nodepool: 'h200', min_values_relaxed: 'false' });
    k.cloudProviderErrors.inc({ controller: 'nodeclaim.lifecycle', method: 'Create', provider: 'azure-flex', error: 'InsufficientCapacityError', nodepool: 'h200' });
    ours.nicsLeaked.set(0);
    let ready = false;
    const server = await startMetricsServer({
      registry,
      port: 0,
      host: '127.0.0.1',
      healthChecks: [{ name: 'ping', check: () => true }],
      readyChecks: [{ name: 'informers-synced', check: () => ready }],
    });
    try {
      const base = `http://127.0.0.1:${server.port}`;
      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(metrics).toContain('karpenter_nodeclaims_created_total{reason="provisioned",nodepool="h200",min_values_relaxed="false"} 1');
      expect(metrics).toContain('karpenter_cloudprovider_errors_total{controller="nodeclaim.lifecycle",method="Create",provider="azure-flex",error="InsufficientCapacityError",nodepool="h200"} 1');
      expect(metrics).toContain('# TYPE karpenter_nodeclaims_terminated_total counter');
      expect(metrics).toContain('azflex_nics_leaked 0');
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const notReady = await fetch(`${base}/readyz`);
      expect(notReady.status).toBe(503);
      expect(await notReady.text()).toContain('[-]informers-synced failed');
      ready = true;
      expect((await fetch(`${base}/readyz?verbose`)).status).toBe(200);
      expect((await fetch(`${base}/nope`)).status).toBe(404);
      // prom-client's global registry stays untouched.
      const { register } = await import('prom-client');
      expect(register.getSingleMetric('karpenter_nodeclaims_created_total')).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});

describe('real clock and randomness', () => {
  it('fires and cancels timers, and draws uniform values in [0, 1)', async () => {
    const clock = new RealClock();
    const fired: number[] = [];
    clock.setTimer(5, () => fired.push(1));
    const cancelled = clock.setTimer(5, () => fired.push(2));
    clock.clearTimer(cancelled);
    expect(clock.pendingTimers()).toBe(1);
    await new Promise((r) => setTimeout(r, 30));
    expect(fired).toEqual([1]);
    expect(clock.pendingTimers()).toBe(0);
    expect(Math.abs(clock.now() - Date.now())).toBeLessThan(50);
    const rnd = new CryptoRandom();
    const xs = Array.from({ length: 2000 }, () => rnd.next());
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(mean).toBeGreaterThan(0.45);
    expect(mean).toBeLessThan(0.55);
  });
});
