import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NIC_RESERVATION_MS } from '../lifecycle/timing.js';
import { parseClockCommand, applyClockCommand, ClockCommandError } from './controls.js';
import { loadMachines } from './diagrams.js';
import { allowedHost, originHost, readBody, send } from './http.js';
import { renderPage, type Page, type PageBootstrap } from './page.js';
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
  const snapshotJson = (): string => JSON.stringify(takeSnapshot(source, timelines.recentlyFinished()));
  const stream = new UpdateStream(snapshotJson);
  const unsubscribe = source.subscribe((entry) => {
    const row = timelines.ingest(entry);
    if (row) stream.add(row);
  });
  const timer = setInterval(() => stream.push(), options.pushIntervalMs ?? 200);

  const bootstrap: PageBootstrap = {
    title: source.title,
    controls: source.clock !== undefined,
    reservationMs: NIC_RESERVATION_MS,
    machines: machines.views.map(({ name, states, final }) => ({ name, states, final })),
  };
  const context: RequestContext = { source, timelines, stream, snapshotJson, page: renderPage(bootstrap, machines.views), host: options.host, port: 0 };
  const server = createServer((req, res) => {
    handleRequest(context, req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain', 'internal error');
      else res.end();
      process.emitWarning(`live view: ${err instanceof Error ? err.message : String(err)}`);
    });
  });
  const host = options.host ?? '127.0.0.1';
  context.port = await listen(server, options.port ?? 0, host);
  return {
    port: context.port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${context.port}/`,
    close: async () => {
      clearInterval(timer);
      unsubscribe();
      stream.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/**
 * The SSE clients and the timeline rows not yet pushed to them. Each push sends the snapshot
 * and the rows since the previous one, or a keep-alive when nothing changed for a while.
 */
class UpdateStream {
  private readonly clients = new Set<ServerResponse>();
  private pending: TimelineEntry[] = [];
  private dropped = 0;
  private lastSent = '';
  private lastWrite = 0;

  constructor(private readonly snapshotJson: () => string) {}

  add(row: TimelineEntry): void {
    this.pending.push(row);
    if (this.pending.length > MAX_ROWS_PER_PUSH) {
      this.dropped += this.pending.length - MAX_ROWS_PER_PUSH;
      this.pending = this.pending.slice(-MAX_ROWS_PER_PUSH);
    }
  }

  open(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive', 'X-Content-Type-Options': 'nosniff' });
    // The first message is the whole picture; later ones add the rows since the previous push.
    res.write(`event: update\ndata: {"snapshot":${this.snapshotJson()},"rows":[],"dropped":0}\n\n`);
    this.clients.add(res);
    req.on('close', () => this.clients.delete(res));
  }

  push(): void {
    try {
      this.pushNow();
    } catch (err) {
      // A source that fails once (e.g. mid-restart) must not take the server, or the run, down.
      process.emitWarning(`live view: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  close(): void {
    for (const res of this.clients) res.end();
    this.clients.clear();
  }

  private pushNow(): void {
    if (this.clients.size === 0) {
      this.pending = [];
      this.dropped = 0;
      return;
    }
    const snapshot = this.snapshotJson();
    const now = performance.now();
    if (snapshot === this.lastSent && this.pending.length === 0) {
      if (now - this.lastWrite > HEARTBEAT_MS) this.broadcast(': keep-alive\n\n');
      return;
    }
    this.lastSent = snapshot;
    const rows = JSON.stringify(this.pending);
    this.broadcast(`event: update\ndata: {"snapshot":${snapshot},"rows":${rows},"dropped":${this.dropped}}\n\n`);
    this.pending = [];
    this.dropped = 0;
  }

  private broadcast(chunk: string): void {
    this.lastWrite = performance.now();
    for (const res of this.clients) {
      if (res.writableLength + chunk.length > MAX_CLIENT_BUFFER_BYTES) {
        this.clients.delete(res);
        res.destroy();
      } else res.write(chunk);
    }
  }
}

interface RequestContext {
  readonly source: LiveSource;
  readonly timelines: Timelines;
  readonly stream: UpdateStream;
  readonly snapshotJson: () => string;
  readonly page: Page;
  readonly host: string | undefined;
  /** Known once listening; the Host and Origin checks compare against it. */
  port: number;
}

async function handleRequest(context: RequestContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // A DNS-rebinding page would reach us under its own host name: answer our names only.
  if (!allowedHost(req.headers.host, context.port, context.host)) return send(res, 403, 'text/plain', 'forbidden host\n');
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const route = `${req.method ?? 'GET'} ${url.pathname}`;
  switch (route) {
    case 'GET /':
      res.setHeader('Content-Security-Policy', context.page.csp);
      return send(res, 200, 'text/html; charset=utf-8', context.page.html);
    case 'GET /events':
      return context.stream.open(req, res);
    case 'GET /api/state':
      return send(res, 200, 'application/json', context.snapshotJson());
    case 'GET /api/timeline':
      return send(res, 200, 'application/json', JSON.stringify(context.timelines.timeline(url.searchParams.get('actor') ?? '')));
    case 'POST /api/clock':
      return clockRequest(context, req, res);
    default:
      if (ROUTES.has(url.pathname)) return send(res, 405, 'text/plain', 'method not allowed\n');
      return send(res, 404, 'text/plain', 'not found\n');
  }
}

async function clockRequest(context: RequestContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { clock } = context.source;
  if (!clock) return send(res, 404, 'text/plain', 'read-only: this source has no clock controls\n');
  // JSON only, same origin only: a form on another site can neither post JSON without a
  // preflight nor pass the Origin check.
  if (!(req.headers['content-type'] ?? '').startsWith('application/json')) return send(res, 415, 'text/plain', 'expected application/json\n');
  const origin = req.headers.origin;
  if (origin !== undefined && !allowedHost(originHost(origin), context.port, context.host)) return send(res, 403, 'text/plain', 'forbidden origin\n');
  try {
    const command = parseClockCommand(await readBody(req, MAX_BODY_BYTES));
    applyClockCommand(clock, command);
  } catch (err) {
    if (err instanceof ClockCommandError) return send(res, 400, 'text/plain', `${err.message}\n`);
    throw err;
  }
  context.stream.push();
  return send(res, 200, 'application/json', JSON.stringify(clock.status()));
}
