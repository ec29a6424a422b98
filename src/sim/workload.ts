import type { Pod } from '../ports/cluster.js';
import type { Clock } from '../ports/clock.js';
import type { WorkloadSpec } from './cluster-setup.js';
import type { FakeCluster } from './cluster.js';
import { generatedPodName } from './pod-names.js';

/**
 * Submits the workloads' pods (Deployments' replicas, Jobs, researchers' waves) and removes
 * them when their lifetime is up. Lifetimes count from when a pod first runs.
 *
 * A tick looks only at pods with a lifetime that were written since the last tick (the pods
 * store's change feed) and at those whose lifetime ran out, not at every pod with a lifetime:
 * a pod nobody wrote is as the last look left it.
 */
export class Workload {
  private readonly runningSince = new Map<string, number>();
  private readonly lifetimes = new Map<string, number>();
  /** Each lifetimes key's place in that map's order: removals happen in it. */
  private readonly order = new Map<string, number>();
  private inserted = 0;
  /** Lifetime ends of running pods (runningSince + lifetime), and the earliest of them. */
  private readonly ends = new Map<string, number>();
  private nextEnd = Number.POSITIVE_INFINITY;
  /** Pods with a lifetime written or deleted since the last tick. */
  private readonly written = new Set<string>();
  private frozen = false;
  /** Names bare Pods take, and StatefulSets' replica counts (by namespace/name): generated names keep clear of both. */
  private readonly podNames = new Set<string>();
  private readonly statefulSets = new Map<string, number>();

  constructor(
    private readonly cluster: FakeCluster,
    private readonly clock: Clock,
    private readonly workloads: readonly WorkloadSpec[],
  ) {
    for (const w of workloads) {
      if (w.podNames.from === 'own') this.podNames.add(`${w.namespace}/${w.name}`);
      if (w.podNames.from === 'ordinal') this.statefulSets.set(`${w.namespace}/${w.name}`, Math.max(w.replicas, this.statefulSets.get(`${w.namespace}/${w.name}`) ?? 0));
    }
    cluster.pods.watch((key) => {
      if (this.lifetimes.has(key)) this.written.add(key);
    });
  }

  /** Schedules every workload (and its repeats) up to the absolute time `untilMs`. */
  start(untilMs: number): void {
    for (const w of this.workloads) {
      const submit = (round: number): void => {
        if (this.frozen) return;
        for (let i = 0; i < w.replicas; i++) {
          const name = this.podName(w, round, i);
          if (name !== undefined) this.submit(w, name);
        }
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
    if (this.written.size === 0 && now < this.nextEnd) return;
    const look = this.written.size > 0 ? new Set(this.written) : new Set<string>();
    this.written.clear();
    if (now >= this.nextEnd) for (const [key, end] of this.ends) if (now >= end) look.add(key);
    // Pods whose lifetime is up go in the order they were submitted (what looking at every pod did).
    const rescan = now >= this.nextEnd;
    if (rescan) this.nextEnd = Number.POSITIVE_INFINITY;
    const done: Array<{ key: string; pod: Pod; order: number }> = [];
    for (const key of look) {
      const pod = this.look(key, now);
      if (pod) done.push({ key, pod, order: this.order.get(key)! });
    }
    done.sort((a, b) => a.order - b.order);
    for (const { key, pod } of done) {
      this.forget(key);
      this.cluster.removePod(pod.metadata.namespace, pod.metadata.name);
    }
    // (An end that went away leaves nextEnd early: that tick looks again and finds nothing due.)
    if (rescan) for (const end of this.ends.values()) if (end < this.nextEnd) this.nextEnd = end;
  }

  /** One pod with a lifetime: starts its clock once it runs; returns it once its lifetime is up. */
  private look(key: string, now: number): Pod | undefined {
    const lifetime = this.lifetimes.get(key);
    if (lifetime === undefined) return undefined;
    const pod = this.cluster.pods.get(key);
    if (!pod) {
      this.forget(key);
      return undefined;
    }
    if (!pod.spec.nodeName) {
      // Evicted: its clock keeps running (runningSince stays); it is looked at again once it is written.
      this.ends.delete(key);
      return undefined;
    }
    const since = this.runningSince.get(key) ?? now;
    this.runningSince.set(key, since);
    if (now - since >= lifetime) return pod;
    const end = since + lifetime;
    this.ends.set(key, end);
    if (end < this.nextEnd) this.nextEnd = end;
    return undefined;
  }

  private forget(key: string): void {
    this.lifetimes.delete(key);
    this.order.delete(key);
    this.runningSince.delete(key);
    this.ends.delete(key);
  }

  /**
   * The name of a workload's `i`-th pod of a round, or none while a pod of that fixed name (a
   * bare Pod, a StatefulSet replica) still exists. A generated name is drawn again while it is
   * taken, or is one a bare Pod or StatefulSet of the workloads will take, as the API server's
   * AlreadyExists makes the controller do.
   */
  private podName(w: WorkloadSpec, round: number, i: number): string | undefined {
    const naming = w.podNames;
    if (naming.from !== 'generateName') {
      const name = naming.from === 'own' ? w.name : naming.from === 'ordinal' ? `${w.name}-${i}` : `${w.name}-${round}-${i}`;
      return this.cluster.pods.has(`${w.namespace}/${name}`) ? undefined : name;
    }
    for (let attempt = 0; ; attempt++) {
      const name = generatedPodName(naming.generateName, `${w.namespace}/${round}/${i}`, attempt);
      const key = `${w.namespace}/${name}`;
      if (!this.cluster.pods.has(key) && !this.isFixedName(key)) return name;
    }
  }

  private isFixedName(key: string): boolean {
    if (this.podNames.has(key)) return true;
    const m = /^(.*)-(0|[1-9]\d*)$/.exec(key);
    return m !== null && Number(m[2]) < (this.statefulSets.get(m[1]!) ?? 0);
  }

  private submit(w: WorkloadSpec, name: string): void {
    const key = `${w.namespace}/${name}`;
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
    if (w.lifetimeSeconds) {
      if (!this.lifetimes.has(key)) this.order.set(key, this.inserted++);
      this.lifetimes.set(key, w.lifetimeSeconds * 1000);
      this.written.add(key);
    }
    this.cluster.putPod(pod);
  }
}
