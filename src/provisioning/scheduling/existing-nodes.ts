/**
 * Existing NodeClaims as room for pending pods (Karpenter's existing nodes): each one's
 * entry, first-fit index slot and pool limit usage, carried from pass to pass on the memo,
 * and the placement of pods onto them. Pods counted here need no new capacity.
 */
import type { NodeClaim } from '../../ports/cluster.js';
import { addInto, copiesThatFit, podRequests, subtractResources, type Resources } from '../resources.js';
import { type Requirements, firstUntoleratedTaint } from '../requirements.js';
import { FirstFitIndex, indexVector } from './first-fit-index.js';
import { podKey, type PodGroup } from './pod-groups.js';
import { firstCompatibleTerm, type RequirementsCache } from './requirements-cache.js';
import { decide, record, type PodTopology, type Relaxation } from './topology.js';
import { LABEL_NODEPOOL } from '../../apis/well-known.js';
import type { NodeUsage } from './bound-pods.js';
import { sortedClaims } from './claim-order.js';
import { existingClaimState, poolContext, sameVersion, withBoundOf, type CatalogLookup } from './existing-claims.js';
import type { ExistingClaimState, InFlightCache, InFlightClaim, SchedulingMemo } from './memo.js';
import type { PoolTemplate, SchedulingInput } from './types.js';

type PoolContexts = Map<string, { pool: PoolTemplate; context: string; limitNames: string[] }>;

export class ExistingNodes {
  /** In-flight entries this pass placed pods on (the next pass with the memo puts them back). */
  private readonly touched = new Set<InFlightClaim>();
  /** Every entry with room, in name order. */
  readonly all: InFlightClaim[];

  constructor(
    private readonly input: SchedulingInput,
    private readonly pools: readonly PoolTemplate[],
    private readonly cache: RequirementsCache,
    private readonly catalog: CatalogLookup,
  ) {
    this.all = this.build();
  }

  /**
   * Existing NodeClaims: every one counts against its pool's limits (until it is gone), and
   * those not being deleted are capacity that pending pods can land on.
   */
  private build(): InFlightClaim[] {
    const memo = this.input.memo;
    if (!memo) return this.buildFresh(undefined).all;
    const usage = memo.bound.update(this.input.boundPods ?? []);
    const changedNodes = memo.bound.takeChanged();
    const perPool = this.poolContexts(memo);
    const sorted = sortedClaims(this.input.existingNodeClaims, memo);
    const kept = memo.inFlight;
    memo.inFlight = undefined;
    let cache: InFlightCache;
    if (kept && kept.poolsKey === perPool.key && this.updateInFlight(kept, sorted, usage, changedNodes, perPool.pools, memo)) {
      cache = kept;
    } else {
      cache = this.buildFresh(usage, sorted, perPool);
    }
    cache.touched = this.touched;
    for (const pool of this.pools) {
      const held = cache.pools.get(pool.name)!;
      pool.inFlight = held.entries;
      pool.inFlightIndex = held.index;
      if (pool.remaining) pool.remaining = { ...held.remaining! };
    }
    if (memo.claims.size > this.input.existingNodeClaims.length) {
      const live = new Set(this.input.existingNodeClaims.map((c) => c.metadata.name));
      for (const name of memo.claims.keys()) if (!live.has(name)) memo.claims.delete(name);
    }
    memo.inFlight = cache;
    return cache.all;
  }

  /**
   * Per pool, once: its context, the names of its limits (a for-in over a pass's fresh limits
   * object, once per NodeClaim, deoptimised the loop below pass after pass), and a key of all
   * of them that says whether the last pass's in-flight entries were derived alike.
   */
  private poolContexts(memo: SchedulingMemo | undefined): { key: string; pools: PoolContexts } {
    const pools: PoolContexts = new Map();
    let key = '';
    for (const pool of this.pools) {
      const context = memo ? memo.intern(poolContext(pool)) : poolContext(pool);
      pools.set(pool.name, { pool, context, limitNames: pool.limits && pool.remaining ? Object.keys(pool.limits) : [] });
      key += `${pool.name}\u0000${context}\u0000${pool.limits ? JSON.stringify(pool.limits) : '-'}\u0001`;
    }
    return { key, pools };
  }

  /** The state of an existing NodeClaim in its pool: the memo's while the claim and the context are the same. */
  private stateOf(claim: NodeClaim, pool: PoolTemplate, context: string, memo: SchedulingMemo | undefined): ExistingClaimState {
    let state = memo?.claims.get(claim.metadata.name);
    // Contexts are interned, so the comparison is usually one of references.
    if (!state || state.context !== context || !sameVersion(state, claim)) {
      state = existingClaimState(claim, pool, context, this.catalog);
      memo?.claims.set(claim.metadata.name, state);
    }
    return state;
  }

  /**
   * Every existing NodeClaim counts against its pool's limits (until it is gone), and those
   * not being deleted are capacity that pending pods can land on.
   */
  private buildFresh(
    usage: ReadonlyMap<string, NodeUsage> | undefined,
    sorted: readonly NodeClaim[] = sortedClaims(this.input.existingNodeClaims, undefined),
    perPool = this.poolContexts(undefined),
  ): InFlightCache {
    const memo = this.input.memo;
    const usedByNode = usage ? undefined : this.usedByNode();
    const pools: InFlightCache['pools'] = new Map();
    const vectors = new Map<string, Float64Array[]>();
    for (const { pool, limitNames } of perPool.pools.values()) {
      pools.set(pool.name, { entries: [], index: new FirstFitIndex(), remaining: pool.remaining ? { ...pool.remaining } : undefined, limitNames });
      vectors.set(pool.name, []);
    }
    const cache: InFlightCache = {
      poolsKey: perPool.key, claims: [...sorted], states: [], entries: [], pools, all: [], byNode: new Map(), touched: new Set(),
    };
    for (let at = 0; at < sorted.length; at++) {
      const claim = sorted[at]!;
      const of = perPool.pools.get(claim.metadata.labels[LABEL_NODEPOOL] ?? '');
      cache.states.push(undefined);
      cache.entries.push(undefined);
      if (!of) continue;
      const { pool, context, limitNames } = of;
      const state = this.stateOf(claim, pool, context, memo);
      cache.states[at] = state;
      const held = pools.get(pool.name)!;
      for (let i = 0; i < limitNames.length; i++) {
        const name = limitNames[i]!;
        held.remaining![name]! -= state.limitUsage![name] ?? 0;
      }
      const capacity = state.capacity;
      if (!capacity) continue;
      const nodeName = claim.status.nodeName;
      const base = usage ? withBoundOf(state, usage, nodeName) : withBoundSummed(capacity, nodeName, usedByNode!);
      const entry: InFlightClaim = {
        name: claim.metadata.name, source: capacity.source, variants: capacity.variants, taints: claim.spec.taints,
        allocatable: capacity.allocatable, used: base.used, podKeys: [], position: held.entries.length, base, pool: pool.name, nodeName, at,
      };
      vectors.get(pool.name)!.push(base.free);
      held.entries.push(entry);
      cache.entries[at] = entry;
      cache.all.push(entry);
      if (nodeName) addToNode(cache.byNode, nodeName, entry);
    }
    for (const [name, held] of pools) held.index = FirstFitIndex.of(vectors.get(name)!);
    if (!memo) {
      // A pass without a memo hands the pools their entries here.
      for (const pool of this.pools) {
        const held = pools.get(pool.name)!;
        pool.inFlight = held.entries;
        pool.inFlightIndex = held.index;
        if (pool.remaining) pool.remaining = held.remaining!;
      }
    }
    return cache;
  }

  /**
   * Brings the last pass's entries to this pass: puts back what it placed, then updates the
   * NodeClaims that are other objects now and the entries on nodes whose bound pods changed.
   * False (and the caller rebuilds) when NodeClaims came or went, moved pools, or gained or
   * lost capacity (being deleted): those change positions.
   */
  private updateInFlight(
    cache: InFlightCache, sorted: readonly NodeClaim[], usage: ReadonlyMap<string, NodeUsage>, changedNodes: ReadonlySet<string> | 'all',
    perPool: PoolContexts, memo: SchedulingMemo,
  ): boolean {
    if (sorted.length !== cache.claims.length) return false;
    const changed: Array<{ at: number; state: ExistingClaimState | undefined }> = [];
    for (let at = 0; at < sorted.length; at++) {
      const claim = sorted[at]!;
      const was = cache.claims[at]!;
      if (claim === was) continue;
      const poolName = claim.metadata.labels[LABEL_NODEPOOL] ?? '';
      if (claim.metadata.name !== was.metadata.name || poolName !== (was.metadata.labels[LABEL_NODEPOOL] ?? '')) return false;
      const of = perPool.get(poolName);
      const state = of ? this.stateOf(claim, of.pool, of.context, memo) : undefined;
      if ((state?.capacity === undefined) !== (cache.entries[at] === undefined)) return false;
      changed.push({ at, state });
    }
    for (const entry of cache.touched) {
      entry.used = entry.base.used;
      entry.podKeys = [];
      cache.pools.get(entry.pool)!.index.set(entry.position, entry.base.free);
    }
    for (const { at, state } of changed) {
      const claim = sorted[at]!;
      cache.claims[at] = claim;
      const before = cache.states[at];
      cache.states[at] = state;
      if (!state) continue;
      const held = cache.pools.get(claim.metadata.labels[LABEL_NODEPOOL] ?? '')!;
      // Integer amounts: adding back the old usage and taking the new is exact.
      for (const name of held.limitNames) held.remaining![name]! += (before!.limitUsage![name] ?? 0) - (state.limitUsage![name] ?? 0);
      const entry = cache.entries[at];
      const capacity = state.capacity;
      if (!entry || !capacity) continue;
      entry.source = capacity.source;
      entry.variants = capacity.variants;
      entry.taints = claim.spec.taints;
      entry.allocatable = capacity.allocatable;
      const nodeName = claim.status.nodeName;
      if (nodeName !== entry.nodeName) {
        if (entry.nodeName) {
          const onNode = cache.byNode.get(entry.nodeName)!.filter((e) => e !== entry);
          if (onNode.length > 0) cache.byNode.set(entry.nodeName, onNode);
          else cache.byNode.delete(entry.nodeName);
        }
        if (nodeName) addToNode(cache.byNode, nodeName, entry);
        entry.nodeName = nodeName;
      }
      this.rebase(cache, entry, withBoundOf(state, usage, nodeName));
    }
    const refresh = (entry: InFlightClaim): void => this.rebase(cache, entry, withBoundOf(cache.states[entry.at]!, usage, entry.nodeName));
    if (changedNodes === 'all') {
      for (const entries of cache.byNode.values()) for (const entry of entries) refresh(entry);
    } else {
      for (const name of changedNodes) for (const entry of cache.byNode.get(name) ?? []) refresh(entry);
    }
    return true;
  }

  /** Sets what an entry holds before placement (and its slot in the index), when it changed. */
  private rebase(cache: InFlightCache, entry: InFlightClaim, base: InFlightClaim['base']): void {
    if (entry.base === base) return;
    entry.base = base;
    entry.used = base.used;
    cache.pools.get(entry.pool)!.index.set(entry.position, base.free);
  }

  /** Requests of the pods bound to the existing NodeClaims' nodes, for a pass without a memo (BoundUsage keeps them across passes). */
  private usedByNode(): ReadonlyMap<string, Resources> {
    const nodeNames = new Set<string>();
    for (const claim of this.input.existingNodeClaims) if (claim.status.nodeName) nodeNames.add(claim.status.nodeName);
    const usedByNode = new Map<string, Resources>();
    for (const pod of this.input.boundPods ?? []) {
      const nodeName = pod.spec.nodeName;
      if (!nodeName || !nodeNames.has(nodeName) || pod.status.phase === 'Succeeded' || pod.status.phase === 'Failed') continue;
      let used = usedByNode.get(nodeName);
      if (!used) usedByNode.set(nodeName, (used = {}));
      addInto(used, podRequests(pod));
    }
    return usedByNode;
  }


  /** Whether every variant accepts one of the terms (kept on the memo across passes, when there is one). */
  private acceptsAll(variants: readonly Requirements[], terms: readonly Requirements[]): boolean {
    const memo = this.input.memo;
    let known = memo?.accepts.get(variants);
    let answer = known?.get(terms);
    if (answer !== undefined) return answer;
    answer = variants.every((variant) => firstCompatibleTerm(variant, terms, this.cache) !== undefined);
    if (memo) {
      if (!known) memo.accepts.set(variants, (known = new WeakMap()));
      known.set(terms, answer);
    }
    return answer;
  }

  /** Places as many of group.pods[from..] on existing NodeClaims as fit; returns the first not placed. */
  placeGroup(group: PodGroup, from: number): number {
    let next = from;
    for (const pool of this.pools) {
      for (let position = pool.inFlightIndex.findFirst(group.requestVector, 0); position !== -1 && next < group.pods.length;
        position = pool.inFlightIndex.findFirst(group.requestVector, position + 1)) {
        const claim = pool.inFlight[position]!;
        if (firstUntoleratedTaint(group.tolerations, claim.taints, true)) continue;
        const fit = copiesThatFit(group.requests, claim.used, claim.allocatable);
        if (fit === 0) continue;
        if (!this.acceptsAll(claim.variants, group.terms)) continue;
        const count = Math.min(fit, group.pods.length - next);
        // A copy: claim.used may be the memo's (ExistingClaimState.withBound).
        claim.used = addInto({ ...claim.used }, group.requests, count);
        this.touched.add(claim);
        pool.inFlightIndex.set(position, indexVector(subtractResources(claim.allocatable, claim.used)));
        for (let i = 0; i < count; i++) claim.podKeys.push(podKey(group.pods[next + i]!));
        next += count;
      }
    }
    return next;
  }

  /** Places one constrained pod on the first existing NodeClaim its topology allows as it is. */
  placeOne(group: PodGroup, topology: PodTopology, r: Relaxation): boolean {
    const pod = group.pods[0]!;
    for (const pool of this.pools) {
      for (let position = pool.inFlightIndex.findFirst(group.requestVector, 0); position !== -1;
        position = pool.inFlightIndex.findFirst(group.requestVector, position + 1)) {
        const claim = pool.inFlight[position]!;
        if (firstUntoleratedTaint(group.tolerations, claim.taints, true)) continue;
        if (copiesThatFit(group.requests, claim.used, claim.allocatable) === 0) continue;
        if (!claim.variants.every((variant) => firstCompatibleTerm(variant, group.terms, this.cache))) continue;
        const narrowed = decide(pod, topology, r, claim.source);
        // A created claim cannot be narrowed any more: every domain the pod needs must be its own.
        if (!narrowed || [...narrowed].some(([key, values]) => values.length !== (claim.source.domains(key)?.length ?? 0))) continue;
        // A copy: claim.used may be the memo's (ExistingClaimState.withBound).
        claim.used = addInto({ ...claim.used }, group.requests);
        this.touched.add(claim);
        pool.inFlightIndex.set(position, indexVector(subtractResources(claim.allocatable, claim.used)));
        claim.podKeys.push(podKey(pod));
        record(pod, topology, r, claim.source);
        return true;
      }
    }
    return false;
  }
}

/** A claim's usage with the pods bound to its node, summed afresh (a pass without a memo). */
function withBoundSummed(
  capacity: NonNullable<ExistingClaimState['capacity']>, nodeName: string | undefined, usedByNode: ReadonlyMap<string, Resources>,
): InFlightClaim['base'] {
  const used = { ...capacity.baseUsed };
  const bound = nodeName ? usedByNode.get(nodeName) : undefined;
  if (bound) addInto(used, bound);
  return { used, free: indexVector(subtractResources(capacity.allocatable, used)) };
}

function addToNode(byNode: Map<string, InFlightClaim[]>, nodeName: string, entry: InFlightClaim): void {
  const onNode = byNode.get(nodeName);
  if (onNode) onNode.push(entry);
  else byNode.set(nodeName, [entry]);
}
