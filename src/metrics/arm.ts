import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * ARM call metrics. Registered on a registry the caller passes in (never prom-client's
 * global one), so each test, simulator run and controller process counts on its own.
 */
export interface ArmMetrics {
  /** Every ARM call by port operation and outcome: "ok" or the AzureError code. */
  calls: Counter<'operation' | 'code'>;
  /** Wall time (or virtual time, under the simulator's clock) per call, in seconds. */
  duration: Histogram<'operation'>;
}

export function createArmMetrics(registry: Registry): ArmMetrics {
  return {
    calls: new Counter({
      name: 'azflex_arm_calls_total',
      help: 'ARM calls by operation and outcome (ok, or the Azure error code).',
      labelNames: ['operation', 'code'] as const,
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
