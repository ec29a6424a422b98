import { createActor } from 'xstate';
import { PROVIDER_ID_PREFIX } from '../azure/naming.js';
import { nicNameCandidates, resourceNamesOf } from '../lifecycle/ownership.js';
import { errorCode } from '../lifecycle/failure.js';
import { nicMachineFor, nodeClaimMachineFor } from '../lifecycle/machines.js';
import type { NicMachine, NicObservation } from '../lifecycle/nic/machine.js';
import { observeNic } from '../lifecycle/nic/observation.js';
import type { NodeClaimMachine, NodeClaimObservation } from '../lifecycle/nodeclaim/machine.js';
import { GONE_NODECLAIM, observeNodeClaim } from '../lifecycle/nodeclaim/observation.js';
import { NIC_ROUTES, NODECLAIM_ROUTES, routeFrom, type NicActor, type NodeClaimActor, type RouteTargets } from '../lifecycle/routing.js';
import type { LifecycleScope } from '../lifecycle/scope.js';
import { xstateClock } from '../ports/clock.js';
import type { Node, NodeClaim } from '../ports/cluster.js';
import type { Vm } from '../ports/azure.js';
import type { RuntimeDeps } from './deps.js';
import { stateName } from './event-log.js';
import { ActorTrail } from './tracing.js';
import { GarbageCollector } from './garbage.js';
import { ObservationMemo } from './observations.js';
import { PendingLook } from './pending.js';
import { vmAttemptAt, type WorldView } from '../lifecycle/deps.js';
import { ArmView, createdAtTag, listArm } from './arm-view.js';
import { ClusterObserver, NicOwners, worldOf, type ClusterChanges, type ClusterView } from './world.js';
import { DirtyActors, anyGone, markedInOrder } from './dirty.js';
import { gateArm } from './arm-gate.js';
import { legacyCleanup, legacyNodeClaimRoutes, type LegacyCleanup } from './strategies.js';
import { Loops } from '../utils/periodic-loop.js';

/**
 * ARM is listed in full (every page) at start and then this often; the passes between look
 * at the cluster (informer caches, free) and GET only what has something pending. A full
 * list of 1,000 NICs and VMs is ~20 reads; every 15 s that alone was 4,800 reads an hour,
 * over the 3,600 (4% of ARM's refill) azflex allows itself per subscription.
 */
const FULL_LIST_MS = 5 * 60_000;
/** Disks are listed for garbage collection every this many full lists (they only leak if a cascade failed). */
const DISK_SWEEP_EVERY = 2;
/**
 * The actor runtime: one actor per NodeClaim and per NIC, fed by a level-triggered loop
 * that observes ARM and the cluster. It keeps nothing that prevents a leak in memory
 * alone: after a restart `start()` rebuilds every actor from the world.
 */
export class Runtime {
  private readonly claims = new Map<string, NodeClaimActor>();
  private readonly nics = new Map<string, NicActor>();
  private readonly loops: Loops;
  /** The event log's record of every actor: transitions with their events, effects with their outcomes. */
  private readonly trail: ActorTrail;
  /** NIC name → owning NodeClaim name, for routing between the two kinds of actor. */
  private readonly nicOwners = new Map<string, string>();
  /** The sweep of VMs and disks no NodeClaim owns. */
  private readonly garbage: GarbageCollector;
  /** What the lifecycles' effects reach from here (the ports, the world, a few services). */
  private readonly scope: LifecycleScope;
  /** The actors the routing table addresses (lifecycle/routing.ts). */
  private readonly targets: RouteTargets;
  private readonly nodeClaimMachine: NodeClaimMachine;
  private readonly nicMachine: NicMachine;
  private readonly legacy: LegacyCleanup | undefined;
  private world: WorldView | undefined;
  /** ARM as last listed, with every answer since written through (see ArmView). */
  private readonly armView: ArmView;
  /** What each actor was last observed from and told: unchanged, nothing to build or send. */
  private readonly memo = new ObservationMemo();
  /** The cluster as last looked at, and what changed since the look before. */
  private readonly clusterObserver: ClusterObserver;
  /** The actors whose inputs may have changed since they were last looked at (see DirtyActors). */
  private readonly dirty: DirtyActors;
  /** NIC name → owning NodeClaim, kept up to the observer's NodeClaim map from its changes. */
  private readonly owners: NicOwners;
  /** Between full lists, the targeted GETs of what actors wait on ARM for (see PendingLook). */
  private readonly pending: PendingLook;
  private resyncing = false;
  private resyncRequested = false;
  private resyncCount = 0;
  private stopped = false;
  /** The caller's dependencies, with ARM behind the shared Retry-After gate. */
  private readonly deps: RuntimeDeps;
  /** One timer adapter for every actor (XState keeps a reference; building one per spawn showed in profiles). */
  private readonly actorClock: ReturnType<typeof xstateClock>;

  constructor(deps: RuntimeDeps) {
    this.armView = new ArmView(deps.config.clusterName);
    this.loops = new Loops(deps.clock, (name, err) => {
      this.log('controller', 'error', `${name}: ${errorCode(err)}`);
      this.deps.onControllerError?.(name, err);
    });
    const nicNames = (nodeClaim: string): readonly string[] => nicNameCandidates(deps.config, nodeClaim);
    this.dirty = new DirtyActors(nicNames);
    this.owners = new NicOwners(nicNames);
    this.clusterObserver = new ClusterObserver(deps.cluster, deps.clock);
    const gate = gateArm(deps.arm, deps.clock, deps.isLeader);
    this.deps = { ...deps, arm: this.armView.observing(gate, deps.clock) };
    this.actorClock = xstateClock(deps.clock);
    this.trail = new ActorTrail(deps.eventLog, deps.clock);
    this.garbage = new GarbageCollector(this.deps, this.trail);
    this.pending = new PendingLook(this.deps, this.armView, this.clusterObserver, this.dirty, this.trail, {
      claim: (name) => this.claims.get(name),
      hasNic: (name) => this.nics.has(name),
    });
    const env = { clock: deps.clock, random: deps.random };
    this.scope = {
      deps: this.deps,
      world: () => this.world,
      kick: (name) => this.kick(name),
      vmPutRefusal: (subscriptionId) => gate.vmPutRefusal(subscriptionId),
      requestResync: () => this.requestResync(),
      traced: (actor, effect, run) => this.trail.traced(actor, effect, run),
      ownerOfNic: (nic) => this.ownerOfNic(nic),
    };
    this.targets = {
      nic: (name) => this.nics.get(name),
      nicOrSpawn: (name) => this.nics.get(name) ?? this.spawnNic(name, { exists: false, attached: false, owner: 'wants' }),
      ownerOf: (nic) => this.nodeClaimOfNic(nic),
    };
    this.legacy = deps.config.strategy === 'machine' ? undefined : legacyCleanup(this.deps, this.scope);
    // The legacy strategies did not wait for the NIC: that is the bug they reproduce.
    // Ours also waits for a NIC machine still at work (e.g. a PUT in flight).
    const nicReleased = this.legacy ? () => true : ({ context }: { context: { nicGone: boolean; nicName: string } }) => context.nicGone && !this.nics.has(context.nicName);
    this.nodeClaimMachine = this.trail.remembering(nodeClaimMachineFor(env, this.scope, nicReleased));
    this.nicMachine = this.trail.remembering(nicMachineFor(env, this.scope));
  }

  async start(): Promise<void> {
    this.log('controller', 'start', `strategy=${this.deps.config.strategy}`);
    // A failed first look (throttled, 5xx) is not fatal: the loop below looks again.
    await this.resync().catch((err: unknown) => this.log('controller', 'error', errorCode(err)));
    this.loops.every('resync', this.deps.config.resyncMs, () => this.resync());
    for (const c of this.deps.controllers ?? []) this.loops.every(c.name, c.intervalMs, () => c.reconcile());
  }

  /** Runs a periodic controller as soon as possible (coalesced with a run pending or in flight). */
  kick(name: string): void {
    this.loops.kick(name);
  }

  /** Names of loops with no finished run for `graceMs` beyond their interval: /healthz fails when the leader's loops stop finishing runs. */
  stalledLoops(graceMs: number): string[] {
    return this.loops.stalled(graceMs);
  }

  /** Stops every actor and timer. What matters survives in ARM and the API server. */
  stop(): void {
    this.stopped = true;
    this.loops.stop();
    for (const a of this.claims.values()) a.stop();
    for (const a of this.nics.values()) a.stop();
    this.claims.clear();
    this.nics.clear();
    this.nicOwners.clear();
    this.legacy?.stop();
  }

  /** Current state per actor, for the live view, metrics and tests. */
  actorStates(): { nodeClaims: Map<string, string>; nics: Map<string, string> } {
    const pick = <T extends NodeClaimActor | NicActor>(m: Map<string, T>) =>
      new Map([...m].map(([k, a]) => [k, stateName(a.getSnapshot().value)]));
    return { nodeClaims: pick(this.claims), nics: pick(this.nics) };
  }

  /** NICs waiting out ARM's reservation, with its absolute end (for the live view). */
  nicReservations(): Array<{ nic: string; until: number }> {
    const out: Array<{ nic: string; until: number }> = [];
    for (const [nic, actor] of this.nics) {
      const snap = actor.getSnapshot();
      if (snap.matches('reserved-180s')) out.push({ nic, until: snap.context.reservedUntil });
    }
    return out;
  }

  /** NIC actors whose NodeClaim is gone: ARM resources the sweep adopted (would-be leaks). */
  orphanNics(): number {
    let n = 0;
    for (const name of this.nics.keys()) if (!this.nicOwners.has(name)) n++;
    return n;
  }

  /** Ask for an early resync (coalesced), e.g. after a VM delete finished. */
  requestResync(delayMs = 1_000): void {
    if (this.stopped || this.resyncRequested) return;
    this.resyncRequested = true;
    this.loops.once(delayMs, () => {
      this.resyncRequested = false;
      this.resync().catch((err: unknown) => this.log('controller', 'error', errorCode(err)));
    });
  }

  /**
   * One level-triggered pass. The cluster is listed every time (informer caches). ARM is
   * listed in full, every page, on the first pass of a process (every actor is rebuilt from
   * it) and every FULL_LIST_MS; between, the ARM view is what the last list showed plus every
   * answer since, and what actors wait on ARM for is looked at by GET (PendingLook). Nothing acts on an
   * absence in the view without a GET of its own (the machines confirm), so a view that
   * lags can delay a step, never cause a wrong one.
   */
  async resync(): Promise<void> {
    if (this.resyncing || this.stopped) return;
    this.resyncing = true;
    try {
      const { view: cluster, changes } = await this.clusterObserver.observe();
      this.noteClusterChanges(cluster, changes);
      let full = this.armView.listedAt === undefined || cluster.at - this.armView.listedAt >= FULL_LIST_MS;
      if (full) {
        const disks = this.resyncCount++ % DISK_SWEEP_EVERY === 0;
        const listed = await listArm(this.deps, cluster.nodeClasses.values(), { nics: true, vms: true, disks }).catch((err: unknown) => {
          // A process's first list it cannot do without; later, a throttled list leaves the
          // view as it was (still written through) and the next pass lists again.
          if (this.armView.listedAt === undefined) throw err;
          this.log('controller', 'error', `full list: ${errorCode(err)}`);
          return undefined;
        });
        if (listed) this.armView.install(listed, cluster.at);
        full = listed !== undefined;
      } else {
        this.noteArmChanges();
        await this.pending.refresh(cluster);
      }
      if (this.stopped) return;
      const world = worldOf(cluster, this.armView);
      this.world = world;
      this.noteArmChanges();
      const all = this.dirty.all;
      this.reconcileNodeClaims(world, all);
      if (!this.legacy) {
        this.reconcileNics(world, all);
        if (full) this.garbage.collect(world);
      } else {
        this.dirty.nics.clear();
      }
      this.dirty.all = false;
    } finally {
      this.resyncing = false;
    }
  }

  /** NodeClaims (and their NICs) that changed, and the NodeClaims reading a Node that changed, are looked at. */
  private noteClusterChanges(cluster: ClusterView, changes: ClusterChanges): void {
    this.owners.note(cluster.nodeClaims, changes);
    if (changes.all) this.dirty.all = true;
    for (const name of changes.nodeClaims) {
      if (cluster.nodeClaims.has(name)) this.dirty.claimChanged(name);
      else {
        this.dirty.claimGone(name);
        this.pending.forget(name);
      }
    }
    for (const pid of changes.nodes) this.dirty.nodeChanged(pid);
  }

  /** The actors fed by the ARM view entries that changed are looked at. */
  private noteArmChanges(): void {
    const changes = this.armView.takeChanges();
    if (changes.all) this.dirty.all = true;
    for (const vm of changes.vms) this.dirty.vmChanged(vm);
    for (const nic of changes.nics) this.dirty.nicChanged(nic);
  }

  /**
   * NodeClaim actors: each one whose inputs may have changed (see DirtyActors; every one
   * when `all`) is observed, in the cluster's order, and spawned if it has no actor. Marks
   * made during the walk (an actor's event moved another) are taken here if that NodeClaim
   * is still ahead, and by the next pass otherwise, as a walk over all of them would.
   */
  private reconcileNodeClaims(world: WorldView, all: boolean): void {
    const dirty = this.dirty.claims;
    for (const name of this.claimsToLook(world, all)) {
      if (!all && !dirty.has(name)) continue;
      dirty.delete(name);
      const nc = world.nodeClaims.get(name)!;
      const actor = this.claims.get(name);
      const { vm: vmName, nic: nicName } = resourceNamesOf(world, this.deps.config, name);
      const vm = world.vms.get(vmName);
      const pid = providerIdOf(nc, vm);
      this.dirty.claimReads(name, vmName, nicName, pid);
      const node = pid === undefined ? undefined : world.nodesByProviderId.get(pid);
      const inputs = [nc, vm, world.nics.has(nicName), node];
      if (!actor || !this.memo.sameInputs(actor, inputs)) {
        const observed = observeNodeClaim(world, nc, vm, nicName, node);
        if (actor) this.memo.deliver(actor, observed);
        else this.spawnNodeClaim(name, nicName, observed);
      }
      this.pending.note(name, nc, vm);
    }
    if (all || anyGone(dirty, world.nodeClaims, this.claims)) for (const [name, actor] of this.claims) {
      if (world.nodeClaims.has(name) || (!all && !dirty.has(name))) continue;
      dirty.delete(name);
      this.memo.deliver(actor, GONE_NODECLAIM);
    }
    // A mark for a name with neither an object nor an actor has nothing left to look at.
    for (const name of dirty) if (!world.nodeClaims.has(name) && !this.claims.has(name)) dirty.delete(name);
  }

  /**
   * The NodeClaim names a pass walks, in the cluster's order: all of them, or, when few are
   * marked, the marked ones in that order (the observer numbers each map position), each taken
   * when the walk reaches it as a walk over all of them checking the marks would: a mark made
   * meanwhile (an actor's event moved another) is taken if it is still ahead, and by the next
   * pass otherwise. A settled fleet's pass looked up 2,000 names to find a handful marked.
   */
  private claimsToLook(world: WorldView, all: boolean): Iterable<string> {
    return markedInOrder(world.nodeClaims, this.dirty.claims, all, (name) => this.clusterObserver.nodeClaimOrder(name));
  }

  /**
   * NIC actors: fed from the view on every pass, and spawned on every pass for a NIC in the
   * view that no actor runs (an ownerless one once its grace period ends, measured each pass:
   * a restarted controller's first list must not wait for the next list to adopt it). The
   * actor's own GETs decide what the view cannot (gone, detached, reservation over).
   */
  private reconcileNics(world: WorldView, all: boolean): void {
    // NIC name → the NodeClaim that owns it (the later one in the cluster's order, should two names map to one NIC).
    const owners = this.owners.of(world.nodeClaims);
    const dirty = this.dirty.nics;
    for (const name of markedInOrder(world.nics, dirty, all, (n) => this.armView.nicOrder(n))) {
      if (!all && !dirty.has(name)) continue;
      dirty.delete(name);
      const nic = world.nics.get(name)!;
      const owner = owners.get(name);
      const actor = this.nics.get(name);
      if (actor) {
        const inputs = [nic, world.isAttached(nic), owner, owner && this.lastVmAttempt(owner)];
        if (!this.memo.sameInputs(actor, inputs)) this.memo.deliver(actor, this.observeNicOf(world, name, owner));
        continue;
      }
      // A NIC ARM is already deleting needs no actor (a DELETE would only spend a write on the
      // 404 that follows); if that delete fails, ARM shows the NIC settled again and one is spawned.
      if (nic.provisioningState === 'Deleting') continue;
      // An ownerless NIC may belong to a NodeClaim created after our list: wait out the grace
      // period (looked at on every pass until then: time is the input that changes).
      const createdAt = createdAtTag(nic.tags) ?? 0;
      if (!owner && world.at - createdAt < this.deps.config.orphanGraceMs) {
        dirty.add(name);
        continue;
      }
      this.spawnNic(name, this.observeNicOf(world, name, owner));
    }
    if (all || anyGone(dirty, world.nics, this.nics)) for (const [name, actor] of this.nics) {
      if (world.nics.has(name) || (!all && !dirty.has(name))) continue;
      dirty.delete(name);
      this.memo.deliver(actor, this.observeNicOf(world, name, owners.get(name)));
    }
    for (const name of dirty) if (!world.nics.has(name) && !this.nics.has(name)) dirty.delete(name);
  }

  /**
   * The owner's latest VM attempt: its annotation, or the one its actor has just recorded
   * (the listed NodeClaim may predate the patch, and the PUT may be in flight: a NIC that
   * took the older attempt's reservation would be deleted under the new VM).
   */
  private lastVmAttempt(owner: NodeClaim): number | undefined {
    const annotated = vmAttemptAt(owner);
    const recorded = this.claims.get(owner.metadata.name)?.getSnapshot().context.vmAttemptAt;
    return recorded === undefined ? annotated : Math.max(recorded, annotated ?? recorded);
  }

  private observeNicOf(world: WorldView, name: string, owner: NodeClaim | undefined): NicObservation {
    return observeNic(world, name, owner, owner && this.lastVmAttempt(owner));
  }

  private spawnNodeClaim(name: string, nicName: string, observed: NodeClaimObservation): NodeClaimActor {
    const actor = createActor(this.nodeClaimMachine, {
      input: { name, nicName, observed },
      clock: this.actorClock,
    });
    this.claims.set(name, actor);
    this.nicOwners.set(nicName, name);
    routeFrom(actor, this.legacy ? legacyNodeClaimRoutes(this.legacy, (n) => this.claims.get(n)) : NODECLAIM_ROUTES, this.targets);
    const trace = this.trail.tracer(`nodeclaim/${name}`, actor);
    // Listeners as arguments, not an observer object: tsx keeps the names of an object's
    // methods (a defineProperty each), and XState's bind() of such a function takes V8's slow
    // path (~5 µs a subscribe, against ~0.2 µs for these).
    actor.subscribe(
      // Its state and context are inputs of its own observation and of its NIC's.
      (snapshot) => {
        this.dirty.claimChanged(name);
        trace(snapshot);
      },
      (err) => this.log(`nodeclaim/${name}`, 'actor-error', String(err)),
      () => {
        this.dirty.claimChanged(name);
        if (this.claims.get(name) !== actor) return;
        this.claims.delete(name);
        this.nicOwners.delete(nicName);
      },
    );
    actor.start();
    return actor;
  }

  private spawnNic(name: string, observed: NicObservation): NicActor {
    const actor = createActor(this.nicMachine, { input: { name, observed }, clock: this.actorClock });
    this.nics.set(name, actor);
    routeFrom(actor, NIC_ROUTES, this.targets);
    const trace = this.trail.tracer(`nic/${name}`, actor);
    actor.subscribe(
      (snapshot) => {
        this.dirty.nics.add(name);
        trace(snapshot);
      },
      (err) => this.log(`nic/${name}`, 'actor-error', String(err)),
      () => {
        this.dirty.nics.add(name);
        if (this.nics.get(name) === actor) this.nics.delete(name);
      },
    );
    actor.start();
    return actor;
  }

  private ownerOfNic(nic: string): string {
    const owner = this.nicOwners.get(nic);
    if (owner === undefined) throw new Error(`no NodeClaim owns NIC ${nic}`);
    return owner;
  }

  private nodeClaimOfNic(nic: string): NodeClaimActor | undefined {
    const owner = this.nicOwners.get(nic);
    return owner === undefined ? undefined : this.claims.get(owner);
  }

  private log(actor: string, event: string, detail: string): void {
    this.trail.controller(actor, event, detail);
  }
}

/** Lowercased providerIDs, once per object (cluster and ARM objects are replaced on change, never changed). */
const providerIds = new WeakMap<object, string>();

/** The providerID the NodeClaim's Node has: the one in its status, else its VM's, lowercased. */
function providerIdOf(nc: NodeClaim, vm: Vm | undefined): string | undefined {
  const from = nc.status.providerID != null ? nc : vm;
  if (from === undefined) return undefined;
  let pid = providerIds.get(from);
  if (pid === undefined) providerIds.set(from, (pid = (nc.status.providerID ?? PROVIDER_ID_PREFIX + vm!.id).toLowerCase()));
  return pid;
}

