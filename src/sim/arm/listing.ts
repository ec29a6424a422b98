import type { ResourceRef } from '../../ports/azure.js';
import { armId } from '../../azure/naming.js';
import { scopePrefix, type ListScope } from './model.js';
import type { ResourceIndex } from './resource-index.js';
import type { ArmCalls } from './calls.js';
import type { ResourceGroups } from './resource-groups.js';
import type { ArmState, Tomb } from './state.js';
import type { ArmOperation } from './types.js';

/** One page of a list, and where the next one starts (absent on the last page). */
export interface ListPage<V> {
  value: V[];
  nextSkip?: number;
}

/** Counted GETs and paged lists, shared by every resource type. */
export class Listing {
  constructor(private readonly state: ArmState, private readonly calls: ArmCalls, private readonly groups: ResourceGroups) {}

  /** A counted GET: the view of the record, or undefined (counted as 404). */
  getOne<R extends { location: string }, V>(
    op: ArmOperation,
    ref: ResourceRef,
    records: ResourceIndex<R>,
    provider: Parameters<typeof armId>[1],
    view: (rec: R) => V,
  ): V | undefined {
    const rec = records.get(armId(ref, provider).toLowerCase());
    return this.calls.invoke(op, 'reads', ref.subscriptionId, rec?.location, ref.name, () => {
      this.groups.require(ref);
      return rec ? { status: 200, value: view(rec) } : { status: 404, value: undefined };
    });
  }

  /** One page of a list call (a counted read): `skip` items in, at most pageSize long. */
  page<R extends { listedFrom: number }, V>(
    op: ArmOperation,
    scope: ListScope,
    records: ResourceIndex<R>,
    tombs: ResourceIndex<Tomb<R>>,
    view: (rec: R) => V,
    skip: number,
    /** all()'s pages share one listing (the clock does not move between them). */
    listing: { all?: V[] } = {},
  ): ListPage<V> {
    const pageSize = this.state.settings.pageSize;
    return this.calls.invoke(op, 'reads', scope.subscriptionId, undefined, scope.resourceGroup ?? '', () => {
      if (scope.resourceGroup !== undefined) this.groups.require({ subscriptionId: scope.subscriptionId, resourceGroup: scope.resourceGroup });
      const all = (listing.all ??= this.listed(scope, records, tombs, view));
      const page: ListPage<V> = { value: all.slice(skip, skip + pageSize) };
      if (skip + pageSize < all.length) page.nextSkip = skip + pageSize;
      return { status: 200, value: page };
    });
  }

  /** Every page of a list, each a counted read, as a client following nextLink gets it. */
  all<R extends { listedFrom: number }, V>(
    op: ArmOperation,
    scope: ListScope,
    records: ResourceIndex<R>,
    tombs: ResourceIndex<Tomb<R>>,
    view: (rec: R) => V,
  ): V[] {
    const out: V[] = [];
    const listing: { all?: V[] } = {};
    let skip: number | undefined = 0;
    while (skip !== undefined) {
      const page: ListPage<V> = this.page(op, scope, records, tombs, view, skip, listing);
      out.push(...page.value);
      skip = page.nextSkip;
    }
    return out;
  }

  /**
   * What a list shows now: ARM's list cache trails the resources, so a new record shows
   * only from `listedFrom`, and a deleted one lists on until its tomb's `hiddenAt`.
   */
  private listed<R extends { listedFrom: number }, V>(scope: ListScope, records: ResourceIndex<R>, tombs: ResourceIndex<Tomb<R>>, view: (rec: R) => V): V[] {
    const now = this.state.clock.now();
    const prefix = scopePrefix(scope);
    const out: V[] = [];
    for (const rec of records.inScope(prefix)) if (rec.listedFrom <= now) out.push(view(rec));
    if (tombs.size > 0) {
      const expired: string[] = [];
      for (const [key, tomb] of tombs.entriesInScope(prefix)) {
        if (tomb.hiddenAt > now) out.push(view(tomb.rec));
        else expired.push(key);
      }
      for (const key of expired) tombs.delete(key);
    }
    return out;
  }
}
