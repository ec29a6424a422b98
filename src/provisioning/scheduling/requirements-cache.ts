/**
 * Memoised Requirements operations for one scheduling run. Requirements objects are
 * immutable and shared (per NodePool, per pod placement, per planned claim), so answers
 * keyed by object identity are reused thousands of times in a large run.
 */
import type { Requirements } from '../requirements.js';

export class RequirementsCache {
  private readonly intersections = new Map<Requirements, Map<Requirements, Requirements>>();
  private readonly compatibility = new Map<Requirements, Map<Requirements, string | null>>();
  private readonly intersecting = new Map<Requirements, Map<Requirements, boolean>>();

  intersect(a: Requirements, b: Requirements): Requirements {
    let inner = this.intersections.get(a);
    if (!inner) this.intersections.set(a, (inner = new Map()));
    let result = inner.get(b);
    if (!result) inner.set(b, (result = a.intersect(b)));
    return result;
  }

  /** a.compatible(b): the reason they are not, or undefined. */
  compatible(a: Requirements, b: Requirements): string | undefined {
    let inner = this.compatibility.get(a);
    if (!inner) this.compatibility.set(a, (inner = new Map()));
    let result = inner.get(b);
    if (result === undefined) inner.set(b, (result = a.compatible(b) ?? null));
    return result ?? undefined;
  }

  intersects(a: Requirements, b: Requirements): boolean {
    let inner = this.intersecting.get(a);
    if (!inner) this.intersecting.set(a, (inner = new Map()));
    let result = inner.get(b);
    if (result === undefined) inner.set(b, (result = a.intersects(b) === undefined));
    return result;
  }
}

/** The first alternative compatible with `base`, or undefined. */
export function firstCompatibleTerm(base: Requirements, terms: readonly Requirements[], cache: RequirementsCache): Requirements | undefined {
  for (const term of terms) if (cache.compatible(base, term) === undefined) return term;
  return undefined;
}
