import { createHttpHeaders, type HttpClient, type PipelineRequest, type PipelineResponse } from '@azure/core-rest-pipeline';
import type { AccessToken, TokenCredential } from '@azure/identity';
import type { VirtualClock } from '../../../src/sim/virtual-clock.js';

/**
 * A scripted ARM for adapter tests: routes (method + path regex) answer with canned
 * responses, and every request is recorded with the virtual time it arrived at. It sits
 * behind the SDK's `httpClient` option, so the real pipeline (serialisation, bearer token,
 * LRO headers, error deserialisation) runs on top of it.
 */
export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
  headers: Record<string, string>;
  at: number;
}

export interface CannedResponse {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export type CannedHandler = (req: SeenRequest) => CannedResponse | Error;

export class CannedArm implements HttpClient {
  readonly requests: SeenRequest[] = [];
  private readonly routes: Array<{ method: string; path: RegExp; handlers: CannedHandler[] }> = [];

  constructor(private readonly clock: { now(): number }) {}

  /** Each call answers with the next handler; the last one repeats. */
  on(method: string, path: RegExp, ...responses: Array<CannedResponse | Error | CannedHandler>): this {
    const handlers = responses.map((r): CannedHandler => (typeof r === 'function' ? r : () => r));
    this.routes.push({ method, path, handlers });
    return this;
  }

  seen(method: string, path?: RegExp): SeenRequest[] {
    return this.requests.filter((r) => r.method === method && (!path || path.test(r.path)));
  }

  async sendRequest(request: PipelineRequest): Promise<PipelineResponse> {
    const url = new URL(request.url);
    const body = typeof request.body === 'string' && request.body.length > 0 ? (JSON.parse(request.body) as unknown) : undefined;
    const seen: SeenRequest = {
      method: request.method,
      path: url.pathname,
      query: url.searchParams,
      body,
      headers: request.headers.toJSON(),
      at: this.clock.now(),
    };
    this.requests.push(seen);
    const route = this.routes.find((r) => r.method === request.method && r.path.test(url.pathname));
    if (!route) return respond(request, { status: 404, body: { error: { code: 'NotFound', message: `no route for ${request.method} ${url.pathname}` } } });
    const handler = route.handlers.length > 1 ? route.handlers.shift()! : route.handlers[0]!;
    const out = handler(seen);
    if (out instanceof Error) throw out;
    return respond(request, out);
  }
}

function respond(request: PipelineRequest, r: CannedResponse): PipelineResponse {
  const headers = createHttpHeaders({ 'content-type': 'application/json', 'x-ms-request-id': 'canned', ...(r.headers ?? {}) });
  return { request, status: r.status, headers, bodyAsText: r.body === undefined ? '' : JSON.stringify(r.body) };
}

export const armError = (status: number, code: string, message: string, headers?: Record<string, string>): CannedResponse => ({
  status,
  body: { error: { code, message } },
  ...(headers ? { headers } : {}),
});

/** A credential that never touches the network (the bearer policy only needs a token). */
export const fakeCredential: TokenCredential = {
  async getToken(): Promise<AccessToken> {
    // Real-time based expiry is what the bearer policy compares against; far future on purpose.
    return { token: 'fake-arm-token', expiresOnTimestamp: 4_102_444_800_000 };
  },
};

/**
 * Awaits `work` while firing the virtual clock's timers whenever nothing else can move:
 * the adapter's LRO polls and read retries sleep on that clock.
 */
export async function runOnClock<T>(clock: VirtualClock, work: Promise<T>, maxVirtualMs = 24 * 3600_000): Promise<T> {
  let settled = false;
  const guarded = work.finally(() => {
    settled = true;
  });
  guarded.catch(() => undefined);
  const limit = clock.now() + maxVirtualMs;
  for (let idle = 0; !settled; ) {
    await new Promise((resolve) => setImmediate(resolve));
    if (settled) break;
    const next = clock.peek();
    if (next !== undefined && next <= limit) {
      await clock.runUntil(next);
      idle = 0;
    } else if (++idle > 2000) {
      throw new Error('runOnClock: no progress (no timers and the work did not settle)');
    } else {
      // Real I/O in flight (HTTPS): give it a moment of wall time.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
  return guarded;
}
