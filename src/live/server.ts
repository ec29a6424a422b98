import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NIC_RESERVATION_MS } from '../lifecycle/timing.js';
import { parseClockCommand, applyClockCommand, ClockCommandError } from './controls.js';
import { loadMachines } from './diagrams.js';
import { allowedHost, originHost, readBody, send } from './http.js';
import { renderPage, type PageBootstrap } from './page.js';
import { takeSnapshot } from './snapshot.js';
import type { LiveSource } from './source.js';
import { Timelines, type TimelineEntry } from './timeline.js';

export interface LiveServerOptions {
  source: LiveSource;
  /** 0 picks a free port. */
  port?: number;
  /** Loopback only by default: the page has no authentication. */
  host?: string;
  /** How often changes are pushed (wall ms): batches a fast simulation into a readable stream. */
  pushIntervalMs?: number;
  /** The controller's cluster: its resource names carry it (the timelines attach ARM calls by name). */
  clusterName?: string;
}

export interface LiveServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/** Rows pushed at most per batch; a page that missed some can fetch the actor's timeline. */
const MAX_ROWS_PER_PUSH = 500;
const HEARTBEAT_MS = 15_000;
/**
 * Bytes the server may hold for one SSE client that does not read: past it the client is
 * dropped (its EventSource reconnects and starts again from a whole snapshot). Without it a
 * stalled client buffered every push: 40 of them grew memory by 110 MiB in 30 s.
 */
export const MAX_CLIENT_BUFFER_BYTES = 4 * 1024 * 1024;
const MAX_BODY_BYTES = 1_024;
const ROUTES: ReadonlySet<string> = new Set(['/', '/events', '/api/state', '/api/timeline', '/api/clock']);

/**
 * The live view: one self-contained page, an SSE stream of snapshots and timeline rows,
 * and (only when the source has a virtual clock) POST controls for pause, step and speed.
 * Everything else is read-only.
 */
export async function startLiveServer(options: LiveServerOptions): Promise<LiveServer> {
  const { source } = options;
  const machines = await loadMachines();
  const timelines = new Timelines(machines.graphs, options.clusterName !== undefined ? { clusterName: options.clusterName } : {});
  let pending: TimelineEntry[] = [];
  let dropped = 0;
  const unsubscribe = source.subscribe((entry) => {
    const row = timelines.ingest(entry);
    if (!row) return;
    pending.push(row);
    if (pending.length > MAX_ROWS_PER_PUSH) {
      dropped += pending.length - MAX_ROWS_PER_PUSH;
      pending = pending.slice(-MAX_ROWS_PER_PUSH);
    }
  });

  const bootstrap: PageBootstrap = {
    title: source.title,
    controls: source.clock !== undefined,
    reservationMs: NIC_RESERVATION_MS,
    machines: machines.views.map(({ name, states, final }) => ({ name, states, final })),
  };
  const page = renderPage(bootstrap, machines.views);

  const clients = new Set<ServerResponse>();
  let lastSent = '';
  let lastWrite = 0;
  const push = (): void => {
    try {
      pushNow();
    } catch (err) {
      // A source that fails once (e.g. mid-restart) must not take the server, or the run, down.
      process.emitWarning(`live view: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  const pushNow = (): void => {
    if (clients.size === 0) {
      pending = [];
      dropped = 0;
      return;
    }
    const snapshot = JSON.stringify(takeSnapshot(source, timelines.recentlyFinished()));
    const now = performance.now();
    if (snapshot === lastSent && pending.length === 0) {
      if (now - lastWrite > HEARTBEAT_MS) broadcast(': keep-alive\n\n');
      return;
    }
    lastSent = snapshot;
    const rows = JSON.stringify(pending);
    broadcast(`event: update\ndata: {"snapshot":${snapshot},"rows":${rows},"dropped":${dropped}}\n\n`);
    pending = [];
    dropped = 0;
  };
  const broadcast = (chunk: string): void => {
    lastWrite = performance.now();
    for (const res of clients) {
      if (res.writableLength + chunk.length > MAX_CLIENT_BUFFER_BYTES) {
        clients.delete(res);
        res.destroy();
      } else res.write(chunk);
    }
  };
  const timer = setInterval(push, options.pushIntervalMs ?? 200);

  let port = 0;
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain', 'internal error');
      else res.end();
      process.emitWarning(`live view: ${err instanceof Error ? err.message : String(err)}`);
    });
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // A DNS-rebinding page would reach us under its own host name: answer our names only.
    if (!allowedHost(req.headers.host, port, options.host)) return send(res, 403, 'text/plain', 'forbidden host\n');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = `${req.method ?? 'GET'} ${url.pathname}`;
    switch (route) {
      case 'GET /':
        res.setHeader('Content-Security-Policy', page.csp);
        return send(res, 200, 'text/html; charset=utf-8', page.html);
      case 'GET /events':
        return openStream(req, res);
      case 'GET /api/state':
        return send(res, 200, 'application/json', JSON.stringify(takeSnapshot(source, timelines.recentlyFinished())));
      case 'GET /api/timeline':
        return send(res, 200, 'application/json', JSON.stringify(timelines.timeline(url.searchParams.get('actor') ?? '')));
      case 'POST /api/clock':
        return clock(req, res);
      default:
        if (ROUTES.has(url.pathname)) return send(res, 405, 'text/plain', 'method not allowed\n');
        return send(res, 404, 'text/plain', 'not found\n');
    }
  };

  const openStream = (req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive', 'X-Content-Type-Options': 'nosniff' });
    // The first message is the whole picture; later ones add the rows since the previous push.
    res.write(`event: update\ndata: {"snapshot":${JSON.stringify(takeSnapshot(source, timelines.recentlyFinished()))},"rows":[],"dropped":0}\n\n`);
    clients.add(res);
    req.on('close', () => clients.delete(res));
  };

  const clock = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!source.clock) return send(res, 404, 'text/plain', 'read-only: this source has no clock controls\n');
    // JSON only, same origin only: a form on another site can neither post JSON without a
    // preflight nor pass the Origin check.
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) return send(res, 415, 'text/plain', 'expected application/json\n');
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedHost(originHost(origin), port, options.host)) return send(res, 403, 'text/plain', 'forbidden origin\n');
    try {
      const command = parseClockCommand(await readBody(req, MAX_BODY_BYTES));
      applyClockCommand(source.clock, command);
    } catch (err) {
      if (err instanceof ClockCommandError) return send(res, 400, 'text/plain', `${err.message}\n`);
      throw err;
    }
    push();
    return send(res, 200, 'application/json', JSON.stringify(source.clock.status()));
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const host = options.host ?? '127.0.0.1';
  return {
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    close: async () => {
      clearInterval(timer);
      unsubscribe();
      for (const res of clients) res.end();
      clients.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
