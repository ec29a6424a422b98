import type { NicObservation } from '../lifecycle/nic/machine.js';
import type { NodeClaimObservation } from '../lifecycle/nodeclaim/machine.js';
import type { NicActor, NodeClaimActor } from '../lifecycle/routing.js';
import { stateName } from './event-log.js';

type ObservedActor = NodeClaimActor | NicActor;

/**
 * What each actor was last observed from and told, so a pass builds and sends only what
 * changed: most of a resync's cost is in observations and the transitions they cause.
 */
export class ObservationMemo {
  private readonly lastObserved = new WeakMap<object, { state: string; observed: object }>();
  /** Per actor, the inputs its last observation was built from: unchanged inputs, nothing to build. */
  private readonly lastInputs = new WeakMap<object, unknown[]>();

  /**
   * Whether the actor, in the state it is in now, was last observed from exactly these
   * objects (the cluster and the ARM view replace objects on change, never mutate them).
   */
  sameInputs(actor: ObservedActor, inputs: unknown[]): boolean {
    inputs.push(stateName(actor.getSnapshot().value));
    const last = this.lastInputs.get(actor);
    this.lastInputs.set(actor, inputs);
    return last !== undefined && last.length === inputs.length && last.every((v, i) => v === inputs[i]);
  }

  /**
   * Delivers an observation unless the actor has already seen exactly this one in its
   * current state: nothing new to react to, and most of a resync's cost is in transitions.
   */
  deliver(actor: ObservedActor, observed: NodeClaimObservation | NicObservation): void {
    const state = stateName(actor.getSnapshot().value);
    const last = this.lastObserved.get(actor);
    if (last && last.state === state && sameObservation(last.observed, observed)) return;
    this.lastObserved.set(actor, { state, observed });
    (actor as { send(e: { type: 'OBSERVED'; observed: typeof observed }): void }).send({ type: 'OBSERVED', observed });
  }
}

/**
 * Observations are flat records (one nested record at most, the node): equal when every
 * field is, an absent field equal to an undefined one (as their JSON would be).
 */
function sameObservation(a: object, b: object): boolean {
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  for (const k in x) {
    const u = x[k];
    const v = y[k];
    if (u === v) continue;
    if (typeof u !== 'object' || typeof v !== 'object' || u === null || v === null || !sameObservation(u, v)) return false;
  }
  for (const k in y) if (!(k in x) && y[k] !== undefined) return false;
  return true;
}
