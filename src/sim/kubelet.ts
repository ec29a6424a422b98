import { zoneLabel, type InstanceType } from '../catalog/skus.js';
import { PROVIDER_ID_PREFIX, TAG } from '../azure/naming.js';
import type { Vm } from '../ports/azure.js';
import type { Node } from '../ports/cluster.js';
import type { Clock, Random } from '../ports/clock.js';
import type { FakeArm } from './arm/fake-arm.js';
import type { JoinAuthority } from './bootstrap-token.js';
import type { FakeCluster } from './cluster.js';
import { SimScheduler, condition, isReady } from './kube-scheduler.js';
import { walkAlongside } from '../utils/list-walk.js';
import { LABEL_DISK_CSI_ZONE, LABEL_INSTANCE_TYPE, LABEL_REGION, LABEL_ZONE } from '../apis/well-known.js';

/** Provider IDs are compared lowercased. */
const AZFLEX_PROVIDER_ID = PROVIDER_ID_PREFIX.toLowerCase();

/**
 * The cluster side of the simulated world: VMs that boot register Nodes (as the flex node
 * agent's kubeadm join would) with the right providerID after a boot delay, Nodes whose VM
 * is gone turn NotReady; then its kube-scheduler (kube-scheduler.ts) binds pending pods.
 */
export class SimKubelet {
  /** When each booting VM's node registers, by lowercased provider ID. */
  private readonly readyAt = new Map<string, number>();
  /** The registration side's state, kept from tick to tick (see registerNodes). */
  private registration: Registration | undefined;
  private readonly vmProviderIds = new WeakMap<Vm, string>();
  private readonly scheduler: SimScheduler;
  /**
   * The cluster's write counts after a scheduling pass that wrote nothing: a pass is a function
   * of nodes, pods and volumes, so until one of them changes the next pass would write nothing
   * either (pods that fit nowhere stay pending, already marked Unschedulable).
   */
  private idleAt: string | undefined;
  private readonly nodeProviderIds = new WeakMap<Node, string>();

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
    this.scheduler = new SimScheduler(cluster, clock);
  }

  /** Every pod bound so far: seconds from its creation to Running, and its node's NodePool. */
  get podStarts(): ReadonlyArray<{ nodePool: string; seconds: number }> {
    return this.scheduler.podStarts;
  }

  tick(): void {
    this.registerNodes();
    const before = this.writeCounts();
    if (before === this.idleAt) return;
    this.scheduler.schedule();
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

/** A VM whose kubelet can run: provisioned and powered on (a stopped or deallocated VM runs nothing). */
function isLive(vm: Vm): boolean {
  return vm.provisioningState === 'Succeeded' && vm.powerState === undefined;
}
