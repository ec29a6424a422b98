import { clusterNamesFor, legacyNamesFor } from '../azure/naming.js';
import { redactString } from '../log/redact.js';
import type { LogEntry } from '../runtime/event-log.js';
import type { MachineGraph } from '../viz/graph.js';
import { inferCause, type EffectOutcome } from './causes.js';

/** One row of an actor's timeline, as the page shows it. */
export interface TimelineEntry {
  /** Increasing across the server's life: the page merges fetched history and pushed rows by it. */
  seq: number;
  t: number;
  /** `nodeclaim/<name>` or `nic/<name>`: the actor whose timeline the row belongs to. */
  actor: string;
  kind: 'transition' | 'effect' | 'arm' | 'controller';
  from?: string;
  to?: string;
  /** For transitions: the event or effect outcome that caused it. */
  cause?: string;
  /** Effect name, ARM operation or controller event. */
  event?: string;
  detail?: string;
}

export interface TimelineOptions {
  /** Rows kept per actor (the oldest go first). */
  perActor?: number;
  /** Actors whose history is kept (the least recently active go first). */
  maxActors?: number;
  /** Finished actors listed for picking after the runtime dropped them. */
  recentFinished?: number;
  /** The controller's cluster, whose hash is in its resource names (without it, only the first version's names are matched). */
  clusterName?: string;
}

const MAX_DETAIL = 160;

/**
 * Turns the event log into per-actor timelines: transitions with their cause, effect
 * outcomes, and the ARM calls on the actor's own resources (its VM, its NIC). Bounded, so
 * a controller that runs for weeks does not grow without end.
 */
export class Timelines {
  private seq = 0;
  private readonly history = new Map<string, TimelineEntry[]>();
  private readonly lastEffect = new Map<string, EffectOutcome & { t: number }>();
  /** ARM resource name → actor, for attaching `arm/<name>` entries. */
  private readonly resourceOwner = new Map<string, string>();
  private readonly finished: string[] = [];
  private readonly perActor: number;
  private readonly maxActors: number;
  private readonly recentFinished: number;
  private readonly clusterName: string | undefined;

  constructor(
    private readonly graphs: ReadonlyMap<string, MachineGraph>,
    options: TimelineOptions = {},
  ) {
    this.perActor = options.perActor ?? 200;
    this.maxActors = options.maxActors ?? 2_000;
    this.recentFinished = options.recentFinished ?? 30;
    this.clusterName = options.clusterName;
  }

  /** Files one log entry; returns the row made of it, if it belongs to an actor. */
  ingest(entry: LogEntry): TimelineEntry | undefined {
    const kind = actorKind(entry.actor);
    if (entry.kind === 'world') return this.ingestArm(entry);
    if (kind === undefined) return entry.kind === 'controller' ? this.row(entry.actor, entry, { kind: 'controller', event: entry.event, detail: entry.detail }, false) : undefined;
    if (entry.kind === 'effect') {
      const outcome = { effect: entry.event ?? '?', detail: clean(entry.detail ?? '') };
      // Outcomes wait for the transition they cause; one whose actor never moved again is dropped here.
      if (this.lastEffect.size >= this.maxActors) this.lastEffect.clear();
      this.lastEffect.set(entry.actor, { ...outcome, t: entry.t });
      return this.row(entry.actor, entry, { kind: 'effect', event: outcome.effect, detail: outcome.detail });
    }
    if (entry.kind !== 'transition' || entry.to === undefined) return undefined;
    this.noteResources(entry.actor);
    const effect = this.lastEffect.get(entry.actor);
    this.lastEffect.delete(entry.actor);
    // Only an outcome logged at the same instant can have caused this transition.
    const causedBy = effect && effect.t === entry.t ? effect : undefined;
    const graph = this.graphs.get(kind);
    // A named event (VM_FAILED, OBSERVED, NIC_READY…) is the cause as recorded; for XState's own
    // done/error/after/start events the machine graph and the effect outcome tell a fuller story.
    const recorded = entry.event && !/^(done|error): |^after |^start$/.test(entry.event) ? entry.event : undefined;
    const cause = recorded ?? (graph ? inferCause(graph, entry.from, entry.to, causedBy) : (entry.event ?? 'unknown'));
    const row = this.row(entry.actor, entry, { kind: 'transition', from: entry.from, to: entry.to, cause });
    if (graph && isFinal(graph, entry.to)) this.markFinished(entry.actor);
    return row;
  }

  /** The rows kept for one actor, oldest first. */
  timeline(actor: string): TimelineEntry[] {
    return [...(this.history.get(actor) ?? [])];
  }

  /** Actors that reached a final state recently, newest first: still pickable on the page. */
  recentlyFinished(): string[] {
    return [...this.finished].reverse();
  }

  private ingestArm(entry: LogEntry): TimelineEntry | undefined {
    const resource = entry.actor.startsWith('arm/') ? entry.actor.slice(4) : entry.actor;
    const owner = this.resourceOwner.get(resource);
    if (owner === undefined) return undefined;
    return this.row(owner, entry, { kind: 'arm', event: entry.event, detail: clean(entry.detail ?? '') });
  }

  /** A NodeClaim's VM is its own; its NIC too, until (unless) a NIC actor takes it over. */
  private noteResources(actor: string): void {
    if (this.history.has(actor)) return;
    const name = actor.slice(actor.indexOf('/') + 1);
    if (actorKind(actor) === 'nodeclaim') {
      const all = this.clusterName === undefined ? [legacyNamesFor(name)] : [clusterNamesFor(name, this.clusterName), legacyNamesFor(name)];
      for (const names of all) {
        this.resourceOwner.set(names.vm, actor);
        if (!this.resourceOwner.get(names.nic)?.startsWith('nic/')) this.resourceOwner.set(names.nic, actor);
      }
    } else {
      this.resourceOwner.set(name, actor);
    }
    this.trimOwners();
  }

  private row(actor: string, entry: LogEntry, fields: Omit<TimelineEntry, 'seq' | 't' | 'actor'>, keep = true): TimelineEntry {
    const row: TimelineEntry = { seq: ++this.seq, t: entry.t, actor, ...withoutUndefined(fields) };
    if (row.detail !== undefined) row.detail = clean(row.detail);
    if (!keep) return row;
    const rows = this.history.get(actor) ?? [];
    // Re-inserting moves the actor to the end: Map order is then least recently active first.
    this.history.delete(actor);
    this.history.set(actor, rows);
    rows.push(row);
    if (rows.length > this.perActor) rows.splice(0, rows.length - this.perActor);
    while (this.history.size > this.maxActors) {
      const oldest = this.history.keys().next().value;
      if (oldest === undefined) break;
      this.history.delete(oldest);
    }
    return row;
  }

  private markFinished(actor: string): void {
    const at = this.finished.indexOf(actor);
    if (at >= 0) this.finished.splice(at, 1);
    this.finished.push(actor);
    if (this.finished.length > this.recentFinished) this.finished.shift();
  }

  private trimOwners(): void {
    // Two resources per actor at most; keep the map in proportion to the histories kept.
    while (this.resourceOwner.size > 2 * this.maxActors) {
      const oldest = this.resourceOwner.keys().next().value;
      if (oldest === undefined) break;
      this.resourceOwner.delete(oldest);
    }
  }
}

export function actorKind(actor: string): 'nodeclaim' | 'nic' | undefined {
  if (actor.startsWith('nodeclaim/')) return 'nodeclaim';
  if (actor.startsWith('nic/')) return 'nic';
  return undefined;
}

function isFinal(graph: MachineGraph, state: string): boolean {
  return graph.states.some((s) => s.id === `${graph.id}.${state}` && s.kind === 'final');
}

/** Defence in depth: log details are error codes, but nothing secret-shaped may reach the page. */
function clean(text: string): string {
  const redacted = redactString(text);
  return redacted.length > MAX_DETAIL ? `${redacted.slice(0, MAX_DETAIL)}…` : redacted;
}

function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
