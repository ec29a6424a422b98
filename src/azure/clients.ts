import { ComputeManagementClient } from '@azure/arm-compute';
import { NetworkManagementClient } from '@azure/arm-network';
import type { HttpClient, Pipeline } from '@azure/core-rest-pipeline';
import type { TokenCredential } from '@azure/identity';
import type { Clock } from '../ports/clock.js';
import { clockReadRetryPolicy, lroObserverPolicy, type ReadRetryOptions } from './lro.js';

/**
 * Builds the two ARM SDK clients for one subscription with azflex's pipeline: the SDK's
 * retry policy (real timers) is replaced by a clock-driven read-retry policy, and an
 * observer records Retry-After for the LRO driver. Shared by the adapter and the
 * Resource SKUs catalog.
 */
export interface ArmClientOptions {
  clock: Clock;
  credential: TokenCredential;
  /** Custom ARM endpoint (sovereign cloud, or the simulator's HTTPS face). */
  endpoint?: string;
  /** In-process transport: every request goes to this client instead of the network. */
  httpClient?: HttpClient;
  /** Extra trusted CAs (PEM), e.g. the simulator's self-signed CA. Replaces the default CA set. */
  tlsCa?: string | Buffer | Array<string | Buffer>;
  readRetry: ReadRetryOptions;
  userAgentPrefix?: string;
}

export interface ArmClients {
  compute: ComputeManagementClient;
  network: NetworkManagementClient;
}

export function createArmClients(subscriptionId: string, options: ArmClientOptions): ArmClients {
  const common = {
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    ...(options.httpClient !== undefined ? { httpClient: options.httpClient } : {}),
    ...(options.tlsCa !== undefined ? { tlsOptions: { ca: options.tlsCa } } : {}),
    // The clock-driven policy below takes over; 0 keeps the SDK's own one inert even if it stays.
    retryOptions: { maxRetries: 0 },
    userAgentOptions: { userAgentPrefix: options.userAgentPrefix ?? 'azflex' },
  };
  const compute = new ComputeManagementClient(options.credential, subscriptionId, common);
  const network = new NetworkManagementClient(options.credential, subscriptionId, common);
  for (const pipeline of [compute.pipeline, network.pipeline]) configurePipeline(pipeline, options);
  return { compute, network };
}

function configurePipeline(pipeline: Pipeline, options: ArmClientOptions): void {
  pipeline.removePolicy({ phase: 'Retry' });
  pipeline.addPolicy(clockReadRetryPolicy(options.clock, options.readRetry), { phase: 'Retry' });
  pipeline.addPolicy(lroObserverPolicy(options.clock));
}
