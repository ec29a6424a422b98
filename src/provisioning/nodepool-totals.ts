/**
 * What each NodePool's NodeClaims hold (what its limits count) and how many have a node: a
 * NodeClaim's capacity as reported once launched, or its cheapest option's before, summed per
 * pool and carried from sync to sync (NodePoolTotals).
 */
import type { AzureFlexNodeClass, NodeClaim, NodeSelectorRequirement, ResourceList } from '../ports/cluster.js';
import type { InstanceType } from '../catalog/skus.js';
import { addInto, resourcesFromList, type Resources } from './resources.js';
import { instanceTypeCapacity } from './overhead.js';
import { Requirements } from './requirements.js';
import { LABEL_INSTANCE_TYPE, LABEL_NODEPOOL } from '../apis/well-known.js';
import { walkAlongside } from '../utils/list-walk.js';

/** What a pool's NodeClaims hold (what its limits count) and how many have a node. */
export function sumClaims(claims: readonly NodeClaim[], typesByName: ReadonlyMap<string, InstanceType>, nodeClass: AzureFlexNodeClass | undefined): { total: Resources; nodes: number } {
  const total: Resources = {};
  let nodes = 0;
  for (const claim of claims) {
    addInto(total, claimCapacity(claim, typesByName, nodeClass));
    if (claim.status.nodeName) nodes++;
  }
  return { total, nodes };
}

interface PoolTotals {
  /** The NodeClass its NodeClaims' capacities were worked out with. */
  nodeClass: AzureFlexNodeClass | undefined;
  claims: Set<ClaimShare>;
  total: Resources;
  /** How many NodeClaims' capacities name each resource: a resource none names is left out, as a fresh sum leaves it. */
  counts: Map<string, number>;
  nodes: number;
}

/** How one update reckons a NodeClaim's capacity: with its pool's NodeClass and the catalog. */
interface Reckoning {
  nodeClassOf: (pool: string) => AzureFlexNodeClass | undefined;
  typesByName: ReadonlyMap<string, InstanceType>;
}

interface ClaimShare {
  claim: NodeClaim;
  pool: string | undefined;
  capacity: Readonly<Resources>;
  node: boolean;
}

/**
 * Each NodePool's summed NodeClaim capacity, carried from sync to sync: the NodeClaims list is
 * walked alongside the last one (src/utils/list-walk.ts; an unchanged NodeClaim is the same
 * object), so a sync pays for the NodeClaims written, added or gone since the last one, not
 * for each of a fleet's 1,000 (the provisioner syncs whenever NodeClaims changed). Amounts are
 * integers, so taking a replaced NodeClaim's capacity out is exact, and the sum equals a fresh one.
 */
export class NodePoolTotals {
  private instanceTypes: readonly InstanceType[] = [];
  private last: readonly NodeClaim[] = [];
  /** By NodeClaim name: one per item of `last`. */
  private readonly shares = new Map<string, ClaimShare>();
  private readonly pools = new Map<string, PoolTotals>();
  /** Fresh sums of a list that named a NodeClaim twice (kept for that list only). */
  private fresh: Map<string, { total: Resources; nodes: number }> | undefined;

  /** Brings the sums to `claims`; `nodeClassOf` names the NodeClass each pool's capacities are reckoned with. */
  update(
    claims: readonly NodeClaim[], nodeClassOf: (pool: string) => AzureFlexNodeClass | undefined,
    typesByName: ReadonlyMap<string, InstanceType>, instanceTypes: readonly InstanceType[],
  ): void {
    this.fresh = undefined;
    if (!sameItems(this.instanceTypes, instanceTypes)) {
      this.reset();
      this.instanceTypes = [...instanceTypes];
    }
    const reckon: Reckoning = { nodeClassOf, typesByName };
    try {
      this.reckonChangedNodeClasses(reckon);
      let distinct = true;
      const walked = walkAlongside(this.last, claims, sameName, {
        replaced: (old, claim) => {
          this.remove(old.metadata.name);
          distinct &&= this.add(claim, reckon);
        },
        removed: (old) => this.remove(old.metadata.name),
        added: (claim) => {
          distinct &&= this.add(claim, reckon);
        },
      }, Math.max(64, claims.length >> 2));
      if (!walked && distinct) {
        this.reset();
        for (const claim of claims) if (!this.add(claim, reckon)) distinct = false;
      }
      if (!distinct) {
        // The same name twice: sum this list afresh, and start afresh next time.
        this.sumAfresh(claims, reckon);
        return;
      }
    } catch (error) {
      this.reset();
      throw error;
    }
    this.last = claims;
  }

  /** A pool's sum and node count as of the last update. */
  of(pool: string): { total: Resources; nodes: number } {
    const totals = this.fresh ? this.fresh.get(pool) : this.pools.get(pool);
    return totals ? { total: totals.total, nodes: totals.nodes } : { total: {}, nodes: 0 };
  }

  /** A pool whose NodeClass changed has each of its NodeClaims' capacity worked out again. */
  private reckonChangedNodeClasses({ nodeClassOf, typesByName }: Reckoning): void {
    for (const [pool, totals] of this.pools) {
      const nodeClass = nodeClassOf(pool);
      if (totals.nodeClass === nodeClass) continue;
      totals.nodeClass = nodeClass;
      totals.total = {};
      totals.counts.clear();
      totals.nodes = 0;
      for (const share of totals.claims) {
        share.capacity = claimCapacity(share.claim, typesByName, nodeClass);
        take(totals, share.capacity, share.node, 1);
      }
    }
  }

  /** Counts a NodeClaim into its pool; false when one of its name is counted already. */
  private add(claim: NodeClaim, { nodeClassOf, typesByName }: Reckoning): boolean {
    if (this.shares.has(claim.metadata.name)) return false;
    const pool = claim.metadata.labels[LABEL_NODEPOOL];
    let totals = pool === undefined ? undefined : this.pools.get(pool);
    if (pool !== undefined && !totals) this.pools.set(pool, (totals = { nodeClass: nodeClassOf(pool), claims: new Set(), total: {}, counts: new Map(), nodes: 0 }));
    const share: ClaimShare = { claim, pool, capacity: totals ? claimCapacity(claim, typesByName, totals.nodeClass) : {}, node: Boolean(claim.status.nodeName) };
    this.shares.set(claim.metadata.name, share);
    if (totals) {
      totals.claims.add(share);
      take(totals, share.capacity, share.node, 1);
    }
    return true;
  }

  /** Takes a counted NodeClaim out of its pool (a pool left with none goes). */
  private remove(name: string): void {
    const share = this.shares.get(name)!;
    this.shares.delete(name);
    const totals = share.pool === undefined ? undefined : this.pools.get(share.pool);
    if (!totals) return;
    totals.claims.delete(share);
    take(totals, share.capacity, share.node, -1);
    if (totals.claims.size === 0) this.pools.delete(share.pool!);
  }

  /** Fresh sums of a list that names a NodeClaim twice, kept for that list only. */
  private sumAfresh(claims: readonly NodeClaim[], { nodeClassOf, typesByName }: Reckoning): void {
    this.reset();
    this.fresh = new Map();
    const byPool = new Map<string, NodeClaim[]>();
    for (const claim of claims) {
      const pool = claim.metadata.labels[LABEL_NODEPOOL];
      if (pool === undefined) continue;
      const list = byPool.get(pool);
      if (list) list.push(claim);
      else byPool.set(pool, [claim]);
    }
    for (const [pool, list] of byPool) this.fresh.set(pool, sumClaims(list, typesByName, nodeClassOf(pool)));
  }

  private reset(): void {
    this.last = [];
    this.shares.clear();
    this.pools.clear();
  }
}

function sameName(a: NodeClaim, b: NodeClaim): boolean {
  return a.metadata.name === b.metadata.name;
}

/** Adds (sign 1) or takes out (sign -1) one NodeClaim's share. */
function take(totals: PoolTotals, capacity: Readonly<Resources>, node: boolean, sign: 1 | -1): void {
  if (node) totals.nodes += sign;
  for (const name in capacity) {
    const count = (totals.counts.get(name) ?? 0) + sign;
    if (count === 0) {
      totals.counts.delete(name);
      delete totals.total[name];
    } else {
      totals.counts.set(name, count);
      totals.total[name] = (totals.total[name] ?? 0) + sign * capacity[name]!;
    }
  }
}

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Reported capacity once launched; before that, the cheapest option's (what will launch first). */
export function claimCapacity(claim: NodeClaim, typesByName: ReadonlyMap<string, InstanceType>, nodeClass: AzureFlexNodeClass | undefined): Readonly<Resources> {
  if (claim.status.capacity) return reportedCapacity(claim.status.capacity);
  const launched = claim.metadata.labels[LABEL_INSTANCE_TYPE];
  const names = launched ? [launched] : instanceTypeNames(claim.spec.requirements);
  const candidates = names.map((n) => typesByName.get(n)).filter((t): t is InstanceType => t !== undefined);
  candidates.sort((a, b) => a.pricePerHour - b.pricePerHour);
  return candidates[0] ? instanceTypeCapacity(candidates[0], nodeClass?.spec) : {};
}

/**
 * The instance types a NodeClaim's requirements allow, per requirements list (writers replace
 * what they change, and a status write keeps the spec): every pass sums each NodeClaim of a
 * fleet, and parsing the selectors of those not launched yet was most of it.
 */
const allowedTypes = new WeakMap<readonly NodeSelectorRequirement[], readonly string[]>();

function instanceTypeNames(requirements: readonly NodeSelectorRequirement[]): readonly string[] {
  let names = allowedTypes.get(requirements);
  if (!names) allowedTypes.set(requirements, (names = [...(Requirements.fromSelectors(requirements).get(LABEL_INSTANCE_TYPE)?.values ?? [])]));
  return names;
}

/**
 * A launched NodeClaim's reported capacity, parsed once per list object (writers replace a
 * NodeClaim's status, never mutate it, and carry the same capacity over): every pass sums it
 * for each of a fleet's NodeClaims. Frozen: shared.
 */
const reported = new WeakMap<ResourceList, Readonly<Resources>>();

function reportedCapacity(capacity: ResourceList): Readonly<Resources> {
  let parsed = reported.get(capacity);
  if (!parsed) reported.set(capacity, (parsed = Object.freeze(resourcesFromList(capacity))));
  return parsed;
}
