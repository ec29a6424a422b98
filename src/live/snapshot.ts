import type { ClockStatus, LiveSource } from './source.js';

export type ActorKind = 'nodeclaim' | 'nic';

export interface LiveActor {
  /** `nodeclaim/<name>` or `nic/<name>`, as in the event log. */
  id: string;
  kind: ActorKind;
  name: string;
  state: string;
}

export interface LiveCountdown {
  nic: string;
  until: number;
  remainingMs: number;
}

/** Everything the page draws except timelines: pushed whole, because it is small. */
export interface LiveSnapshot {
  now: number;
  startedAt?: number;
  clock?: ClockStatus;
  actors: LiveActor[];
  /** Actors per state, per machine; states with no actor are left out. */
  counts: Record<ActorKind, Record<string, number>>;
  reservations: LiveCountdown[];
  /** Actors the runtime already dropped (reaped, deleted), still pickable for their timeline. */
  recent: string[];
}

export function takeSnapshot(source: LiveSource, recent: string[]): LiveSnapshot {
  const now = source.now();
  const states = source.actorStates();
  const actors: LiveActor[] = [];
  const counts: LiveSnapshot['counts'] = { nodeclaim: {}, nic: {} };
  const add = (kind: ActorKind, map: ReadonlyMap<string, string>): void => {
    for (const [name, state] of [...map].sort(([a], [b]) => a.localeCompare(b))) {
      actors.push({ id: `${kind}/${name}`, kind, name, state });
      counts[kind][state] = (counts[kind][state] ?? 0) + 1;
    }
  };
  add('nodeclaim', states.nodeClaims);
  add('nic', states.nics);
  const reservations = (source.reservations?.() ?? [])
    .filter((r) => r.until > now)
    .map((r) => ({ nic: r.nic, until: r.until, remainingMs: r.until - now }))
    .sort((a, b) => a.remainingMs - b.remainingMs || a.nic.localeCompare(b.nic));
  const live = new Set(actors.map((a) => a.id));
  const snapshot: LiveSnapshot = { now, actors, counts, reservations, recent: recent.filter((id) => !live.has(id)) };
  if (source.startedAt !== undefined) snapshot.startedAt = source.startedAt;
  if (source.clock) snapshot.clock = source.clock.status();
  return snapshot;
}
