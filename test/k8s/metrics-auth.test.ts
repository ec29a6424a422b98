import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Registry, Gauge } from 'prom-client';
import { generate } from 'selfsigned';
import { KubeClient } from '../../src/k8s/client.js';
import { KubeMetricsAuthorizer } from '../../src/metrics/auth.js';
import { startMetricsServer, type MetricsServer } from '../../src/metrics/server.js';
import { RealClock } from '../../src/platform/real-clock.js';
import { adminKubeConfig, adminRequest, mintServiceAccountToken } from './harness.js';
import { ensureNamespace } from './fixtures.js';
import { scrape } from '../metrics/scrape.js';

/**
 * Secure metrics against the real kube-apiserver: ServiceAccount tokens reviewed with
 * TokenReview, and the chart's metrics-reader rule (nonResourceURLs /metrics, get) checked with
 * SubjectAccessReview.
 */
const info = inject('k8s');
const ns = 'metrics-auth';


describe('secure metrics with TokenReview and SubjectAccessReview (real API server)', () => {
  let server: MetricsServer;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    await ensureNamespace(info, ns);
    for (const sa of ['scraper', 'nobody']) {
      await adminRequest(info, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa } }).catch(() => undefined);
      tokens[sa] = await mintServiceAccountToken(info, ns, sa);
    }
    await adminRequest(info, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'metrics-auth-reader' }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    }).catch(() => undefined);
    await adminRequest(info, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'metrics-auth-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'metrics-auth-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'scraper', namespace: ns }],
    }).catch(() => undefined);
    const registry = new Registry();
    new Gauge({ name: 'azflex_is_leader', help: 'x', registers: [registry] }).set(1);
    const pems = await generate([{ name: 'commonName', value: 'azflex-metrics' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' });
    server = await startMetricsServer({
      registry, port: 0, host: '127.0.0.1', healthChecks: [], readyChecks: [],
      secure: { cert: pems.cert, key: pems.private, authorizer: new KubeMetricsAuthorizer(new KubeClient(adminKubeConfig(info)), new RealClock()) },
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('401 without a token or with one the API server does not know, 403 for a user without the rule, 200 for the bound scraper; probes open', async () => {
    expect((await scrape(server.port, '/metrics')).status).toBe(401);
    expect((await scrape(server.port, '/metrics', `${tokens.scraper!.slice(0, -4)}AAAA`)).status).toBe(401);
    const denied = await scrape(server.port, '/metrics', tokens.nobody);
    expect(denied.status).toBe(403);
    expect(denied.text).toContain(`system:serviceaccount:${ns}:nobody may not get /metrics`);
    const ok = await scrape(server.port, '/metrics', tokens.scraper);
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('azflex_is_leader 1');
    expect((await scrape(server.port, '/healthz')).status).toBe(200);
  });
});
