import { armId, nicNameFor, osDiskNameFor, ownershipTags, vmNameFor } from '../azure/naming.js';
import { isOffered, zoneId, zoneLabel, zonesIn, type InstanceType } from '../catalog/skus.js';
import type { InstanceLoss, InstanceState, LaunchFailure } from '../lifecycle/nodeclaim/machine.js';
import { AzureError, type ResourceRef, type VmProvisioningState } from '../ports/azure.js';
import { ClusterError, type AzureFlexNodeClass, type Condition, type Node, type NodeClaim } from '../ports/cluster.js';
import { validateNodeClassSpec } from '../controllers/nodeclass/validation.js';
import { durationOrNever } from '../disruption/duration.js';
import { LAUNCH_REASON_THROTTLED } from '../lifecycle/nodeclaim/liveness.js';
import { ALLOCATION_TTL_MAX_SECONDS, classifyAzureError } from '../azure/errors.js';
import type { RuntimeDeps, VmCreateAttempt } from './deps.js';
import { vmAttemptAt, type WorldView } from './world.js';
import { allocationTtlSeconds, formatMarks, launchedAfter, mergeMarks, readMarks, type OfferingMark } from '../provisioning/offering-marks.js';
import { registrationPatch } from '../lifecycle/nodeclaim/registration.js';
import { launchLabels } from '../lifecycle/nodeclaim/labels.js';
import { withLifecycleConditions } from '../lifecycle/nodeclaim/conditions.js';
import { Requirements } from '../provisioning/requirements.js';
import { NIC_RESERVATION_MS } from '../lifecycle/timing.js';
import {
  ANNOTATION_NIC_RESERVED_UNTIL, ANNOTATION_OFFERING_MARKS, ANNOTATION_VM_ATTEMPT_AT, FINALIZER_TERMINATION,
  LABEL_INITIALIZED, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, LABEL_ZONE,
} from '../apis/well-known.js';

export const PROVIDER_ID_PREFIX = 'azure-flex://';

/**
 * The effects the machines invoke. Each is idempotent and re-reads what it must from ARM
 * (GET before PUT), so a retried or replayed effect after a crash does no harm.
 */
function isQuotaMark(m: OfferingMark): boolean {
  return m.reason === 'OperationNotAllowed' || m.reason === 'QuotaExceeded' || m.reason === 'quota';
}

export class Effects {
  /** The last VM create error per NodeClaim, for its failure Event (dropped when the Event is sent). */
  private readonly lastCreateError = new Map<string, unknown>();

  constructor(
    private readonly deps: RuntimeDeps,
    private readonly world: () => WorldView | undefined,
    /** Asks a periodic controller to run now (a refused launch replans at once). */
    private readonly kick: (controller: string) => void = () => {},
    /** The refusal the ARM gate would give a VM PUT of the subscription now (see GatedArm.vmPutRefusal). */
    private readonly vmPutRefusal: (subscriptionId: string) => AzureError | undefined = () => undefined,
  ) {}

  private nodeClaim(name: string): NodeClaim {
    const nc = this.world()?.nodeClaims.get(name);
    if (!nc) throw new Error(`NodeClaim ${name} not observed yet`);
    return nc;
  }

  private nodeClassOf(nc: NodeClaim): AzureFlexNodeClass {
    const cls = this.world()?.nodeClasses.get(nc.spec.nodeClassRef.name);
    if (!cls) throw new Error(`AzureFlexNodeClass ${nc.spec.nodeClassRef.name} not found`);
    return cls;
  }

  /** Creates only from a NodeClass that validates: an invalid one never causes an ARM call. Deletes never ask. */
  private validNodeClassOf(nc: NodeClaim): AzureFlexNodeClass {
    const cls = this.nodeClassOf(nc);
    const validation = validateNodeClassSpec(cls.spec);
    if (!validation.ok) {
      throw new AzureError('InvalidParameter', 400, `AzureFlexNodeClass ${cls.metadata.name} is invalid (${validation.reason}): ${validation.message}`);
    }
    return cls;
  }

  private ref(cls: AzureFlexNodeClass, name: string): ResourceRef {
    return { subscriptionId: cls.spec.subscriptionID, resourceGroup: cls.spec.resourceGroup, name };
  }

  private assertLeader(): void {
    if (this.deps.isLeader && !this.deps.isLeader()) throw new Error('not the leader: ARM writes are fenced');
  }

  /** NIC ref for a NIC name: NICs are named after their NodeClaim, whose class gives the scope. */
  nicRef(nicName: string): ResourceRef | undefined {
    const w = this.world();
    const nic = w?.nics.get(nicName);
    if (nic) {
      const m = /\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\//i.exec(nic.id);
      if (m) return { subscriptionId: m[1]!, resourceGroup: m[2]!, name: nicName };
    }
    for (const nc of w?.nodeClaims.values() ?? []) {
      if (nicNameFor(nc.metadata.name) === nicName) return this.ref(this.nodeClassOf(nc), nicName);
    }
    return undefined;
  }

  async putNic(nicName: string, nodeClaimName: string): Promise<void> {
    this.assertLeader();
    const nc = this.nodeClaim(nodeClaimName);
    const cls = this.validNodeClassOf(nc);
    const ref = this.ref(cls, nicName);
    if (await this.deps.arm.getNic(ref)) return;
    await this.deps.arm.createNic({
      ref,
      location: cls.spec.location,
      subnetId: cls.spec.subnetID,
      tags: this.tags(nc, cls),
    });
  }

  /** GET, not a list: lists trail ARM, and "the NIC is gone" must be true before anyone acts on it. */
  async nicExists(nicName: string): Promise<boolean> {
    const ref = this.nicRef(nicName);
    if (!ref) return false;
    return (await this.deps.arm.getNic(ref)) !== undefined;
  }

  /** Whether a GET shows the NIC attached to a VM (lists may still show a VM that is gone). */
  async nicAttachment(nicName: string): Promise<'attached' | 'detached' | 'absent'> {
    const ref = this.nicRef(nicName);
    if (!ref) return 'absent';
    const nic = await this.deps.arm.getNic(ref);
    if (!nic) return 'absent';
    return nic.virtualMachineId === undefined ? 'detached' : 'attached';
  }

  /** The NodeClaim's VM as a GET shows it (undefined: there is none). */
  async vmState(name: string): Promise<VmProvisioningState | undefined> {
    const nc = this.nodeClaim(name);
    const cls = this.nodeClassOf(nc);
    return (await this.deps.arm.getVm(this.ref(cls, vmNameFor(name))))?.provisioningState;
  }

  /** GET of the NodeClaim's VM with its instance view: still there, and running? */
  async instanceState(name: string): Promise<InstanceState> {
    const nc = this.nodeClaim(name);
    const vm = await this.deps.arm.getVm(this.ref(this.nodeClassOf(nc), vmNameFor(name)));
    return { vm: vm?.provisioningState, ...(vm?.powerState !== undefined ? { power: vm.powerState } : {}) };
  }

  /**
   * A launched NodeClaim's instance is gone, being deleted by someone else, or stopped or
   * deallocated (a person, or ARM evicting a Spot VM): as upstream reacts (core's NodeClaim
   * garbage collection, the AWS provider's interruption controller), a Warning Event on the
   * NodeClaim and its Node, karpenter_nodeclaims_disrupted_total with upstream's reason, and
   * the NodeClaim deleted; its termination drains the node (unless the instance is gone) and
   * deletes the VM, NIC and disk, and the provisioner plans the pods again at once.
   */
  async disruptLostInstance(name: string, loss: InstanceLoss, state: InstanceState): Promise<void> {
    const nc = this.world()?.nodeClaims.get(name);
    if (!nc || nc.metadata.deletionTimestamp) return;
    const vmName = vmNameFor(name);
    const what = state.vm === undefined ? `VM ${vmName} no longer exists in ARM`
      : state.vm === 'Deleting' ? `VM ${vmName} is being deleted outside azflex (a person, or ARM evicting a Spot VM)`
      : `VM ${vmName} is ${state.power ?? 'not running'} (a person, or ARM evicting a Spot VM with policy Deallocate)`;
    const reason = loss === 'instance_stopped' ? 'InstanceStopping' : 'InstanceTerminating';
    const message = `${what}; deleting the NodeClaim so its pods are planned again`;
    await this.deps.cluster.recordEvent({ involvedObject: { kind: 'NodeClaim', name, uid: nc.metadata.uid }, type: 'Warning', reason, message });
    const node = this.nodeOf(nc);
    if (node) await this.deps.cluster.recordEvent({ involvedObject: { kind: 'Node', name: node.metadata.name, uid: node.metadata.uid }, type: 'Warning', reason, message });
    await this.deps.cluster.deleteNodeClaim(name);
    this.deps.observer?.instanceLost?.({ nodeClaim: name, nodePool: nc.metadata.labels[LABEL_NODEPOOL] ?? '', reason: loss, message });
    this.kick('provisioner');
  }

  async deleteNic(nicName: string): Promise<void> {
    this.assertLeader();
    const ref = this.nicRef(nicName);
    if (!ref) throw new AzureError('ResourceNotFound', 404, `no scope known for NIC ${nicName}`);
    await this.deps.arm.deleteNic(ref);
  }

  /** When a NodeClaim condition changes, on the clock Kubernetes-side controllers compare it with (RuntimeDeps.statusClock). */
  private statusNow(): number {
    return (this.deps.statusClock ?? this.deps.clock).now();
  }

  async recordVmAttempt(name: string): Promise<number> {
    const at = this.deps.clock.now();
    await this.deps.cluster.patchNodeClaimMetadata(name, { annotations: { [ANNOTATION_VM_ATTEMPT_AT]: new Date(at).toISOString() } });
    // Launched=Unknown (Launching) while the VM is in flight, as upstream (kubectl describe shows what is going on);
    // best effort: the annotation above is what safety depends on. Read as it is now (the
    // resync's copy may predate a Throttled condition): Throttled -> Launching is the
    // transition the launch timeout counts from.
    const nc = (await this.deps.cluster.getNodeClaim(name).catch(() => undefined)) ?? this.world()?.nodeClaims.get(name);
    if (nc && !nc.status.conditions.some((c) => c.type === 'Launched' && c.status === 'True')) {
      const now = this.statusNow();
      const conditions = withLifecycleConditions(
        setCondition(nc.status.conditions, 'Launched', 'Unknown', 'Launching', `creating VM ${vmNameFor(name)} (attempt at ${new Date(at).toISOString()})`, now),
        new Date(now).toISOString(),
      );
      await this.deps.cluster.updateNodeClaimStatus(name, { ...nc.status, conditions }).catch(() => undefined);
    }
    return at;
  }

  async createVm(name: string): Promise<VmProvisioningState> {
    try {
      return await this.createVmOnce(name);
    } catch (error) {
      const action = classifyAzureError(error);
      if (action.kind === 'throttled') await this.noteLaunchThrottled(name, action.retryAfterSeconds).catch(() => undefined);
      throw error;
    }
  }

  /**
   * ARM made the VM create wait (a 429, or the gate's local refusal while a Retry-After runs):
   * nothing was launched and nothing failed. Launched=Unknown/Throttled says so, to
   * `kubectl describe` and to liveness, which does not time a NodeClaim out while it waits.
   */
  private async noteLaunchThrottled(name: string, retryAfterSeconds: number): Promise<void> {
    const current = (await this.deps.cluster.getNodeClaim(name)) ?? this.world()?.nodeClaims.get(name);
    if (!current || current.status.conditions.some((c) => c.type === 'Launched' && c.status === 'True')) return;
    const next = new Date(this.deps.clock.now() + retryAfterSeconds * 1000).toISOString();
    const now = this.statusNow();
    const conditions = withLifecycleConditions(setCondition(current.status.conditions, 'Launched', 'Unknown', LAUNCH_REASON_THROTTLED,
      `ARM throttled the create of VM ${vmNameFor(name)}; azflex tries again after ${next} (not a failed launch: the launch timeout waits too)`, now), new Date(now).toISOString());
    if (conditions === current.status.conditions) return;
    await this.deps.cluster.updateNodeClaimStatus(name, { ...current.status, conditions });
  }

  private async createVmOnce(name: string): Promise<VmProvisioningState> {
    this.assertLeader();
    const nc = this.nodeClaim(name);
    const cls = this.validNodeClassOf(nc);
    const ref = this.ref(cls, vmNameFor(name));
    // A PUT the gate would refuse now (Compute's policy window full) is refused before its
    // GET: the read would be spent for nothing. The attempt it is told to make GETs first.
    const refused = this.vmPutRefusal(cls.spec.subscriptionID);
    if (refused) {
      this.createFailed(name, this.createAttempt(nc, cls, await this.chooseInstanceType(nc, cls)), this.deps.clock.now(), refused);
      throw refused;
    }
    const existing = await this.deps.arm.getVm(ref);
    if (existing) return existing.provisioningState;
    const instanceType = await this.chooseInstanceType(nc, cls);
    const zone = await this.chooseZone(nc, cls, instanceType);
    const nicId = armId(this.ref(cls, nicNameFor(name)), 'Microsoft.Network/networkInterfaces');
    const attempt = this.createAttempt(nc, cls, instanceType);
    const started = this.deps.clock.now();
    const observer = this.deps.observer;
    const vm = await this.deps.arm.createVm({
      ref,
      location: cls.spec.location,
      vmSize: instanceType.name,
      ...(zone ? { zone: zoneId(zone) } : {}),
      nicId,
      osDiskName: osDiskNameFor(name),
      osDiskSizeGB: cls.spec.osDiskSizeGB,
      image: cls.spec.imageID ? { id: cls.spec.imageID } : { reference: cls.spec.imageReference! },
      adminUsername: this.deps.config.adminUsername,
      sshPublicKeys: cls.spec.sshPublicKeys,
      customData: await this.deps.userData({ nodeClaim: this.kubeletView(nc, instanceType, cls, zone), nodeClass: cls, instanceType }),
      priority: 'Regular',
      tags: this.tags(nc, cls),
    }).catch((error: unknown) => {
      this.createFailed(name, attempt, started, error);
      throw error;
    });
    observer?.cloudProviderCall?.({ method: 'Create', nodeClaim: name, seconds: (this.deps.clock.now() - started) / 1000 });
    return vm.provisioningState;
  }

  /**
   * The NodeClaim as the kubelet registers it: with its zone (the world's copy may predate the
   * label patch) and the labels the launch will add (launch-labels.ts), so the Node carries
   * them from its first moment, as the Azure provider's kubelet node labels do.
   */
  private kubeletView(nc: NodeClaim, instanceType: InstanceType, cls: AzureFlexNodeClass, zone: string | undefined): NodeClaim {
    const zoned = zone ? { ...nc.metadata.labels, [LABEL_ZONE]: zone } : nc.metadata.labels;
    const launched = launchLabels(zoned === nc.metadata.labels ? nc : { ...nc, metadata: { ...nc.metadata, labels: zoned } }, instanceType, cls.spec.location, this.deps.config.nodeResourceGroup);
    return zoned === nc.metadata.labels && !launched ? nc : { ...nc, metadata: { ...nc.metadata, labels: { ...zoned, ...launched } } };
  }

  private createAttempt(nc: NodeClaim, cls: AzureFlexNodeClass, instanceType: InstanceType): VmCreateAttempt {
    return { nodeClaim: nc.metadata.name, nodePool: nc.metadata.labels[LABEL_NODEPOOL] ?? '', sku: instanceType.name, region: cls.spec.location, subscription: cls.spec.subscriptionID };
  }

  /** A create that failed (or was refused) is remembered for its failure Event and reported to the observer. */
  private createFailed(name: string, attempt: VmCreateAttempt, started: number, error: unknown): void {
    this.lastCreateError.set(name, error);
    this.deps.observer?.cloudProviderCall?.({ method: 'Create', nodeClaim: name, seconds: (this.deps.clock.now() - started) / 1000, error });
    this.deps.observer?.vmCreateFailed?.(attempt, error);
  }

  /** Zones the NodeClaim may launch the type in (its zone requirement ∩ the type's zones there); empty: regional. */
  private allowedZones(nc: NodeClaim, cls: AzureFlexNodeClass, instanceType: InstanceType): readonly string[] {
    const offered = zonesIn(instanceType, cls.spec.location);
    const wanted = Requirements.fromSelectors(nc.spec.requirements).intersect(Requirements.fromLabels(pick(nc.metadata.labels, LABEL_ZONE))).get(LABEL_ZONE);
    return wanted ? offered.filter((z) => wanted.has(z)) : offered;
  }

  private zoneUsable(cls: AzureFlexNodeClass, sku: string, zone: string): boolean {
    if (this.deps.offerings?.isUnavailable(sku, cls.spec.location, 'on-demand', zone)) return false;
    const scope = { subscriptionID: cls.spec.subscriptionID, location: cls.spec.location };
    return this.deps.catalog.restriction?.(sku, scope, zoneId(zone)) === undefined;
  }

  /**
   * The VM's availability zone (a label, "eastus2-1"), or undefined for a regional VM. Once
   * chosen it is the NodeClaim's topology.kubernetes.io/zone label, written before the PUT:
   * a re-PUT after a crash must name the same zone (ARM refuses to change it), and the node
   * and its pods see the label. Otherwise one of the allowed zones no mark or restriction
   * rules out, picked by the NodeClaim's name so NodeClaims spread over the zones.
   */
  private async chooseZone(nc: NodeClaim, cls: AzureFlexNodeClass, instanceType: InstanceType): Promise<string | undefined> {
    const labelled = nc.metadata.labels[LABEL_ZONE];
    if (labelled) return zonesIn(instanceType, cls.spec.location).length > 0 ? labelled : undefined;
    const allowed = this.allowedZones(nc, cls, instanceType);
    if (allowed.length === 0) return undefined;
    const usable = allowed.filter((z) => this.zoneUsable(cls, instanceType.name, z));
    const from = usable.length > 0 ? usable : allowed;
    const zone = from[nameHash(nc.metadata.name) % from.length]!;
    await this.deps.cluster.patchNodeClaimMetadata(nc.metadata.name, { labels: { [LABEL_ZONE]: zone } });
    return zone;
  }

  /** Cheapest SKU the NodeClaim allows that the offerings cache does not rule out. */
  async chooseInstanceType(nc: NodeClaim, cls: AzureFlexNodeClass): Promise<InstanceType> {
    const allowed = nc.spec.requirements.find((r) => r.key === LABEL_INSTANCE_TYPE && r.operator === 'In')?.values ?? [];
    const candidates: InstanceType[] = [];
    for (const name of allowed) {
      const it = await this.deps.catalog.get(name);
      if (it && isOffered(it, cls.spec.subscriptionID, cls.spec.location)) candidates.push(it);
    }
    candidates.sort((a, b) => a.pricePerHour - b.pricePerHour || a.name.localeCompare(b.name));
    // A zonal type is available while one of the NodeClaim's zones for it is.
    const available = candidates.find((it) => !this.deps.offerings?.isUnavailable(it.name, cls.spec.location, 'on-demand') &&
      (zonesIn(it, cls.spec.location).length === 0 || this.allowedZones(nc, cls, it).some((z) => this.zoneUsable(cls, it.name, z))));
    const chosen = available ?? candidates[0];
    if (!chosen) throw new AzureError('SkuNotAvailable', 409, `no instance type of NodeClaim ${nc.metadata.name} is offered in ${cls.spec.location}`);
    return chosen;
  }

  /**
   * Brings the NodeClaim's status up to `phase` from what ARM and the cluster show. One
   * function for every phase, because a restarted controller may find a NodeClaim whose VM
   * booted and whose node joined while nobody was writing its status.
   */
  async syncStatus(name: string, phase: 'Launched' | 'Registered' | 'Initialized'): Promise<void> {
    let nc = this.nodeClaim(name);
    const cls = this.nodeClassOf(nc);
    const now = this.statusNow();
    const status: NodeClaim['status'] = { ...nc.status };
    if (!status.providerID) {
      const vm = this.world()?.vms.get(vmNameFor(name)) ?? (await this.deps.arm.getVm(this.ref(cls, vmNameFor(name))));
      if (!vm) throw new AzureError('ResourceNotFound', 404, `VM for ${name} not found`);
      const it = await this.deps.catalog.get(vm.vmSize);
      status.providerID = PROVIDER_ID_PREFIX + vm.id;
      status.imageID = cls.spec.imageID ?? imageUrn(cls);
      if (it) status.capacity = status.allocatable = capacityOf(it);
      // The launched type's labels before the status (the commit point): a crash repeats the patch.
      const labels = it && launchLabels(nc, it, cls.spec.location, this.deps.config.nodeResourceGroup);
      if (labels) {
        await this.deps.cluster.patchNodeClaimMetadata(name, { labels });
        nc = { ...nc, metadata: { ...nc.metadata, labels: { ...nc.metadata.labels, ...labels } } };
      }
    }
    let conditions = setCondition(status.conditions, 'Launched', 'True', 'Launched', '', now);
    if (phase !== 'Launched') {
      const node = this.nodeOf({ ...nc, status });
      if (node) {
        status.nodeName = node.metadata.name;
        // Labels, the termination finalizer (and, the first time, taints instead of
        // karpenter.sh/unregistered) before the condition: a crash in between repeats the
        // idempotent patch.
        const patch = registrationPatch(nc, node) ?? {};
        if (phase === 'Initialized' && node.metadata.labels[LABEL_INITIALIZED] !== 'true') {
          patch.metadata = { ...patch.metadata, labels: { ...patch.metadata?.labels, [LABEL_INITIALIZED]: 'true' } };
        }
        if (patch.metadata || patch.taints) await this.deps.cluster.patchNode(node.metadata.name, patch);
      }
      conditions = setCondition(conditions, 'Registered', 'True', 'Registered', '', now);
    }
    if (phase === 'Initialized') conditions = setCondition(conditions, 'Initialized', 'True', 'Initialized', '', now);
    conditions = withLifecycleConditions(conditions, new Date(now).toISOString());
    if (conditions === nc.status.conditions && status.providerID === nc.status.providerID && status.nodeName === nc.status.nodeName) return;
    await this.deps.cluster.updateNodeClaimStatus(name, { ...status, conditions });
  }

  /** Karpenter semantics for a failed launch: remember the bad offering, say why, delete the NodeClaim. */
  async failLaunch(name: string, failure: LaunchFailure): Promise<void> {
    const nc = this.world()?.nodeClaims.get(name);
    const cls = nc ? this.world()?.nodeClasses.get(nc.spec.nodeClassRef.name) : undefined;
    // The last resync may predate this attempt's annotation: read the NodeClaim as it is now.
    const current = (await this.deps.cluster.getNodeClaim(name).catch(() => undefined)) ?? nc;
    const attemptAt = current ? vmAttemptAt(current) : undefined;
    if (nc && cls && failure.capacity && this.deps.offerings) {
      const vm = this.world()?.vms.get(vmNameFor(name));
      const sku = vm?.vmSize ?? (await this.chooseInstanceType(nc, cls)).name;
      const zone = vm?.zone ? zoneLabel(cls.spec.location, vm.zone) : nc.metadata.labels[LABEL_ZONE];
      this.deps.offerings.apply(this.escalated(failure.capacity, cls, sku, zone, attemptAt), { sku, region: cls.spec.location, capacityType: 'on-demand', ...(zone ? { zone } : {}) });
      // In the world too, so a restart neither forgets the mark nor floods when it expires.
      await this.persistMarks(cls);
    }
    const error = this.lastCreateError.get(name);
    this.lastCreateError.delete(name);
    const message = launchFailureMessage(failure, error);
    const reservedUntil = failure.nicReserved && attemptAt !== undefined ? attemptAt + NIC_RESERVATION_MS : undefined;
    const involvedObject = { kind: 'NodeClaim', name, uid: nc?.metadata.uid };
    if (current) {
      // What `kubectl describe nodeclaim` shows while it sits Terminating: why, and until when ARM holds the NIC.
      const now = this.statusNow();
      const reserved = reservedUntil === undefined ? '' : `; NIC ${nicNameFor(name)} reserved by ARM until ${new Date(reservedUntil).toISOString()}, deleted right after`;
      const conditions = withLifecycleConditions(
        setCondition(current.status.conditions, 'Launched', 'False', conditionReason(failure.code), `${message}${reserved}`, now), new Date(now).toISOString(),
      );
      await this.deps.cluster.updateNodeClaimStatus(name, { ...current.status, conditions }).catch(() => undefined);
      if (reservedUntil !== undefined) {
        await this.deps.cluster.patchNodeClaimMetadata(name, { annotations: { [ANNOTATION_NIC_RESERVED_UNTIL]: new Date(reservedUntil).toISOString() } }).catch(() => undefined);
      }
    }
    await this.deps.cluster.recordEvent({
      involvedObject,
      type: 'Warning',
      reason: failure.action === 'insufficientCapacity' ? 'InsufficientCapacityError' : 'LaunchFailed',
      message: `launching NodeClaim failed: ${message}`,
    });
    if (reservedUntil !== undefined) {
      await this.deps.cluster.recordEvent({
        involvedObject,
        type: 'Normal',
        reason: 'NicReserved',
        message: `NIC ${nicNameFor(name)} is reserved by ARM until ${new Date(reservedUntil).toISOString()} (180 s after the VM create that referenced it); azflex deletes it then and keeps this NodeClaim's finalizer until it is gone`,
      });
    }
    this.deps.observer?.launchFailed?.({
      nodeClaim: name, nodePool: nc?.metadata.labels[LABEL_NODEPOOL] ?? '', code: failure.code, message,
      insufficientCapacity: failure.action === 'insufficientCapacity',
      ...(reservedUntil !== undefined ? { nicReservedUntil: reservedUntil } : {}),
    });
    await this.deps.cluster.deleteNodeClaim(name);
    // The pods are pending again: plan them elsewhere now rather than at the next interval.
    if (failure.capacity) this.kick('provisioner');
  }

  /** An allocation failure's TTL, lengthened when the offering's previous mark did not stop this attempt (`allocationTtlSeconds`). */
  private escalated(capacity: NonNullable<LaunchFailure['capacity']>, cls: AzureFlexNodeClass, sku: string, zone: string | undefined, attemptAt: number | undefined): NonNullable<LaunchFailure['capacity']> {
    if (capacity.reason !== 'allocation') return capacity;
    const zonal = zone !== undefined && (capacity.code === 'ZonalAllocationFailed' || capacity.code === 'OverconstrainedZonalAllocationRequest');
    const key = { sku, capacityType: 'on-demand' as const, ...(zonal ? { zone } : {}) };
    const w = this.world();
    const vmSizeOf = (c: NodeClaim): string | undefined => w?.vms.get(vmNameFor(c.metadata.name))?.vmSize;
    const launchedSince = (at: number): boolean => launchedAfter(w?.nodeClaims.values() ?? [], vmSizeOf, sku, zonal ? zone : undefined, at);
    return { ...capacity, ttlSeconds: allocationTtlSeconds(readMarks(cls), key, attemptAt, launchedSince, capacity.ttlSeconds, ALLOCATION_TTL_MAX_SECONDS) };
  }

  /** Writes the cache's live marks for the NodeClass's region into its annotation (merged, never shortened). */
  private async persistMarks(cls: AzureFlexNodeClass): Promise<void> {
    const region = cls.spec.location.toLowerCase();
    const live: OfferingMark[] = (this.deps.offerings?.entries() ?? []).filter((e) => e.region === region).map((e) => ({
      sku: e.sku, ...(e.family ? { family: e.family } : {}), ...(e.zone ? { zone: e.zone } : {}), capacityType: e.capacityType, reason: e.reason, markedAt: e.markedAt, expiresAt: e.expiresAt,
    }));
    const existing = readMarks(cls);
    const merged = mergeMarks(existing, live);
    const value = formatMarks(merged);
    if (value === (cls.metadata.annotations[ANNOTATION_OFFERING_MARKS] ?? null)) return;
    await this.deps.cluster.patchNodeClassMetadata(cls.metadata.name, { annotations: { [ANNOTATION_OFFERING_MARKS]: value } });
  }

  /** Our VM of this family went away: quota marks for it no longer hold, in the world either. */
  private async dropQuotaMarks(sku: string, location: string): Promise<void> {
    const it = await this.deps.catalog.get(sku);
    for (const cls of this.world()?.nodeClasses.values() ?? []) {
      if (cls.spec.location.toLowerCase() !== location.toLowerCase()) continue;
      const marks = readMarks(cls);
      const kept = marks.filter((m) => !(isQuotaMark(m) && (m.sku === '*' || m.sku.toLowerCase() === sku.toLowerCase() ||
        (m.family !== undefined && it !== undefined && m.family.toLowerCase() === it.family.toLowerCase()))));
      if (kept.length === marks.length) continue;
      await this.deps.cluster.patchNodeClassMetadata(cls.metadata.name, { annotations: { [ANNOTATION_OFFERING_MARKS]: formatMarks(kept) } });
    }
  }

  async drain(name: string): Promise<boolean> {
    const nc = this.world()?.nodeClaims.get(name);
    const node = nc ? this.nodeOf(nc) : undefined;
    if (!node || !this.deps.drain) return true;
    const deletedAt = nc?.metadata.deletionTimestamp ? Date.parse(nc.metadata.deletionTimestamp) : this.deps.clock.now();
    const grace = durationOrNever(nc?.spec.terminationGracePeriod);
    return this.deps.drain(node.metadata.name, grace === undefined ? Number.POSITIVE_INFINITY : deletedAt + grace);
  }

  async deleteVm(name: string): Promise<void> {
    this.assertLeader();
    const nc = this.world()?.nodeClaims.get(name);
    const cls = nc ? this.world()?.nodeClasses.get(nc.spec.nodeClassRef.name) : undefined;
    const vm = this.world()?.vms.get(vmNameFor(name));
    const ref = cls ? this.ref(cls, vmNameFor(name)) : vm ? refFromId(vm.id) : undefined;
    if (!ref) return;
    // A read first: a failed launch left no VM, and a DELETE would spend a write token on a
    // 404; a VM already Deleting needs nothing (the delete runs for minutes; we observe it go).
    const existing = await this.deps.arm.getVm(ref);
    if (!existing || existing.provisioningState === 'Deleting') return;
    const started = this.deps.clock.now();
    await this.deps.arm.deleteVm(ref).catch((error: unknown) => {
      this.deps.observer?.cloudProviderCall?.({ method: 'Delete', nodeClaim: name, seconds: (this.deps.clock.now() - started) / 1000, error });
      throw error;
    });
    this.deps.observer?.cloudProviderCall?.({ method: 'Delete', nodeClaim: name, seconds: (this.deps.clock.now() - started) / 1000 });
    if (existing.provisioningState === 'Succeeded' && this.deps.offerings) {
      this.deps.offerings.noteCoresFreed(existing.vmSize, existing.location);
      await this.dropQuotaMarks(existing.vmSize, existing.location);
    }
  }

  async deleteVmById(id: string): Promise<void> {
    this.assertLeader();
    await this.deps.arm.deleteVm(refFromId(id));
  }

  async deleteDiskById(id: string): Promise<void> {
    this.assertLeader();
    await this.deps.arm.deleteDisk(refFromId(id));
  }

  /**
   * Node object goes first (Karpenter's order: deleted, then our karpenter.sh/termination
   * finalizer on it released, as the instance is gone), then the finalizer that held the NodeClaim.
   * Before the finalizer goes, ARM's own answers verify that it holds nothing of the claim:
   * the NIC is gone (its machine's DELETE finished, else a GET), and so is the OS disk (a GET:
   * a VM delete cascades it; one that survived, detached, is deleted here). Lists cannot be
   * trusted for this: they lag.
   */
  async finalize(name: string): Promise<void> {
    const nc = this.world()?.nodeClaims.get(name);
    const cls = nc ? this.world()?.nodeClasses.get(nc.spec.nodeClassRef.name) : undefined;
    if (nc && cls && this.deps.config.strategy === 'machine') await this.verifyNothingLeft(name, cls);
    const node = nc ? this.nodeOf(nc) : undefined;
    if (node) await this.releaseNode(node);
    if (nc && nc.metadata.finalizers.includes(FINALIZER_TERMINATION)) {
      await this.deps.cluster.patchNodeClaimMetadata(name, { finalizers: nc.metadata.finalizers.filter((f) => f !== FINALIZER_TERMINATION) });
    }
  }

  /** Deletes the Node (404 is success) and releases our finalizer on it, if it has it. */
  private async releaseNode(node: Node): Promise<void> {
    const name = node.metadata.name;
    if (!node.metadata.deletionTimestamp) await this.deps.cluster.deleteNode(name);
    if (!node.metadata.finalizers.includes(FINALIZER_TERMINATION)) return;
    await this.deps.cluster.patchNode(name, { metadata: { finalizers: node.metadata.finalizers.filter((f) => f !== FINALIZER_TERMINATION) } }).catch((err: unknown) => {
      if (!(err instanceof ClusterError && err.reason === 'NotFound')) throw err;
    });
  }

  private async verifyNothingLeft(name: string, cls: AzureFlexNodeClass): Promise<void> {
    const nicName = nicNameFor(name);
    // The NIC machine's DELETE finished (or a GET found nothing) and nothing since showed the
    // NIC: that is ARM's own answer, as good as another GET. A list's absence is not.
    if (!this.world()?.nicAnsweredGone(nicName)) {
      const nic = await this.deps.arm.getNic(this.ref(cls, nicName));
      if (nic) throw new AzureError('NicInUse', 409, `NIC ${nic.name} still exists; the finalizer stays until it is reaped`);
    }
    const diskRef = this.ref(cls, osDiskNameFor(name));
    const disk = await this.deps.arm.getDisk(diskRef);
    if (!disk) return;
    if (disk.managedBy) throw new AzureError('OperationNotAllowed', 409, `disk ${disk.name} is still attached to ${disk.managedBy}`);
    this.assertLeader();
    await this.deps.arm.deleteDisk(diskRef);
  }

  private nodeOf(nc: NodeClaim) {
    const w = this.world();
    if (!w) return undefined;
    const vm = w.vms.get(vmNameFor(nc.metadata.name));
    const pid = nc.status.providerID ?? (vm ? PROVIDER_ID_PREFIX + vm.id : undefined);
    return pid ? w.nodesByProviderId.get(pid.toLowerCase()) : undefined;
  }

  private tags(nc: NodeClaim, cls: AzureFlexNodeClass): Record<string, string> {
    return {
      ...cls.spec.tags,
      ...ownershipTags(this.deps.config.clusterName, nc.metadata.labels[LABEL_NODEPOOL] ?? '', nc.metadata.name, cls.metadata.name, this.deps.clock.now()),
    };
  }
}

/** ARM's own words where we have them, plus the parsed quota numbers (limit, usage, request). */
export function launchFailureMessage(failure: LaunchFailure, error: unknown): string {
  const parts = [failure.code];
  const quota = failure.capacity?.quota;
  if (quota) {
    const what = quota.scope === 'family' ? `${quota.family ?? 'VM family'} cores quota` : `${quota.scope} cores quota`;
    const numbers = [
      quota.currentLimit !== undefined ? `limit ${quota.currentLimit}` : undefined,
      quota.currentUsage !== undefined ? `usage ${quota.currentUsage}` : undefined,
      quota.additionalRequired !== undefined ? `request ${quota.additionalRequired}` : undefined,
    ].filter((x) => x !== undefined);
    parts.push(`${what}${quota.location ? ` in ${quota.location}` : ''}: ${numbers.length > 0 ? numbers.join(', ') : 'numbers not reported'}`);
  }
  if (error instanceof Error && error.message) parts.push(error.message.length > 600 ? `${error.message.slice(0, 600)}…` : error.message);
  return parts.join(': ');
}

/** Condition reasons must be CamelCase identifiers (upstream's CRD pattern). */
function conditionReason(code: string): string {
  const cleaned = code.replace(/[^A-Za-z0-9_]/g, '');
  return /^[A-Za-z]/.test(cleaned) ? cleaned : `LaunchFailed${cleaned}`;
}

export function refFromId(id: string): ResourceRef {
  const m = /\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/[^/]+\/[^/]+\/([^/]+)$/i.exec(id);
  if (!m) throw new Error(`not an ARM resource id: ${id}`);
  return { subscriptionId: m[1]!, resourceGroup: m[2]!, name: m[3]! };
}

function imageUrn(cls: AzureFlexNodeClass): string {
  const r = cls.spec.imageReference;
  return r ? `${r.publisher}:${r.offer}:${r.sku}:${r.version}` : '';
}

function capacityOf(it: InstanceType): Record<string, string> {
  const c: Record<string, string> = { cpu: String(it.vcpu), memory: `${it.memoryMiB}Mi`, pods: String(it.maxPods), 'ephemeral-storage': `${it.ephemeralStorageGiB}Gi` };
  if (it.gpuCount > 0) c['nvidia.com/gpu'] = String(it.gpuCount);
  return c;
}


export function setCondition(conditions: Condition[], type: string, status: Condition['status'], reason: string, message: string, now: number): Condition[] {
  const existing = conditions.find((c) => c.type === type);
  if (existing && existing.status === status && existing.reason === reason) return conditions;
  const next: Condition = { type, status, reason, message, lastTransitionTime: new Date(now).toISOString() };
  return [...conditions.filter((c) => c.type !== type), next];
}


function pick(labels: Record<string, string>, key: string): Record<string, string> {
  return labels[key] !== undefined ? { [key]: labels[key] } : {};
}

/** FNV-1a of a name: a stable spread that a restarted controller computes the same way. */
function nameHash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
