import type { Pod } from '../ports/cluster.js';
import type { Clock } from '../ports/clock.js';
import type { FakeCluster } from './cluster.js';
import type { Scenario } from './scenario.js';

type Wave = Scenario['workload'][number];

/**
 * Submits the scenario's pods (researchers' jobs, web replicas) and removes them when
 * their lifetime is up. Lifetimes count from when a pod first runs.
 */
export class Workload {
  private readonly runningSince = new Map<string, number>();
  private readonly lifetimes = new Map<string, number>();
  private frozen = false;

  constructor(
    private readonly cluster: FakeCluster,
    private readonly clock: Clock,
    private readonly waves: readonly Wave[],
  ) {}

  /** Schedules every wave (and its repeats) up to the absolute time `untilMs`. */
  start(untilMs: number): void {
    this.waves.forEach((wave, w) => {
      const submit = (round: number): void => {
        if (this.frozen) return;
        for (let i = 0; i < wave.count; i++) this.submit(wave, `${wave.prefix}-${w}-${round}-${i}`);
        if (wave.repeatEverySeconds && this.clock.now() + wave.repeatEverySeconds * 1000 < untilMs) {
          this.clock.setTimer(wave.repeatEverySeconds * 1000, () => submit(round + 1));
        }
      };
      this.clock.setTimer(wave.at * 1000, () => submit(0));
    });
  }

  /** Stops new submissions (the world settles before leaks are counted). */
  freeze(): void {
    this.frozen = true;
  }

  tick(): void {
    const now = this.clock.now();
    for (const [key, pod] of this.cluster.pods) {
      const lifetime = this.lifetimes.get(key);
      if (lifetime === undefined || !pod.spec.nodeName) continue;
      const since = this.runningSince.get(key) ?? now;
      this.runningSince.set(key, since);
      if (now - since >= lifetime) {
        this.cluster.removePod(pod.metadata.namespace, pod.metadata.name);
        this.runningSince.delete(key);
        this.lifetimes.delete(key);
      }
    }
  }

  private submit(wave: Wave, name: string): void {
    const pod: Pod = {
      metadata: {
        name,
        namespace: 'default',
        uid: this.cluster.newUid(),
        labels: { app: wave.prefix },
        annotations: {},
        finalizers: [],
        creationTimestamp: new Date(this.clock.now()).toISOString(),
      },
      spec: {
        nodeSelector: wave.nodeSelector,
        tolerations: wave.tolerations,
        containers: [{ name: 'main', resources: { requests: wave.requests } }],
        initContainers: [],
      },
      status: { phase: 'Pending', conditions: [] },
      ownerKind: 'ReplicaSet',
    };
    this.cluster.putPod(pod);
    if (wave.lifetimeSeconds) this.lifetimes.set(`default/${name}`, wave.lifetimeSeconds * 1000);
  }
}
