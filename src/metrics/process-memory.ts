import { Gauge, type Registry } from 'prom-client';

/**
 * The process's memory as prom-client's default metrics name it (the series dashboards for
 * Node processes already chart), read at each scrape: the resident set the memory limit
 * counts, V8's heap, and the memory outside it (buffers, TLS, parsed JSON strings). Only
 * these four, not prom-client's whole default set with its event-loop and GC observers.
 */
export function registerProcessMemoryMetrics(registry: Registry): void {
  const gauges = [
    ['process_resident_memory_bytes', 'Resident memory size in bytes.', 'rss'],
    ['nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.', 'heapTotal'],
    ['nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.', 'heapUsed'],
    ['nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', 'external'],
  ] as const;
  for (const [name, help, field] of gauges) {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(process.memoryUsage()[field]);
      },
    });
  }
}
