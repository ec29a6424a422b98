import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import type { InstanceType } from '../../catalog/skus.js';
import { SeededRandom, VirtualClock } from '../virtual-clock.js';
import { FakeArm } from './fake-arm.js';
import { createArmRestHandler, type ArmRestHandler } from './rest.js';
import { simInstanceTypes } from './sku-catalog.js';
import type { ArmEvent, FakeArmConfig } from './types.js';

/**
 * Serves the fake ARM over HTTPS on loopback, so the production SDK adapter (or `az`,
 * curl, …) can be pointed at it with nothing but an endpoint and a CA to trust
 * (NODE_EXTRA_CA_CERTS=<caCertPath>). Each server mints its own CA; nothing is reused.
 *
 * Real timers are fine here: this file is the boundary between the simulation and the
 * wall clock. In `realtime` mode a pump moves the VirtualClock forward with wall time;
 * in `manual` mode only POST /_sim/clock/advance moves it.
 */
export interface ServeArmOptions {
  /** 0 or absent: an ephemeral port. */
  port?: number;
  host: '127.0.0.1';
  scenarioConfig: FakeArmConfig;
  seed: number;
  clockMode: 'realtime' | 'manual';
  instanceTypes?: readonly InstanceType[];
  /** Retry-After on LROs (default 10, like ARM; tests may pass 0). */
  lroRetryAfterSeconds?: number;
  onEvent?: (e: ArmEvent) => void;
}

export interface ServedArm {
  endpoint: string;
  caCertPath: string;
  subscriptionId: string;
  arm: FakeArm;
  clock: VirtualClock;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Manual-clock runs start at a fixed instant so their logs are reproducible. */
const MANUAL_EPOCH_MS = Date.UTC(2026, 0, 1);
const PUMP_INTERVAL_MS = 50;

export async function serveArm(opts: ServeArmOptions): Promise<ServedArm> {
  const subscriptionId = opts.scenarioConfig.regions[0]?.subscriptionId;
  if (subscriptionId === undefined) throw new Error('serveArm: the scenario has no region');
  const clock = new VirtualClock(opts.clockMode === 'realtime' ? Date.now() : MANUAL_EPOCH_MS);
  const arm = new FakeArm({
    clock,
    random: new SeededRandom(opts.seed),
    config: opts.scenarioConfig,
    instanceTypes: opts.instanceTypes ?? simInstanceTypes(),
    onEvent: opts.onEvent,
  });

  const tls = await mintCertificates(opts.host);
  const dir = await mkdtemp(join(tmpdir(), 'azflex-fake-arm-'));
  const caCertPath = join(dir, 'ca.pem');
  await writeFile(caCertPath, tls.caCert, { mode: 0o644 });

  // The handler needs the endpoint for the URLs it hands out, known once listening.
  let handler: ArmRestHandler | undefined;
  const server: Server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    void serve(req, res);
  });
  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const body = await readBody(req);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const out = await handler!({ method: req.method ?? 'GET', url: req.url ?? '/', headers, body });
      res.writeHead(out.status, out.headers);
      res.end(out.body);
    } catch (err) {
      res.writeHead(err instanceof BodyTooLarge ? 413 : 500, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ error: { code: 'InternalServerError', message: err instanceof Error ? err.message : String(err) } }));
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const endpoint = `https://${opts.host}:${port}`;
  // A random instance id: request ids never repeat across restarts of the server.
  handler = createArmRestHandler(arm, { baseUrl: endpoint, clock, lroRetryAfterSeconds: opts.lroRetryAfterSeconds, instanceId: randomUUID() });

  const stopPump = opts.clockMode === 'realtime' ? startPump(clock) : () => undefined;

  return {
    endpoint,
    caCertPath,
    subscriptionId,
    arm,
    clock,
    async close() {
      stopPump();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Moves virtual time by the wall time elapsed since the last tick (not to the wall clock),
 * so a manual /_sim/clock/advance in realtime mode shifts the timeline instead of freezing it.
 */
function startPump(clock: VirtualClock): () => void {
  let last = Date.now();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    const now = Date.now();
    const step = now - last;
    last = now;
    void clock.runUntil(clock.now() + step).finally(() => {
      busy = false;
    });
  }, PUMP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

interface MintedTls {
  caCert: string;
  key: string;
  cert: string;
}

/** A throw-away CA and a server certificate for `host` (and localhost) signed by it. */
async function mintCertificates(host: string): Promise<MintedTls> {
  const notAfterDate = new Date(Date.now() + 7 * 24 * 3600 * 1000);
  const ca = await generate([{ name: 'commonName', value: 'azflex fake ARM CA' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const server = await generate([{ name: 'commonName', value: host }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: host }, { type: 2, value: 'localhost' }] },
    ],
  });
  return { caCert: ca.cert, key: server.private, cert: server.cert };
}

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new BodyTooLarge(`request body over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(chunks.length === 0 ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
