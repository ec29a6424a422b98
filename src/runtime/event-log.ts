/**
 * The event log: every actor transition and every effect outcome, stamped with the
 * injected clock. The simulator hashes it to prove that a seed gives a byte-identical run;
 * the live view streams it.
 */
export interface LogEntry {
  /** Milliseconds on the injected clock. */
  t: number;
  actor: string;
  kind: 'transition' | 'effect' | 'world' | 'controller';
  from?: string;
  to?: string;
  event?: string;
  detail?: string;
}

export interface EventLog {
  record(entry: LogEntry): void;
}

export class MemoryEventLog implements EventLog {
  readonly entries: LogEntry[] = [];
  private listeners: Array<(e: LogEntry) => void> = [];
  constructor(private readonly keep = true) {}
  record(entry: LogEntry): void {
    if (this.keep) this.entries.push(entry);
    for (const l of this.listeners) l(entry);
  }
  subscribe(listener: (e: LogEntry) => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }
  /** One JSON line per entry: the canonical byte form compared across runs. */
  toJsonLines(): string {
    return this.entries.map(logLine).join('\n');
  }
}

/**
 * An entry's canonical line: its JSON with the fields in LogEntry's order, absent ones left
 * out (what JSON.stringify gives for every entry the runtime and simulator record). Built by
 * hand because every entry of a simulation is hashed (~28,000 in a quota-storm run) and
 * JSON.stringify of these small, differently shaped objects was ~3% of the run's CPU.
 */
export function logLine(e: LogEntry): string {
  let s = `{"t":${Number.isFinite(e.t) ? e.t : 'null'},"actor":${jsonString(e.actor)},"kind":${jsonString(e.kind)}`;
  if (e.from !== undefined) s += `,"from":${jsonString(e.from)}`;
  if (e.to !== undefined) s += `,"to":${jsonString(e.to)}`;
  if (e.event !== undefined) s += `,"event":${jsonString(e.event)}`;
  if (e.detail !== undefined) s += `,"detail":${jsonString(e.detail)}`;
  return `${s}}`;
}

/** Characters JSON escapes (quote, backslash, control characters) or checks (surrogates). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

export const discardEventLog: EventLog = { record: () => undefined };

/** Flattens an XState state value ({ launching: 'creating-vm' }) into 'launching.creating-vm'. */
export function stateName(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    // Read on every transition and observation; state values are immutable.
    let name = nestedNames.get(value);
    if (name === undefined) nestedNames.set(value, (name = nestedStateName(value)));
    return name;
  }
  return '';
}

const nestedNames = new WeakMap<object, string>();

function nestedStateName(value: object): string {
  const [k, v] = Object.entries(value as Record<string, unknown>)[0] ?? ['', ''];
  const inner = stateName(v);
  return inner ? `${k}.${inner}` : k;
}
