import { ComputeManagementClient } from '@azure/arm-compute';
import { NetworkManagementClient } from '@azure/arm-network';
import type { HttpClient, Pipeline, PipelinePolicy } from '@azure/core-rest-pipeline';
import type { TokenCredential } from '@azure/identity';
import type { Clock } from '../ports/clock.js';
import type { ArmRequestMetrics } from './metrics.js';
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
  /** Count every HTTP request (polls and retries included) and ARM's rate-limit headroom. */
  requestMetrics?: ArmRequestMetrics;
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
  // After the retry phase, so each attempt on the wire is counted once.
  if (options.requestMetrics) pipeline.addPolicy(requestMetricsPolicy(options.requestMetrics), { afterPhase: 'Retry' });
}

const RATE_LIMIT_KINDS = ['reads', 'writes', 'deletes'] as const;

function requestMetricsPolicy(metrics: ArmRequestMetrics): PipelinePolicy {
  return {
    name: 'azflexArmRequestMetrics',
    async sendRequest(request, next) {
      const resource = resourceTypeOf(request.url);
      try {
        const response = await next(request);
        metrics.requests.inc({ method: request.method, resource, status: String(response.status) });
        for (const kind of RATE_LIMIT_KINDS) {
          const remaining = Number(response.headers.get(`x-ms-ratelimit-remaining-subscription-${kind}`));
          if (response.headers.has(`x-ms-ratelimit-remaining-subscription-${kind}`) && Number.isFinite(remaining)) {
            metrics.rateLimitRemaining.set({ kind }, remaining);
          }
        }
        return response;
      } catch (err) {
        metrics.requests.inc({ method: request.method, resource, status: 'error' });
        throw err;
      }
    },
  };
}

/** "Microsoft.Compute/virtualMachines", "Microsoft.Network/operations", ...: low-cardinality labels. */
export function resourceTypeOf(url: string): string {
  const segs = new URL(url).pathname.split('/').filter((s) => s !== '');
  const i = segs.map((s) => s.toLowerCase()).lastIndexOf('providers');
  if (i < 0 || segs[i + 1] === undefined) return 'unknown';
  const ns = segs[i + 1]!;
  const type = segs[i + 2] ?? '';
  // Async-operation monitors live under /locations/<region>/<operations|operationResults>/<id>.
  if (type.toLowerCase() === 'locations' && segs[i + 4] !== undefined) return `${ns}/${segs[i + 4]}`;
  return type ? `${ns}/${type}` : ns;
}
