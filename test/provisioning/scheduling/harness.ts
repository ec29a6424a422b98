/**
 * A small cluster for porting upstream Karpenter's scheduling tests: `provision` schedules the
 * pending pods, launches every planned NodeClaim as a Node (cheapest option, first zone it
 * allows) and binds its pods there, as upstream's ExpectProvisioned and ExpectScheduled do;
 * later passes see those Nodes, NodeClaims and bound pods as existing capacity and topology.
 */
import type { InstanceType } from '../../../src/catalog/skus.js';
import type { Node, NodeClaim, NodePool, Pod, PodAffinityTerm, Taint, TopologySpreadConstraint } from '../../../src/ports/cluster.js';
import { Requirements } from '../../../src/provisioning/requirements.js';
import { schedule, type SchedulingInput, type SchedulingResult } from '../../../src/provisioning/scheduler.js';
import {
  LABEL_ARCH, LABEL_CAPACITY_TYPE, LABEL_HOSTNAME, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, LABEL_REGION, LABEL_ZONE,
} from '../../../src/apis/well-known.js';
import { iso, makeNodeClaim, makeNodeClass, makeNodePool, makePod, T0, type PodOptions } from '../fixtures.js';

export const ZONES = ['eastus2-1', 'eastus2-2', 'eastus2-3'];

function dType(vcpu: number, zones: readonly string[] = ZONES): InstanceType {
  return {
    name: `Standard_D${vcpu}s_v5`, family: 'standardDSv5Family', vcpu, memoryMiB: vcpu * 4096, gpuCount: 0, maxPods: 110,
    ephemeralStorageGiB: 128, arch: 'amd64', pricePerHour: 0.048 * vcpu, locations: ['eastus2'], zones: { eastus2: [...zones] },
  };
}

/** Sizes like upstream's fake instance types: small to large, every zone. */
export const TYPES: InstanceType[] = [2, 4, 8, 16, 32, 64].map((vcpu) => dType(vcpu));

/**
 * Upstream's InstanceTypesAssorted, for the arch cases: every size as amd64 (Dsv5) and as arm64
 * (Dpsv5) at the same price, so the cheapest of either architecture is the cheapest of all.
 */
export function assortedTypes(armZones: readonly string[] = ZONES): InstanceType[] {
  const arm = (vcpu: number): InstanceType => ({ ...dType(vcpu, armZones), name: `Standard_D${vcpu}ps_v5`, family: 'standardDPSv5Family', arch: 'arm64' });
  return [2, 4, 8, 16, 32, 64].flatMap((vcpu) => [dType(vcpu), arm(vcpu)]);
}

export interface Placement {
  node: Node;
  claim: NodeClaim;
}

export class UpstreamCluster {
  nodePools: NodePool[];
  instanceTypes: readonly InstanceType[];
  readonly nodeClaims: NodeClaim[] = [];
  readonly nodes: Node[] = [];
  readonly bound: Pod[] = [];
  last: SchedulingResult | undefined;
  private serial = 0;

  constructor(nodePools: NodePool[] = [makeNodePool('default')], instanceTypes: readonly InstanceType[] = TYPES) {
    this.nodePools = nodePools;
    this.instanceTypes = instanceTypes;
  }

  input(pending: readonly Pod[], over: Partial<SchedulingInput> = {}): SchedulingInput {
    return {
      pendingPods: pending, nodePools: this.nodePools, nodeClasses: [makeNodeClass()], instanceTypes: this.instanceTypes,
      existingNodeClaims: this.nodeClaims, boundPods: this.bound, nodes: this.nodes, daemonSetPods: [], isOfferingUnavailable: () => false,
      ...over,
    };
  }

  /** One provisioning pass: pods placed are bound to the Nodes their NodeClaims launched as. */
  provision(...pending: Pod[]): SchedulingResult {
    const result = schedule(this.input(pending));
    this.last = result;
    const byKey = new Map(pending.map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p]));
    for (const placement of result.existingPlacements) {
      const claim = this.nodeClaims.find((c) => c.metadata.name === placement.nodeClaimName)!;
      // A NodeClaim without a node yet: its pods wait for it, pending here.
      if (claim.status.nodeName) for (const key of placement.podKeys) this.bind(byKey.get(key)!, claim.status.nodeName);
    }
    for (const plan of result.nodeClaims) {
      const node = this.launch(plan.nodePoolName, plan.instanceType, Requirements.fromSelectors(plan.requirements));
      for (const key of plan.podKeys) this.bind(byKey.get(key)!, node.metadata.name);
    }
    return result;
  }

  /** An existing Node (and its NodeClaim) of a pool, as upstream's ExpectApplied(node, nodeClaim). */
  launch(nodePoolName: string, instanceType: InstanceType, requirements = Requirements.EMPTY, zone?: string): Node {
    const name = `node-${++this.serial}`;
    const zones = requirements.get(LABEL_ZONE);
    const chosen = zone ?? (zones && !zones.complement ? [...zones.values].sort()[0] : instanceType.zones?.eastus2?.[0]);
    const pool = this.nodePools.find((p) => p.metadata.name === nodePoolName);
    const labels: Record<string, string> = {
      ...(pool?.spec.template.metadata.labels ?? {}),
      [LABEL_NODEPOOL]: nodePoolName, [LABEL_INSTANCE_TYPE]: instanceType.name, [LABEL_REGION]: 'eastus2',
      [LABEL_CAPACITY_TYPE]: 'on-demand', [LABEL_ARCH]: instanceType.arch, [LABEL_HOSTNAME]: name,
      ...(chosen ? { [LABEL_ZONE]: chosen } : {}),
    };
    for (const r of requirements.values()) if (!r.complement && r.values.size === 1 && labels[r.key] === undefined) labels[r.key] = [...r.values][0]!;
    const capacity = { cpu: String(instanceType.vcpu), memory: `${instanceType.memoryMiB}Mi`, pods: String(instanceType.maxPods) };
    const taints: Taint[] = [...(pool?.spec.template.spec.taints ?? [])];
    const claim = makeNodeClaim(`claim-${this.serial}`, { nodePool: nodePoolName, launchedAs: instanceType.name, nodeName: name, capacity, allocatable: capacity, labels, taints });
    const node: Node = {
      metadata: { name, uid: `uid-${name}`, labels, annotations: {}, finalizers: [], creationTimestamp: iso(T0) },
      spec: { taints }, status: { capacity, allocatable: capacity, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: '', lastTransitionTime: iso(T0) }] },
    };
    this.nodeClaims.push(claim);
    this.nodes.push(node);
    return node;
  }

  /** A pod running on a node already (upstream's ExpectManualBinding). */
  bind(pod: Pod, nodeName: string): void {
    this.bound.push({ ...pod, spec: { ...pod.spec, nodeName }, status: { phase: 'Running', conditions: [] } });
  }

  /** The Node a pod was bound to, or undefined while it is pending (upstream's ExpectScheduled / ExpectNotScheduled). */
  nodeOf(pod: Pod): Node | undefined {
    const name = this.bound.find((p) => p.metadata.namespace === pod.metadata.namespace && p.metadata.name === pod.metadata.name)?.spec.nodeName;
    return name === undefined ? undefined : this.nodes.find((n) => n.metadata.name === name);
  }

  /** Pods per value of a node label, sorted (upstream's ExpectSkew). */
  skew(key: string, selects: (pod: Pod) => boolean = () => true): number[] {
    const counts = new Map<string, number>();
    for (const pod of this.bound) {
      if (!selects(pod)) continue;
      const value = this.nodes.find((n) => n.metadata.name === pod.spec.nodeName)?.metadata.labels[key];
      if (value !== undefined) counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    return [...counts.values()].sort((a, b) => a - b);
  }
}

let podSerial = 0;

/** An unschedulable pod with labels and scheduling constraints (upstream's test.UnschedulablePod). */
export function pod(labels: Record<string, string> = {}, spec: Partial<Pod['spec']> = {}, options: PodOptions = {}): Pod {
  const base = makePod(`pod-${++podSerial}`, { requests: { cpu: '100m', memory: '128Mi' }, ...options });
  return { ...base, metadata: { ...base.metadata, labels }, spec: { ...base.spec, ...spec } };
}

export const pods = (n: number, labels: Record<string, string> = {}, spec: Partial<Pod['spec']> = {}, options: PodOptions = {}): Pod[] =>
  Array.from({ length: n }, () => pod(labels, spec, options));

export function spread(key: string, labels: Record<string, string>, extra: Partial<TopologySpreadConstraint> = {}): TopologySpreadConstraint {
  return { maxSkew: 1, topologyKey: key, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: labels }, ...extra };
}

export function term(key: string, labels: Record<string, string>): PodAffinityTerm {
  return { labelSelector: { matchLabels: labels }, topologyKey: key };
}

export const affinity = (...terms: PodAffinityTerm[]): Partial<Pod['spec']> => ({ affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: terms } } });
export const antiAffinity = (...terms: PodAffinityTerm[]): Partial<Pod['spec']> => ({ affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: terms } } });

