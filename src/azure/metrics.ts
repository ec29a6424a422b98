import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * ARM call metrics. Registered on a registry the caller passes in (never prom-client's
 * global one), so each test, simulator run and controller process counts on its own.
 */
export interface ArmMetrics {
  /** Every ARM call by port operation, outcome ("ok" or the AzureError code) and subscription (ARM's limits are per subscription). */
  calls: Counter<'operation' | 'code' | 'subscription'>;
  /** Wall time (or virtual time, under the simulator's clock) per call, in seconds. */
  duration: Histogram<'operation'>;
}

export function createArmMetrics(registry: Registry): ArmMetrics {
  return {
    calls: new Counter({
      name: 'azflex_arm_calls_total',
      help: 'ARM calls by operation, outcome (ok, or the Azure error code) and subscription.',
      labelNames: ['operation', 'code', 'subscription'] as const,
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'azflex_arm_call_duration_seconds',
      help: 'Duration of ARM calls, including long-running-operation polling, on the injected clock.',
      labelNames: ['operation'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
      registers: [registry],
    }),
  };
}

/**
 * HTTP-level view of the SDK adapter: every request the pipeline sends (LRO polls and read
 * retries included), which is what ARM's rate limits count, plus the headroom ARM reports.
 */
export interface ArmRequestMetrics {
  requests: Counter<'method' | 'resource' | 'status'>;
  /** Last x-ms-ratelimit-remaining-subscription-{reads,writes,deletes} ARM sent. */
  rateLimitRemaining: Gauge<'kind'>;
}

export function createArmRequestMetrics(registry: Registry): ArmRequestMetrics {
  return {
    requests: new Counter({
      name: 'azflex_arm_http_requests_total',
      help: 'HTTP requests sent to ARM by the SDK adapter, by method, resource type and status ("error" when no response).',
      labelNames: ['method', 'resource', 'status'] as const,
      registers: [registry],
    }),
    rateLimitRemaining: new Gauge({
      name: 'azflex_arm_ratelimit_remaining',
      help: 'Remaining subscription requests ARM reported on its last response, by kind (reads, writes, deletes).',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
  };
}
