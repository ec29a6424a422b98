import type { Node, NodeClaim, Pod } from '../ports/cluster.js';
import { toNode, toNodeClaim, toNodeClaimStatus } from '../k8s/resources.js';
import { toPod } from '../k8s/pod.js';
import { PROVIDER_ID_PREFIX } from '../azure/naming.js';
import { LABEL_INSTANCE_TYPE, LABEL_NODEPOOL } from '../apis/well-known.js';
import { ownsNodeClaim } from '../runtime/world.js';
import { checkManifest } from './crd-validation.js';
import { podSpecOf } from './manifest-pod-spec.js';
import { isKnownSku, quantity, ScenarioError, unknownSku } from './scenario.js';

/**
 * A running cluster in `--manifests`: what `kubectl get nodes,pods,nodeclaims,nodepools,
 * azureflexnodeclasses -A -o yaml` prints. Nodes azflex does not own (the AKS system pool,
 * node auto-provisioning's) are existing capacity whose pods count for resources and
 * topology; azflex's own NodeClaims and Nodes are adopted (snapshot-adopt.ts makes their VMs,
 * NICs and OS disks); pods bound to a node stay bound. Fields only the API server and
 * kubelets write (managedFields, resourceVersion, most of status) are read where they say
 * what runs where, and otherwise ignored.
 */
export interface ExistingCluster {
  /** Every Node, azflex's and the others'. */
  nodes: Node[];
  /** azflex's NodeClaims (NodeClassRef an AzureFlexNodeClass). */
  nodeClaims: NodeClaim[];
  /** Pods bound to a node, Running. */
  pods: Pod[];
}

type Raw = Record<string, unknown>;

export class SnapshotReader {
  readonly existing: ExistingCluster = { nodes: [], nodeClaims: [], pods: [] };
  /** Where each object came from, by kind/name, for the cross-checks' messages. */
  private readonly at = new Map<string, string>();

  node(o: Raw, at: string): void {
    const node = toNode(o);
    const allocatable = (o.status as Raw | undefined)?.allocatable;
    if (!allocatable || typeof allocatable !== 'object' || Object.keys(allocatable).length === 0) {
      throw new ScenarioError(`${at}: status.allocatable is required (kubectl get -o yaml prints it): it is the node's room for pods`);
    }
    for (const [k, v] of Object.entries(node.status.allocatable)) quantity(v, k, (m) => fail(at, `status.allocatable.${k}`, m));
    // A hand-written node without conditions is taken as Ready; a snapshot's says what it was.
    if (!node.status.conditions.some((c) => c.type === 'Ready')) node.status.conditions.push({ type: 'Ready', status: 'True', reason: 'KubeletReady', message: '', lastTransitionTime: '' });
    node.metadata.uid = '';
    this.at.set(`Node/${node.metadata.name}`, at);
    this.existing.nodes.push(node);
  }

  /** A NodeClaim: azflex's is adopted; another provisioner's (node auto-provisioning's AKSNodeClass) is left out, its Node being existing capacity. */
  nodeClaim(o: Raw, at: string): 'adopted' | 'ignored' {
    const nc = toNodeClaim(checkManifest(o, 'NodeClaim', at));
    if (!ownsNodeClaim(nc)) return 'ignored';
    nc.status = toNodeClaimStatus(o.status);
    nc.metadata.uid = '';
    if (nc.status.providerID && !sizeOf(nc)) fail(at, `metadata.labels.${LABEL_INSTANCE_TYPE}`, 'is required on a launched NodeClaim (azflex sets it): the size of the VM to adopt');
    const size = sizeOf(nc);
    if (size && !isKnownSku(size)) fail(at, `metadata.labels.${LABEL_INSTANCE_TYPE}`, unknownSku(size));
    if (!nc.metadata.labels[LABEL_NODEPOOL]) fail(at, `metadata.labels.${LABEL_NODEPOOL}`, 'is required (azflex sets it): the NodePool the NodeClaim belongs to');
    this.at.set(`NodeClaim/${nc.metadata.name}`, at);
    this.existing.nodeClaims.push(nc);
    return 'adopted';
  }

  /** A Pod bound to a node (spec.nodeName): it stays where it runs. */
  boundPod(o: Raw, namespace: string, at: string): Pod {
    const spec = podSpecOf(o.spec, 'spec', (path, m) => fail(at, path, m));
    const pod = toPod({ ...o, metadata: { ...(o.metadata as Raw), namespace }, spec: { ...spec, nodeName: (o.spec as Raw).nodeName } });
    pod.metadata.uid = '';
    pod.status = { phase: 'Running', conditions: [{ type: 'PodScheduled', status: 'True', reason: '', message: '', lastTransitionTime: '' }] };
    this.at.set(`Pod/${namespace}/${pod.metadata.name}`, at);
    this.existing.pods.push(pod);
    return pod;
  }

  /**
   * Once every object is read: each bound pod's node is there, each azflex NodeClaim names a
   * NodePool and NodeClass of the manifests and has its Node, and a Node with azflex's
   * providerID has its NodeClaim. Returns undefined when the manifests hold no running cluster.
   */
  finish(nodePools: ReadonlySet<string>, nodeClasses: ReadonlySet<string>): ExistingCluster | undefined {
    const { nodes, nodeClaims, pods } = this.existing;
    if (nodes.length + nodeClaims.length + pods.length === 0) return undefined;
    const nodeNames = new Set(nodes.map((n) => n.metadata.name));
    for (const pod of pods) {
      if (!nodeNames.has(pod.spec.nodeName!)) {
        fail(this.at.get(`Pod/${pod.metadata.namespace}/${pod.metadata.name}`)!, 'spec.nodeName', `no Node "${pod.spec.nodeName}" in the manifests (take nodes and pods in one kubectl get)`);
      }
    }
    const claimed = new Set<string>();
    for (const nc of nodeClaims) {
      const at = this.at.get(`NodeClaim/${nc.metadata.name}`)!;
      const pool = nc.metadata.labels[LABEL_NODEPOOL]!;
      if (!nodePools.has(pool)) fail(at, `metadata.labels.${LABEL_NODEPOOL}`, `no NodePool "${pool}" in the manifests (take nodepools with the nodeclaims)`);
      if (!nodeClasses.has(nc.spec.nodeClassRef.name)) fail(at, 'spec.nodeClassRef.name', `no AzureFlexNodeClass "${nc.spec.nodeClassRef.name}" in the manifests`);
      const nodeName = nc.status.nodeName;
      if (nodeName !== undefined) {
        if (!nodeNames.has(nodeName)) fail(at, 'status.nodeName', `no Node "${nodeName}" in the manifests (take nodes and nodeclaims in one kubectl get)`);
        if (!nc.status.providerID) fail(at, 'status.providerID', 'is required on a NodeClaim whose Node registered');
        claimed.add(nodeName);
      }
    }
    for (const node of nodes) {
      if (node.spec.providerID?.toLowerCase().startsWith(PROVIDER_ID_PREFIX) && !claimed.has(node.metadata.name)) {
        fail(this.at.get(`Node/${node.metadata.name}`)!, 'spec.providerID', `an azflex VM's, but no NodeClaim in the manifests has status.nodeName "${node.metadata.name}" (take nodeclaims with the nodes)`);
      }
    }
    return this.existing;
  }
}

/** The VM size of an azflex NodeClaim: its instance-type label (azflex sets it at launch). */
export function sizeOf(nc: NodeClaim): string | undefined {
  return nc.metadata.labels[LABEL_INSTANCE_TYPE];
}

function fail(at: string, path: string, message: string): never {
  throw new ScenarioError(`${at}: ${path}: ${message}`);
}
