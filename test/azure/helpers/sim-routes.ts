import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import type { TokenCredential } from '@azure/identity';
import { SeededRandom, VirtualClock } from '../../../src/sim/virtual-clock.js';
import { FakeArm, type FakeArmConfig } from '../../../src/sim/arm/fake-arm.js';
import { createArmRestHandler } from '../../../src/sim/arm/rest.js';
import { createArmHttpClient } from '../../../src/sim/arm/sdk-http-client.js';
import { serveArm } from '../../../src/sim/arm/https-face.js';
import { STATIC_INSTANCE_TYPES } from '../../../src/catalog/skus.js';
import { SdkAzure } from '../../../src/azure/sdk-adapter.js';
import type { ReadRetryOptions } from '../../../src/azure/lro.js';
import { runOnClock } from './canned-arm.js';

/** The SDK adapter wired to a simulated ARM through one route. */
export interface Sim {
  clock: VirtualClock;
  arm: FakeArm;
  azure: SdkAzure;
  /** POST /_sim/clock/advance through the route under test. */
  advance(seconds: number): Promise<void>;
  /** Awaits work while the virtual clock fires the timers it waits on. */
  run<T>(work: Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface SimRouteOptions {
  config: FakeArmConfig;
  seed: number;
  credential: TokenCredential;
  readRetry: Partial<ReadRetryOptions>;
}

export interface SimRoute {
  name: string;
  open(options: SimRouteOptions): Promise<Sim>;
}

const EPOCH = Date.UTC(2026, 0, 1);

/** In-process: the SDK's httpClient answers from the REST handler; no socket is opened. */
export const IN_PROCESS: SimRoute = {
  name: 'in-process httpClient',
  async open({ config, seed, credential, readRetry }) {
    const clock = new VirtualClock(EPOCH);
    const arm = new FakeArm({ clock, random: new SeededRandom(seed), config, instanceTypes: STATIC_INSTANCE_TYPES });
    const baseUrl = 'https://fake-arm.azflex.invalid';
    const handler = createArmRestHandler(arm, { baseUrl, clock, lroRetryAfterSeconds: 10 });
    const azure = new SdkAzure({ clock, credential, endpoint: baseUrl, httpClient: createArmHttpClient(handler), readRetry });
    return {
      clock,
      arm,
      azure,
      async advance(seconds) {
        const res = await handler({ method: 'POST', url: `/_sim/clock/advance?seconds=${seconds}`, headers: {} });
        if (res.status !== 200) throw new Error(`advance: ${res.status} ${res.body ?? ''}`);
      },
      run: (work) => runOnClock(clock, work),
      close: async () => undefined,
    };
  },
};

/** HTTPS on loopback with the simulator's freshly minted CA, through the SDK's real Node HTTP client. */
export const HTTPS: SimRoute = {
  name: 'HTTPS with the simulator CA',
  async open({ config, seed, credential, readRetry }) {
    const served = await serveArm({ host: '127.0.0.1', scenarioConfig: config, seed, clockMode: 'manual', lroRetryAfterSeconds: 10 });
    const ca = await readFile(served.caCertPath, 'utf8');
    const azure = new SdkAzure({ clock: served.clock, credential, endpoint: served.endpoint, tlsCa: ca, readRetry });
    return {
      clock: served.clock,
      arm: served.arm,
      azure,
      advance: (seconds) => post(`${served.endpoint}/_sim/clock/advance?seconds=${seconds}`, ca),
      run: (work) => runOnClock(served.clock, work),
      close: () => served.close(),
    };
  },
};

function post(url: string, ca: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', ca }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`POST ${url}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

export const ROUTES: readonly SimRoute[] = [IN_PROCESS, HTTPS];
