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
import type { AzureFlexNodeClass, ClusterPort, Condition, NodeClaim, NodePool, ResourceList } from '../ports/cluster.js';
import type { InstanceType } from '../catalog/skus.js';
import { resourcesToList, type Resources } from './resources.js';
import { conditionsEqual, rfc3339, setCondition } from '../apis/conditions.js';
import { nodePoolSupport, type SupportIssue } from './nodepool-support.js';
import { desiredReplicas } from './static-capacity.js';
import { LABEL_NODEPOOL } from '../apis/well-known.js';
import { sumClaims, type NodePoolTotals } from './nodepool-totals.js';

/** Where the cluster gauges read a NodeClaim's capacity. */

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
  const classesByName = new Map(input.nodeClasses.map((c) => [c.metadata.name, c]));
  const nowIso = rfc3339(input.now);
  const blocked: string[] = [];
  let failures = 0;
  const live = new Set<string>();
  const sums = poolSums(input, classesByName);
  for (const pool of input.pools) {
    live.add(pool.metadata.uid);
    const name = pool.metadata.name;
    const nodeClass = classesByName.get(pool.spec.template.spec.nodeClassRef.name);
    const support = nodePoolSupport(pool);
    const passIssue = input.passIssues?.get(name);
    const blocking = passIssue ? [...support.blocking, passIssue] : support.blocking;
    if (blocking.length > 0) blocked.push(name);

    const { total, nodes } = sums(name, nodeClass);
    const resources = resourcesToList(total);
    const conditions = poolConditions(pool, nodeClass, { blocking, degraded: support.degraded }, nodes, nowIso);
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

/**
 * Each pool's summed NodeClaim capacity and node count: kept up to date in the caller's
 * NodePoolTotals when it has one, else summed here from the NodeClaims grouped by pool.
 */
function poolSums(
  input: NodePoolStatusInput, classesByName: ReadonlyMap<string, AzureFlexNodeClass>,
): (pool: string, nodeClass: AzureFlexNodeClass | undefined) => { total: Resources; nodes: number } {
  const typesByName = new Map(input.instanceTypes.map((t) => [t.name, t]));
  const { totals } = input;
  if (totals) {
    const poolClasses = new Map(input.pools.map((p) => [p.metadata.name, classesByName.get(p.spec.template.spec.nodeClassRef.name)]));
    totals.update(input.nodeClaims, (pool) => poolClasses.get(pool), typesByName, input.instanceTypes);
    return (pool) => totals.of(pool);
  }
  const claimsByPool = new Map<string, NodeClaim[]>();
  for (const claim of input.nodeClaims) {
    const pool = claim.metadata.labels[LABEL_NODEPOOL];
    if (pool === undefined) continue;
    let list = claimsByPool.get(pool);
    if (!list) claimsByPool.set(pool, (list = []));
    list.push(claim);
  }
  return (pool, nodeClass) => sumClaims(claimsByPool.get(pool) ?? [], typesByName, nodeClass);
}

/** The pool's conditions after this sync: validation, its NodeClass, full support, Ready, and on a static pool ReplicasReady. */
function poolConditions(
  pool: NodePool, nodeClass: AzureFlexNodeClass | undefined,
  issues: { blocking: readonly SupportIssue[]; degraded: readonly SupportIssue[] }, nodes: number, nowIso: string,
): Condition[] {
  const { blocking } = issues;
  const wanted = pool.spec.template.spec.nodeClassRef.name;
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
          message: nodeClass ? `AzureFlexNodeClass ${nodeClass.metadata.name} is not Ready` : `AzureFlexNodeClass ${wanted} not found`,
        },
    nowIso,
  );
  conditions = setCondition(conditions, issueCondition(CONDITION_FULLY_SUPPORTED, issues.degraded), nowIso);
  const notReady = blocking[0] ?? (classOk ? undefined : { reason: 'NodeClassNotReady', message: `AzureFlexNodeClass ${wanted} is not Ready` });
  conditions = setCondition(
    conditions,
    notReady ? { type: CONDITION_READY, status: 'False', reason: notReady.reason, message: notReady.message } : { type: CONDITION_READY, status: 'True', reason: 'Ready', message: '' },
    nowIso,
  );
  if (pool.spec.replicas !== undefined) conditions = setCondition(conditions, staticCapacityCondition(pool, nodes), nowIso);
  return conditions;
}

/** Desired (replicas within limits.nodes) against registered, as the condition's message says it. */
function staticCapacityCondition(pool: NodePool, nodes: number): Omit<Condition, 'lastTransitionTime'> {
  const desired = desiredReplicas(pool);
  const message = `${nodes}/${desired} nodes registered`;
  return nodes >= desired
    ? { type: CONDITION_REPLICAS_READY, status: 'True', reason: 'ReplicasReady', message }
    : { type: CONDITION_REPLICAS_READY, status: 'False', reason: 'ReplicasPending', message };
}

function issueCondition(type: string, issues: readonly SupportIssue[]): Omit<Condition, 'lastTransitionTime'> {
  if (issues.length === 0) return { type, status: 'True', reason: type, message: '' };
  return { type, status: 'False', reason: issues[0]!.reason, message: issues.map((i) => i.message).join('; ') };
}

function sameResourceList(a: ResourceList, b: ResourceList | undefined): boolean {
  if (!b) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => b[k] === a[k]);
}
