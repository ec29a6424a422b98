/**
 * What the scheduler keeps about existing NodeClaims, within a pass and from pass to pass
 * (SchedulingInput.memo): the state derived from each claim, and its in-flight entry.
 */
import type { NodeClaim, Taint } from '../../ports/cluster.js';
import type { InstanceType } from '../../catalog/skus.js';
import { maxInto, type Resources } from '../resources.js';
import type { Requirements } from '../requirements.js';
import { instanceTypeCapacity } from '../overhead.js';
import type { FirstFitIndex } from './first-fit-index.js';
import type { DomainSource } from './topology.js';
import { BoundUsage } from './bound-pods.js';

/**
 * What a pass derives from one existing NodeClaim, given its pool: valid while the claim
 * (uid, resourceVersion) and its pool's context (NodePool, NodeClass, DaemonSet overhead)
 * are the same. Shared read-only by every pass that uses it.
 */
export interface ExistingClaimState {
  /** The claim it was derived from: same uid and resourceVersion (or, without one, the same object). */
  version: { uid: string; resourceVersion: string | undefined; object: NodeClaim };
  context: string;
  /** What the claim holds against its pool's limits (when the pool has limits). */
  limitUsage: Resources | undefined;
  /** Room for pending pods; none while it is being deleted or has no known size. */
  capacity: {
    allocatable: Resources;
    /** Usage before the pods bound to its node: the DaemonSet pods still to come. */
    baseUsed: Resources;
    variants: Requirements[];
    source: DomainSource;
  } | undefined;
  /**
   * Usage with the pods bound to its node, and the free vector it leaves, for the node's
   * usage version (BoundUsage; 0 without bound pods). Read-only: a pass that places pods on
   * the claim replaces its `used`, never writes into this one.
   */
  withBound?: { version: number; used: Resources; free: Float64Array };
}

export interface InFlightClaim {
  name: string;
  /** Topology view: hostname, labels and requirements of the claim as created. */
  source: DomainSource;
  /**
   * The claim's requirements combined with each instance type it may launch as. A pod may
   * only count on the claim if it is compatible with every variant: the claim's own
   * requirements say nothing about, say, the GPU model of the SKU that will come up.
   */
  variants: Requirements[];
  taints: readonly Taint[];
  allocatable: Resources;
  /** What it holds before this pass places anything; `used` starts as (and is reset to) base.used. */
  used: Resources;
  podKeys: string[];
  position: number;
  base: { used: Resources; free: Float64Array };
  pool: string;
  nodeName: string | undefined;
  /** Its NodeClaim's position in the sorted list it was built from. */
  at: number;
}

/**
 * A pass's in-flight NodeClaims as the next pass starts from them (SchedulingMemo.inFlight):
 * the entries and first-fit indexes of each pool, put back to what they were before the pass
 * placed pods, then updated for the NodeClaims that are other objects now and the nodes whose
 * bound pods changed. A fleet's 1,000 NodeClaims were each looked at on every pass.
 */
export interface InFlightCache {
  /** Pool names, contexts and limits, in order: when they differ, everything is rebuilt. */
  poolsKey: string;
  /** The sorted NodeClaims it holds, each one's state (undefined: no pool) and entry (none: no capacity). */
  claims: NodeClaim[];
  states: Array<ExistingClaimState | undefined>;
  entries: Array<InFlightClaim | undefined>;
  pools: Map<string, { entries: InFlightClaim[]; index: FirstFitIndex; remaining: Resources | undefined; limitNames: string[] }>;
  all: InFlightClaim[];
  byNode: Map<string, InFlightClaim[]>;
  /** Entries the last pass placed pods on. */
  touched: Set<InFlightClaim>;
}

/** The catalog's entries and the kube-reserved model a memo's entries were derived with, and what a pass reads of them. */
export interface SchedulingBasis {
  instanceTypes: readonly InstanceType[];
  kubeReserved: (instanceType: InstanceType, maxPods: number) => Resources;
  typesByName: ReadonlyMap<string, InstanceType>;
  catalogMax: Readonly<Resources>;
}

/**
 * Per-NodeClaim scheduling state kept across passes (SchedulingInput.memo). A provisioning
 * pass over a fleet rebuilt ~1,000 NodeClaims' requirements, options and topology views
 * every 10 s, most of them unchanged since the pass before.
 */
export class SchedulingMemo {
  /** @internal by NodeClaim name */
  readonly claims = new Map<string, ExistingClaimState>();
  /** @internal the last pass's NodeClaims and their names in input order, and that list sorted */
  order: { claims: NodeClaim[]; names: string[]; sorted: NodeClaim[]; distinct: boolean; slots?: Map<string, number> } | undefined;
  /** @internal what every entry was derived with */
  basis: SchedulingBasis | undefined;
  /** @internal requests per node of the bound pods, carried from list to list */
  readonly bound = new BoundUsage();
  /** @internal the last pass's in-flight NodeClaims, carried to the next pass and updated where they changed */
  inFlight: InFlightCache | undefined;
  /**
   * @internal whether every variant of an existing NodeClaim (ExistingClaimState's, kept while
   * the claim is) accepts one of a pod group's terms (one array per pod spec, pod-groups.ts):
   * both are immutable, so the answer holds for as long as either lives. A pass over 2,000
   * pending pods asked it of every in-flight NodeClaim with room, pass after pass.
   */
  readonly accepts = new WeakMap<readonly Requirements[], WeakMap<readonly Requirements[], boolean>>();
  private readonly contexts = new Map<string, string>();

  /** @internal one string per distinct pool context, so entries compare contexts by reference */
  intern(context: string): string {
    const kept = this.contexts.get(context);
    if (kept !== undefined) return kept;
    if (this.contexts.size > 1_000) this.contexts.clear();
    this.contexts.set(context, context);
    return context;
  }
}

/** What the catalog and kube-reserved model give every pass; the memo is emptied when either changed. */
export function basisOf(
  instanceTypes: readonly InstanceType[], kubeReserved: (instanceType: InstanceType, maxPods: number) => Resources, memo: SchedulingMemo | undefined,
): SchedulingBasis {
  const kept = memo?.basis;
  if (kept && kept.kubeReserved === kubeReserved && sameItems(kept.instanceTypes, instanceTypes)) return kept;
  const catalogMax: Resources = {};
  for (const it of instanceTypes) maxInto(catalogMax, instanceTypeCapacity(it, undefined));
  const basis: SchedulingBasis = {
    instanceTypes: [...instanceTypes],
    kubeReserved,
    typesByName: new Map(instanceTypes.map((it) => [it.name, it])),
    catalogMax,
  };
  if (memo) {
    memo.claims.clear();
    memo.inFlight = undefined;
    memo.basis = basis;
  }
  return basis;
}

export function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
