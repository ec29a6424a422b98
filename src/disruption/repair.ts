/**
 * Node repair, as upstream core defines it: repair policies name a node condition type, the
 * status that makes it unhealthy, and how long that is tolerated. A node whose condition has
 * matched a policy for longer than its toleration (counted from the condition's
 * lastTransitionTime, so a restart loses nothing) has its NodeClaim deleted forcefully, like an
 * expired one, and is replaced.
 *
 * The circuit breaker: a node matching any policy counts as unhealthy whatever its
 * toleration; when more than 20% of a NodePool's nodes (rounded up, as a PodDisruptionBudget
 * rounds) are unhealthy, the pool is repaired no further: a wide outage is not fixed by
 * replacing its nodes, and replacing them all would take the pool's capacity away at once.
 */
import type { Node } from '../ports/cluster.js';
import { parseDuration } from '../utils/duration.js';

export interface RepairPolicy {
  conditionType: string;
  conditionStatus: 'True' | 'False' | 'Unknown';
  tolerationMs: number;
}

/** The Azure provider's policies: a kubelet that stops reporting (Unknown) or reports NotReady (False) for 10 minutes. */
export const AZURE_REPAIR_POLICIES: readonly RepairPolicy[] = [
  { conditionType: 'Ready', conditionStatus: 'False', tolerationMs: 10 * 60_000 },
  { conditionType: 'Ready', conditionStatus: 'Unknown', tolerationMs: 10 * 60_000 },
];

/** The policies a controller runs: the Azure provider's, then the configured ones. */
export function withAzureRepairPolicies(extra: readonly RepairPolicy[]): RepairPolicy[] {
  return [...AZURE_REPAIR_POLICIES, ...extra];
}

/** Upstream's breaker: the percentage of a NodePool's nodes that may be unhealthy before its repair stops. */
export const UNHEALTHY_THRESHOLD_PERCENT = 20;

/** Upstream's NodePool Event when the breaker holds a repair back. */
export const EVENT_REASON_REPAIR_BLOCKED = 'NodeRepairBlocked';

const STATUSES: ReadonlySet<string> = new Set(['True', 'False', 'Unknown']);

/**
 * Extra policies from the controller's settings, `Type=Status:toleration` separated by commas,
 * e.g. `GpuXidError=True:5m,NVLinkDown=True:10m` (node-problem-detector's GPU conditions).
 */
export function parseRepairPolicies(text: string): RepairPolicy[] {
  const out: RepairPolicy[] = [];
  for (const item of text.split(',').map((s) => s.trim()).filter((s) => s.length > 0)) {
    const match = /^([A-Za-z0-9][A-Za-z0-9_.\-/]*)=(True|False|Unknown):(.+)$/.exec(item);
    if (!match || !STATUSES.has(match[2]!)) throw new Error(`repair policy "${item}": expected Type=True|False|Unknown:duration (e.g. GpuXidError=True:5m)`);
    const tolerationMs = parseDuration(match[3]!);
    if (tolerationMs === undefined) throw new Error(`repair policy "${item}": the toleration must be a duration such as 10m`);
    out.push({ conditionType: match[1]!, conditionStatus: match[2] as RepairPolicy['conditionStatus'], tolerationMs });
  }
  return out;
}

export interface Unhealthy {
  /** The condition type that matched (upstream's metric reason names the repair, the Event names this). */
  conditionType: string;
  /** When its toleration runs out. */
  dueAt: number;
}

/** The matching condition whose toleration runs out first, or undefined for a healthy node. */
export function unhealthyCondition(node: Node, policies: readonly RepairPolicy[]): Unhealthy | undefined {
  let found: Unhealthy | undefined;
  for (const policy of policies) {
    const condition = node.status.conditions.find((c) => c.type === policy.conditionType);
    if (condition?.status !== policy.conditionStatus) continue;
    const since = Date.parse(condition.lastTransitionTime);
    const dueAt = (Number.isNaN(since) ? 0 : since) + policy.tolerationMs;
    if (!found || dueAt < found.dueAt) found = { conditionType: policy.conditionType, dueAt };
  }
  return found;
}

export interface PoolHealth {
  total: number;
  unhealthy: number;
}

/** A NodePool's nodes, and how many match a policy (toleration or not). */
export function poolHealth(nodes: Iterable<Node>, policies: readonly RepairPolicy[]): PoolHealth {
  const health: PoolHealth = { total: 0, unhealthy: 0 };
  for (const node of nodes) {
    health.total++;
    if (unhealthyCondition(node, policies)) health.unhealthy++;
  }
  return health;
}

/** Whether the breaker holds the pool's repairs: more unhealthy nodes than 20% of its nodes, rounded up. */
export function isTripped(health: PoolHealth): boolean {
  // In integers: 15 × 0.2 in floating point rounds up to 4.
  return health.unhealthy > Math.ceil((health.total * UNHEALTHY_THRESHOLD_PERCENT) / 100);
}
