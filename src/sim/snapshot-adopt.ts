import type { AzureFlexNodeClass, Condition, NodeClaim } from '../ports/cluster.js';
import type { ResourceRef } from '../ports/azure.js';
import { armId, clusterNamesFor, ownershipTags, PROVIDER_ID_PREFIX } from '../azure/naming.js';
import { zoneId } from '../catalog/skus.js';
import { DEFAULT_RUNTIME_CONFIG } from '../runtime/deps.js';
import { LABEL_NODEPOOL, LABEL_ZONE } from '../apis/well-known.js';
import type { FakeArm } from './arm/fake-arm.js';
import type { FakeCluster } from './cluster.js';
import { sizeOf, type ExistingCluster } from './snapshot.js';

/**
 * Puts a snapshot's running cluster (snapshot.ts) into the simulated world before the
 * controller starts: every Node and bound pod as it was, and for each launched azflex
 * NodeClaim the VM, NIC and OS disk azflex would have made, named by the naming functions and
 * tagged as the controller tags them, so GC and disruption see them as azflex's and neither
 * duplicate nor leak them. The run starts as the snapshot was taken: every object is created
 * at the start (ages such as expireAfter count from there), and each azflex Node's providerID
 * names its simulated VM.
 */
export function adoptSnapshot(arm: FakeArm, cluster: FakeCluster, existing: ExistingCluster, nodeClasses: readonly AzureFlexNodeClass[], clusterName: string, now: number): void {
  const iso = new Date(now).toISOString();
  const classes = new Map(nodeClasses.map((c) => [c.metadata.name, c]));
  const providerIds = new Map<string, string>();
  for (const nc of existing.nodeClaims) {
    const cls = classes.get(nc.spec.nodeClassRef.name)!;
    const status = { ...nc.status, conditions: nc.status.conditions.map((c) => restamp(c, iso)) };
    if (nc.status.providerID) {
      status.providerID = adoptVm(arm, nc, cls, clusterName, now);
      if (nc.status.nodeName) providerIds.set(nc.status.nodeName, status.providerID);
    }
    cluster.putNodeClaim({ ...nc, metadata: { ...nc.metadata, uid: cluster.newUid(), creationTimestamp: iso }, status });
  }
  for (const node of existing.nodes) {
    const providerID = providerIds.get(node.metadata.name) ?? node.spec.providerID;
    cluster.putNode({
      ...node,
      metadata: { ...node.metadata, uid: cluster.newUid(), creationTimestamp: iso },
      spec: { ...node.spec, ...(providerID !== undefined ? { providerID } : {}) },
      status: { ...node.status, conditions: node.status.conditions.map((c) => restamp(c, iso)) },
    });
  }
  for (const pod of existing.pods) {
    cluster.putPod({
      ...pod,
      metadata: { ...pod.metadata, uid: cluster.newUid(), creationTimestamp: iso },
      status: { ...pod.status, conditions: pod.status.conditions.map((c) => restamp(c, iso)) },
    });
  }
}

/** The NodeClaim's VM with its NIC and OS disk, as its launch made them; returns the VM's providerID. */
function adoptVm(arm: FakeArm, nc: NodeClaim, cls: AzureFlexNodeClass, clusterName: string, now: number): string {
  const name = nc.metadata.name;
  const ref = (n: string): ResourceRef => ({ subscriptionId: cls.spec.subscriptionID, resourceGroup: cls.spec.resourceGroup, name: n });
  // What ownedTags (lifecycle/scope.ts) gives every resource of a NodeClaim.
  const tags = { ...cls.spec.tags, ...ownershipTags(clusterName, nc.metadata.labels[LABEL_NODEPOOL] ?? '', name, cls.metadata.name, now) };
  const zone = nc.metadata.labels[LABEL_ZONE];
  const names = clusterNamesFor(name, clusterName);
  const vmRef = ref(names.vm);
  arm.adoptVm(
    {
      ref: vmRef,
      location: cls.spec.location,
      vmSize: sizeOf(nc)!,
      ...(zone ? { zone: zoneId(zone) } : {}),
      nicId: armId(ref(names.nic), 'Microsoft.Network/networkInterfaces'),
      osDiskName: names.osDisk,
      osDiskSizeGB: cls.spec.osDiskSizeGB,
      image: cls.spec.imageID ? { id: cls.spec.imageID } : { reference: cls.spec.imageReference! },
      adminUsername: DEFAULT_RUNTIME_CONFIG.adminUsername,
      sshPublicKeys: cls.spec.sshPublicKeys,
      customData: '',
      priority: 'Regular',
      tags,
    },
    { ref: ref(names.nic), location: cls.spec.location, subnetId: cls.spec.subnetID, tags },
  );
  return PROVIDER_ID_PREFIX + armId(vmRef, 'Microsoft.Compute/virtualMachines');
}

/** A condition as of the start of the run (the snapshot's times are another clock's). */
function restamp(c: Condition, iso: string): Condition {
  return { ...c, lastTransitionTime: iso };
}
