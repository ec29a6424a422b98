import { describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES, StaticInstanceTypeCatalog } from '../../../src/catalog/skus.js';
import { launchLabels } from '../../../src/lifecycle/nodeclaim/labels.js';
import { nodePoolSupport } from '../../../src/provisioning/nodepool-support.js';
import type { NodeSelectorRequirement } from '../../../src/ports/cluster.js';
import { Provisioner } from '../../../src/provisioning/provisioner.js';
import { clusterLabelValue, instanceTypeRequirements } from '../../../src/provisioning/requirements.js';
import { FakeCluster } from '../../../src/sim/cluster.js';
import { simInstanceTypes } from '../../../src/sim/arm/sku-catalog.js';
import { SeededRandom, VirtualClock } from '../../../src/sim/virtual-clock.js';
import { T0, makeNodeClaim, makeNodeClass, makeNodePool, makePod, silentLog } from '../../provisioning/fixtures.js';

/**
 * The labels AKS's own components and the Azure Karpenter provider's users look for on a node:
 * kubernetes.azure.com/cluster (AKS DaemonSets need it to exist), mode, scalesetpriority,
 * priority, sku-cpu/sku-memory in AKS's domain, and karpenter.azure.com/placement-scope, with
 * the provider's values (pkg/apis/v1beta1/labels.go, pkg/providers/instancetype computeRequirements).
 */
const d8 = STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_D8s_v5')!;
const h200 = STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_ND96isr_H200_v5')!;
const NODE_RG = 'MC_ml_gpu-aks_westeurope';

describe('AKS labels of an instance type', () => {
  it('zonal types are placement-scope zonal, others regional; AKS sku-cpu/sku-memory equal the provider\'s; on-demand is priority regular', () => {
    const labels = instanceTypeRequirements(d8, 'eastus2').labels();
    expect(labels).toMatchObject({
      'karpenter.azure.com/placement-scope': 'zonal',
      'kubernetes.azure.com/sku-cpu': '8',
      'kubernetes.azure.com/sku-memory': String(d8.memoryMiB),
      'karpenter.azure.com/sku-cpu': '8',
    });
    // D8s_v5 is offered on-demand and spot: its priority is a single value only for one capacity type.
    expect(labels).not.toHaveProperty('kubernetes.azure.com/priority');
    expect(instanceTypeRequirements(d8, 'eastus2', undefined, undefined, ['on-demand']).labels()).toMatchObject({
      'karpenter.sh/capacity-type': 'on-demand', 'kubernetes.azure.com/scalesetpriority': 'regular', 'kubernetes.azure.com/priority': 'regular',
    });
    // Either mode may be asked for: not a single value until the NodeClaim's requirements pick one.
    expect(labels).not.toHaveProperty('kubernetes.azure.com/mode');
    expect(instanceTypeRequirements(d8, 'eastus2').get('kubernetes.azure.com/mode')!.has('system')).toBe(true);
    const regional = { ...d8, zones: {} };
    expect(instanceTypeRequirements(regional, 'eastus2').labels()['karpenter.azure.com/placement-scope']).toBe('regional');
  });

  it('carry kubernetes.azure.com/cluster only when the node resource group is configured', () => {
    expect(instanceTypeRequirements(d8, 'eastus2').labels()).not.toHaveProperty('kubernetes.azure.com/cluster');
    // DoesNotExist, not undefined: a pod or DaemonSet that needs it is not counted onto the node.
    expect(instanceTypeRequirements(d8, 'eastus2').get('kubernetes.azure.com/cluster')!.has(NODE_RG)).toBe(false);
    expect(instanceTypeRequirements(d8, 'eastus2', undefined, NODE_RG).labels()['kubernetes.azure.com/cluster']).toBe(NODE_RG);
  });

  it('the cluster label value is the node resource group as AKS writes it: parentheses to "-", 63 characters, a valid last character', () => {
    expect(clusterLabelValue(undefined)).toBeUndefined();
    expect(clusterLabelValue('')).toBeUndefined();
    expect(clusterLabelValue('MC_rg_aks_westeurope')).toBe('MC_rg_aks_westeurope');
    expect(clusterLabelValue('MC_rg(prod)_aks')).toBe('MC_rg-prod-_aks');
    expect(clusterLabelValue('MC_rg_aks(x)')).toBe('MC_rg_aks-x-z');
    expect(clusterLabelValue('rg.')).toBe('rg.z');
    const long = `MC_${'a'.repeat(58)}_bbbb`;
    expect(clusterLabelValue(long)).toBe(long.slice(0, 63));
    expect(clusterLabelValue(`${'a'.repeat(62)}_tail`)).toBe(`${'a'.repeat(62)}z`);
    expect(clusterLabelValue(`${'a'.repeat(62)}_tail`)!.length).toBe(63);
  });
});

describe('AKS labels at launch', () => {
  it('mode is user unless the NodeClaim asks for system; cluster comes from the configured node resource group', () => {
    // The launch labels the NodeClaim with the capacity type it chose before these are added.
    const claim = makeNodeClaim('gpu-abcde', { nodePool: 'gpu', labels: { 'karpenter.sh/capacity-type': 'on-demand' } });
    expect(launchLabels(claim, h200, 'eastus2')).toMatchObject({ 'kubernetes.azure.com/mode': 'user', 'karpenter.azure.com/placement-scope': 'zonal' });
    expect(launchLabels(claim, h200, 'eastus2')).not.toHaveProperty('kubernetes.azure.com/cluster');
    expect(launchLabels(claim, h200, 'eastus2', NODE_RG)!['kubernetes.azure.com/cluster']).toBe(NODE_RG);
    const system = { ...claim, spec: { ...claim.spec, requirements: [...claim.spec.requirements, { key: 'kubernetes.azure.com/mode', operator: 'In' as const, values: ['system'] }] } };
    expect(launchLabels(system, h200, 'eastus2')!['kubernetes.azure.com/mode']).toBe('system');
    const notUser = { ...claim, spec: { ...claim.spec, requirements: [{ key: 'kubernetes.azure.com/mode', operator: 'NotIn' as const, values: ['user'] }] } };
    expect(launchLabels(notUser, h200, 'eastus2')!['kubernetes.azure.com/mode']).toBe('system');
    // The priorities follow the capacity type the NodeClaim launched as.
    expect(launchLabels(claim, h200, 'eastus2')).toMatchObject({ 'kubernetes.azure.com/scalesetpriority': 'regular', 'kubernetes.azure.com/priority': 'regular' });
    const spot = makeNodeClaim('gpu-spot1', { nodePool: 'gpu', labels: { 'karpenter.sh/capacity-type': 'spot' } });
    expect(launchLabels(spot, h200, 'eastus2')).toMatchObject({ 'kubernetes.azure.com/scalesetpriority': 'spot', 'kubernetes.azure.com/priority': 'spot' });
    // A label the NodeClaim already has (its NodePool's template) is its own.
    const labelled = makeNodeClaim('gpu-fghij', { nodePool: 'gpu', labels: { 'kubernetes.azure.com/mode': 'system' } });
    expect(launchLabels(labelled, h200, 'eastus2')).not.toHaveProperty('kubernetes.azure.com/mode');
  });
});

describe('scheduling on the AKS keys', () => {
  function setup(nodeResourceGroup?: string) {
    const clock = new VirtualClock(T0);
    const cluster = new FakeCluster(clock);
    cluster.putNodeClass(makeNodeClass());
    cluster.putNodePool(makeNodePool('cpu', { requirements: [{ key: 'karpenter.azure.com/sku-gpu-count', operator: 'In', values: ['0'] }] }));
    const provisioner = new Provisioner({
      cluster, catalog: new StaticInstanceTypeCatalog(), clock, random: new SeededRandom(5),
      isOfferingUnavailable: () => false, clusterName: 'test', log: silentLog, ...(nodeResourceGroup ? { nodeResourceGroup } : {}),
    });
    return { cluster, provisioner };
  }
  const requirement = (reqs: readonly NodeSelectorRequirement[], key: string) => reqs.find((r) => r.key === key);

  it('a pod selecting the cluster, a zonal placement and system mode gets a NodeClaim that launches with them', async () => {
    const { cluster, provisioner } = setup(NODE_RG);
    cluster.putPod(makePod('agent', {
      nodeSelector: { 'kubernetes.azure.com/cluster': NODE_RG, 'karpenter.azure.com/placement-scope': 'zonal', 'kubernetes.azure.com/mode': 'system', 'kubernetes.azure.com/scalesetpriority': 'regular' },
    }));
    await provisioner.reconcile();
    const claims = [...cluster.nodeClaims.values()];
    expect(claims).toHaveLength(1);
    const claim = claims[0]!;
    expect(requirement(claim.spec.requirements, 'kubernetes.azure.com/mode')).toMatchObject({ operator: 'In', values: ['system'] });
    const type = STATIC_INSTANCE_TYPES.find((t) => t.name === requirement(claim.spec.requirements, 'node.kubernetes.io/instance-type')!.values![0])!;
    // The pod's single values are the NodeClaim's labels already (as upstream's NodeClaim template); the launch adds the rest.
    expect({ ...claim.metadata.labels, ...launchLabels(claim, type, 'eastus2', NODE_RG) }).toMatchObject({
      'kubernetes.azure.com/cluster': NODE_RG, 'kubernetes.azure.com/mode': 'system', 'karpenter.azure.com/placement-scope': 'zonal',
      'kubernetes.azure.com/priority': 'regular', 'kubernetes.azure.com/sku-cpu': String(type.vcpu),
    });
  });

  it('a pod selecting another cluster, or any cluster when none is configured, gets no NodeClaim', async () => {
    const other = setup(NODE_RG);
    other.cluster.putPod(makePod('elsewhere', { nodeSelector: { 'kubernetes.azure.com/cluster': 'MC_other_aks_eastus' } }));
    await other.provisioner.reconcile();
    expect(other.cluster.nodeClaims.size).toBe(0);
    const unconfigured = setup();
    unconfigured.cluster.putPod(makePod('needs-cluster', { affinityTerms: [[{ key: 'kubernetes.azure.com/cluster', operator: 'Exists' }]] }));
    await unconfigured.provisioner.reconcile();
    expect(unconfigured.cluster.nodeClaims.size).toBe(0);
    // ...while with one configured the same pod gets its node.
    const configured = setup(NODE_RG);
    configured.cluster.putPod(makePod('needs-cluster', { affinityTerms: [[{ key: 'kubernetes.azure.com/cluster', operator: 'Exists' }]] }));
    await configured.provisioner.reconcile();
    expect(configured.cluster.nodeClaims.size).toBe(1);
  });

  it('a DaemonSet that needs the cluster label (as Azure CNI\'s azure-cni and azure-cns do) counts as overhead on every node', async () => {
    const cheapest = async (daemonSet: boolean): Promise<number> => {
      const clock = new VirtualClock(T0);
      const cluster = new FakeCluster(clock);
      cluster.putNodeClass(makeNodeClass());
      cluster.putNodePool(makeNodePool('cpu', { requirements: [{ key: 'karpenter.azure.com/sku-family', operator: 'In', values: ['D'] }] }));
      if (daemonSet) cluster.putPod(makePod('cni', { ownerKind: 'DaemonSet', unschedulable: false, requests: { cpu: '3', memory: '1Gi' }, affinityTerms: [[{ key: 'kubernetes.azure.com/cluster', operator: 'Exists' }]] }));
      cluster.putPod(makePod('web', { requests: { cpu: '2', memory: '1Gi' } }));
      const provisioner = new Provisioner({
        cluster, catalog: new StaticInstanceTypeCatalog(simInstanceTypes()), clock, random: new SeededRandom(5),
        isOfferingUnavailable: () => false, clusterName: 'test', log: silentLog, nodeResourceGroup: NODE_RG,
      });
      await provisioner.reconcile();
      const [claim] = [...cluster.nodeClaims.values()];
      const names = requirement(claim!.spec.requirements, 'node.kubernetes.io/instance-type')!.values!;
      return Math.min(...names.map((n) => simInstanceTypes().find((t) => t.name === n)!.vcpu));
    };
    // 2 CPUs for the pod fit a 4-vCPU size; with the DaemonSet's 3 on every node they need 8. (The key is
    // well-known, so, as upstream's per-NodePool overhead, the DaemonSet counts even with no node resource
    // group configured: nodes are then a little larger than needed, never too small.)
    expect(await cheapest(false)).toBe(4);
    expect(await cheapest(true)).toBe(8);
  });

  it('a NodePool requiring regional placement gets none of the zonal types (every static type is zonal in eastus2)', async () => {
    const { cluster, provisioner } = setup(NODE_RG);
    cluster.putNodePool(makeNodePool('cpu', { requirements: [{ key: 'karpenter.azure.com/placement-scope', operator: 'In', values: ['regional'] }] }));
    cluster.putPod(makePod('web'));
    await provisioner.reconcile();
    expect(cluster.nodeClaims.size).toBe(0);
  });
});

describe('NodePool label keys the Azure provider reserves', () => {
  const issues = (labels: Record<string, string>, requirements: NodeSelectorRequirement[] = []) =>
    nodePoolSupport(makeNodePool('p', { labels, requirements })).blocking.map((i) => `${i.reason}: ${i.message}`);

  it('refuses karpenter.azure.com keys that are not well-known, and the AKS keys AKS manages', () => {
    expect(issues({ 'karpenter.azure.com/team': 'ml' })).toEqual([expect.stringMatching(/^RestrictedLabel: label karpenter\.azure\.com\/team: not allowed/)]);
    expect(issues({ 'sub.karpenter.azure.com/x': 'y' })).toHaveLength(1);
    expect(issues({}, [{ key: 'kubernetes.azure.com/agentpool', operator: 'Exists' }])).toEqual([expect.stringMatching(/^RestrictedLabel: requirement kubernetes\.azure\.com\/agentpool/)]);
    expect(issues({ 'karpenter.azure.com/sku-hyperv-generation': '2' })).toHaveLength(1);
    expect(issues({ storagetier: 'Premium_LRS' })).toHaveLength(1);
  });

  it('accepts the well-known keys and the kubernetes.azure.com labels users set (ebpf-dataplane)', () => {
    expect(issues({ 'kubernetes.azure.com/ebpf-dataplane': 'cilium', 'kubernetes.azure.com/mode': 'system' }, [
      { key: 'karpenter.azure.com/placement-scope', operator: 'In', values: ['zonal'] },
      { key: 'karpenter.azure.com/sku-family', operator: 'In', values: ['N'] },
      { key: 'kubernetes.azure.com/scalesetpriority', operator: 'In', values: ['regular'] },
      { key: 'kubernetes.azure.com/cluster', operator: 'Exists' },
    ])).toEqual([]);
  });

  it('a NodePool using one gets ValidationSucceeded=False and an Event, and no nodes; the others are unaffected', async () => {
    const clock = new VirtualClock(T0);
    const cluster = new FakeCluster(clock);
    cluster.putNodeClass(makeNodeClass());
    cluster.putNodePool(makeNodePool('bad', { labels: { pool: 'bad', 'karpenter.azure.com/team': 'ml' } }));
    cluster.putNodePool(makeNodePool('good', { labels: { pool: 'good', 'kubernetes.azure.com/ebpf-dataplane': 'cilium' } }));
    cluster.putPod(makePod('a', { nodeSelector: { pool: 'bad' } }));
    cluster.putPod(makePod('b', { nodeSelector: { pool: 'good' } }));
    const provisioner = new Provisioner({
      cluster, catalog: new StaticInstanceTypeCatalog(), clock, random: new SeededRandom(5), isOfferingUnavailable: () => false, clusterName: 'test', log: silentLog,
    });
    await provisioner.reconcile();
    expect([...cluster.nodeClaims.values()].map((c) => c.metadata.labels['karpenter.sh/nodepool'])).toEqual(['good']);
    expect(cluster.nodePools.get('bad')!.status.conditions.find((c) => c.type === 'ValidationSucceeded')).toMatchObject({ status: 'False', reason: 'RestrictedLabel' });
    expect(cluster.events.filter((e) => e.involvedObject.kind === 'NodePool').map((e) => `${e.involvedObject.name}/${e.reason}`)).toEqual(['bad/RestrictedLabel']);
  });

  it('refuses an In requirement that names none of a well-known key\'s values', () => {
    expect(issues({}, [{ key: 'kubernetes.azure.com/mode', operator: 'In', values: ['System'] }])).toEqual([
      'InvalidRequirement: requirement kubernetes.azure.com/mode In [System] names none of its values: system, user',
    ]);
    expect(issues({}, [{ key: 'karpenter.azure.com/placement-scope', operator: 'In', values: ['zonal', 'nearby'] }])).toEqual([]);
  });
});
