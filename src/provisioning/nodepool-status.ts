/**
 * NodePool status as upstream Karpenter publishes it, so `kubectl get nodepools` fills its
 * NODES and READY columns: `nodes`, `resources` (what limits count), and the conditions
 * ValidationSucceeded, NodeClassReady and Ready, plus azflex's FullySupported for what it
 * honours only partly (nodepool-support.ts). A condition turning False, or
 * its message changing, gets one Warning Event on that NodePool.
 *
 * The provisioner calls this at the end of each pass with the lists it already read, so the
 * status costs no extra list calls and is written only when it changed.
 */
import type { AzureFlexNodeClass, ClusterPort, Condition, NodeClaim, NodePool, NodeSelectorRequirement, ResourceList } from '../ports/cluster.js';
import type { InstanceType } from '../catalog/skus.js';
import { addInto, resourcesFromList, resourcesToList, type Resources } from './resources.js';
import { instanceTypeCapacity } from './overhead.js';
import { Requirements } from './requirements.js';
import { conditionsEqual, rfc3339, setCondition } from '../apis/conditions.js';
import { nodePoolSupport, type SupportIssue } from './nodepool-support.js';
import { desiredReplicas } from './static-capacity.js';
import { LABEL_INSTANCE_TYPE, LABEL_NODEPOOL } from '../apis/well-known.js';
import { walkAlongside } from '../utils/list-walk.js';

export const CONDITION_VALIDATION_SUCCEEDED = 'ValidationSucceeded';
export const CONDITION_NODECLASS_READY = 'NodeClassReady';
export const CONDITION_READY = 'Ready';
/** azflex's own: False while it honours part of the spec only (e.g. consolidationPolicy Balanced). */
export const CONDITION_FULLY_SUPPORTED = 'FullySupported';
/** azflex's own, on static NodePools (spec.replicas): True once as many nodes have registered as it wants. */
export const CONDITION_REPLICAS_READY = 'ReplicasReady';

export interface NodePoolStatusLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface NodePoolStatusInput {
  cluster: ClusterPort;
  now: number;
  pools: readonly NodePool[];
  nodeClaims: readonly NodeClaim[];
  nodeClasses: readonly AzureFlexNodeClass[];
  instanceTypes: readonly InstanceType[];
  /** Failures the provisioner met on a pool in this pass (e.g. scheduling threw on it). */
  passIssues?: ReadonlyMap<string, SupportIssue>;
  log: NodePoolStatusLog;
  /** uid → last Warning text sent, so a steady problem gets one Event, not one per pass. */
  warned: Map<string, string>;
  /** Each pool's summed NodeClaim capacity kept from the last call (a caller that syncs again and again). */
  totals?: NodePoolTotals;
}

export interface NodePoolStatusSummary {
  /** NodePools with a blocking issue (left out of provisioning). */
  blocked: string[];
  /** Writes that failed (status, Events): the caller retries next pass. */
  failures: number;
}

export async function syncNodePoolStatus(input: NodePoolStatusInput): Promise<NodePoolStatusSummary> {
  const typesByName = new Map(input.instanceTypes.map((t) => [t.name, t]));
  const classesByName = new Map(input.nodeClasses.map((c) => [c.metadata.name, c]));
  const nowIso = rfc3339(input.now);
  const blocked: string[] = [];
  let failures = 0;
  const live = new Set<string>();
  let claimsByPool: Map<string, NodeClaim[]> | undefined;
  if (input.totals) {
    const poolClasses = new Map(input.pools.map((p) => [p.metadata.name, classesByName.get(p.spec.template.spec.nodeClassRef.name)]));
    input.totals.update(input.nodeClaims, (pool) => poolClasses.get(pool), typesByName, input.instanceTypes);
  } else {
    claimsByPool = new Map();
    for (const claim of input.nodeClaims) {
      const pool = claim.metadata.labels[LABEL_NODEPOOL];
      if (pool === undefined) continue;
      let list = claimsByPool.get(pool);
      if (!list) claimsByPool.set(pool, (list = []));
      list.push(claim);
    }
  }
  for (const pool of input.pools) {
    live.add(pool.metadata.uid);
    const name = pool.metadata.name;
    const nodeClass = classesByName.get(pool.spec.template.spec.nodeClassRef.name);
    const support = nodePoolSupport(pool);
    const passIssue = input.passIssues?.get(name);
    const blocking = passIssue ? [...support.blocking, passIssue] : support.blocking;
    if (blocking.length > 0) blocked.push(name);

    const { total, nodes } = input.totals ? input.totals.of(name) : sumClaims(claimsByPool!.get(name) ?? [], typesByName, nodeClass);
    const resources = resourcesToList(total);

    // The provisioner's view: unknown readiness counts as ready (a fresh NodeClass has no
    // conditions yet); the NodeClass status controller turns an invalid one Ready=False.
    const classOk = nodeClass !== undefined && !nodeClass.metadata.deletionTimestamp && !nodeClass.status.conditions.some((c) => c.type === 'Ready' && c.status === 'False');
    let conditions = setCondition(pool.status.conditions, issueCondition(CONDITION_VALIDATION_SUCCEEDED, blocking), nowIso);
    conditions = setCondition(
      conditions,
      classOk
        ? { type: CONDITION_NODECLASS_READY, status: 'True', reason: 'NodeClassReady', message: '' }
        : {
            type: CONDITION_NODECLASS_READY,
            status: 'False',
            reason: nodeClass ? 'NodeClassNotReady' : 'NodeClassNotFound',
            message: nodeClass ? `AzureFlexNodeClass ${nodeClass.metadata.name} is not Ready` : `AzureFlexNodeClass ${pool.spec.template.spec.nodeClassRef.name} not found`,
          },
      nowIso,
    );
    conditions = setCondition(conditions, issueCondition(CONDITION_FULLY_SUPPORTED, support.degraded), nowIso);
    const notReady = blocking[0] ?? (classOk ? undefined : { reason: 'NodeClassNotReady', message: `AzureFlexNodeClass ${pool.spec.template.spec.nodeClassRef.name} is not Ready` });
    conditions = setCondition(
      conditions,
      notReady ? { type: CONDITION_READY, status: 'False', reason: notReady.reason, message: notReady.message } : { type: CONDITION_READY, status: 'True', reason: 'Ready', message: '' },
      nowIso,
    );

    if (pool.spec.replicas !== undefined) conditions = setCondition(conditions, staticCapacityCondition(pool, nodes), nowIso);

    if (!conditionsEqual(conditions, pool.status.conditions) || pool.status.nodes !== nodes || !sameResourceList(resources, pool.status.resources)) {
      try {
        await input.cluster.updateNodePoolStatus(name, { ...pool.status, resources, nodes, conditions });
      } catch (error) {
        failures++;
        input.log.warn({ nodePool: name, err: error instanceof Error ? error.message : String(error) }, 'updating NodePool status failed');
      }
    }

    const problems = [...blocking, ...support.degraded];
    const text = problems.map((p) => `${p.reason}: ${p.message}`).join('; ');
    if (problems.length === 0) {
      input.warned.delete(pool.metadata.uid);
    } else if (input.warned.get(pool.metadata.uid) !== text) {
      input.warned.set(pool.metadata.uid, text);
      for (const p of problems) {
        await input.cluster
          .recordEvent({ involvedObject: { kind: 'NodePool', name, uid: pool.metadata.uid }, type: 'Warning', reason: p.reason, message: p.message })
          .catch((error: unknown) => {
            failures++;
            input.warned.delete(pool.metadata.uid);
            input.log.warn({ nodePool: name, err: error instanceof Error ? error.message : String(error) }, 'recording NodePool event failed');
          });
      }
    }
  }
  for (const uid of [...input.warned.keys()]) if (!live.has(uid)) input.warned.delete(uid);
  return { blocked, failures };
}

/** Desired (replicas within limits.nodes) against registered, as the condition's message says it. */
function staticCapacityCondition(pool: NodePool, nodes: number): Omit<Condition, 'lastTransitionTime'> {
  const desired = desiredReplicas(pool);
  const message = `${nodes}/${desired} nodes registered`;
  return nodes >= desired
    ? { type: CONDITION_REPLICAS_READY, status: 'True', reason: 'ReplicasReady', message }
    : { type: CONDITION_REPLICAS_READY, status: 'False', reason: 'ReplicasPending', message };
}

/** What a pool's NodeClaims hold (what its limits count) and how many have a node. */
function sumClaims(claims: readonly NodeClaim[], typesByName: ReadonlyMap<string, InstanceType>, nodeClass: AzureFlexNodeClass | undefined): { total: Resources; nodes: number } {
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
    try {
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
      const add = (claim: NodeClaim): boolean => {
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
      };
      const remove = (name: string): void => {
        const share = this.shares.get(name)!;
        this.shares.delete(name);
        const totals = share.pool === undefined ? undefined : this.pools.get(share.pool);
        if (!totals) return;
        totals.claims.delete(share);
        take(totals, share.capacity, share.node, -1);
        if (totals.claims.size === 0) this.pools.delete(share.pool!);
      };
      let distinct = true;
      const walked = walkAlongside(this.last, claims, sameName, {
        replaced: (old, claim) => {
          remove(old.metadata.name);
          distinct &&= add(claim);
        },
        removed: (old) => remove(old.metadata.name),
        added: (claim) => {
          distinct &&= add(claim);
        },
      }, Math.max(64, claims.length >> 2));
      if (!walked && distinct) {
        this.reset();
        for (const claim of claims) if (!add(claim)) distinct = false;
      }
      if (!distinct) {
        // The same name twice: sum this list afresh, and start afresh next time.
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

function issueCondition(type: string, issues: readonly SupportIssue[]): Omit<Condition, 'lastTransitionTime'> {
  if (issues.length === 0) return { type, status: 'True', reason: type, message: '' };
  return { type, status: 'False', reason: issues[0]!.reason, message: issues.map((i) => i.message).join('; ') };
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

function sameResourceList(a: ResourceList, b: ResourceList | undefined): boolean {
  if (!b) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => b[k] === a[k]);
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
