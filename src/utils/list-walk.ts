/**
 * Walks a list alongside the one seen the pass before, so a pass pays for what changed, not for
 * the list's length. The lists the loops read (an informer cache's, ARM's) keep their order and
 * hand out the same object for an item that did not change: an item is unchanged when it is
 * the same object at the walk's position, written again when another object with the same key
 * stands there, and added when the old list ran out. When the position holds another key, the
 * old item is gone (one that moved is gone here and added where the new list has it), unless
 * the caller's index says the new item is new: then it was inserted there.
 */
export interface ListChanges<T> {
  /** Whether `now` was not in the last list (optional: without it, an insertion shows as removals and additions). */
  isNew?(now: T): boolean;
  /**
   * A run of `count` unchanged items: last[lastIndex…] and now[index…] are the same objects.
   * Reported once per run, not per item: the walk over a list where little changed is a
   * tight comparison loop (a callback per item, megamorphic across the walk's callers, cost
   * more than everything else in it: ~250 ns per pod over a 10,000-pod fleet).
   */
  unchanged?(lastIndex: number, index: number, count: number): void;
  replaced(last: T, now: T, lastIndex: number, index: number): void;
  removed(last: T, lastIndex: number): void;
  added(now: T, index: number): void;
}

/**
 * Reports how `now` differs from `last`. Stops and returns false once more than `limit` items
 * differ: past some count, rebuilding from `now` is cheaper than matching differences up.
 */
export function walkAlongside<T>(
  last: readonly T[],
  now: readonly T[],
  sameKey: (a: T, b: T) => boolean,
  on: ListChanges<T>,
  limit = Number.POSITIVE_INFINITY,
): boolean {
  let changes = 0;
  let i = 0;
  let j = 0;
  while (j < now.length) {
    const item = now[j]!;
    if (i < last.length && last[i] === item) {
      const i0 = i;
      const j0 = j;
      do {
        i++;
        j++;
      } while (i < last.length && j < now.length && last[i] === now[j]);
      on.unchanged?.(i0, j0, i - i0);
      continue;
    }
    if (++changes > limit) return false;
    if (i >= last.length) {
      on.added(item, j++);
    } else if (sameKey(last[i]!, item)) {
      on.replaced(last[i]!, item, i++, j++);
    } else if (on.isNew?.(item)) {
      on.added(item, j++);
    } else {
      on.removed(last[i]!, i);
      i++;
    }
  }
  for (; i < last.length; i++) {
    if (++changes > limit) return false;
    on.removed(last[i]!, i);
  }
  return true;
}

/** The key of a Kubernetes object: its namespace and name. */
export function sameNamespacedName(a: { metadata: { name: string; namespace?: string } }, b: { metadata: { name: string; namespace?: string } }): boolean {
  return a.metadata.name === b.metadata.name && a.metadata.namespace === b.metadata.namespace;
}

/**
 * The list the next walk compares against: a copy (a port may hand out the same array again,
 * changed in place; FakeCluster does), kept in one array reused from pass to pass. A fresh copy
 * of a fleet's 10,000-pod list on every pass was ~80 KB of garbage each time.
 */
export class KeptList<T> {
  private items: T[] = [];

  get list(): readonly T[] {
    return this.items;
  }

  keep(now: readonly T[]): void {
    const items = this.items;
    if (items.length > now.length) items.length = now.length;
    for (let i = 0; i < now.length; i++) items[i] = now[i]!;
  }
}
