/**
 * Records keyed by lower-cased ARM id, also grouped by resource group: the simulator lists
 * a resource group on every resync, and walking only that group (in insertion order, so
 * output stays deterministic) avoids a prefix test over every resource ARM holds.
 */
export class ResourceIndex<R> {
  private readonly all = new Map<string, R>();
  private readonly groups = new Map<string, Map<string, R>>();

  get size(): number {
    return this.all.size;
  }

  get(key: string): R | undefined {
    return this.all.get(key);
  }

  has(key: string): boolean {
    return this.all.has(key);
  }

  set(key: string, rec: R): void {
    this.all.set(key, rec);
    const group = groupOf(key);
    let members = this.groups.get(group);
    if (!members) this.groups.set(group, (members = new Map()));
    members.set(key, rec);
  }

  delete(key: string): void {
    if (!this.all.delete(key)) return;
    const group = groupOf(key);
    const members = this.groups.get(group);
    members?.delete(key);
    if (members?.size === 0) this.groups.delete(group);
  }

  values(): IterableIterator<R> {
    return this.all.values();
  }

  /** Records under a lower-cased `/subscriptions/{s}/resourcegroups/{rg}/` or `/subscriptions/{s}/` prefix. */
  inScope(prefix: string): Iterable<R> {
    const group = this.groups.get(prefix);
    if (group) return group.values();
    if (prefix.includes('/resourcegroups/')) return []; // an empty resource group
    return withPrefix(this.all, prefix);
  }

  /** Like inScope, with the keys (so callers may delete while collecting). */
  entriesInScope(prefix: string): Array<[string, R]> {
    const group = this.groups.get(prefix);
    if (group) return [...group.entries()];
    if (prefix.includes('/resourcegroups/')) return [];
    return [...entriesWithPrefix(this.all, prefix)];
  }
}

export function* entriesWithPrefix<R>(all: Map<string, R>, prefix: string): Iterable<[string, R]> {
  for (const entry of all) if (entry[0].startsWith(prefix)) yield entry;
}

function* withPrefix<R>(all: Map<string, R>, prefix: string): Iterable<R> {
  for (const [key, rec] of all) if (key.startsWith(prefix)) yield rec;
}

/** `/subscriptions/{s}/resourcegroups/{rg}/` of a lower-cased resource id. */
function groupOf(key: string): string {
  const at = key.indexOf('/providers/');
  return at < 0 ? key : key.slice(0, at + 1);
}
