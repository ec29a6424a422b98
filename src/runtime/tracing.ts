import type { AnyStateMachine, EventObject } from 'xstate';
import type { Clock } from '../ports/clock.js';
import { classified, errorCode } from '../lifecycle/failure.js';
import { stateName, type EventLog } from './event-log.js';

/**
 * The event log's record of the actors: every transition with the event that caused it,
 * every effect with its outcome, and the runtime's own notes.
 */
export class ActorTrail {
  /** The event each root actor last processed, for the transition it caused (see remembering). */
  private readonly lastEvent = new WeakMap<object, EventObject>();

  constructor(
    private readonly log: EventLog,
    private readonly clock: Clock,
  ) {}

  /**
   * The machine, remembering per actor the event of its latest transition. A snapshot
   * observer sees the new state but not its event. XState's inspection API sees both, but an
   * inspected actor has XState build an inspection event for every action, microstep, event
   * and child actor too, and most of those went unread (about 5% of a simulation's CPU).
   */
  remembering<M extends AnyStateMachine>(machine: M): M {
    const lastEvent = this.lastEvent;
    const remembering = Object.create(machine) as M;
    remembering.transition = ((snapshot, event, scope) => {
      const next = machine.transition(snapshot, event, scope);
      lastEvent.set(scope.self, event);
      return next;
    }) as M['transition'];
    return remembering;
  }

  /**
   * Records each state change of a root actor with the event that caused it. Its first
   * snapshot is the initial state (start); every later one follows a transition, whose event
   * `remembering` kept.
   */
  tracer(actorName: string, actor: object): (snapshot: { value: unknown }) => void {
    let last = '';
    let started = false;
    return (snapshot) => {
      const to = stateName(snapshot.value);
      if (to === last) return;
      const event = started ? eventLabel(this.lastEvent.get(actor)?.type ?? '') : 'start';
      started = true;
      this.log.record({ t: this.clock.now(), actor: actorName, kind: 'transition', from: last || undefined, to, event });
      last = to;
    };
  }

  /** Runs an effect and records its outcome; a failure is rethrown classified, once, for the machine to read. */
  async traced<T>(actor: string, effect: string, run: () => Promise<T>): Promise<T> {
    try {
      const out = await run();
      this.log.record({ t: this.clock.now(), actor, kind: 'effect', event: effect, detail: 'ok' });
      return out;
    } catch (err) {
      this.log.record({ t: this.clock.now(), actor, kind: 'effect', event: effect, detail: errorCode(err) });
      throw classified(err);
    }
  }

  controller(actor: string, event: string, detail: string): void {
    this.log.record({ t: this.clock.now(), actor, kind: 'controller', event, detail });
  }
}

/** XState's internal event names, made readable: "done: creating-vm", "after untilReservationEnds". */
function eventLabel(type: string): string {
  let label = eventLabels.get(type);
  if (label === undefined) {
    // Bounded: event types are the machines' own plus one per invoked actor instance.
    if (eventLabels.size >= 4096) eventLabels.clear();
    eventLabels.set(type, (label = computeEventLabel(type)));
  }
  return label;
}

const eventLabels = new Map<string, string>();

function computeEventLabel(type: string): string {
  const invoked = /^xstate\.(done|error)\.actor\.[^.]+\.[^.]+\.(.+)$/.exec(type);
  if (invoked) return `${invoked[1]}: ${invoked[2]!.slice(invoked[2]!.lastIndexOf('.') + 1)}`;
  const after = /^xstate\.after\.([^.]+)\./.exec(type);
  if (after) return `after ${after[1]}`;
  return type === 'xstate.init' ? 'start' : type;
}
