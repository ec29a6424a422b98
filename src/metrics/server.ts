import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { MetricsAuthorizer } from './auth.js';

/**
 * /metrics, /healthz and /readyz on one port (what the chart's probes and Service use).
 * Checks are named so `?verbose` prints which one fails, like the API server's endpoints.
 *  - healthz (liveness): the process can still make progress; failing restarts the pod.
 *  - readyz (readiness): caches synced; both replicas are ready, leader or not, so a
 *    standby is never killed for not leading.
 * With `secure`, everything is served over HTTPS and /metrics (which names subscriptions, nodes
 * and pod owners) needs a bearer token the authorizer accepts; the probes stay open, as the
 * kubelet sends no token and they disclose nothing but check names.
 */
export interface HealthCheck {
  name: string;
  check: () => boolean | Promise<boolean>;
}

export interface MetricsServerOptions {
  registry: Registry;
  port: number;
  host?: string;
  healthChecks?: HealthCheck[];
  readyChecks?: HealthCheck[];
  secure?: MetricsSecurity;
  /** Gauges filled only for a scrape (series per node and pod) and freed after it. */
  scrape?: ScrapeHooks;
}

export interface ScrapeHooks {
  before(): Promise<void>;
  after(): void;
}

export interface MetricsSecurity {
  /** PEM certificate chain and key for HTTPS. */
  cert: string | Buffer;
  key: string | Buffer;
  authorizer: MetricsAuthorizer;
}

export interface MetricsServer {
  /** Bound port (useful with port 0). */
  readonly port: number;
  close(): Promise<void>;
}

async function runChecks(checks: HealthCheck[]): Promise<Array<{ name: string; ok: boolean }>> {
  return Promise.all(
    checks.map(async (c) => {
      try {
        return { name: c.name, ok: await c.check() };
      } catch {
        return { name: c.name, ok: false };
      }
    }),
  );
}

async function respondChecks(res: ServerResponse, url: URL, checks: HealthCheck[]): Promise<void> {
  const results = await runChecks(checks);
  const ok = results.every((r) => r.ok);
  res.statusCode = ok ? 200 : 503;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  if (url.searchParams.has('verbose') || !ok) {
    const lines = results.map((r) => `[${r.ok ? '+' : '-'}]${r.name} ${r.ok ? 'ok' : 'failed'}`);
    res.end(`${lines.join('\n')}\n${ok ? 'check passed' : 'check failed'}\n`);
  } else res.end('ok');
}

/** One scrape at a time: a second one must not free the series the first is still writing out. */
function serialExposition(o: MetricsServerOptions): () => Promise<string> {
  let scraping: Promise<unknown> = Promise.resolve();
  return () => {
    const next = scraping.then(async () => {
      await o.scrape?.before();
      try {
        return await o.registry.metrics();
      } finally {
        o.scrape?.after();
      }
    });
    // The chain holds no result: the last exposition (megabytes in a large cluster) would stay on the heap.
    scraping = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  };
}

export async function startMetricsServer(o: MetricsServerOptions): Promise<MetricsServer> {
  const exposition = serialExposition(o);
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.statusCode = 405;
      res.end();
      return;
    }
    switch (url.pathname) {
      case '/metrics':
        if (o.secure) {
          const access = await o.secure.authorizer.check(req.headers.authorization, url.pathname, 'get');
          if (!access.allowed) {
            res.statusCode = access.status;
            if (access.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
            res.setHeader('Content-Type', 'text/plain; charset=utf-8');
            res.end(`${access.status === 401 ? 'Unauthorized' : 'Forbidden'}: ${access.reason}\n`);
            return;
          }
        }
        res.setHeader('Content-Type', o.registry.contentType);
        res.end(await exposition());
        return;
      case '/healthz':
      case '/livez':
        await respondChecks(res, url, o.healthChecks ?? []);
        return;
      case '/readyz':
        await respondChecks(res, url, o.readyChecks ?? []);
        return;
      default:
        res.statusCode = 404;
        res.end('not found\n');
    }
  };
  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((e: unknown) => {
      res.statusCode = 500;
      res.end(`${e instanceof Error ? e.message : String(e)}\n`);
    });
  };
  const server = o.secure ? createHttpsServer({ cert: o.secure.cert, key: o.secure.key, minVersion: 'TLSv1.2' }, serve) : createServer(serve);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host ?? '0.0.0.0', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}
