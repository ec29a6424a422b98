import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerProcessMemoryMetrics } from '../../src/metrics/process-memory.js';

describe('registerProcessMemoryMetrics', () => {
  it('reports this process\'s resident set, heap and external memory at each scrape, under prom-client\'s default names', async () => {
    const registry = new Registry();
    registerProcessMemoryMetrics(registry);
    const text = await registry.metrics();
    const value = (name: string): number => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
    const usage = process.memoryUsage();
    expect(value('process_resident_memory_bytes')).toBeGreaterThan(usage.heapUsed / 2);
    expect(value('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(value('nodejs_heap_size_total_bytes')).toBeGreaterThanOrEqual(value('nodejs_heap_size_used_bytes'));
    expect(value('nodejs_external_memory_bytes')).toBeGreaterThan(0);
    expect(text).toContain('# TYPE nodejs_external_memory_bytes gauge');
  });
});
