import type { TokenCredential } from '@azure/identity';
import type { VirtualClock } from '../../../src/sim/virtual-clock.js';
import type { FakeArm } from '../../../src/sim/arm/fake-arm.js';
import { createArmRestHandler, type ArmRestHandler } from '../../../src/sim/arm/rest.js';
import { createArmHttpClient } from '../../../src/sim/arm/sdk-http-client.js';
import { SdkAzure } from '../../../src/azure/sdk-adapter.js';
import type { ReadRetryOptions } from '../../../src/azure/lro.js';
import { runOnClock } from './canned-arm.js';

/** One way for the SDK adapter to reach the simulated ARM. */
export interface Sim {
  clock: VirtualClock;
  arm: FakeArm;
  handler: ArmRestHandler;
  azure: SdkAzure;
  /** POST /_sim/clock/advance through the route under test. */
  advance(seconds: number): Promise<void>;
  run<T>(work: Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface SimRouteOptions {
  clock: VirtualClock;
  arm: FakeArm;
  credential: TokenCredential;
  readRetry: Partial<ReadRetryOptions>;
}

export interface SimRoute {
  name: string;
  open(options: SimRouteOptions): Promise<Sim>;
}

/** In-process: the SDK's httpClient answers from the REST handler, no socket. */
export const IN_PROCESS: SimRoute = {
  name: 'in-process httpClient',
  async open({ clock, arm, credential, readRetry }) {
    const baseUrl = 'https://fake-arm.azflex.invalid';
    const handler = createArmRestHandler(arm, { baseUrl, clock, lroRetryAfterSeconds: 10 });
    const azure = new SdkAzure({ clock, credential, endpoint: baseUrl, httpClient: createArmHttpClient(handler), readRetry });
    return {
      clock,
      arm,
      handler,
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

export const ROUTES: readonly SimRoute[] = [IN_PROCESS];
