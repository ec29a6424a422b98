import type { Clock } from '../ports/clock.js';
import type { Runtime } from '../runtime/runtime.js';
import type { LogEntry, MemoryEventLog } from '../runtime/event-log.js';
import type { LiveActorStates, LiveReservation, LiveSource } from './source.js';

const NONE: LiveActorStates = { nodeClaims: new Map(), nics: new Map() };

/**
 * The controller's live view: read-only (no clock controls), following whichever runtime
 * this replica runs while it leads; a standby shows no actors.
 */
export class RuntimeLiveSource implements LiveSource {
  private runtime: Runtime | undefined;

  constructor(
    readonly title: string,
    private readonly wallClock: Clock,
    private readonly eventLog: MemoryEventLog,
  ) {}

  attach(runtime: Runtime | undefined): void {
    this.runtime = runtime;
  }

  now(): number {
    return this.wallClock.now();
  }

  actorStates(): LiveActorStates {
    return this.runtime?.actorStates() ?? NONE;
  }

  subscribe(listener: (entry: LogEntry) => void): () => void {
    return this.eventLog.subscribe(listener);
  }

  reservations(): LiveReservation[] {
    return this.runtime?.nicReservations() ?? [];
  }
}
