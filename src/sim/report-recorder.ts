import type { SimulationReportInput, NamedSeries, TimePoint } from '../viz/report.js';
import type { LogEntry } from '../runtime/event-log.js';
import { SIM_EPOCH_MS, type SimulationWorld } from './simulation.js';
import type { SimulationResult } from './result.js';
import type { FakeCluster } from './cluster.js';
import { placementByZone, placementOf } from './placement.js';

const SAMPLE_MS = 60_000;

/**
 * Samples a simulation once per simulated minute for `azflex simulate --report`: NICs as ARM
 * sees them (attached, reserved by a VM create, idle), subnet addresses, VMs by state, and ARM
 * calls per minute by outcome. ARM's view, not the actors', so every strategy is drawn alike.
 */
export class ReportRecorder {
  private readonly nics = new Map<string, TimePoint[]>();
  private readonly subnets = new Map<string, TimePoint[]>();
  private readonly capacity = new Map<string, number>();
  private readonly vms = new Map<string, TimePoint[]>();
  private readonly calls = new Map<string, Map<number, number>>();
  private world: SimulationWorld | undefined;

  /** Pass as `onWorld`: only the first incarnation's world is sampled (it is the same world). */
  readonly onWorld = (world: SimulationWorld): void => {
    if (this.world) return;
    this.world = world;
    world.eventLog.subscribe((e) => this.countCall(e));
    const tick = (): void => {
      this.sample();
      world.clock.setTimer(SAMPLE_MS, tick);
    };
    tick();
  };

  /** The run's report; with its final cluster, the placement by region and zone too. */
  build(result: SimulationResult, cluster?: FakeCluster): SimulationReportInput {
    const series = (m: Map<string, TimePoint[]>): NamedSeries[] => [...m].sort(([a], [b]) => a.localeCompare(b)).map(([name, points]) => ({ name, points }));
    const perMinute: NamedSeries[] = [...this.calls]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, byMinute]) => ({ name, points: [...byMinute].sort(([a], [b]) => a - b).map(([minute, value]) => ({ t: minute * SAMPLE_MS, value })) }));
    return {
      name: result.strategy,
      subtitle: `${result.scenario}, seed ${result.seed}`,
      durationMs: (result.simulatedSeconds + result.settleSeconds) * 1000,
      nicsByState: series(this.nics),
      subnetIpsUsed: series(this.subnets),
      subnetCapacity: [...this.capacity].map(([name, capacity]) => ({ name, capacity })),
      vms: series(this.vms),
      armCallsPerMinute: perMinute,
      createFailuresByCode: Object.entries(result.createFailuresByCode).map(([code, count]) => ({ code, count })),
      timeToReapMs: this.world ? this.world.arm.reapTimesSeconds().map((s) => s * 1000) : [],
      ...(cluster ? { placement: placementByZone(placementOf(cluster)) } : {}),
      summary: [
        { label: 'leaked NICs', value: result.leakedNics },
        { label: 'leaked VMs', value: result.leakedVms },
        { label: 'leaked disks', value: result.leakedDisks },
        { label: 'VMs launched', value: result.nodeClaimsLaunched },
        { label: 'VM create failures', value: result.createFailures },
        { label: 'refused for quota', value: result.createsRefusedForQuota },
        { label: 'refused for capacity', value: result.createsRefusedForCapacity },
        { label: 'time to reap a NIC p50 / p99 / max (s)', value: result.timeToReapSeconds.count ? `${result.timeToReapSeconds.p50} / ${result.timeToReapSeconds.p99} / ${result.timeToReapSeconds.max}` : '-' },
        { label: 'ARM writes', value: result.armWrites },
        { label: 'ARM reads per hour per subscription', value: result.armReadsPerHourPerSubscription },
        { label: 'pod time to Running p50 / p99 / max (s)', value: timeToRunning(result.podTimeToRunningSeconds) },
        ...Object.entries(result.podTimeToRunningSeconds.byNodePool).map(([pool, p]) => ({ label: `  NodePool ${pool}`, value: timeToRunning(p) })),
      ],
    };
  }

  private sample(): void {
    const w = this.world!;
    const t = w.clock.now() - SIM_EPOCH_MS;
    const snap = w.arm.snapshot();
    const counts = { attached: 0, 'reserved (VM create)': 0, idle: 0 };
    for (const nic of snap.nics) {
      if (nic.virtualMachineId) counts.attached++;
      else if (nic.reservedUntil !== undefined) counts['reserved (VM create)']++;
      else counts.idle++;
    }
    for (const [state, n] of Object.entries(counts)) push(this.nics, state, t, n);
    for (const s of snap.subnets) {
      const name = s.id.slice(s.id.lastIndexOf('/') + 1);
      push(this.subnets, name, t, s.used);
      this.capacity.set(name, s.capacity);
    }
    const byState = new Map<string, number>([['Succeeded', 0], ['Creating', 0], ['Deleting', 0]]);
    for (const vm of snap.vms) byState.set(vm.provisioningState, (byState.get(vm.provisioningState) ?? 0) + 1);
    for (const [state, n] of byState) push(this.vms, state, t, n);
  }

  private countCall(e: LogEntry): void {
    if (e.kind !== 'world' || !e.event || !/\.(put|get|delete|list)$/.test(e.event)) return;
    const status = Number.parseInt(e.detail ?? '', 10);
    const outcome = status === 429 ? 'throttled (429)' : status >= 500 || status === 408 ? 'transient (5xx/408)' : status >= 400 && status !== 404 ? 'refused (4xx)' : 'ok';
    const minute = Math.floor((e.t - SIM_EPOCH_MS) / SAMPLE_MS);
    const m = this.calls.get(outcome) ?? new Map<number, number>();
    m.set(minute, (m.get(minute) ?? 0) + 1);
    this.calls.set(outcome, m);
  }
}

function push(m: Map<string, TimePoint[]>, name: string, t: number, value: number): void {
  const points = m.get(name) ?? [];
  points.push({ t, value });
  m.set(name, points);
}

function timeToRunning(p: { p50: number; p99: number; max: number; count: number }): string {
  return p.count === 0 ? '-' : `${p.p50} / ${p.p99} / ${p.max} (${p.count} pods)`;
}
