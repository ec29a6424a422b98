import type { ResourceRef, Vm, Nic } from '../ports/azure.js';
import type { NodeClaim } from '../ports/cluster.js';
import { refFromId } from '../azure/naming.js';
import { resourceNamesOf } from '../lifecycle/ownership.js';
import { vmAttemptAt } from '../lifecycle/deps.js';
import { errorCode } from '../lifecycle/failure.js';
import type { NodeClaimActor } from '../lifecycle/routing.js';
import type { RuntimeDeps } from './deps.js';
import type { DirtyActors } from './dirty.js';
import { stateName } from './event-log.js';
import type { ActorTrail } from './tracing.js';
import { listArm, type ArmView } from './arm-view.js';
import type { ClusterObserver, ClusterView } from './world.js';

/**
 * A resource some actor waits on ARM for (a VM being created, a NIC being deleted) is looked
 * at by GET no more often than this: ARM takes minutes for either.
 */
const PENDING_POLL_MS = 30_000;
/**
 * More of one kind due in one pass: one paged list of that kind instead (1,000 resources are
 * ~10 pages, each one read), which also refreshes every other entry of that kind.
 */
const MAX_TARGETED_GETS = 20;

/**
 * What actors wait on ARM for, looked at between full lists by targeted GETs (or, when many
 * are due, one paged list of that kind).
 */
export class PendingLook {
  /** NodeClaims whose VM create is in flight or Creating, as last looked at (`refresh`'s candidates). */
  private readonly vms = new Set<string>();

  constructor(
    private readonly deps: RuntimeDeps,
    private readonly armView: ArmView,
    private readonly clusterObserver: ClusterObserver,
    private readonly dirty: DirtyActors,
    private readonly trail: ActorTrail,
    /** The actors that run: a NodeClaim's, and whether a NIC has one. */
    private readonly actors: { claim(name: string): NodeClaimActor | undefined; hasNic(name: string): boolean },
  ) {}

  /** The NodeClaim is gone from the cluster. */
  forget(name: string): void {
    this.vms.delete(name);
  }

  /**
   * Between full lists, the actors waiting on ARM itself get targeted GETs, each at most every
   * PENDING_POLL_MS: a VM whose create is in flight or still Creating (its NIC is attached
   * from ARM's first answer, and the create ends Succeeded or Failed on its own), and a NIC
   * ARM is deleting that no NIC actor runs (its NodeClaim's finalizer waits for it). The
   * other waits (a NIC's reservation end, its attachment while its VM is deleted) are the NIC
   * machine's own GETs. With many due (a ramp), one paged list of that kind is cheaper.
   */
  async refresh(cluster: ClusterView): Promise<void> {
    const now = cluster.at;
    const vms: ResourceRef[] = [];
    const nics: ResourceRef[] = [];
    // Only a NodeClaim that was pending when last looked at, or changed since, can be pending now.
    const all = this.dirty.all;
    for (const name of this.toLook(cluster, all)) {
      if (!all && !this.vms.has(name) && !this.dirty.claims.has(name)) continue;
      const nc = cluster.nodeClaims.get(name)!;
      const vmName = resourceNamesOf(this.armView, this.deps.config, name).vm;
      const vm = this.armView.vms.get(vmName);
      if (!this.note(name, nc, vm)) continue;
      if (now - Math.max(vmAttemptAt(nc)!, this.armView.learned('vm', vmName) ?? 0) < PENDING_POLL_MS) continue;
      const spec = cluster.nodeClasses.get(nc.spec.nodeClassRef.name)?.spec;
      if (spec) vms.push({ subscriptionId: spec.subscriptionID, resourceGroup: spec.resourceGroup, name: vmName });
    }
    const deleting: Array<{ at: number; name: string; nic: Nic }> = [];
    for (const name of this.armView.nicsDeleting) {
      const nic = this.armView.nics.get(name);
      const at = this.armView.nicOrder(name);
      if (nic && at !== undefined) deleting.push({ at, name, nic });
    }
    // In the view's order, as the walk over every NIC that this replaces.
    deleting.sort((a, b) => a.at - b.at);
    for (const { name, nic } of deleting) {
      if (nic.provisioningState !== 'Deleting' || this.actors.hasNic(name)) continue;
      if (now - (this.armView.learned('nic', name) ?? 0) < PENDING_POLL_MS) continue;
      nics.push(refFromId(nic.id));
    }
    // A failed GET or list (throttled) teaches nothing and holds the pass back for nothing: the next pass asks again.
    if (vms.length > MAX_TARGETED_GETS) {
      await listArm(this.deps, cluster.nodeClasses.values(), { nics: false, vms: true, disks: false }).then((list) => this.armView.install(list, now), this.getFailed('controller'));
    } else if (vms.length > 0) {
      await Promise.all(vms.map((ref) => this.deps.arm.getVm(ref).catch(this.getFailed(`vm/${ref.name}`))));
    }
    if (nics.length > MAX_TARGETED_GETS) {
      await listArm(this.deps, cluster.nodeClasses.values(), { nics: true, vms: false, disks: false }).then((list) => this.armView.install(list, now), this.getFailed('controller'));
    } else if (nics.length > 0) {
      await Promise.all(nics.map((ref) => this.deps.arm.getNic(ref).catch(this.getFailed(`nic/${ref.name}`))));
    }
  }

  /** The NodeClaims `refresh` looks at, in the cluster's order: all of them, or, when few, the pending and the marked ones. */
  private toLook(cluster: ClusterView, all: boolean): Iterable<string> {
    const marked = this.dirty.claims;
    if (all || this.vms.size + marked.size > cluster.nodeClaims.size >> 3) return cluster.nodeClaims.keys();
    const names: Array<{ at: number; name: string }> = [];
    for (const name of this.vms) {
      const at = this.clusterObserver.nodeClaimOrder(name);
      if (at !== undefined) names.push({ at, name });
    }
    for (const name of marked) {
      const at = this.clusterObserver.nodeClaimOrder(name);
      if (at !== undefined && !this.vms.has(name)) names.push({ at, name });
    }
    return names.sort((a, b) => a.at - b.at).map((n) => n.name);
  }

  /** What a failed GET or list logs (a method, not a closure built on every pass). */
  private getFailed(what: string): (err: unknown) => void {
    return (err) => this.trail.controller(what, 'get-error', errorCode(err));
  }

  /** Whether the NodeClaim waits on ARM for its VM: a create in flight, or a VM still Creating (kept in pendingVms). */
  note(name: string, nc: NodeClaim, vm: Vm | undefined): boolean {
    const pending =
      vmAttemptAt(nc) !== undefined && nc.metadata.deletionTimestamp === undefined && (vm ? vm.provisioningState === 'Creating' : this.creatingVm(name));
    if (pending) this.vms.add(name);
    else this.vms.delete(name);
    return pending;
  }

  /** Whether the NodeClaim's actor has a VM PUT out (its answer comes when ARM's create ends, minutes later). */
  private creatingVm(nodeClaim: string): boolean {
    const actor = this.actors.claim(nodeClaim);
    return actor !== undefined && stateName(actor.getSnapshot().value) === 'launching.creating-vm';
  }
}
