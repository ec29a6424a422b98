import type { AzureFlexNodeClass, NodePool, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from '../ports/cluster.js';
import { scenarioReservationGroup, scenarioSubnetId, type Scenario } from './scenario.js';
import type { ExistingCluster } from './snapshot.js';
import { LABEL_CAPACITY_TYPE, NODECLASS_GROUP, NODECLASS_KIND } from '../apis/well-known.js';

/**
 * What the simulated cluster starts with, in the controller's own types: NodeClasses,
 * NodePools, workloads (pod templates with replica counts and timing) and
 * PodDisruptionBudgets. Built from a scenario's short format or from ordinary Kubernetes
 * manifests (manifests.ts); plain data, so it crosses to sweep workers.
 */
export interface ClusterSetup {
  nodeClasses: AzureFlexNodeClass[];
  nodePools: NodePool[];
  workloads: WorkloadSpec[];
  podDisruptionBudgets: PodDisruptionBudgetSpec[];
  /** PVCs, PVs and StorageClasses, for volume topology (manifests only). */
  storage?: { claims: PersistentVolumeClaim[]; volumes: PersistentVolume[]; classes: StorageClass[] };
  /** Where each object came from, for messages ("examples/h200.yaml: Deployment h200-trainer"). */
  sources?: Record<string, string>;
  /** A running cluster's Nodes, azflex's NodeClaims and bound pods (a `kubectl get -o yaml` snapshot in --manifests). */
  existing?: ExistingCluster;
}

export interface WorkloadSpec {
  /** The workload's name (a scenario wave's `<prefix>-<index>`); its pods' names follow `podNames`. */
  name: string;
  namespace: string;
  /** metadata.labels/annotations and spec of every pod; name and uid are filled in per pod. */
  template: Pod;
  replicas: number;
  /** Seconds after the start. */
  atSeconds: number;
  /** Seconds a pod lives once Running (Jobs); absent = until the end. */
  lifetimeSeconds?: number;
  /** Submit the replicas again every this many seconds (churn). */
  repeatEverySeconds?: number;
  /**
   * How its pods are named, as Kubernetes names them, so that two workloads' pods never share
   * a name where Kubernetes' would not: a bare Pod its own name; a StatefulSet's
   * `<name>-<ordinal>` (kept across rounds); a Deployment's or Job's the controller's
   * generateName (`<deployment>-<pod-template-hash>-`, `<job>-`) with 5 characters of the
   * API server's alphabet, drawn again if taken; a scenario wave's `<name>-<round>-<i>`.
   */
  podNames: { from: 'wave' } | { from: 'own' } | { from: 'ordinal' } | { from: 'generateName'; generateName: string };
}

export interface PodDisruptionBudgetSpec {
  name: string;
  namespace: string;
  matchLabels: Record<string, string>;
  matchExpressions: Array<{ key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values: string[] }>;
  minAvailable?: number | string;
  maxUnavailable?: number | string;
}

/** The cluster half of a `--scenario` file (its short NodeClass/NodePool/wave format). */
export function clusterOfScenario(scenario: Scenario, createdAt: string): ClusterSetup {
  const meta = (name: string) => ({ name, uid: '', labels: {}, annotations: {}, finalizers: [], creationTimestamp: createdAt });
  const nodeClasses: AzureFlexNodeClass[] = scenario.nodeClasses.map((c) => ({
    metadata: meta(c.name),
    spec: {
      subscriptionID: c.subscriptionID,
      location: c.location,
      resourceGroup: c.resourceGroup,
      subnetID: scenarioSubnetId(c),
      imageReference: c.image,
      securityType: 'Standard',
      osDiskSizeGB: 128,
      sshPublicKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAzflexSimulatedKeyOnly azflex@sim'],
      allocateNodePublicIP: false,
      maxPodsPerNode: 110,
      ...(c.capacityReservationGroups ? { capacityReservationGroupIDs: c.capacityReservationGroups.map((g) => scenarioReservationGroup(scenario, c, g)!) } : {}),
      tags: {},
    },
    status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: createdAt }] },
  }));
  const nodePools: NodePool[] = scenario.nodePools.map((p) => ({
    metadata: meta(p.name),
    spec: {
      template: {
        metadata: { labels: p.labels, annotations: {} },
        spec: {
          nodeClassRef: { group: NODECLASS_GROUP, kind: NODECLASS_KIND, name: p.nodeClass },
          requirements: [
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: p.instanceTypes },
            { key: LABEL_CAPACITY_TYPE, operator: 'In', values: p.capacityTypes },
          ],
          taints: p.taints,
          startupTaints: [],
          expireAfter: p.expireAfter,
        },
      },
      disruption: { consolidationPolicy: p.consolidationPolicy, consolidateAfter: p.consolidateAfter, budgets: p.budgets },
      limits: p.limits,
      ...(p.weight !== undefined ? { weight: p.weight } : {}),
      ...(p.replicas !== undefined ? { replicas: p.replicas } : {}),
    },
    status: { conditions: [] },
  }));
  const workloads: WorkloadSpec[] = scenario.workload.map((wave, w) => ({
    name: `${wave.prefix}-${w}`,
    namespace: 'default',
    template: {
      metadata: { name: '', namespace: 'default', uid: '', labels: { app: wave.prefix }, annotations: {}, finalizers: [], creationTimestamp: '' },
      spec: {
        nodeSelector: wave.nodeSelector,
        tolerations: wave.tolerations,
        containers: [{ name: 'main', resources: { requests: wave.requests } }],
        initContainers: [],
      },
      status: { phase: 'Pending', conditions: [] },
      ownerKind: 'ReplicaSet',
    },
    replicas: wave.count,
    podNames: { from: 'wave' },
    atSeconds: wave.at,
    ...(wave.lifetimeSeconds !== undefined ? { lifetimeSeconds: wave.lifetimeSeconds } : {}),
    ...(wave.repeatEverySeconds !== undefined ? { repeatEverySeconds: wave.repeatEverySeconds } : {}),
  }));
  return { nodeClasses, nodePools, workloads, podDisruptionBudgets: [] };
}
