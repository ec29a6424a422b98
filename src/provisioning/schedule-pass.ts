/**
 * The scheduling call of a provisioning pass: the pending pods, the dynamic NodePools and what
 * already exists handed to the scheduler (scheduler.ts), one NodePool that throws kept from
 * stopping the others.
 */
import type { AzureFlexNodeClass, NodePool, Pod } from '../ports/cluster.js';
import type { InstanceType } from '../catalog/skus.js';
import type { Resources } from './resources.js';
import { schedule, type SchedulingInput, type SchedulingMemo, type SchedulingResult } from './scheduler.js';
import type { SupportIssue } from './nodepool-support.js';
import { VolumeTopology, type VolumeRequirements } from './volume-topology.js';
import type { Pass } from './pass-view.js';

export interface SchedulingSettings {
  memo: SchedulingMemo;
  nodeResourceGroup?: string;
  kubeReserved?: (instanceType: InstanceType, maxPods: number) => Resources;
}

/** What the scheduler is asked in this pass. */
export function schedulingInputOf(pass: Pass, settings: SchedulingSettings): SchedulingInput {
  const { lists, pods, offerings } = pass;
  const reserved = pass.launch.reserved;
  return {
    pendingPods: pods.pending,
    nodePools: pass.dynamicPools,
    nodeClasses: lists.nodeClasses.filter(isUsableNodeClass),
    instanceTypes: lists.instanceTypes,
    existingNodeClaims: lists.nodeClaims,
    boundPods: pods.bound,
    // Where bound pods run, also before their NodeClaim records status.nodeName. Not part of
    // the skip key: Node writes are mostly heartbeats, and a pod binding changes the pods.
    nodes: lists.nodes,
    daemonSetPods: pods.daemonSets,
    isOfferingUnavailable: offerings.isOfferingUnavailable,
    isZoneUnavailable: offerings.isZoneUnavailable,
    ...(reserved ? { isReservable: (nodeClassName: string, sku: string) => reserved.offers(nodeClassName, sku) } : {}),
    memo: settings.memo,
    ...(settings.nodeResourceGroup ? { nodeResourceGroup: settings.nodeResourceGroup } : {}),
    ...(VolumeTopology.needed(pods.pending) ? { volumeRequirements: volumeRequirementsOf(new VolumeTopology({ claims: lists.claims, volumes: lists.volumes, classes: lists.classes })) } : {}),
    ...(settings.kubeReserved ? { kubeReserved: settings.kubeReserved } : {}),
  };
}

/**
 * One NodePool must never stop the others: if a pass throws, each pool is tried alone,
 * the ones that throw are left out (and explained on their status), and the rest are
 * scheduled together.
 */
export function scheduleIsolated(
  input: SchedulingInput, issues: Map<string, SupportIssue>, log: { error(fields: Record<string, unknown>, message: string): void },
): SchedulingResult {
  try {
    return schedule(input);
  } catch (error) {
    const good: NodePool[] = [];
    for (const pool of input.nodePools) {
      try {
        schedule({ ...input, nodePools: [pool] });
        good.push(pool);
      } catch (poolError) {
        const message = poolError instanceof Error ? poolError.message : String(poolError);
        issues.set(pool.metadata.name, { reason: 'SchedulingFailed', message: `scheduling for this NodePool failed: ${message}` });
        log.error({ nodePool: pool.metadata.name, err: message }, 'scheduling failed for NodePool; leaving it out of this pass');
      }
    }
    if (good.length === input.nodePools.length) throw error;
    return good.length > 0 ? schedule({ ...input, nodePools: good }) : { nodeClaims: [], existingPlacements: [], unschedulable: [] };
  }
}

/** Whether planning may use the NodeClass: not being deleted, and not known to be invalid. */
export function isUsableNodeClass(nodeClass: AzureFlexNodeClass): boolean {
  if (nodeClass.metadata.deletionTimestamp) return false;
  // Unknown readiness is allowed: a fresh NodeClass has no conditions yet.
  return !nodeClass.status.conditions.some((c) => c.type === 'Ready' && c.status === 'False');
}

/** One answer per pod per pass (the scheduler may ask more than once). */
function volumeRequirementsOf(topology: VolumeTopology): (pod: Pod) => VolumeRequirements {
  const seen = new Map<Pod, VolumeRequirements>();
  return (pod) => {
    if (!seen.has(pod)) seen.set(pod, topology.requirements(pod));
    return seen.get(pod);
  };
}
