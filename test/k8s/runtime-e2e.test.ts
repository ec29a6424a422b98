import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { STATIC_INSTANCE_TYPES, StaticInstanceTypeCatalog } from '../../src/catalog/skus.js';
import { nodeClassHash } from '../../src/apis/nodeclass-hash.js';
import { NodeClassStatusController } from '../../src/controllers/nodeclass/status.js';
import { NodeTerminationController } from '../../src/controllers/node/termination.js';
import { Provisioner } from '../../src/provisioning/provisioner.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { DEFAULT_RUNTIME_CONFIG } from '../../src/runtime/deps.js';
import { MemoryEventLog } from '../../src/runtime/event-log.js';
import { DEFAULT_RESOURCE_GROUP, DEFAULT_SUBNET_ID, DEFAULT_SUBSCRIPTION_ID, ZERO_LATENCY_MS, defaultFakeArmConfig } from '../../src/sim/arm/defaults.js';
import { FakeArm } from '../../src/sim/arm/fake-arm.js';
import { renderSimUserData } from '../../src/sim/userdata.js';
import { FLEX_CONFIG_PATH, decodeCustomData } from '../../src/azure/userdata/index.js';
import { SeededRandom, VirtualClock } from '../../src/sim/virtual-clock.js';
import { parse, stringify } from 'yaml';
import { REQUIRED_CLUSTER_RULES, allows, requestAttributes } from '../../src/k8s/rbac.js';
import { renderChart } from './chart-render.js';
import { adminRequest, eventually, kubectl, mintServiceAccountToken, serviceAccountKubeConfig } from './harness.js';
import { createH200Pool, createUnschedulableGpuPod, ensureNamespace, forceDelete, makeAdapter, type Adapter } from './fixtures.js';

const info = inject('k8s');
const ns = 'runtime-e2e';
const NC = '/apis/karpenter.sh/v1/nodeclaims';
const AFNC = '/apis/flex.aks.azure.com/v1alpha1/azureflexnodeclasses';

interface RawNodeClaim {
  metadata: { name: string; finalizers?: string[]; labels?: Record<string, string>; annotations?: Record<string, string> };
  status?: { providerID?: string; conditions?: Array<{ type: string; status: string; reason: string }> };
}

/**
 * The lifecycle runtime and provisioner, unchanged, with KubeCluster as their ClusterPort
 * against the real API server — authenticated as the chart's ServiceAccount under the
 * chart's rendered RBAC — and the simulator's FakeArm as ARM. Runtime and ARM share a
 * virtual clock (the NIC reservation is 180 s) that the test advances in steps, with real
 * pauses so the HTTP round trips complete in between.
 */
describe('runtime + provisioner through KubeCluster on a real API server', () => {
  let a: Adapter;
  let runtime: Runtime;
  let arm: FakeArm;
  const vclock = new VirtualClock(Date.now());
  let stopped = false;
  /** The AKS node resource group the controller is configured with (kubernetes.azure.com/cluster). */
  const nodeResourceGroup = 'MC_e2e_e2e-aks_westeurope';
  const customData: string[] = [];

  const step = async (virtualMs: number): Promise<void> => {
    await vclock.runUntil(vclock.now() + virtualMs);
    await new Promise((r) => setTimeout(r, 15));
  };
  const until = async <T>(what: string, probe: () => Promise<T | undefined | false>, maxVirtualMs = 15 * 60_000): Promise<T> => {
    const end = vclock.now() + maxVirtualMs;
    for (;;) {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
      if (vclock.now() > end) throw new Error(`timed out (virtual) waiting for ${what}`);
      await step(1000);
    }
  };

  beforeAll(async () => {
    await ensureNamespace(info, ns);
    const rbac = (await renderChart(info, 'azflex-e2e', ns)).filter((o) =>
      ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(o.kind),
    );
    const applied = await kubectl(info, ['apply', '-f', '-'], rbac.map((o) => `---\n${stringify(o)}`).join(''));
    expect(applied.code, applied.stderr).toBe(0);
    a = makeAdapter(serviceAccountKubeConfig(info, await mintServiceAccountToken(info, ns, 'azflex-e2e')), 'runtime-e2e');
    a.cluster.start();
    await a.cluster.waitForSync();
    const random = new SeededRandom(7);
    arm = new FakeArm({
      clock: vclock,
      random: random.fork('arm'),
      config: { ...defaultFakeArmConfig(), latencyMs: ZERO_LATENCY_MS },
      instanceTypes: STATIC_INSTANCE_TYPES,
    });
    const catalog = new StaticInstanceTypeCatalog();
    const provisioner = new Provisioner({
      cluster: a.cluster,
      catalog,
      clock: vclock,
      random: random.fork('provisioner'),
      isOfferingUnavailable: () => false,
      clusterName: 'e2e',
      nodeResourceGroup,
      log: pino({ level: 'silent' }),
      nodeClassHash,
    });
    const status = new NodeClassStatusController({ cluster: a.cluster, clock: vclock });
    const nodeTermination = new NodeTerminationController({ cluster: a.cluster });
    runtime = new Runtime({
      arm,
      cluster: a.cluster,
      clock: vclock,
      random: random.fork('runtime'),
      catalog,
      userData: async (req) => {
        const rendered = await renderSimUserData(req);
        customData.push(rendered);
        return rendered;
      },
      eventLog: new MemoryEventLog(),
      controllers: [
        { name: 'nodeclass.status', intervalMs: 5000, reconcile: () => status.reconcile() },
        { name: 'node.termination', intervalMs: 5000, reconcile: () => nodeTermination.reconcile() },
        { name: 'provisioner', intervalMs: 5000, reconcile: async () => void (stopped || (await provisioner.reconcile())) },
      ],
      config: { ...DEFAULT_RUNTIME_CONFIG, clusterName: 'e2e', nodeResourceGroup, resyncMs: 5000 },
    });
    await createH200Pool(info, 'e2e-h200', { subscriptionID: DEFAULT_SUBSCRIPTION_ID, resourceGroup: DEFAULT_RESOURCE_GROUP, subnetID: DEFAULT_SUBNET_ID, gpu: 'h200' });
    await eventually('pool and class cached', async () => (await a.cluster.listNodePools()).length > 0 && (await a.cluster.listNodeClasses()).some((c) => c.metadata.name === 'e2e-h200'));
    await runtime.start();
  });

  afterAll(async () => {
    runtime?.stop();
    await a?.cluster.stop();
    await forceDelete(info, '/apis/karpenter.sh/v1/nodepools/e2e-h200');
    await forceDelete(info, `${AFNC}/e2e-h200`);
  });

  it('launches a VM for a pending GPU pod, registers, and after kubectl delete node leaves no NIC, VM, disk or Node', async () => {
    await createUnschedulableGpuPod(info, ns, 'trainer', 'h200');

    const claimName = await until('a NodeClaim for the pod', async () => (await a.cluster.listNodeClaims()).find((c) => c.spec.nodeClassRef.name === 'e2e-h200')?.metadata.name);
    const launched = await until('Launched=True with a providerID', async () => {
      const c = (await adminRequest(info, 'GET', `${NC}/${claimName}`)) as RawNodeClaim;
      return c.status?.conditions?.some((x) => x.type === 'Launched' && x.status === 'True') && c.status.providerID ? c : undefined;
    });
    expect(launched.status?.providerID).toMatch(/^azure-flex:\/\/\/subscriptions\//);
    expect(launched.metadata.finalizers).toContain('karpenter.sh/termination');
    expect(launched.metadata.annotations?.['flex.aks.azure.com/nodeclass-hash']).toMatch(/^[0-9a-f]{64}$/);
    expect(arm.currentVms().length).toBe(1);
    // Upstream's lifecycle conditions from the start, Ready their root: Unknown until the node joins.
    expect(launched.status?.conditions?.map((x) => x.type).sort()).toEqual(['Initialized', 'Launched', 'Ready', 'Registered']);
    expect(launched.status?.conditions?.find((x) => x.type === 'Ready')).toMatchObject({ status: 'Unknown', reason: 'ReconcilingDependents' });
    // The launched type's labels, as upstream's launch writes them (the Azure provider's sku-*).
    expect(launched.metadata.labels).toMatchObject({
      'node.kubernetes.io/instance-type': 'Standard_ND96isr_H200_v5', 'karpenter.azure.com/sku-gpu-name': 'H200', 'karpenter.azure.com/sku-gpu-count': '8', 'kubernetes.io/arch': 'amd64',
    });
    // And AKS's: the ones AKS DaemonSets and the Azure provider's NodePools select on.
    const aks = {
      'kubernetes.azure.com/cluster': nodeResourceGroup, 'kubernetes.azure.com/mode': 'user', 'kubernetes.azure.com/scalesetpriority': 'regular',
      'kubernetes.azure.com/priority': 'regular', 'kubernetes.azure.com/sku-cpu': '96', 'karpenter.azure.com/placement-scope': 'zonal',
    };
    expect(launched.metadata.labels).toMatchObject(aks);
    // The kubelet registers with them too (and with the role only the kubelet writes), as the Azure provider's nodes do.
    const cloudConfig = parse(decodeCustomData(customData.at(-1)!)) as { write_files: Array<{ path: string; content: string }> };
    const actions = JSON.parse(cloudConfig.write_files.find((f) => f.path === FLEX_CONFIG_PATH)!.content) as Array<{ spec: { kubelet?: { nodeLabels: Record<string, string> } } }>;
    const join = actions.find((x) => x.spec.kubelet)!.spec.kubelet!.nodeLabels;
    expect(join).toMatchObject({ ...aks, 'kubernetes.azure.com/role': 'agent' });

    // The flex node agent's kubeadm join, as the simulated kubelet would do it.
    await adminRequest(info, 'POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'e2e-node', labels: { gpu: 'h200', 'karpenter.sh/nodepool': 'e2e-h200' } },
      spec: { providerID: launched.status?.providerID },
    });
    await adminRequest(info, 'PATCH', '/api/v1/nodes/e2e-node/status', {
      status: {
        capacity: { cpu: '96', memory: '1800Gi', pods: '110', 'nvidia.com/gpu': '8' },
        allocatable: { cpu: '95', memory: '1790Gi', pods: '110', 'nvidia.com/gpu': '8' },
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ok', lastHeartbeatTime: new Date().toISOString(), lastTransitionTime: new Date().toISOString() }],
      },
    });
    await until('Registered=True', async () => {
      const c = (await adminRequest(info, 'GET', `${NC}/${claimName}`)) as RawNodeClaim;
      return c.status?.conditions?.some((x) => x.type === 'Registered' && x.status === 'True');
    });
    await until('Ready=True', async () => {
      const c = (await adminRequest(info, 'GET', `${NC}/${claimName}`)) as RawNodeClaim;
      return c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True');
    });
    // `kubectl get nodeclaims` fills upstream's columns: TYPE, CAPACITY, NODE, READY; -o wide NODEPOOL and NODECLASS.
    const table = await kubectl(info, ['get', 'nodeclaim', claimName, '-o', 'wide']);
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+TYPE\s+CAPACITY\s+ZONE\s+NODE\s+READY\s+AGE\s+IMAGEID\s+ID\s+NODEPOOL\s+NODECLASS/);
    expect(table.stdout.split('\n')[1]).toMatch(new RegExp(`^${claimName}\\s+Standard_ND96isr_H200_v5\\s+on-demand\\s+.*e2e-node\\s+True\\s+.*e2e-h200\\s+e2e-h200`));
    const node = (await adminRequest(info, 'GET', '/api/v1/nodes/e2e-node')) as { metadata: { labels: Record<string, string>; finalizers?: string[] } };
    expect(node.metadata.labels).toMatchObject({ 'karpenter.azure.com/sku-gpu-name': 'H200', 'karpenter.sh/registered': 'true', 'node.kubernetes.io/instance-type': 'Standard_ND96isr_H200_v5' });
    // Registration copies the NodeClaim's AKS labels to the Node (this test's kubelet registered without them).
    expect(node.metadata.labels).toMatchObject(aks);
    expect(node.metadata.finalizers).toContain('karpenter.sh/termination');

    // A user's `kubectl delete node`: the Node stays Terminating while its NodeClaim is
    // terminated (drain, VM, NIC, disk), then goes.
    stopped = true;
    await adminRequest(info, 'DELETE', `/api/v1/namespaces/${ns}/pods/trainer?gracePeriodSeconds=0`);
    const deleted = await kubectl(info, ['delete', 'node', 'e2e-node', '--wait=false']);
    expect(deleted.code, deleted.stderr).toBe(0);
    const gone = (path: string) => async (): Promise<boolean> => {
      try {
        await adminRequest(info, 'GET', path);
        return false;
      } catch (e) {
        return (e as { code?: number }).code === 404;
      }
    };
    await until('NodeClaim gone (finalizer released after cleanup)', gone(`${NC}/${claimName}`));
    await until('Node gone (its finalizer released after the VM)', gone('/api/v1/nodes/e2e-node'));
    const leaks = arm.leaks(new Set());
    expect({ nics: leaks.nics.length, vms: leaks.vms.length, disks: leaks.disks.length }).toEqual({ nics: 0, vms: 0, disks: 0 });
    expect(a.errors.map(String)).toEqual([]);
    // Every request the runtime made through the adapter was allowed, and by the chart's rules.
    expect(a.records.filter((r) => r.status === 403)).toEqual([]);
    for (const r of a.records) expect(allows(REQUIRED_CLUSTER_RULES, requestAttributes(r)), `${r.method} ${r.path}`).toBe(true);
    expect(a.records.some((r) => r.method === 'POST' && r.path === NC)).toBe(true);
  });
});
