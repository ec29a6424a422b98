/**
 * Node health faults of the simulated world: at a time, a share of one NodePool's (or every)
 * Ready node turns unhealthy for good: NotReady (a kubelet that stopped) or a condition a
 * node-problem-detector would set (a GPU XID error, a fallen-off NVLink). The VM keeps running,
 * so only node repair (src/disruption/repair.ts) replaces such a node.
 */
import type { Node } from '../ports/cluster.js';
import type { Random } from '../ports/clock.js';
import type { VirtualClock } from './virtual-clock.js';
import type { FakeCluster } from './cluster.js';
import { LABEL_NODEPOOL } from '../apis/well-known.js';

export interface NodeHealthFault {
  /** Seconds after the start. */
  at: number;
  /** Only this NodePool's nodes; absent: every node. */
  nodePool?: string | undefined;
  /** Share of the matching Ready nodes, rounded to the nearest node. */
  fraction: number;
  /** The condition they report; Ready=False by default. */
  condition: { type: string; status: 'True' | 'False' | 'Unknown' };
}

export function scheduleNodeHealthFaults(clock: VirtualClock, cluster: FakeCluster, random: Random, faults: readonly NodeHealthFault[]): void {
  for (const fault of faults) clock.setTimer(fault.at * 1000, () => makeUnhealthy(cluster, random, fault, clock.now()));
}

function makeUnhealthy(cluster: FakeCluster, random: Random, fault: NodeHealthFault, now: number): void {
  const candidates = [...cluster.nodes.values()].filter((n) => isReady(n) && (fault.nodePool === undefined || n.metadata.labels[LABEL_NODEPOOL] === fault.nodePool));
  const count = Math.round(candidates.length * fault.fraction);
  // A seeded partial shuffle: the same seed picks the same nodes.
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(random.next() * (candidates.length - i));
    [candidates[i], candidates[j]] = [candidates[j]!, candidates[i]!];
    const node = candidates[i]!;
    const others = node.status.conditions.filter((c) => c.type !== fault.condition.type);
    const lastTransitionTime = new Date(now).toISOString();
    cluster.putNode({
      ...node,
      status: { ...node.status, conditions: [...others, { type: fault.condition.type, status: fault.condition.status, reason: 'SimulatedFault', message: 'made unhealthy by the world', lastTransitionTime }] },
    });
  }
}

function isReady(node: Node): boolean {
  return node.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}
