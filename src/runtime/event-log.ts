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
    return this.entries.map((e) => JSON.stringify(e)).join('\n');
  }
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
