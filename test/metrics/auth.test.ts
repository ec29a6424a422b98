import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry, Counter } from 'prom-client';
import { generate } from 'selfsigned';
import { KubeClient, tokenKubeConfig } from '../../src/k8s/client.js';
import { KubeMetricsAuthorizer } from '../../src/metrics/auth.js';
import { startMetricsServer, type MetricsServer } from '../../src/metrics/server.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { scrape } from './scrape.js';

/**
 * Secure metrics serving (controller-runtime's WithAuthenticationAndAuthorization) through
 * client-node against a local HTTPS stub of the API server's two review endpoints: a token the
 * TokenReview does not authenticate gets 401, a user the SubjectAccessReview does not allow
 * `get /metrics` gets 403, an allowed one the metrics; the probes need no token.
 */
const USERS: Record<string, { username: string; groups: string[] }> = {
  'prometheus-token': { username: 'system:serviceaccount:monitoring:prometheus', groups: ['system:serviceaccounts'] },
  'nobody-token': { username: 'system:serviceaccount:default:nobody', groups: ['system:serviceaccounts'] },
};
const reviews: Array<{ kind: string; body: Record<string, unknown> }> = [];

function stubApiServer(cert: string, key: string): Promise<Server> {
  const server = createServer({ cert, key }, (req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(text || '{}') as { spec?: { token?: string; user?: string; nonResourceAttributes?: { path: string; verb: string } } };
      res.setHeader('Content-Type', 'application/json');
      if (req.method === 'POST' && req.url?.startsWith('/apis/authentication.k8s.io/v1/tokenreviews')) {
        reviews.push({ kind: 'TokenReview', body });
        const user = USERS[body.spec?.token ?? ''];
        res.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: body.spec, status: user ? { authenticated: true, user } : { authenticated: false, error: 'invalid bearer token' } }));
        return;
      }
      if (req.method === 'POST' && req.url?.startsWith('/apis/authorization.k8s.io/v1/subjectaccessreviews')) {
        reviews.push({ kind: 'SubjectAccessReview', body });
        const attrs = body.spec?.nonResourceAttributes;
        const allowed = body.spec?.user === USERS['prometheus-token']!.username && attrs?.path === '/metrics' && attrs.verb === 'get';
        res.end(JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: body.spec, status: { allowed } }));
        return;
      }
      res.statusCode = 404;
      res.end('{}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}


describe('secure metrics serving', () => {
  let api: Server;
  let metrics: MetricsServer;
  const clock = new VirtualClock(1_000_000);

  beforeAll(async () => {
    const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256', extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }] });
    api = await stubApiServer(pems.cert, pems.private);
    // The controller's own credentials: what it authenticates its reviews with.
    const kc = tokenKubeConfig(`https://127.0.0.1:${(api.address() as AddressInfo).port}`, Buffer.from(pems.cert).toString('base64'), 'controller-token');
    const registry = new Registry();
    new Counter({ name: 'karpenter_nodeclaims_created_total', help: 'x', registers: [registry] }).inc();
    metrics = await startMetricsServer({
      registry,
      port: 0,
      host: '127.0.0.1',
      healthChecks: [{ name: 'ping', check: () => true }],
      readyChecks: [{ name: 'synced', check: () => true }],
      secure: { cert: pems.cert, key: pems.private, authorizer: new KubeMetricsAuthorizer(new KubeClient(kc), clock) },
    });
  });

  afterAll(async () => {
    await metrics.close();
    await new Promise((r) => api.close(r));
  });

  it('rejects a scrape without a token (401) and with a token the TokenReview does not authenticate (401)', async () => {
    const none = await scrape(metrics.port, '/metrics');
    expect(none.status).toBe(401);
    expect(none.text).not.toContain('karpenter_nodeclaims_created_total');
    const bad = await scrape(metrics.port, '/metrics', 'stolen-or-expired');
    expect(bad.status).toBe(401);
    expect(bad.text).not.toContain('karpenter_');
    expect(reviews.filter((r) => r.kind === 'SubjectAccessReview')).toEqual([]);
  });

  it('rejects an authenticated user that may not get /metrics (403), serves one that may', async () => {
    const denied = await scrape(metrics.port, '/metrics', 'nobody-token');
    expect(denied.status).toBe(403);
    expect(denied.text).toContain('system:serviceaccount:default:nobody may not get /metrics');
    const ok = await scrape(metrics.port, '/metrics', 'prometheus-token');
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('karpenter_nodeclaims_created_total 1');
    const sar = reviews.filter((r) => r.kind === 'SubjectAccessReview').at(-1)!.body as { spec: Record<string, unknown> };
    expect(sar.spec).toEqual({ user: 'system:serviceaccount:monitoring:prometheus', groups: ['system:serviceaccounts'], nonResourceAttributes: { path: '/metrics', verb: 'get' } });
  });

  it('caches a decision for a minute of the injected clock, then reviews again', async () => {
    const before = reviews.length;
    expect((await scrape(metrics.port, '/metrics', 'prometheus-token')).status).toBe(200);
    expect(reviews.length).toBe(before);
    await clock.runUntil(clock.now() + 60_000);
    expect((await scrape(metrics.port, '/metrics', 'prometheus-token')).status).toBe(200);
    expect(reviews.length).toBe(before + 2);
  });

  it('keeps the probes open (the kubelet sends no token), over HTTPS', async () => {
    expect(await scrape(metrics.port, '/healthz')).toEqual({ status: 200, text: 'ok' });
    expect(await scrape(metrics.port, '/readyz')).toEqual({ status: 200, text: 'ok' });
  });
});
