import { PROVIDER_ID_PREFIX, ownershipTags, type ResourceNames } from '../azure/naming.js';
import { validateNodeClassSpec } from '../apis/nodeclass-validation.js';
import { AzureError, type ResourceRef } from '../ports/azure.js';
import type { AzureFlexNodeClass, Node, NodeClaim } from '../ports/cluster.js';
import type { LifecycleDeps, WorldView } from './deps.js';
import { LABEL_NODEPOOL } from '../apis/well-known.js';
import { nicNameCandidates, resourceNamesOf } from './ownership.js';

/**
 * What the lifecycles' effects reach from where they are hosted: the ports, the world as last
 * observed, and the runtime's few services. Each effect is idempotent and re-reads what it must
 * from ARM (GET before PUT), so a retried or replayed effect after a crash does no harm.
 */
export interface LifecycleScope {
  /** The ports, ARM behind the runtime's Retry-After gate. */
  readonly deps: LifecycleDeps;
  world(): WorldView | undefined;
  /** Asks a periodic controller to run now (a refused launch replans at once). */
  kick(controller: string): void;
  /** The refusal the ARM gate would give a VM PUT of the subscription now (see GatedArm.vmPutRefusal). */
  vmPutRefusal(subscriptionId: string): AzureError | undefined;
  /** Asks for an early resync (coalesced), e.g. after a VM delete was started. */
  requestResync(): void;
  /** Runs an effect, logs its outcome and rethrows its failure classified (failure.ts). */
  traced<T>(actor: string, effect: string, run: () => Promise<T>): Promise<T>;
  /** The NodeClaim that owns a NIC actor's NIC (throws when none does). */
  ownerOfNic(nic: string): string;
}

/** The NodeClaim's VM, NIC and OS disk names (the first version's while its resources are there: ownership.ts). */
export function namesOf(s: LifecycleScope, nodeClaim: string): ResourceNames {
  return resourceNamesOf(s.world(), s.deps.config, nodeClaim);
}

export function observedNodeClaim(s: LifecycleScope, name: string): NodeClaim {
  const nc = s.world()?.nodeClaims.get(name);
  if (!nc) throw new Error(`NodeClaim ${name} not observed yet`);
  return nc;
}

export function nodeClassOf(s: LifecycleScope, nc: NodeClaim): AzureFlexNodeClass {
  const cls = s.world()?.nodeClasses.get(nc.spec.nodeClassRef.name);
  if (!cls) throw new Error(`AzureFlexNodeClass ${nc.spec.nodeClassRef.name} not found`);
  return cls;
}

/** Creates only from a NodeClass that validates: an invalid one never causes an ARM call. Deletes never ask. */
export function validNodeClassOf(s: LifecycleScope, nc: NodeClaim): AzureFlexNodeClass {
  const cls = nodeClassOf(s, nc);
  const validation = validateNodeClassSpec(cls.spec);
  if (!validation.ok) {
    throw new AzureError('InvalidParameter', 400, `AzureFlexNodeClass ${cls.metadata.name} is invalid (${validation.reason}): ${validation.message}`);
  }
  return cls;
}

export function refIn(cls: AzureFlexNodeClass, name: string): ResourceRef {
  return { subscriptionId: cls.spec.subscriptionID, resourceGroup: cls.spec.resourceGroup, name };
}

/** Every ARM write is the leader's alone (a deposed leader's is fenced here and at the ARM gate). */
export function assertLeader(s: { readonly deps: Pick<LifecycleDeps, 'isLeader'> }): void {
  if (s.deps.isLeader && !s.deps.isLeader()) throw new Error('not the leader: ARM writes are fenced');
}

/** When a NodeClaim condition changes, on the clock Kubernetes-side controllers compare it with (RuntimeDeps.statusClock). */
export function statusNow(s: LifecycleScope): number {
  return (s.deps.statusClock ?? s.deps.clock).now();
}

/** The NodeClaim's Node, by the providerID in its status or its VM's. */
export function nodeOf(s: LifecycleScope, nc: NodeClaim): Node | undefined {
  const w = s.world();
  if (!w) return undefined;
  const vm = w.vms.get(resourceNamesOf(w, s.deps.config, nc.metadata.name).vm);
  const pid = nc.status.providerID ?? (vm ? PROVIDER_ID_PREFIX + vm.id : undefined);
  return pid ? w.nodesByProviderId.get(pid.toLowerCase()) : undefined;
}

/** The tags every resource of the NodeClaim carries: the NodeClass's, then ownership (what GC and restarts read). */
export function ownedTags(s: LifecycleScope, nc: NodeClaim, cls: AzureFlexNodeClass): Record<string, string> {
  return {
    ...cls.spec.tags,
    ...ownershipTags(s.deps.config.clusterName, nc.metadata.labels[LABEL_NODEPOOL] ?? '', nc.metadata.name, cls.metadata.name, s.deps.clock.now()),
  };
}

/** NIC ref for a NIC name: NICs are named after their NodeClaim, whose class gives the scope. */
export function nicRef(s: LifecycleScope, nicName: string): ResourceRef | undefined {
  const w = s.world();
  const nic = w?.nics.get(nicName);
  if (nic) {
    const m = /\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\//i.exec(nic.id);
    if (m) return { subscriptionId: m[1]!, resourceGroup: m[2]!, name: nicName };
  }
  for (const nc of w?.nodeClaims.values() ?? []) {
    if (nicNameCandidates(s.deps.config, nc.metadata.name).includes(nicName)) return refIn(nodeClassOf(s, nc), nicName);
  }
  return undefined;
}
