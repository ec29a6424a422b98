import { fromPromise } from 'xstate';
import { PROVIDER_ID_PREFIX } from '../../azure/naming.js';
import type { InstanceType } from '../../catalog/skus.js';
import { AzureError } from '../../ports/azure.js';
import type { AzureFlexNodeClass, NodeClaim } from '../../ports/cluster.js';
import { LABEL_INITIALIZED } from '../../apis/well-known.js';
import { namesOf, nodeClassOf, nodeOf, observedNodeClaim, refIn, statusNow, type LifecycleScope } from '../scope.js';
import { ours } from '../ownership.js';
import { setCondition, withLifecycleConditions } from './conditions.js';
import { launchLabels } from './labels.js';
import { registrationPatch } from './registration.js';

type Phase = 'Launched' | 'Registered' | 'Initialized';

/**
 * Brings the NodeClaim's status up to `phase` from what ARM and the cluster show: Launched
 * (providerID, image, capacity, the launched type's labels), Registered (the Node patched as
 * registration.ts says), Initialized (karpenter.sh/initialized on the Node). One function for
 * every phase, because a restarted controller may find a NodeClaim whose VM booted and whose
 * node joined while nobody was writing its status.
 */
async function syncStatus(s: LifecycleScope, name: string, phase: Phase): Promise<void> {
  let nc = observedNodeClaim(s, name);
  const cls = nodeClassOf(s, nc);
  const now = statusNow(s);
  const status: NodeClaim['status'] = { ...nc.status };
  if (!status.providerID) {
    // The view holds only the cluster's own; a GET's answer is taken only if it is the NodeClaim's.
    const vmName = namesOf(s, name).vm;
    const vm = s.world()?.vms.get(vmName) ?? ours(await s.deps.arm.getVm(refIn(cls, vmName)), s.deps.config.clusterName, name);
    if (!vm) throw new AzureError('ResourceNotFound', 404, `VM for ${name} not found`);
    const it = await s.deps.catalog.get(vm.vmSize);
    status.providerID = PROVIDER_ID_PREFIX + vm.id;
    status.imageID = cls.spec.imageID ?? imageUrn(cls);
    if (it) status.capacity = status.allocatable = capacityOf(it);
    // The launched type's labels before the status (the commit point): a crash repeats the patch.
    const labels = it && launchLabels(nc, it, cls.spec.location, s.deps.config.nodeResourceGroup);
    if (labels) {
      await s.deps.cluster.patchNodeClaimMetadata(name, { labels });
      nc = { ...nc, metadata: { ...nc.metadata, labels: { ...nc.metadata.labels, ...labels } } };
    }
  }
  let conditions = setCondition(status.conditions, 'Launched', 'True', 'Launched', '', now);
  if (phase !== 'Launched') {
    await patchNode(s, { ...nc, status }, status, phase);
    conditions = setCondition(conditions, 'Registered', 'True', 'Registered', '', now);
  }
  if (phase === 'Initialized') conditions = setCondition(conditions, 'Initialized', 'True', 'Initialized', '', now);
  conditions = withLifecycleConditions(conditions, new Date(now).toISOString());
  if (conditions === nc.status.conditions && status.providerID === nc.status.providerID && status.nodeName === nc.status.nodeName) return;
  await s.deps.cluster.updateNodeClaimStatus(name, { ...status, conditions });
}

/**
 * Labels, the termination finalizer (and, the first time, taints instead of
 * karpenter.sh/unregistered) before the condition: a crash in between repeats the idempotent patch.
 */
async function patchNode(s: LifecycleScope, nc: NodeClaim, status: NodeClaim['status'], phase: Phase): Promise<void> {
  const node = nodeOf(s, nc);
  if (!node) return;
  status.nodeName = node.metadata.name;
  const patch = registrationPatch(nc, node) ?? {};
  if (phase === 'Initialized' && node.metadata.labels[LABEL_INITIALIZED] !== 'true') {
    patch.metadata = { ...patch.metadata, labels: { ...patch.metadata?.labels, [LABEL_INITIALIZED]: 'true' } };
  }
  if (patch.metadata || patch.taints) await s.deps.cluster.patchNode(node.metadata.name, patch);
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

/** The status writes of launch, registration and initialization, as the NodeClaim machine invokes them (their outcomes are not logged as effects). */
export function statusActors(s: LifecycleScope) {
  return {
    markLaunched: fromPromise<void, { name: string }>(({ input }) => syncStatus(s, input.name, 'Launched')),
    markRegistered: fromPromise<void, { name: string }>(({ input }) => syncStatus(s, input.name, 'Registered')),
    markInitialized: fromPromise<void, { name: string }>(({ input }) => syncStatus(s, input.name, 'Initialized')),
  };
}
