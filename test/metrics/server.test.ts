import { Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { startMetricsServer } from '../../src/metrics/server.js';

describe('metrics server scrape hooks', () => {
  it('fills gauges before each scrape, frees them after, and runs concurrent scrapes one at a time', async () => {
    const registry = new Registry();
    const perPod = new Gauge({ name: 'pods_state', help: 'one series per pod', labelNames: ['name'], registers: [registry] });
    const calls: string[] = [];
    let scrapes = 0;
    const server = await startMetricsServer({
      registry,
      port: 0,
      host: '127.0.0.1',
      scrape: {
        before: async () => {
          const n = ++scrapes;
          calls.push(`before ${n}`);
          await new Promise((r) => setTimeout(r, 20));
          perPod.set({ name: `pod-${n}` }, 1);
        },
        after: () => {
          calls.push('after');
          perPod.reset();
        },
      },
    });
    try {
      const get = async (): Promise<string> => (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
      const [a, b] = await Promise.all([get(), get()]);
      expect([a, b].map((t) => /pods_state\{name="(pod-\d)"\} 1/.exec(t)?.[1]).sort()).toEqual(['pod-1', 'pod-2']);
      expect(calls).toEqual(['before 1', 'after', 'before 2', 'after']);
      expect(await registry.getSingleMetricAsString('pods_state')).not.toContain('pod-');
    } finally {
      await server.close();
    }
  });
});
