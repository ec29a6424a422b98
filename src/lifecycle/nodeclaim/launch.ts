import { fromPromise } from 'xstate';
import { armId } from '../../azure/naming.js';
import { isOffered, zoneId, zoneLabel, zonesIn, type InstanceType } from '../../catalog/skus.js';
import { AzureError, type VmProvisioningState, type VmSpec } from '../../ports/azure.js';
import { cheapestOffering, compareOfferings, type CapacityType, type Offering } from '../../catalog/offerings.js';
import type { AzureFlexNodeClass, NodeClaim } from '../../ports/cluster.js';
import { Requirements } from '../../provisioning/requirements.js';
import { vmAttemptAt, type VmCreateAttempt } from '../deps.js';
import {
  ANNOTATION_CAPACITY_RESERVATION_GROUP, ANNOTATION_NIC_RESERVED_UNTIL, ANNOTATION_VM_ATTEMPT_AT, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, LABEL_PLACEMENT_SCOPE, LABEL_ZONE,
  PLACEMENT_SCOPE_REGIONAL,
} from '../../apis/well-known.js';
import { classified } from '../failure.js';
import { assertLeader, namesOf, nodeClassOf, observedNodeClaim, ownedTags, refIn, statusNow, validNodeClassOf, type LifecycleScope } from '../scope.js';
import { assertOwned, ours } from '../ownership.js';
import { reservationEnd } from '../timing.js';
import { setCondition, withLifecycleConditions } from './conditions.js';
import { launchLabels } from './labels.js';
import { LAUNCH_REASON_THROTTLED } from './liveness.js';
import type { LaunchFailure } from './machine.js';
import { markUnavailable } from './offerings.js';

/**
 * Launch, as Karpenter's launch.go: the attempt recorded before the VM PUT, the offering (SKU,
 * capacity type) and zone chosen, the VM created; and, when it fails for good, the failure said and the NodeClaim deleted.
 */

/** The attempt time goes into the NodeClaim before the VM PUT: a restarted controller reads from it when ARM's reservation on the NIC ends. */
async function recordVmAttempt(s: LifecycleScope, name: string): Promise<number> {
  const at = s.deps.clock.now();
  await s.deps.cluster.patchNodeClaimMetadata(name, { annotations: { [ANNOTATION_VM_ATTEMPT_AT]: new Date(at).toISOString() } });
  // Launched=Unknown (Launching) while the VM is in flight, as upstream (kubectl describe shows what is going on);
  // best effort: the annotation above is what safety depends on. Read as it is now (the
  // resync's copy may predate a Throttled condition): Throttled -> Launching is the
  // transition the launch timeout counts from.
  const nc = (await s.deps.cluster.getNodeClaim(name).catch(() => undefined)) ?? s.world()?.nodeClaims.get(name);
  if (nc && !nc.status.conditions.some((c) => c.type === 'Launched' && c.status === 'True')) {
    const now = statusNow(s);
    const conditions = withLifecycleConditions(
      setCondition(nc.status.conditions, 'Launched', 'Unknown', 'Launching', `creating VM ${namesOf(s, name).vm} (attempt at ${new Date(at).toISOString()})`, now),
      new Date(now).toISOString(),
    );
    await s.deps.cluster.updateNodeClaimStatus(name, { ...nc.status, conditions }).catch(() => undefined);
  }
  return at;
}

/** The VM PUT; its failure is classified here, once, and travels to the machine in the error event. */
async function createVm(s: LifecycleScope, name: string): Promise<VmProvisioningState> {
  try {
    return await createVmOnce(s, name);
  } catch (error) {
    const failure = classified(error);
    if (failure.action.kind === 'throttled') await noteLaunchThrottled(s, name, failure.action.retryAfterSeconds).catch(() => undefined);
    throw failure;
  }
}

/**
 * ARM made the VM create wait (a 429, or the gate's local refusal while a Retry-After runs):
 * nothing was launched and nothing failed. Launched=Unknown/Throttled says so, to
 * `kubectl describe` and to liveness, which does not time a NodeClaim out while it waits.
 */
async function noteLaunchThrottled(s: LifecycleScope, name: string, retryAfterSeconds: number): Promise<void> {
  const current = (await s.deps.cluster.getNodeClaim(name)) ?? s.world()?.nodeClaims.get(name);
  if (!current || current.status.conditions.some((c) => c.type === 'Launched' && c.status === 'True')) return;
  const next = new Date(s.deps.clock.now() + retryAfterSeconds * 1000).toISOString();
  const now = statusNow(s);
  const conditions = withLifecycleConditions(setCondition(current.status.conditions, 'Launched', 'Unknown', LAUNCH_REASON_THROTTLED,
    `ARM throttled the create of VM ${namesOf(s, name).vm}; azflex tries again after ${next} (not a failed launch: the launch timeout waits too)`, now), new Date(now).toISOString());
  if (conditions === current.status.conditions) return;
  await s.deps.cluster.updateNodeClaimStatus(name, { ...current.status, conditions });
}

async function createVmOnce(s: LifecycleScope, name: string): Promise<VmProvisioningState> {
  assertLeader(s);
  const nc = observedNodeClaim(s, name);
  const cls = validNodeClassOf(s, nc);
  const names = namesOf(s, name);
  const ref = refIn(cls, names.vm);
  // A PUT the gate would refuse now (Compute's policy window full) is refused before its
  // GET: the read would be spent for nothing. The attempt it is told to make GETs first.
  const refused = s.vmPutRefusal(cls.spec.subscriptionID);
  if (refused) {
    createFailed(s, name, createAttempt(nc, cls, (await chooseOffering(s, nc, cls)).instanceType), s.deps.clock.now(), refused);
    throw refused;
  }
  const existing = await s.deps.arm.getVm(ref);
  if (existing) {
    // A PUT over it would adopt it: only this NodeClaim's own VM is carried on with.
    assertOwned(existing, 'VM', s.deps.config.clusterName, name);
    return existing.provisioningState;
  }
  const { instanceType, capacityType } = await chooseOffering(s, nc, cls);
  await recordCapacityType(s, nc, capacityType);
  const zone = await chooseZone(s, nc, cls, instanceType, capacityType);
  const attempt = createAttempt(nc, cls, instanceType);
  const labelled = { ...nc, metadata: { ...nc.metadata, labels: { ...nc.metadata.labels, [LABEL_CAPACITY_TYPE]: capacityType } } };
  const started = s.deps.clock.now();
  const vm = await s.deps.arm.createVm({
    ref,
    location: cls.spec.location,
    vmSize: instanceType.name,
    ...(zone ? { zone: zoneId(zone) } : {}),
    nicId: armId(refIn(cls, names.nic), 'Microsoft.Network/networkInterfaces'),
    osDiskName: names.osDisk,
    osDiskSizeGB: cls.spec.osDiskSizeGB,
    image: cls.spec.imageID ? { id: cls.spec.imageID } : { reference: cls.spec.imageReference! },
    adminUsername: s.deps.config.adminUsername,
    sshPublicKeys: cls.spec.sshPublicKeys,
    customData: await s.deps.userData({ nodeClaim: kubeletView(s, labelled, instanceType, cls, zone), nodeClass: cls, instanceType }),
    ...vmPriority(capacityType, cls),
    ...reservationGroup(nc, capacityType),
    tags: ownedTags(s, nc, cls),
  }).catch((error: unknown) => {
    createFailed(s, name, attempt, started, error);
    // Classified as the attempt it was: a spot SkuNotAvailable is a shorter mark than an on-demand one.
    throw classified(error, { capacityType });
  });
  s.deps.observer?.cloudProviderCall?.({ method: 'Create', nodeClaim: name, seconds: (s.deps.clock.now() - started) / 1000 });
  // The PUT is create-only: a VM of the name made by someone else since the GET comes back as it is.
  assertOwned(vm, 'VM', s.deps.config.clusterName, name);
  return vm.provisioningState;
}

/**
 * The NodeClaim as the kubelet registers it: with its zone (the world's copy may predate the
 * label patch) and the labels the launch will add (labels.ts), so the Node carries
 * them from its first moment, as the Azure provider's kubelet node labels do.
 */
function kubeletView(s: LifecycleScope, nc: NodeClaim, instanceType: InstanceType, cls: AzureFlexNodeClass, zone: string | undefined): NodeClaim {
  // A zonal type launched without a zone is the regional fallback (chooseZone labelled it so).
  const regional = !zone && zonesIn(instanceType, cls.spec.location).length > 0 && nc.metadata.labels[LABEL_PLACEMENT_SCOPE] !== PLACEMENT_SCOPE_REGIONAL;
  const zoned = zone ? { ...nc.metadata.labels, [LABEL_ZONE]: zone } : regional ? { ...nc.metadata.labels, [LABEL_PLACEMENT_SCOPE]: PLACEMENT_SCOPE_REGIONAL } : nc.metadata.labels;
  const launched = launchLabels(zoned === nc.metadata.labels ? nc : { ...nc, metadata: { ...nc.metadata, labels: zoned } }, instanceType, cls.spec.location, s.deps.config.nodeResourceGroup);
  return zoned === nc.metadata.labels && !launched ? nc : { ...nc, metadata: { ...nc.metadata, labels: { ...zoned, ...launched } } };
}

function createAttempt(nc: NodeClaim, cls: AzureFlexNodeClass, instanceType: InstanceType): VmCreateAttempt {
  return { nodeClaim: nc.metadata.name, nodePool: nc.metadata.labels[LABEL_NODEPOOL] ?? '', sku: instanceType.name, region: cls.spec.location, subscription: cls.spec.subscriptionID };
}

/** A create that failed (or was refused) is reported to the observer (metrics, logs). */
function createFailed(s: LifecycleScope, name: string, attempt: VmCreateAttempt, started: number, error: unknown): void {
  s.deps.observer?.cloudProviderCall?.({ method: 'Create', nodeClaim: name, seconds: (s.deps.clock.now() - started) / 1000, error });
  s.deps.observer?.vmCreateFailed?.(attempt, error);
}

/** The NodeClaim's VM as a GET shows it (undefined: there is none of its own). */
async function vmState(s: LifecycleScope, name: string): Promise<VmProvisioningState | undefined> {
  const nc = observedNodeClaim(s, name);
  const vm = await s.deps.arm.getVm(refIn(nodeClassOf(s, nc), namesOf(s, name).vm));
  return ours(vm, s.deps.config.clusterName, name)?.provisioningState;
}

/**
 * Whether the NodeClaim may launch without a zone: none of its requirements names a zone
 * (its pods need none, and its plan pinned none: the plan had a regional option) and its
 * placement scope, if required, allows regional.
 */
function regionalAllowed(nc: NodeClaim): boolean {
  const requirements = Requirements.fromSelectors(nc.spec.requirements);
  const scope = requirements.get(LABEL_PLACEMENT_SCOPE);
  return requirements.get(LABEL_ZONE) === undefined && (scope === undefined || scope.has(PLACEMENT_SCOPE_REGIONAL));
}

/** Zones the NodeClaim may launch the type in (its zone requirement ∩ the type's zones there); empty: regional. */
function allowedZones(nc: NodeClaim, cls: AzureFlexNodeClass, instanceType: InstanceType): readonly string[] {
  const offered = zonesIn(instanceType, cls.spec.location);
  const wanted = Requirements.fromSelectors(nc.spec.requirements).intersect(Requirements.fromLabels(pick(nc.metadata.labels, LABEL_ZONE))).get(LABEL_ZONE);
  return wanted ? offered.filter((z) => wanted.has(z)) : offered;
}

function zoneUsable(s: LifecycleScope, cls: AzureFlexNodeClass, sku: string, zone: string, capacityType: CapacityType): boolean {
  if (s.deps.offerings?.isUnavailable(sku, cls.spec.location, capacityType, zone)) return false;
  const scope = { subscriptionID: cls.spec.subscriptionID, location: cls.spec.location };
  return s.deps.catalog.restriction?.(sku, scope, zoneId(zone)) === undefined;
}

/**
 * The VM's availability zone (a label, "eastus2-1"), or undefined for a regional VM. Once
 * chosen it is the NodeClaim's topology.kubernetes.io/zone label, written before the PUT:
 * a re-PUT after a crash must name the same zone (ARM refuses to change it), and the node
 * and its pods see the label. Otherwise one of the allowed zones no mark or restriction
 * rules out, picked by the NodeClaim's name so NodeClaims spread over the zones.
 */
async function chooseZone(s: LifecycleScope, nc: NodeClaim, cls: AzureFlexNodeClass, instanceType: InstanceType, capacityType: CapacityType): Promise<string | undefined> {
  const labelled = nc.metadata.labels[LABEL_ZONE];
  if (labelled) return zonesIn(instanceType, cls.spec.location).length > 0 ? labelled : undefined;
  if (nc.metadata.labels[LABEL_PLACEMENT_SCOPE] === PLACEMENT_SCOPE_REGIONAL) return undefined;
  const allowed = allowedZones(nc, cls, instanceType);
  if (allowed.length === 0) return undefined;
  const usable = allowed.filter((z) => zoneUsable(s, cls, instanceType.name, z, capacityType));
  if (usable.length === 0 && regionalAllowed(nc)) {
    // Every zone is marked and nothing needs one: a regional VM, said before the PUT (a re-PUT
    // after a crash must again name no zone, and the Node shows how it was placed).
    await s.deps.cluster.patchNodeClaimMetadata(nc.metadata.name, { labels: { [LABEL_PLACEMENT_SCOPE]: PLACEMENT_SCOPE_REGIONAL } });
    return undefined;
  }
  const from = usable.length > 0 ? usable : allowed;
  const zone = from[nameHash(nc.metadata.name) % from.length]!;
  await s.deps.cluster.patchNodeClaimMetadata(nc.metadata.name, { labels: { [LABEL_ZONE]: zone } });
  return zone;
}

/**
 * The capacity types the NodeClaim may launch as: its label once a launch chose one (a re-PUT
 * after a crash must not change the VM's priority), else its requirement.
 */
function allowedCapacityTypes(nc: NodeClaim): (capacityType: CapacityType) => boolean {
  const labelled = nc.metadata.labels[LABEL_CAPACITY_TYPE];
  if (labelled !== undefined) return (ct) => ct === labelled;
  const wanted = Requirements.fromSelectors(nc.spec.requirements).get(LABEL_CAPACITY_TYPE);
  return (ct) => !wanted || wanted.has(ct);
}

/**
 * The cheapest offering (size × capacity type) the NodeClaim allows that the offerings cache
 * does not rule out, as the Azure provider picks size, priority and zone at launch: spot
 * when it is allowed, available and cheaper; on-demand once spot is marked. A zonal type's
 * offering is available while one of the NodeClaim's zones for it is (or, when it needs none, without a zone). With none available,
 * the cheapest allowed offering (its create then fails and marks it).
 */
async function chooseOffering(s: LifecycleScope, nc: NodeClaim, cls: AzureFlexNodeClass): Promise<{ instanceType: InstanceType; capacityType: CapacityType }> {
  const allowed = nc.spec.requirements.find((r) => r.key === LABEL_INSTANCE_TYPE && r.operator === 'In')?.values ?? [];
  const allowedType = allowedCapacityTypes(nc);
  const location = cls.spec.location;
  const choices: Array<{ instanceType: InstanceType; offering: Offering; available: boolean }> = [];
  for (const name of allowed) {
    const it = await s.deps.catalog.get(name);
    if (!it || !isOffered(it, cls.spec.subscriptionID, location)) continue;
    const usable = (ct: CapacityType): boolean => allowedType(ct) && !s.deps.offerings?.isUnavailable(it.name, location, ct) &&
      (zonesIn(it, location).length === 0 || regionalAllowed(nc) || allowedZones(nc, cls, it).some((z) => zoneUsable(s, cls, it.name, z, ct)));
    const reservable = nc.metadata.annotations[ANNOTATION_CAPACITY_RESERVATION_GROUP] !== undefined;
    const available = cheapestOffering(it, usable, reservable);
    const fallback = available ?? cheapestOffering(it, allowedType, reservable);
    if (fallback) choices.push({ instanceType: it, offering: fallback, available: available !== undefined });
  }
  choices.sort((a, b) => Number(b.available) - Number(a.available) || compareOfferings(a.offering, b.offering) || a.instanceType.name.localeCompare(b.instanceType.name));
  const chosen = choices[0];
  if (!chosen) throw new AzureError('SkuNotAvailable', 409, `no instance type of NodeClaim ${nc.metadata.name} is offered in ${location}`);
  return { instanceType: chosen.instanceType, capacityType: chosen.offering.capacityType };
}

/**
 * The chosen capacity type goes on the NodeClaim before the PUT, as the zone does: the node
 * and its pods see it, and a re-PUT after a crash names the same priority.
 */
async function recordCapacityType(s: LifecycleScope, nc: NodeClaim, capacityType: CapacityType): Promise<void> {
  if (nc.metadata.labels[LABEL_CAPACITY_TYPE] === capacityType) return;
  await s.deps.cluster.patchNodeClaimMetadata(nc.metadata.name, { labels: { [LABEL_CAPACITY_TYPE]: capacityType } });
}

/**
 * The VM's priority for its capacity type: a spot VM is deleted when evicted (the ARM
 * adapters ask for it; its NodeClaim is then replaced) and pays at most the NodeClass's
 * spotMaxPrice (-1: up to the on-demand price).
 */
function vmPriority(capacityType: CapacityType, cls: AzureFlexNodeClass): Pick<VmSpec, 'priority' | 'spotMaxPrice'> {
  return capacityType === 'spot' ? { priority: 'Spot', spotMaxPrice: cls.spec.spotMaxPrice ?? -1 } : { priority: 'Regular' };
}

/**
 * The capacity reservation group of a NodeClaim the provisioner planned into a reservation
 * slot (its annotation): the VM is created into it, so it lands in the reserved capacity.
 */
function reservationGroup(nc: NodeClaim, capacityType: CapacityType): Pick<VmSpec, 'capacityReservationGroupId'> {
  const group = nc.metadata.annotations[ANNOTATION_CAPACITY_RESERVATION_GROUP];
  return capacityType === 'reserved' && group !== undefined ? { capacityReservationGroupId: group } : {};
}

/** Karpenter semantics for a failed launch: remember the bad offering, say why, delete the NodeClaim. */
async function failLaunch(s: LifecycleScope, name: string, failure: LaunchFailure): Promise<void> {
  const nc = s.world()?.nodeClaims.get(name);
  const cls = nc ? s.world()?.nodeClasses.get(nc.spec.nodeClassRef.name) : undefined;
  // The last resync may predate this attempt's annotation: read the NodeClaim as it is now.
  const current = (await s.deps.cluster.getNodeClaim(name).catch(() => undefined)) ?? nc;
  const attemptAt = current ? vmAttemptAt(current) : undefined;
  if (nc && cls && failure.capacity && s.deps.offerings) {
    const vm = s.world()?.vms.get(namesOf(s, name).vm);
    const chosen = vm && current?.metadata.labels[LABEL_CAPACITY_TYPE] ? undefined : await chooseOffering(s, current ?? nc, cls);
    const sku = vm?.vmSize ?? chosen!.instanceType.name;
    const capacityType = (current?.metadata.labels[LABEL_CAPACITY_TYPE] as CapacityType | undefined) ?? chosen!.capacityType;
    const zone = vm?.zone ? zoneLabel(cls.spec.location, vm.zone) : nc.metadata.labels[LABEL_ZONE];
    await markUnavailable(s, cls, failure.capacity, sku, capacityType, zone, attemptAt);
  }
  const message = launchFailureMessage(failure);
  const reservedUntil = failure.nicReserved && attemptAt !== undefined ? reservationEnd(attemptAt) : undefined;
  if (current) await sayLaunchFailed(s, current, failure, message, reservedUntil);
  await recordLaunchFailedEvents(s, name, nc?.metadata.uid, failure, message, reservedUntil);
  s.deps.observer?.launchFailed?.({
    nodeClaim: name, nodePool: nc?.metadata.labels[LABEL_NODEPOOL] ?? '', code: failure.code, message,
    insufficientCapacity: failure.action === 'insufficientCapacity',
    ...(reservedUntil !== undefined ? { nicReservedUntil: reservedUntil } : {}),
  });
  await s.deps.cluster.deleteNodeClaim(name);
  // The pods are pending again: plan them elsewhere now rather than at the next interval.
  if (failure.capacity || failure.action === 'conflict') s.kick('provisioner');
}

/** What `kubectl describe nodeclaim` shows while it sits Terminating: why, and until when ARM holds the NIC. */
async function sayLaunchFailed(s: LifecycleScope, current: NodeClaim, failure: LaunchFailure, message: string, reservedUntil: number | undefined): Promise<void> {
  const name = current.metadata.name;
  const now = statusNow(s);
  const reserved = reservedUntil === undefined ? '' : `; NIC ${namesOf(s, name).nic} reserved by ARM until ${new Date(reservedUntil).toISOString()}, deleted right after`;
  const conditions = withLifecycleConditions(
    setCondition(current.status.conditions, 'Launched', 'False', conditionReason(failure.code), `${message}${reserved}`, now), new Date(now).toISOString(),
  );
  await s.deps.cluster.updateNodeClaimStatus(name, { ...current.status, conditions }).catch(() => undefined);
  if (reservedUntil !== undefined) {
    await s.deps.cluster.patchNodeClaimMetadata(name, { annotations: { [ANNOTATION_NIC_RESERVED_UNTIL]: new Date(reservedUntil).toISOString() } }).catch(() => undefined);
  }
}

async function recordLaunchFailedEvents(s: LifecycleScope, name: string, uid: string | undefined, failure: LaunchFailure, message: string, reservedUntil: number | undefined): Promise<void> {
  const involvedObject = { kind: 'NodeClaim', name, uid };
  await s.deps.cluster.recordEvent({
    involvedObject,
    type: 'Warning',
    reason: launchFailedReason(failure),
    message: `launching NodeClaim failed: ${message}`,
  });
  if (reservedUntil === undefined) return;
  await s.deps.cluster.recordEvent({
    involvedObject,
    type: 'Normal',
    reason: 'NicReserved',
    message: `NIC ${namesOf(s, name).nic} is reserved by ARM until ${new Date(reservedUntil).toISOString()} (180 s after the VM create that referenced it); azflex deletes it then and keeps this NodeClaim's finalizer until it is gone`,
  });
}

/** The Event's reason: upstream's for capacity, one that names a taken resource name, else LaunchFailed. */
function launchFailedReason(failure: LaunchFailure): string {
  if (failure.action === 'insufficientCapacity') return 'InsufficientCapacityError';
  return failure.action === 'conflict' ? 'ResourceNameConflict' : 'LaunchFailed';
}

/** ARM's own words where we have them, plus the parsed quota numbers (limit, usage, request). */
export function launchFailureMessage(failure: LaunchFailure): string {
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
  const detail = failure.detail;
  if (detail) parts.push(detail.length > 600 ? `${detail.slice(0, 600)}…` : detail);
  return parts.join(': ');
}

/** Condition reasons must be CamelCase identifiers (upstream's CRD pattern). */
function conditionReason(code: string): string {
  const cleaned = code.replace(/[^A-Za-z0-9_]/g, '');
  return /^[A-Za-z]/.test(cleaned) ? cleaned : `LaunchFailed${cleaned}`;
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

/** The launch effects as the NodeClaim machine invokes them. */
export function launchActors(s: LifecycleScope) {
  const traced = <T>(name: string, effect: string, run: () => Promise<T>): Promise<T> => s.traced(`nodeclaim/${name}`, effect, run);
  return {
    recordVmAttempt: fromPromise<number, { name: string }>(({ input }) => traced(input.name, 'recordVmAttempt', () => recordVmAttempt(s, input.name))),
    createVm: fromPromise<VmProvisioningState, { name: string }>(({ input }) => traced(input.name, 'createVm', () => createVm(s, input.name))),
    getVmState: fromPromise<VmProvisioningState | undefined, { name: string }>(({ input }) => traced(input.name, 'getVmState', () => vmState(s, input.name))),
    failLaunch: fromPromise<void, { name: string; failure: LaunchFailure }>(({ input }) => traced(input.name, 'failLaunch', () => failLaunch(s, input.name, input.failure))),
  };
}
