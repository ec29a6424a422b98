import type { LogEntry, MemoryEventLog } from '../runtime/event-log.js';
import { SIM_EPOCH_MS, type SimulationOptions, type SimulationWorld } from '../sim/simulation.js';
import { machineGraph } from '../viz/machines.js';
import { MACHINE_NAMES } from '../viz/names.js';
import { Pacer, type PacerOptions } from './pacer.js';
import type { LiveActorStates, LiveReservation, LiveSource } from './source.js';

export interface SimulationSourceOptions extends PacerOptions {
  title: string;
  /** States after which the runtime drops an actor (the machines' final states). */
  finalStates?: ReadonlySet<string>;
}

/** From the machine definitions, so a renamed final state cannot leave a stale actor on the page. */
function machinesFinalStates(): ReadonlySet<string> {
  const out = new Set<string>();
  for (const name of MACHINE_NAMES) {
    const graph = machineGraph(name);
    for (const s of graph.states) if (s.kind === 'final') out.add(s.id.slice(graph.id.length + 1));
  }
  return out;
}

/**
 * The live view's source for `runSimulation`: hand `simulationOptions()` to the run, and
 * call `finish()` when it returns. Each controller incarnation (after a simulated crash)
 * brings a new Runtime; the event log is the run's, so one subscription covers them all.
 */
export class SimulationLiveSource implements LiveSource {
  readonly title: string;
  readonly startedAt = SIM_EPOCH_MS;
  readonly clock: Pacer;
  private world: SimulationWorld | undefined;
  private subscribedLog: MemoryEventLog | undefined;
  private readonly listeners = new Set<(entry: LogEntry) => void>();
  private readonly finalStates: ReadonlySet<string>;
  /**
   * Actor states of the current incarnation as the event log tells them. The runtime is
   * stopped (and forgets its actors) when the run ends, so after `finish()` this is what the
   * page shows: the settled world's actors, not an empty one.
   */
  private readonly fromLog = { nodeClaims: new Map<string, string>(), nics: new Map<string, string>() };
  private done = false;

  constructor(options: SimulationSourceOptions) {
    this.title = options.title;
    // A simulation starts paused: nothing should happen before someone is looking.
    this.clock = new Pacer({ stepMs: options.stepMs, speed: options.speed, paused: options.paused ?? true });
    this.finalStates = options.finalStates ?? machinesFinalStates();
  }

  simulationOptions(): Required<Pick<SimulationOptions, 'pace' | 'onWorld' | 'onProgress'>> {
    return {
      pace: this.clock.pace,
      onWorld: (world) => this.attach(world),
      // The main phase is over; the world settles unpaced (until quiescent) right after.
      onProgress: (fraction) => {
        if (fraction >= 1) this.clock.finish();
      },
    };
  }

  /** The run returned: from now on the page shows the settled world. */
  finish(): void {
    this.done = true;
    this.clock.finish();
  }

  now(): number {
    return this.world?.clock.now() ?? SIM_EPOCH_MS;
  }

  actorStates(): LiveActorStates {
    if (this.done || !this.world) return this.fromLog;
    return this.world.runtime.actorStates();
  }

  reservations(): LiveReservation[] {
    if (!this.world) return [];
    const snap = this.world.arm.snapshot();
    // Only the name and the deadline leave here: a NIC view has no secrets, but the page needs no more.
    const out: LiveReservation[] = [];
    for (const nic of snap.nics) {
      if (nic.reservedUntil !== undefined && nic.reservedUntil > snap.t) out.push({ nic: nic.name, until: nic.reservedUntil });
    }
    return out;
  }

  subscribe(listener: (entry: LogEntry) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private attach(world: SimulationWorld): void {
    this.world = world;
    // A new incarnation starts with no actors; it rebuilds them from the world.
    this.fromLog.nodeClaims.clear();
    this.fromLog.nics.clear();
    if (this.subscribedLog === world.eventLog) return;
    this.subscribedLog = world.eventLog;
    world.eventLog.subscribe((entry) => {
      this.track(entry);
      for (const l of this.listeners) l(entry);
    });
  }

  private track(entry: LogEntry): void {
    if (entry.kind !== 'transition' || entry.to === undefined) return;
    const slash = entry.actor.indexOf('/');
    const kind = entry.actor.slice(0, slash);
    const map = kind === 'nodeclaim' ? this.fromLog.nodeClaims : kind === 'nic' ? this.fromLog.nics : undefined;
    if (!map) return;
    const name = entry.actor.slice(slash + 1);
    if (this.finalStates.has(entry.to)) map.delete(name);
    else map.set(name, entry.to);
  }
}
