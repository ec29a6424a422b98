import { zoneLabel, type InstanceType } from '../catalog/skus.js';
import { TAG } from '../azure/naming.js';
import type { Vm } from '../ports/azure.js';
import type { Condition, Node, Pod } from '../ports/cluster.js';
import type { Clock, Random } from '../ports/clock.js';
import { podRequirementTerms } from '../provisioning/scheduler.js';
import { Requirements, firstUntoleratedTaint } from '../provisioning/requirements.js';
import { Topology, TopologyError, decide, record, requiredOnly, type DomainSource } from '../provisioning/scheduling/topology.js';
import { fitsWithin, podRequests, resourcesFromList, type Resources } from '../provisioning/resources.js';
import { VolumeTopology } from '../provisioning/volume-topology.js';
import { PROVIDER_ID_PREFIX } from '../azure/naming.js';
import type { FakeArm } from './arm/fake-arm.js';
import type { JoinAuthority } from './bootstrap-token.js';
import type { FakeCluster } from './cluster.js';
import { hasPodTopology } from './journaled-map.js';
import { walkAlongside } from '../utils/list-walk.js';
import { LABEL_DISK_CSI_ZONE, LABEL_HOSTNAME, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, LABEL_REGION, LABEL_ZONE } from '../apis/well-known.js';

const NO_UNDEFINED_LABELS: ReadonlySet<string> = new Set();
/** Provider IDs are compared lowercased. */
const AZFLEX_PROVIDER_ID = PROVIDER_ID_PREFIX.toLowerCase();

/**
 * The cluster side of the simulated world: VMs that boot register Nodes (as the flex node
 * agent's kubeadm join would) with the right providerID after a boot delay, Nodes whose VM
 * is gone turn NotReady, and a kube-scheduler binds pending pods to Ready nodes or marks
 * them Unschedulable, which is what the provisioner watches for.
 */
export class SimKubelet {
  /** When each booting VM's node registers, by lowercased provider ID. */
  private readonly readyAt = new Map<string, number>();
  private readonly nodeRequirements = new WeakMap<Node, Requirements>();
  /** By spec object: a written pod keeps its spec until it is bound, and a workload's pods share their template's. */
  private readonly podShapes = new WeakMap<Pod['spec'], string>();
  /** Per node name: the pods bound to it, as of the pods store's version for that node. */
  private readonly bound = new Map<string, BoundPods>();
  /**
   * The cluster's write counts after a scheduling pass that wrote nothing: a pass is a function
   * of nodes, pods and volumes, so until one of them changes the next pass would write nothing
   * either (pods that fit nowhere stay pending, already marked Unschedulable).
   */
  private idleAt: string | undefined;
  /** The Ready, schedulable nodes in map order (with their labels as requirements and map positions), kept from pass to pass. */
  private schedulable: { nodes: Node[]; labels: Requirements[]; positions: number[] } | undefined;
  /** Nodes written or deleted since the schedulable list was brought up to date. */
  private readonly nodesWritten = new Set<string>();
  /** The map position each listed node was put in the schedulable list with. */
  private readonly listedAt = new Map<string, number>();
  /** The registration side's state, kept from tick to tick (see registerNodes). */
  private registration: Registration | undefined;
  private readonly vmProviderIds = new WeakMap<Vm, string>();
  private readonly nodeProviderIds = new WeakMap<Node, string>();
  /** Every pod bound so far: seconds from its creation to Running, and its node's NodePool. */
  readonly podStarts: Array<{ nodePool: string; seconds: number }> = [];

  constructor(
    private readonly arm: FakeArm,
    private readonly cluster: FakeCluster,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly instanceTypes: ReadonlyMap<string, InstanceType>,
    private readonly bootMs: { min: number; max: number },
    /** Fraction of booted VMs whose node never registers (failed bootstrap, expired join token). */
    private readonly neverJoinRate = 0,
    /** Whether a booted VM's token still lets it join (absent: every token does). */
    private readonly tokens?: JoinAuthority,
    /**
     * The cluster whose VMs join here (their cluster tag, as their user data's bootstrap token
     * decides for a real VM): another cluster sharing the resource group has its own kubelet.
     * Absent: every VM.
     */
    private readonly clusterName?: string,
  ) {
    cluster.nodes.watch((name) => this.nodesWritten.add(name));
  }

  tick(): void {
    this.registerNodes();
    const before = this.writeCounts();
    if (before === this.idleAt) return;
    this.schedulePods();
    const after = this.writeCounts();
    this.idleAt = after === before ? after : undefined;
  }

  private writeCounts(): string {
    const c = this.cluster;
    return `${c.nodes.writes},${c.pods.writes},${c.persistentVolumeClaims.writes},${c.persistentVolumes.writes},${c.storageClasses.writes}`;
  }

  /**
   * Registers the nodes of booted VMs and marks Ready nodes whose VM is gone NotReady. Works on
   * what changed since the last tick (the VMs that ARM's list shows differently, the nodes
   * written since, the boot plans that came due), not on the whole fleet; the outcome, and the
   * order of boot-plan draws and node writes (VM list order, node map order), is what a pass
   * over every VM and node makes.
   */
  private registerNodes(): void {
    const now = this.clock.now();
    const reg = this.registration ??= this.startRegistration();
    this.diffVms(reg, this.arm.currentVms());
    for (const name of reg.changedNodes) this.noteNode(reg, name);
    reg.changedNodes.clear();
    // Boot plans: VMs waiting for their node, in VM list order (draws and registrations follow it).
    if (reg.unplanned.size > 0 || now >= reg.nextBootAt) {
      const waiting = [...reg.unplanned];
      for (const [pid, at] of this.readyAt) if (now >= at && reg.awaiting.has(pid) && !reg.unplanned.has(pid)) waiting.push(pid);
      waiting.sort((a, b) => reg.vms.get(a)!.seq - reg.vms.get(b)!.seq);
      reg.unplanned.clear();
      for (const pid of waiting) {
        let at = this.readyAt.get(pid);
        if (at === undefined) {
          at = now + this.bootMs.min + Math.floor(this.random.next() * (this.bootMs.max - this.bootMs.min));
          if (this.neverJoinRate > 0 && this.random.next() < this.neverJoinRate) at = Number.POSITIVE_INFINITY;
          this.readyAt.set(pid, at);
        }
        if (now < at) continue;
        const vm = reg.vms.get(pid)!.vm;
        if (this.tokens && !this.tokens.joins(vm.tags[TAG.nodeClaim] ?? '', now)) {
          // kubeadm join is refused (expired or deleted token): the node never registers.
          this.readyAt.set(pid, Number.POSITIVE_INFINITY);
          continue;
        }
        this.readyAt.delete(pid);
        this.cluster.putNode(this.nodeFor(vm.id, vm.name, vm.vmSize, vm.location, vm.tags, now, vm.zone));
      }
      reg.nextBootAt = Number.POSITIVE_INFINITY;
      for (const at of this.readyAt.values()) reg.nextBootAt = Math.min(reg.nextBootAt, at);
    }
    // Ready nodes whose VM is gone (or was never there) turn NotReady, in node map order. A node
    // of another provider (a snapshot's system pool) has no VM in this ARM to look at: it stays.
    if (reg.suspects.size > 0) {
      const suspects = [...reg.suspects].filter((name) => this.cluster.nodes.has(name));
      reg.suspects.clear();
      suspects.sort((a, b) => this.cluster.nodes.position(a)! - this.cluster.nodes.position(b)!);
      for (const name of suspects) {
        const node = this.cluster.nodes.get(name)!;
        const pid = this.nodeProviderId(node);
        if (!pid || !pid.startsWith(AZFLEX_PROVIDER_ID) || reg.live.has(pid) || !isReady(node)) continue;
        this.cluster.putNode({ ...node, status: { ...node.status, conditions: [condition('Ready', 'False', 'KubeletStopped', now)] } });
      }
    }
  }

  private startRegistration(): Registration {
    const reg: Registration = {
      vms: new Map(), lastVms: [], live: new Set(), awaiting: new Set(), unplanned: new Set(), nextBootAt: Number.POSITIVE_INFINITY,
      nodePids: new Map(), nodesByPid: new Map(), changedNodes: new Set(), suspects: new Set(), seq: 0,
    };
    for (const name of this.cluster.nodes.keys()) reg.changedNodes.add(name);
    this.cluster.nodes.watch((name) => reg.changedNodes.add(name));
    return reg;
  }

  /**
   * Brings the VM side to ARM's list by walking it alongside the last one: ARM hands out one
   * frozen view per VM state and keeps its list in creation order, so only VMs that changed,
   * came or went cost anything.
   */
  private diffVms(reg: Registration, vms: readonly Vm[]): void {
    if (vms === reg.lastVms) return;
    const added = (vm: Vm): void => {
      const pid = this.vmProviderId(vm);
      reg.vms.set(pid, { vm, seq: reg.seq++ });
      this.vmChanged(reg, pid, reg.vms.get(pid)!, vm, true);
    };
    walkAlongside(reg.lastVms, vms, (a, b) => this.vmProviderId(a) === this.vmProviderId(b), {
      isNew: (vm) => !reg.vms.has(this.vmProviderId(vm)),
      replaced: (_old, vm) => {
        const pid = this.vmProviderId(vm);
        const entry = reg.vms.get(pid);
        if (entry) this.vmChanged(reg, pid, entry, vm);
        else added(vm);
      },
      // Gone (or later in the list: it is added back when the walk reaches it).
      removed: (old) => this.vmGone(reg, this.vmProviderId(old)),
      added,
    });
    reg.lastVms = vms;
  }

  private vmChanged(reg: Registration, pid: string, entry: { vm: Vm; seq: number }, vm: Vm, added = false): void {
    const wasLive = !added && this.isLive(entry.vm);
    entry.vm = vm;
    const live = this.isLive(vm);
    if (live === wasLive) return;
    if (live) {
      reg.live.add(pid);
      if (!reg.nodesByPid.has(pid)) this.await(reg, pid);
    } else this.notLive(reg, pid);
  }

  /** A VM of this cluster that runs (another cluster's never joins here). */
  private isLive(vm: Vm): boolean {
    return isLive(vm) && (this.clusterName === undefined || vm.tags[TAG.cluster] === this.clusterName);
  }

  private vmGone(reg: Registration, pid: string): void {
    const entry = reg.vms.get(pid);
    if (!entry) return;
    reg.vms.delete(pid);
    if (this.isLive(entry.vm)) this.notLive(reg, pid);
  }

  private notLive(reg: Registration, pid: string): void {
    reg.live.delete(pid);
    reg.awaiting.delete(pid);
    reg.unplanned.delete(pid);
    // A boot plan is forgotten with its VM (a node that never joined has one forever).
    this.readyAt.delete(pid);
    for (const name of reg.nodesByPid.get(pid) ?? []) reg.suspects.add(name);
  }

  private await(reg: Registration, pid: string): void {
    reg.awaiting.add(pid);
    if (!this.readyAt.has(pid)) reg.unplanned.add(pid);
  }

  /** A node was written or deleted: its provider ID's bookkeeping, and a look at its readiness. */
  private noteNode(reg: Registration, name: string): void {
    const node = this.cluster.nodes.get(name);
    const pid = node ? this.nodeProviderId(node) : '';
    const before = reg.nodePids.get(name);
    if (before !== pid) {
      if (before !== undefined) {
        const names = reg.nodesByPid.get(before)!;
        names.delete(name);
        if (names.size === 0) {
          reg.nodesByPid.delete(before);
          if (reg.live.has(before)) this.await(reg, before);
        }
      }
      if (pid) {
        reg.nodePids.set(name, pid);
        let names = reg.nodesByPid.get(pid);
        if (!names) {
          reg.nodesByPid.set(pid, (names = new Set()));
          reg.awaiting.delete(pid);
          reg.unplanned.delete(pid);
        }
        names.add(name);
      } else reg.nodePids.delete(name);
    }
    if (node) reg.suspects.add(name);
  }

  /**
   * Provider IDs compare case-insensitively: each lowercased once per VM view and Node object
   * (a 1,000-node fleet lowercased ~3,000 ARM ids, and hashed them afresh, on every tick).
   */
  private vmProviderId(vm: Vm): string {
    let id = this.vmProviderIds.get(vm);
    if (id === undefined) this.vmProviderIds.set(vm, (id = (PROVIDER_ID_PREFIX + vm.id).toLowerCase()));
    return id;
  }

  /** '' when the node has no providerID. */
  private nodeProviderId(node: Node): string {
    let id = this.nodeProviderIds.get(node);
    if (id === undefined) this.nodeProviderIds.set(node, (id = node.spec.providerID?.toLowerCase() ?? ''));
    return id;
  }

  private nodeFor(vmId: string, vmName: string, vmSize: string, location: string, tags: Record<string, string>, now: number, zone?: string): Node {
    const it = this.instanceTypes.get(vmSize.toLowerCase());
    const nodeClaim = this.cluster.nodeClaims.get(tags[TAG.nodeClaim] ?? '');
    const labels: Record<string, string> = { ...(nodeClaim?.metadata.labels ?? {}) };
    for (const r of nodeClaim?.spec.requirements ?? []) if (r.operator === 'In' && r.values?.length === 1) labels[r.key] = r.values[0]!;
    labels[LABEL_INSTANCE_TYPE] = vmSize;
    labels[LABEL_REGION] = location;
    // What the VM is, not what was asked: its zone (the disk CSI driver labels its own key too).
    if (zone) labels[LABEL_ZONE] = labels[LABEL_DISK_CSI_ZONE] = zoneLabel(location, zone);
    labels['kubernetes.io/hostname'] = vmName;
    const capacity: Record<string, string> = it
      ? { cpu: String(it.vcpu), memory: `${it.memoryMiB}Mi`, pods: String(it.maxPods), ...(it.gpuCount ? { 'nvidia.com/gpu': String(it.gpuCount) } : {}) }
      : {};
    return {
      metadata: { name: vmName, uid: this.cluster.newUid(), labels, annotations: {}, finalizers: [], creationTimestamp: new Date(now).toISOString() },
      spec: { providerID: PROVIDER_ID_PREFIX + vmId, taints: nodeClaim?.spec.taints ?? [] },
      status: { capacity, allocatable: capacity, conditions: [condition('Ready', 'True', 'KubeletReady', now)] },
    };
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

  private schedulePods(): void {
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

/** What registerNodes carries from tick to tick, by lowercased provider ID (pid) or node name. */
interface Registration {
  /** Every VM in ARM's list, with its place in it. */
  vms: Map<string, { vm: Vm; seq: number }>;
  lastVms: readonly Vm[];
  seq: number;
  /** VMs that are Succeeded. */
  live: Set<string>;
  /** Live VMs without a node. */
  awaiting: Set<string>;
  /** Awaiting VMs without a boot plan. */
  unplanned: Set<string>;
  /** The earliest boot plan. */
  nextBootAt: number;
  nodePids: Map<string, string>;
  nodesByPid: Map<string, Set<string>>;
  /** Nodes written or deleted since the last tick (FakeCluster's change feed). */
  changedNodes: Set<string>;
  /** Nodes that may have to turn NotReady. */
  suspects: Set<string>;
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

function isReady(node: Node): boolean {
  return node.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

let lastIso: { at: number; iso: string } = { at: Number.NaN, iso: '' };

function condition(type: string, status: Condition['status'], reason: string, now: number): Condition {
  // Pods bound in one pass share the instant (a pass binding thousands formatted it for each).
  if (lastIso.at !== now) lastIso = { at: now, iso: new Date(now).toISOString() };
  return { type, status, reason, message: '', lastTransitionTime: lastIso.iso };
}

/** a -= b, in place (`free` holds this tick's own copies). */
function subtractInto(a: Resources, b: Readonly<Resources>): void {
  for (const name in b) a[name] = (a[name] ?? 0) - b[name]!;
}

/** A VM whose kubelet can run: provisioned and powered on (a stopped or deallocated VM runs nothing). */
function isLive(vm: Vm): boolean {
  return vm.provisioningState === 'Succeeded' && vm.powerState === undefined;
}
