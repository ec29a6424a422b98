import type { Condition, Node, Pod } from '../ports/cluster.js';
import type { Clock } from '../ports/clock.js';
import { podRequirementTerms } from '../provisioning/scheduler.js';
import { Requirements, firstUntoleratedTaint } from '../provisioning/requirements.js';
import { Topology, TopologyError, decide, record, requiredOnly, type DomainSource } from '../provisioning/scheduling/topology.js';
import { fitsWithin, podRequests, resourcesFromList, type Resources } from '../provisioning/resources.js';
import { VolumeTopology } from '../provisioning/volume-topology.js';
import type { FakeCluster } from './cluster.js';
import { hasPodTopology } from './journaled-map.js';
import { LABEL_DISK_CSI_ZONE, LABEL_HOSTNAME, LABEL_NODEPOOL, LABEL_ZONE } from '../apis/well-known.js';

const NO_UNDEFINED_LABELS: ReadonlySet<string> = new Set();

/**
 * The simulated world's kube-scheduler: binds pending pods to Ready nodes (first fit, with
 * required pod topology, taints, node affinity and the volume binding of zonal disks) or marks
 * them Unschedulable, which is what the provisioner watches for.
 */
export class SimScheduler {
  private readonly nodeRequirements = new WeakMap<Node, Requirements>();
  /** By spec object: a written pod keeps its spec until it is bound, and a workload's pods share their template's. */
  private readonly podShapes = new WeakMap<Pod['spec'], string>();
  /** Per node name: the pods bound to it, as of the pods store's version for that node. */
  private readonly bound = new Map<string, BoundPods>();
  /** The Ready, schedulable nodes in map order (with their labels as requirements and map positions), kept from pass to pass. */
  private schedulable: { nodes: Node[]; labels: Requirements[]; positions: number[] } | undefined;
  /** Nodes written or deleted since the schedulable list was brought up to date. */
  private readonly nodesWritten = new Set<string>();
  /** The map position each listed node was put in the schedulable list with. */
  private readonly listedAt = new Map<string, number>();
  /** Every pod bound so far: seconds from its creation to Running, and its node's NodePool. */
  readonly podStarts: Array<{ nodePool: string; seconds: number }> = [];

  constructor(
    private readonly cluster: FakeCluster,
    private readonly clock: Clock,
  ) {
    cluster.nodes.watch((name) => this.nodesWritten.add(name));
  }

  /**
   * The kube-scheduler's required pod topology (spread, affinity, anti-affinity) over the
   * Ready nodes, with the provisioner's own topology code: a pod binds only where its rules
   * (and running pods' anti-affinity) allow, as on a real cluster.
   */
  private topologyOf(pending: readonly Pod[], bound: readonly Pod[], nodes: readonly Node[]): { topology: Topology; source: (node: Node) => DomainSource } {
    const topology = new Topology((pod) => podRequirementTerms(pod));
    for (const pod of [...pending, ...bound]) {
      try {
        topology.add(pod);
      } catch (error) {
        if (!(error instanceof TopologyError)) throw error;
      }
    }
    const sources = new Map(nodes.map((n) => [n.metadata.name, nodeSource(n)]));
    const source = (node: Node): DomainSource => sources.get(node.metadata.name) ?? nodeSource(node);
    for (const group of topology.all()) {
      if (group.type !== 'spread') continue;
      group.universe = new Set(nodes.map((n) => source(n)).filter((src) => group.countsOn(src.requirements, src.taints)).flatMap((src) => src.domains(group.key) ?? []));
    }
    const byName = new Map(nodes.map((n) => [n.metadata.name, n]));
    for (const pod of bound) {
      const rules = topology.of(pod);
      const node = byName.get(pod.spec.nodeName!) ?? this.cluster.nodes.get(pod.spec.nodeName!);
      if (rules && node) record(pod, rules, requiredOnly(rules), source(node));
    }
    return { topology, source };
  }

  schedule(): void {
    const pods = this.cluster.pods;
    // Nothing to bind (most ticks of a settled fleet): no free capacity to work out either.
    if (pods.unboundCount === 0) return;
    const now = this.clock.now();
    const pending = pods.unbound();
    const { nodes, labels: nodeLabels } = this.schedulableNodes();
    // Each node's free capacity as the pass found it, worked out when the pass first looks at
    // the node; a node the pass places pods on gets its own copy.
    const found: Array<Readonly<Resources> | undefined> = new Array(nodes.length);
    const placed: Array<Resources | undefined> = new Array(nodes.length);
    const freeAt = (index: number): Readonly<Resources> =>
      placed[index] ?? found[index] ?? (found[index] = this.boundTo(nodes[index]!.metadata.name).freeOn(nodes[index]!));
    this.forgetGoneNodes();
    const topology = pending.some(hasPodTopology) || pods.anyBoundTopology
      ? this.topologyOf(pending, [...pods.values()].filter((p) => p.spec.nodeName), nodes)
      : undefined;
    const volumes = VolumeTopology.needed(pending) ? this.volumeTopology() : undefined;
    // First fit, as the real scheduler's result for a pod is one of the nodes it fits. Without
    // pod topology or volumes, pods of one shape resume where the previous one of that shape
    // stopped: free capacity only shrinks during a pass, so a node one skipped fits no later one
    // either (a fleet of 1,000 nodes and thousands of pending pods made the full scan per pod quadratic).
    const resume = new Map<string, { from: number; req: Resources; terms: Requirements[] }>();
    for (const pod of pending) {
      const pinned = volumes?.requirements(pod);
      const shapeKey = topology || pinned !== undefined ? undefined : this.shapeOf(pod);
      let shape = shapeKey === undefined ? undefined : resume.get(shapeKey);
      if (!shape) {
        // The VolumeBinding plugin: a claim that cannot bind yet keeps the pod pending.
        const terms = pinned === undefined ? podRequirementTerms(pod)
          : 'error' in pinned ? [] : podRequirementTerms(pod).map((t) => t.intersect(Requirements.fromSelectors(pinned)));
        shape = { from: 0, req: podRequests(pod), terms };
        if (shapeKey !== undefined) resume.set(shapeKey, shape);
      }
      const { req, terms } = shape;
      const rules = topology?.topology.of(pod);
      let index = shape.from;
      for (; index < nodes.length; index++) {
        const n = nodes[index]!;
        if (
          fitsWithin(req, freeAt(index)) &&
          firstUntoleratedTaint(pod.spec.tolerations, n.spec.taints) === undefined &&
          terms.some((t) => nodeLabels[index]!.compatible(t, NO_UNDEFINED_LABELS) === undefined) &&
          (!rules || decide(pod, rules, requiredOnly(rules), topology!.source(n)) !== undefined)
        ) break;
      }
      if (shapeKey !== undefined) shape.from = index;
      const node = nodes[index];
      if (node && rules) record(pod, rules, requiredOnly(rules), topology!.source(node));
      if (node) {
        if (volumes) this.provisionVolumes(pod, node);
        subtractInto((placed[index] ??= { ...freeAt(index) }), req);
        this.podStarts.push({ nodePool: node.metadata.labels[LABEL_NODEPOOL] ?? '(none)', seconds: (now - Date.parse(pod.metadata.creationTimestamp)) / 1000 });
        this.cluster.putPod({
          ...pod,
          spec: { ...pod.spec, nodeName: node.metadata.name },
          status: { phase: 'Running', conditions: [condition('PodScheduled', 'True', '', now)] },
        });
      } else if (!pod.status.conditions.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable')) {
        this.cluster.putPod({ ...pod, status: { phase: 'Pending', conditions: [condition('PodScheduled', 'False', 'Unschedulable', now)] } });
      }
    }
  }

  /** The Ready, schedulable nodes in map order, and their labels as requirements, while no node is written. */
  private schedulableNodes(): { nodes: Node[]; labels: Requirements[] } {
    const nodes = this.cluster.nodes;
    let list = this.schedulable;
    if (!list) {
      const all = [...nodes.values()].filter((n) => isReady(n) && !n.spec.unschedulable);
      list = this.schedulable = { nodes: all, labels: all.map((n) => this.labelRequirements(n)), positions: all.map((n) => nodes.position(n.metadata.name)!) };
      this.listedAt.clear();
      all.forEach((n, i) => this.listedAt.set(n.metadata.name, list!.positions[i]!));
      this.nodesWritten.clear();
      return list;
    }
    // Only the nodes written since the last pass move in or out (kept in the map's order).
    for (const name of this.nodesWritten) {
      const listed = list.nodes.length > 0 ? lowerBound(list.positions, this.listedAt.get(name) ?? -1) : 0;
      if (list.nodes[listed]?.metadata.name === name) {
        list.nodes.splice(listed, 1);
        list.labels.splice(listed, 1);
        list.positions.splice(listed, 1);
        this.listedAt.delete(name);
      }
      const node = nodes.get(name);
      if (!node || !isReady(node) || node.spec.unschedulable) continue;
      const position = nodes.position(name)!;
      const lo = lowerBound(list.positions, position);
      this.listedAt.set(name, position);
      list.nodes.splice(lo, 0, node);
      list.labels.splice(lo, 0, this.labelRequirements(node));
      list.positions.splice(lo, 0, position);
    }
    this.nodesWritten.clear();
    return list;
  }


  /** What is bound to a node, worked out again only once a pod bound to it was written. */
  private boundTo(nodeName: string): BoundPods {
    const version = this.cluster.pods.nodeVersion(nodeName);
    let entry = this.bound.get(nodeName);
    if (entry?.version !== version) this.bound.set(nodeName, (entry = new BoundPods(version, this.cluster.pods.boundTo(nodeName))));
    return entry;
  }

  /** Keeps `bound` to the nodes that exist or have pods. */
  private forgetGoneNodes(): void {
    if (this.bound.size <= 2 * (this.cluster.nodes.size + 16)) return;
    const keep = new Set([...this.cluster.nodes.keys(), ...this.cluster.pods.nodeNames()]);
    for (const name of this.bound.keys()) if (!keep.has(name)) this.bound.delete(name);
  }

  private volumeTopology(): VolumeTopology {
    return new VolumeTopology({
      claims: [...this.cluster.persistentVolumeClaims.values()],
      volumes: [...this.cluster.persistentVolumes.values()],
      classes: [...this.cluster.storageClasses.values()],
    });
  }

  /**
   * The disk CSI driver after a WaitForFirstConsumer binding: each unbound claim of the pod
   * gets a disk in the node's zone (regional where the node has none) and is bound to it, so
   * a restarted pod is pinned there from now on.
   */
  private provisionVolumes(pod: Pod, node: Node): void {
    const zone = node.metadata.labels[LABEL_ZONE];
    for (const volume of pod.spec.volumes ?? []) {
      const claimName = volume.persistentVolumeClaim?.claimName ?? (volume.ephemeral ? `${pod.metadata.name}-${volume.name}` : undefined);
      if (!claimName) continue;
      const key = `${pod.metadata.namespace}/${claimName}`;
      const existing = this.cluster.persistentVolumeClaims.get(key);
      if (existing?.spec.volumeName) continue;
      const storageClassName = existing?.spec.storageClassName ?? volume.ephemeral?.storageClassName;
      const pvName = `pvc-${pod.metadata.namespace}-${claimName}`;
      const meta = (name: string) => ({ name, uid: '', labels: {}, annotations: {}, finalizers: [], creationTimestamp: '' });
      this.cluster.putStorage({
        kind: 'PersistentVolume',
        value: {
          metadata: meta(pvName),
          spec: {
            ...(storageClassName ? { storageClassName } : {}),
            nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: LABEL_DISK_CSI_ZONE, operator: 'In', values: [zone ?? ''] }] }] } },
          },
        },
      });
      this.cluster.putStorage({
        kind: 'PersistentVolumeClaim',
        value: {
          metadata: { ...(existing?.metadata ?? meta(claimName)), namespace: pod.metadata.namespace },
          spec: { ...(storageClassName ? { storageClassName } : {}), volumeName: pvName },
          status: { phase: 'Bound' },
        },
      });
    }
  }

  /** A node's labels as requirements, once per node object (the cluster replaces objects on write). */
  private labelRequirements(node: Node): Requirements {
    let r = this.nodeRequirements.get(node);
    if (!r) this.nodeRequirements.set(node, (r = Requirements.fromLabels(node.metadata.labels)));
    return r;
  }

  /** What decides where a pod fits (requests, selectors, affinity, tolerations), once per pod object. */
  private shapeOf(pod: Pod): string {
    let s = this.podShapes.get(pod.spec);
    if (s === undefined) {
      const { containers, initContainers, overhead, nodeSelector, tolerations, affinity } = pod.spec;
      s = JSON.stringify([containers.map((c) => c.resources.requests), initContainers.map((c) => c.resources.requests), overhead, nodeSelector, tolerations, affinity?.nodeAffinity]);
      this.podShapes.set(pod.spec, s);
    }
    return s;
  }
}

/** The pods bound to one node, and the node's free capacity given them. */
class BoundPods {
  private free: { node: Node; resources: Readonly<Resources> } | undefined;

  constructor(
    readonly version: number,
    private readonly pods: readonly Pod[],
  ) {}

  /** The node's allocatable minus these pods' requests (in the pods' order, as the full scan subtracted them). */
  freeOn(node: Node): Readonly<Resources> {
    if (this.free?.node !== node) {
      const resources = resourcesFromList(node.status.allocatable);
      for (const pod of this.pods) subtractInto(resources, podRequests(pod));
      this.free = { node, resources };
    }
    return this.free.resources;
  }
}

/** The first index of sorted `values` whose value is not below `value`. */
function lowerBound(values: readonly number[], value: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}


function nodeSource(node: Node): DomainSource {
  const labels: Record<string, string> = { [LABEL_HOSTNAME]: node.metadata.name, ...node.metadata.labels };
  return { requirements: Requirements.fromLabels(labels), taints: node.spec.taints, domains: (key) => (labels[key] !== undefined ? [labels[key]] : undefined) };
}

export function isReady(node: Node): boolean {
  return node.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

let lastIso: { at: number; iso: string } = { at: Number.NaN, iso: '' };

export function condition(type: string, status: Condition['status'], reason: string, now: number): Condition {
  // Pods bound in one pass share the instant (a pass binding thousands formatted it for each).
  if (lastIso.at !== now) lastIso = { at: now, iso: new Date(now).toISOString() };
  return { type, status, reason, message: '', lastTransitionTime: lastIso.iso };
}

/** a -= b, in place (`free` holds this tick's own copies). */
function subtractInto(a: Resources, b: Readonly<Resources>): void {
  for (const name in b) a[name] = (a[name] ?? 0) - b[name]!;
}
