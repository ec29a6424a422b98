import * as https from 'node:https';
import * as http from 'node:http';
import { ClusterError } from '../ports/cluster.js';
import type { KubeAuth } from './kubeconfig.js';

/**
 * A deliberately thin REST client (auth comes from ./kubeconfig.ts: in-cluster SA, kubeconfig
 * certs/tokens/exec plugins, or a client-node KubeConfig via authFromClientNode). We talk
 * to raw paths instead of generated API classes so that (a) every request is visible to the
 * audit hook the RBAC test uses to prove the ClusterRole is exactly what we call, and (b)
 * errors come back as one typed ClusterError with the HTTP code.
 */

export interface RequestRecord {
  method: string;
  /** Path without query string, e.g. /apis/karpenter.sh/v1/nodeclaims/x/status. */
  path: string;
  /** True when the request was a watch (a GET with watch=true). */
  watch: boolean;
  status: number;
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  body?: unknown;
  contentType?: string;
  query?: Query;
}

/** Kubernetes `Status` body returned with errors. */
export interface KubeStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
}

export class KubeApiError extends ClusterError {
  constructor(
    reason: ClusterError['reason'],
    message: string,
    /** HTTP status code (410 Gone, 429 Too Many Requests, ... survive here). */
    readonly code: number,
    readonly status?: KubeStatus,
  ) {
    super(reason, message);
  }
}

export function errorFor(code: number, status: KubeStatus | undefined, fallback: string): KubeApiError {
  const message = status?.message ?? fallback;
  const reason: ClusterError['reason'] =
    code === 404
      ? 'NotFound'
      : code === 409
        ? status?.reason === 'AlreadyExists'
          ? 'AlreadyExists'
          : 'Conflict'
        : code === 403
          ? 'Forbidden'
          : code === 400 || code === 422
            ? 'Invalid'
            : code === 429
              ? 'TooManyRequests'
              : 'ServerError';
  return new KubeApiError(reason, message, code, status);
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: unknown;
}

export interface KubeRestOptions {
  /** Called after every response (and when a watch stream opens), for RBAC auditing. */
  onRequest?: (record: RequestRecord) => void;
  /** Per-request timeout for non-watch calls. */
  timeoutMs?: number;
  userAgent?: string;
}

function buildUrl(server: string, path: string, query: Query | undefined): URL {
  const url = new URL(server.replace(/\/+$/, '') + path);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  return url;
}

export class KubeRest {
  private readonly timeoutMs: number;

  constructor(
    readonly auth: KubeAuth,
    private readonly options: KubeRestOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  private server(): string {
    return this.auth.server;
  }

  private async baseOptions(method: string, url: URL): Promise<https.RequestOptions> {
    const authHeaders = await this.auth.headers();
    const opts: https.RequestOptions = {
      method,
      hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port,
      path: url.pathname + url.search,
      headers: { Accept: 'application/json', 'User-Agent': this.options.userAgent ?? 'azflex', ...authHeaders },
    };
    if (this.auth.agent) opts.agent = this.auth.agent;
    return opts;
  }

  private transport(url: URL): typeof https | typeof http {
    return url.protocol === 'http:' ? http : https;
  }

  /** One JSON request; resolves with the parsed body of a 2xx, rejects with KubeApiError. */
  async request<T>(method: string, path: string, ro: RequestOptions = {}): Promise<T> {
    const url = buildUrl(this.server(), path, ro.query);
    const opts = await this.baseOptions(method, url);
    const payload = ro.body === undefined ? undefined : Buffer.from(JSON.stringify(ro.body));
    if (payload) {
      opts.headers = { ...opts.headers, 'Content-Type': ro.contentType ?? 'application/json', 'Content-Length': payload.length };
    }
    opts.timeout = this.timeoutMs;
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = this.transport(url).request(opts, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new ClusterError('ServerError', `${method} ${path} timed out after ${this.timeoutMs}ms`)));
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    }).catch((e: unknown) => {
      if (e instanceof ClusterError) throw e;
      throw new KubeApiError('ServerError', `${method} ${path}: ${e instanceof Error ? e.message : String(e)}`, 0);
    });
    this.options.onRequest?.({ method, path, watch: false, status });
    const parsed = parseJson(body);
    if (status >= 200 && status < 300) return parsed as T;
    throw errorFor(status, asStatus(parsed), `${method} ${path}: HTTP ${status}`);
  }

  /**
   * Streams a watch. Resolves when the server closes the stream (normal: timeoutSeconds
   * elapsed) or the signal aborts; rejects on a non-200 answer or a broken connection.
   */
  async watch(path: string, query: Query, onEvent: (ev: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    const url = buildUrl(this.server(), path, { ...query, watch: true });
    const opts = await this.baseOptions('GET', url);
    if (signal.aborted) return;
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const finish = (err?: unknown): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        if (err === undefined || signal.aborted) resolve();
        else reject(err);
      };
      const req = this.transport(url).request(opts, (res) => {
        const status = res.statusCode ?? 0;
        this.options.onRequest?.({ method: 'GET', path, watch: true, status });
        if (status !== 200) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            finish(errorFor(status, asStatus(parseJson(Buffer.concat(chunks).toString('utf8'))), `watch ${path}: HTTP ${status}`)),
          );
          return;
        }
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (!line) continue;
            const ev = parseJson(line);
            if (isWatchEvent(ev)) {
              try {
                onEvent(ev);
              } catch (e) {
                req.destroy();
                finish(e);
                return;
              }
            }
          }
        });
        res.on('end', () => finish());
        res.on('error', (e) => finish(e));
        res.on('close', () => finish());
      });
      const onAbort = (): void => {
        req.destroy();
        finish();
      };
      signal.addEventListener('abort', onAbort);
      req.on('error', (e) => finish(new KubeApiError('ServerError', `watch ${path}: ${e.message}`, 0)));
      req.end();
    });
  }
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { message: text.slice(0, 500) };
  }
}

function asStatus(v: unknown): KubeStatus | undefined {
  return typeof v === 'object' && v !== null ? (v as KubeStatus) : undefined;
}

function isWatchEvent(v: unknown): v is WatchEvent {
  return typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string' && 'object' in v;
}
