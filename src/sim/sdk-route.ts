import type { AccessToken, TokenCredential } from '@azure/identity';
import { SdkAzure } from '../azure/sdk-adapter.js';
import type { AzurePort } from '../ports/azure.js';
import type { FakeArm } from './arm/fake-arm.js';
import { createArmRestHandler } from './arm/rest.js';
import { createArmHttpClient } from './arm/sdk-http-client.js';
import type { VirtualClock } from './virtual-clock.js';

/** The simulated ARM accepts any bearer token; this one never touches the network. */
export const SIMULATOR_CREDENTIAL: TokenCredential = {
  async getToken(): Promise<AccessToken> {
    return { token: 'azflex-simulator', expiresOnTimestamp: Date.UTC(2100, 0, 1) };
  },
};

const BASE_URL = 'https://management.azflex-sim.invalid';

/**
 * `azflex simulate --arm sdk`: the production adapter on the official SDKs, with the whole
 * pipeline (serialisation, LRO polling, error deserialisation), talking to the fake ARM
 * through the in-process REST route. LRO waits go through the virtual clock.
 */
export function sdkArmAdapter(arm: FakeArm, clock: VirtualClock): AzurePort {
  const handler = createArmRestHandler(arm, { baseUrl: BASE_URL, clock, lroRetryAfterSeconds: 10 });
  return new SdkAzure({ clock, credential: SIMULATOR_CREDENTIAL, endpoint: BASE_URL, httpClient: createArmHttpClient(handler) });
}
