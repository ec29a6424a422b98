import type { Pod } from '../ports/cluster.js';
import type { Clock } from '../ports/clock.js';
import type { WorkloadSpec } from './cluster-setup.js';
import type { FakeCluster } from './cluster.js';

/**
 * Submits the workloads' pods (Deployments' replicas, Jobs, researchers' waves) and removes
 * them when their lifetime is up. Lifetimes count from when a pod first runs.
 */
export class Workload {
  private readonly runningSince = new Map<string, number>();
  private readonly lifetimes = new Map<string, number>();
  private frozen = false;
  /** The pods store's write count after the last tick, and the first lifetime end it saw ahead. */
  private pods = -1;
  private nextEnd = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly cluster: FakeCluster,
    private readonly clock: Clock,
    private readonly workloads: readonly WorkloadSpec[],
  ) {}

  /** Schedules every workload (and its repeats) up to the absolute time `untilMs`. */
  start(untilMs: number): void {
    for (const w of this.workloads) {
      const submit = (round: number): void => {
        if (this.frozen) return;
        for (let i = 0; i < w.replicas; i++) this.submit(w, w.ordinalNames ? `${w.name}-${i}` : `${w.name}-${round}-${i}`);
        if (w.repeatEverySeconds && this.clock.now() + w.repeatEverySeconds * 1000 < untilMs) {
          this.clock.setTimer(w.repeatEverySeconds * 1000, () => submit(round + 1));
        }
      };
      this.clock.setTimer(w.atSeconds * 1000, () => submit(0));
    }
  }

  /** Stops new submissions (the world settles before leaks are counted). */
  freeze(): void {
    this.frozen = true;
  }

  tick(): void {
    if (this.lifetimes.size === 0) return;
    const now = this.clock.now();
    // With no pod written since the last look, every bound pod already has its start time:
    // nothing changes until the first lifetime runs out.
    if (this.pods === this.cluster.pods.writes && now < this.nextEnd) return;
    let nextEnd = Number.POSITIVE_INFINITY;
    for (const [key, lifetime] of this.lifetimes) {
      const pod = this.cluster.pods.get(key);
      if (!pod) {
        this.lifetimes.delete(key);
        this.runningSince.delete(key);
        continue;
      }
      if (!pod.spec.nodeName) continue;
      const since = this.runningSince.get(key) ?? now;
      this.runningSince.set(key, since);
      if (now - since >= lifetime) {
        this.cluster.removePod(pod.metadata.namespace, pod.metadata.name);
        this.runningSince.delete(key);
        this.lifetimes.delete(key);
      } else nextEnd = Math.min(nextEnd, since + lifetime);
    }
    this.pods = this.cluster.pods.writes;
    this.nextEnd = nextEnd;
  }

  private submit(w: WorkloadSpec, name: string): void {
    const key = `${w.namespace}/${name}`;
    // A StatefulSet pod that still exists is not submitted twice.
    if (this.cluster.pods.has(key)) return;
    const t = w.template;
    const pod: Pod = {
      ...t,
      metadata: {
        ...t.metadata,
        name,
        namespace: w.namespace,
        uid: this.cluster.newUid(),
        labels: { ...t.metadata.labels },
        annotations: { ...t.metadata.annotations },
        finalizers: [],
        creationTimestamp: new Date(this.clock.now()).toISOString(),
      },
      status: { phase: 'Pending', conditions: [] },
    };
    this.cluster.putPod(pod);
    if (w.lifetimeSeconds) this.lifetimes.set(key, w.lifetimeSeconds * 1000);
  }
}
