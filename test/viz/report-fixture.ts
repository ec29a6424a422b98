import type { NamedSeries, SimulationReportInput } from '../../src/viz/report.js';

/** A deterministic fake run: the shapes a simulator produces, without running one. */
export function fakeRun(name: string, scale: number): SimulationReportInput {
  const minute = 60_000;
  const durationMs = 2 * 60 * minute;
  const sample = (f: (m: number) => number): NamedSeries['points'] =>
    Array.from({ length: 121 }, (_, m) => ({ t: m * minute, value: Math.max(0, Math.round(f(m))) }));
  return {
    name,
    subtitle: `quota-storm, seed 1`,
    durationMs,
    nicsByState: [
      { name: 'attached', points: sample((m) => 20 * scale + 5 * Math.sin(m / 9)) },
      { name: 'reserved-180s', points: sample((m) => (m % 20 < 4 ? 6 * scale : 1)) },
      { name: 'deleting', points: sample((m) => (m % 20 === 4 ? 3 : 0)) },
    ],
    subnetIpsUsed: [{ name: 'eastus/default', points: sample((m) => 30 * scale + 6 * Math.sin(m / 7)) }],
    subnetCapacity: [{ name: 'eastus/default', capacity: 59 }],
    vms: [{ name: 'vms', points: sample((m) => 18 * scale + 4 * Math.sin(m / 9)) }],
    armCallsPerMinute: [
      { name: 'ok', points: sample((m) => 40 + 10 * Math.cos(m / 5)) },
      { name: 'throttled', points: sample((m) => (m > 60 && m < 75 ? 12 * scale : 0)) },
      { name: 'reserved', points: sample((m) => (m % 20 === 3 ? 5 : 0)) },
    ],
    createFailuresByCode: [
      { code: 'QuotaExceeded', count: Math.round(14 * scale) },
      { code: 'AllocationFailed', count: 6 },
      { code: 'SubnetIsFull', count: scale > 1 ? 2 : 0 },
    ],
    timeToReapMs: Array.from({ length: 40 }, (_, i) => 181_000 + ((i * 7919) % 30) * 1000 * scale),
    summary: [
      { label: 'NICs leaked', value: 0 },
      { label: 'NodeClaims launched', value: 57 },
    ],
  };
}
