import { TAG, nameFromArmId } from '../azure/naming.js';
import type { Disk, Nic, ResourceGroupScope, Vm } from '../ports/azure.js';
import type { AzureFlexNodeClass, Node, NodeClaim } from '../ports/cluster.js';
import type { RuntimeDeps } from './deps.js';
import { ANNOTATION_VM_ATTEMPT_AT, NODECLASS_GROUP, NODECLASS_KIND } from '../apis/well-known.js';

/** One consistent-enough look at ARM and the cluster; everything actors decide comes from here. */
export interface WorldView {
  at: number;
  nodeClaims: Map<string, NodeClaim>;
  nodeClasses: Map<string, AzureFlexNodeClass>;
  /** Nodes by providerID. */
  nodesByProviderId: Map<string, Node>;
  nics: Map<string, Nic>;
  vms: Map<string, Vm>;
  disks: Map<string, Disk> | undefined;
  /** Lowercased NIC ids referenced by a VM. */
  attachedNicIds: Set<string>;
}

export function ownsNodeClaim(nc: NodeClaim): boolean {
  const ref = nc.spec.nodeClassRef;
  return ref.group === NODECLASS_GROUP && ref.kind === NODECLASS_KIND;
}

export function scopesOf(nodeClasses: Iterable<AzureFlexNodeClass>): ResourceGroupScope[] {
  const seen = new Map<string, ResourceGroupScope>();
  for (const nc of nodeClasses) {
    const key = `${nc.spec.subscriptionID}/${nc.spec.resourceGroup}`.toLowerCase();
    if (!seen.has(key)) seen.set(key, { subscriptionId: nc.spec.subscriptionID, resourceGroup: nc.spec.resourceGroup });
  }
  return [...seen.values()].sort((a, b) => (a.subscriptionId + a.resourceGroup).localeCompare(b.subscriptionId + b.resourceGroup));
}

/**
 * Lists NodeClaims before ARM resources: a NIC created after the NodeClaim list was taken
 * may look ownerless, which the orphan grace period covers.
 */
export async function observeWorld(deps: RuntimeDeps, includeDisks: boolean): Promise<WorldView> {
  const { cluster, arm, config } = deps;
  const nodeClaimList = await cluster.listNodeClaims();
  const nodeClassList = await cluster.listNodeClasses();
  const nodeList = await cluster.listNodes();
  const nics = new Map<string, Nic>();
  const vms = new Map<string, Vm>();
  const disks = includeDisks ? new Map<string, Disk>() : undefined;
  for (const scope of scopesOf(nodeClassList)) {
    for (const nic of await arm.listNics(scope)) if (nic.tags[TAG.cluster] === config.clusterName) nics.set(nic.name, nic);
    for (const vm of await arm.listVms(scope)) if (vm.tags[TAG.cluster] === config.clusterName) vms.set(vm.name, vm);
    if (disks) for (const d of await arm.listDisks(scope)) if (d.tags[TAG.cluster] === config.clusterName) disks.set(d.name, d);
  }
  const attachedNicIds = new Set<string>();
  for (const vm of vms.values()) for (const id of vm.nicIds) attachedNicIds.add(id.toLowerCase());
  for (const nic of nics.values()) if (nic.virtualMachineId && vms.has(nameFromArmId(nic.virtualMachineId))) attachedNicIds.add(nic.id.toLowerCase());
  const nodesByProviderId = new Map<string, Node>();
  for (const n of nodeList) if (n.spec.providerID) nodesByProviderId.set(n.spec.providerID.toLowerCase(), n);
  return {
    at: deps.clock.now(),
    nodeClaims: new Map(nodeClaimList.filter(ownsNodeClaim).map((nc) => [nc.metadata.name, nc])),
    nodeClasses: new Map(nodeClassList.map((nc) => [nc.metadata.name, nc])),
    nodesByProviderId,
    nics,
    vms,
    disks,
    attachedNicIds,
  };
}

/** Read on every resync for every NodeClaim and NIC; NodeClaim objects are replaced, never changed, so remembered per object. */
const attemptAtOf = new WeakMap<NodeClaim, number | undefined>();

export function vmAttemptAt(nc: NodeClaim): number | undefined {
  if (attemptAtOf.has(nc)) return attemptAtOf.get(nc);
  const raw = nc.metadata.annotations[ANNOTATION_VM_ATTEMPT_AT];
  const t = raw ? Date.parse(raw) : NaN;
  const at = Number.isFinite(t) ? t : undefined;
  attemptAtOf.set(nc, at);
  return at;
}

export function createdAtTag(tags: Record<string, string>): number | undefined {
  const raw = tags[TAG.createdAt];
  const t = raw ? Date.parse(raw) : NaN;
  return Number.isFinite(t) ? t : undefined;
}
