import type { Scenario } from '../../sim/scenario.js';
import { MAX_SETTLE_MS } from '../../sim/simulation.js';
import { leakSummary, type SimulationResult } from '../../sim/result.js';

type Row = [label: string, value: (r: SimulationResult) => string];

const ROWS: Row[] = [
  ['offerings cache', (r) => (r.offeringsCache ? 'on' : 'off')],
  ['NodeClaims created', (r) => String(r.nodeClaimsCreated)],
  ['VMs launched', (r) => String(r.nodeClaimsLaunched)],
  ['VM create failures', (r) => String(r.createFailures)],
  ['  refused for quota', (r) => String(r.createsRefusedForQuota)],
  ['  refused for capacity', (r) => String(r.createsRefusedForCapacity)],
  ['create attempts / hour', (r) => String(r.createAttemptsPerHour)],
  ['NICs created', (r) => String(r.nicsCreated)],
  ['NICs deleted', (r) => String(r.nicsDeleted)],
  ['leaked NICs', (r) => String(r.leakedNics)],
  ['leaked VMs', (r) => String(r.leakedVms)],
  ['leaked disks', (r) => String(r.leakedDisks)],
  ['stuck NodeClaims', (r) => String(r.stuckNodeClaims)],
  ['Failed VMs left', (r) => String(r.failedVmsLeft)],
  ['NIC deletes while attached', (r) => String(r.nicDeletesWhileAttached)],
  ['peak subnet IPs used', (r) => String(r.peakSubnetIpsUsed)],
  ['subnet IPs used at end', (r) => String(r.subnetIpsUsedAtEnd)],
  ['time to reap p50 / max (s)', (r) => (r.timeToReapSeconds.count ? `${r.timeToReapSeconds.p50} / ${r.timeToReapSeconds.max}` : '-')],
  ['pod to Running p50 / p99 (s)', (r) => (r.podTimeToRunningSeconds.count ? `${r.podTimeToRunningSeconds.p50} / ${r.podTimeToRunningSeconds.p99}` : '-')],
  ['ARM writes', (r) => String(r.armWrites)],
  ['controller restarts', (r) => String(r.restarts)],
  ['pods running / pending', (r) => `${r.podsRunning} / ${r.podsPending}`],
  ['wall seconds', (r) => r.wallSeconds.toFixed(2)],
];

/** The human report: one column per strategy, then a verdict line per strategy. */
export function formatComparison(scenario: Scenario, results: SimulationResult[]): string {
  const first = results[0]!;
  const header = ['', ...results.map((r) => r.strategy)];
  const table = [header, ...ROWS.map(([label, f]) => [label, ...results.map(f)])];
  const widths = header.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
  const line = (row: string[]) => row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('   ');
  const out: string[] = [
    `azflex simulate — ${scenario.name}, ${first.simulatedSeconds / 3600} h simulated, seed ${first.seed}`,
    scenario.description,
    '',
    line(table[0]!),
    ...table.slice(1).map(line),
    '',
  ];
  for (const r of results) {
    const leaked = leakSummary(r);
    const codes = Object.entries(r.createFailuresByCode).map(([c, n]) => `${c}×${n}`).join(', ');
    out.push(
      leaked === undefined
        ? `  ${r.strategy}: nothing leaked${codes ? ` (failures: ${codes})` : ''}`
        : `  ${r.strategy}: LEAKED ${leaked}${codes ? ` (failures: ${codes})` : ''}`,
    );
  }
  out.push(
    '',
    'Leaks are counted once the world has settled after the run (provisioning and disruption stopped, no operation in flight,',
    `every NodeClaim registered or gone; at most ${MAX_SETTLE_MS / 3_600_000} simulated hours): a NodeClaim still unregistered or terminating then is stuck,`,
    'and what it holds counts as leaked.',
    '',
  );
  return out.join('\n');
}
