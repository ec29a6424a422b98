/**
 * Existing NodeClaims in name order, the order the scheduler tries them in: kept from pass
 * to pass, since 1,000 NodeClaims sorted afresh every pass was a visible share of a pass.
 */
import type { NodeClaim } from '../../ports/cluster.js';
import { sameNamespacedName, walkAlongside } from '../../utils/list-walk.js';
import { sameItems, type SchedulingMemo } from './memo.js';

/** Existing NodeClaims by name; the order of the last pass when the same names came in the same order. */
export function sortedClaims(claims: readonly NodeClaim[], memo: SchedulingMemo | undefined): readonly NodeClaim[] {
  const last = memo?.order;
  // The very same objects in the same order: the last pass's sorted list is this one's.
  if (last && sameItems(last.claims, claims)) return last.sorted;
  if (last?.distinct) {
    // Usually the same names in the same order with a few NodeClaims written: each written
    // one takes its slot in the last sorted list (walked alongside, list-walk.ts).
    const sorted = rewrittenInPlace(last, claims);
    if (sorted) {
      memo!.order = { claims: [...claims], names: last.names, sorted, distinct: true, slots: last.slots };
      return sorted;
    }
  }
  const names = claims.map((c) => c.metadata.name);
  if (last && last.names.length === names.length && last.names.every((n, i) => n === names[i])) {
    // Same names, same order: the same permutation, applied to this pass's objects.
    const current = new Map(claims.map((c) => [c.metadata.name, c]));
    const sorted = last.sorted.map((c) => current.get(c.metadata.name)!);
    memo!.order = { claims: [...claims], names, sorted, distinct: last.distinct };
    return sorted;
  }
  const sorted = (last?.distinct ? insertSorted(last.sorted, claims) : undefined) ?? sortByName(claims);
  if (memo) memo.order = { claims: [...claims], names, sorted: sorted.list, distinct: sorted.distinct };
  return sorted.list;
}

/** The last sorted list with this pass's objects, when the input names the same NodeClaims in the same order; else undefined. */
function rewrittenInPlace(last: NonNullable<SchedulingMemo['order']>, claims: readonly NodeClaim[]): NodeClaim[] | undefined {
  if (last.claims.length !== claims.length) return undefined;
  const slots = (last.slots ??= new Map(last.sorted.map((c, at) => [c.metadata.name, at])));
  const sorted = last.sorted.slice();
  let same = true;
  const walked = walkAlongside(last.claims, claims, sameNamespacedName, {
    replaced: (_old, claim) => {
      sorted[slots.get(claim.metadata.name)!] = claim;
    },
    removed: () => {
      same = false;
    },
    added: () => {
      same = false;
    },
  }, Math.max(64, claims.length >> 2));
  return walked && same ? sorted : undefined;
}

/** localeCompare's order (the default locale's collation), without building a collator per comparison: 1,000 NodeClaims sorted each pass. */
const byName = new Intl.Collator();

/**
 * NodeClaims by name; `distinct` when no two names compare equal (then the order is the
 * only one, whatever order the input came in).
 */
function sortByName(claims: readonly NodeClaim[]): { list: NodeClaim[]; distinct: boolean } {
  let distinct = true;
  // Equal names end up next to each other, and a sort compares neighbours it orders.
  const list = [...claims].sort((a, b) => {
    const c = byName.compare(a.metadata.name, b.metadata.name);
    if (c === 0) distinct = false;
    return c;
  });
  return { list, distinct };
}

/**
 * The sorted list of this pass from the last pass's (names all distinct): the claims still
 * there in their order, this pass's objects, with the new ones put in by binary search. A
 * collator comparison costs a microsecond, so re-sorting 1,000 NodeClaims whenever one came
 * or went was a visible share of a pass. Undefined (sort afresh) when two names compare equal
 * or the input names one claim twice.
 */
function insertSorted(lastSorted: readonly NodeClaim[], claims: readonly NodeClaim[]): { list: NodeClaim[]; distinct: boolean } | undefined {
  const current = new Map<string, NodeClaim>();
  for (const c of claims) current.set(c.metadata.name, c);
  if (current.size !== claims.length) return undefined;
  const list: NodeClaim[] = [];
  for (const c of lastSorted) {
    const now = current.get(c.metadata.name);
    if (now) {
      list.push(now);
      current.delete(c.metadata.name);
    }
  }
  // Past a few new names a plain sort is as cheap.
  if (current.size > 64) return undefined;
  for (const c of current.values()) {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const cmp = byName.compare(list[mid]!.metadata.name, c.metadata.name);
      if (cmp === 0) return undefined;
      if (cmp < 0) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, c);
  }
  return { list, distinct: true };
}

