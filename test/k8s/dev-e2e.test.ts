import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDev, type DevEnvironment } from '../../src/dev/dev.js';
import { defaultFakeArmConfig } from '../../src/sim/arm/defaults.js';
import { FAST_ARM_LATENCY } from './fixtures.js';
import { adminRequest, eventually, kubectl, type ControlPlaneInfo } from './harness.js';

const shared = inject('k8s');

const H200_FAMILY = 'standardNDSH200v5Family';

interface PodList {
  items: Array<{ metadata: { name: string }; spec: { nodeName?: string }; status?: { phase?: string } }>;
}
interface NodeObj {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { providerID?: string };
}

/**
 * `azflex dev` end to end (issue 4, item 8): its own etcd + kube-apiserver + kube-scheduler,
 * the fake ARM over HTTPS, the simulated kubelet and the real controller process. The user's
 * path — kubectl apply the examples, watch a GPU pod get a node — then a quota storm with a
 * controller restart in the middle, then scale to zero and nothing is left in ARM.
 */
describe('azflex dev end to end', () => {
  let dev: DevEnvironment;
  let cp: ControlPlaneInfo;
  let stateDir: string;

  beforeAll(async () => {
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'azflex-dev-e2e-'));
    dev = await startDev({
      stateDir,
      armConfig: { ...defaultFakeArmConfig(), latencyMs: FAST_ARM_LATENCY },
      seed: 4,
      binaries: shared.binaries,
      logLevel: process.env.AZFLEX_DEV_LOG === 'debug' ? 'debug' : 'warn',
      bootDelayMs: 500,
      runtimeConfig: { orphanGraceMs: 10_000 },
    });
    cp = dev.controlPlane;
  });

  afterAll(async () => {
    await dev?.stop();
    if (stateDir && !process.env.AZFLEX_KEEP_ENVTEST) await fs.rm(stateDir, { recursive: true, force: true });
  });

  const pods = async (): Promise<PodList['items']> => ((await adminRequest(cp, 'GET', '/api/v1/namespaces/default/pods?labelSelector=app%3Dh200-trainer')) as PodList).items;
  const node = async (name: string): Promise<NodeObj> => (await adminRequest(cp, 'GET', `/api/v1/nodes/${name}`)) as NodeObj;
  const runningOnFlexNodes = async (n: number): Promise<NodeObj[] | undefined> => {
    const running = (await pods()).filter((p) => p.status?.phase === 'Running' && p.spec.nodeName);
    if (running.length < n) return undefined;
    return Promise.all(running.map((p) => node(p.spec.nodeName!)));
  };
  const diag = async (): Promise<string> => {
    const got = await kubectl(cp, ['get', 'nodeclaims,nodes,pods', '-A', '-o', 'wide']);
    const claims = await kubectl(cp, ['get', 'nodeclaims', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.conditions}{"\n"}{end}']);
    const s = dev.arm.snapshot();
    return `${got.stdout}\n${claims.stdout}\nARM: ${s.vms.length} VMs, ${s.nics.length} NICs, ${s.disks.length} disks, reservations ${JSON.stringify(s.reservations)}`;
  };
  const scrape = async (): Promise<string> => {
    const port = dev.controller()?.metricsPort;
    if (!port) throw new Error('no controller running');
    return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  };
  /** The sum of the series with exactly these label names whose values equal (or match) these (Prometheus text format), 0 if absent. */
  const sample = (text: string, name: string, labels: Record<string, string | RegExp>): number => {
    const want = Object.keys(labels).sort().join(',');
    let sum = 0;
    for (const line of text.split('\n')) {
      const m = /^([a-zA-Z_:][\w:]*)\{(.*)\} (\S+)$/.exec(line);
      if (!m || m[1] !== name) continue;
      const got = new Map([...m[2]!.matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
      if ([...got.keys()].sort().join(',') !== want) continue;
      if (Object.entries(labels).every(([k, v]) => (typeof v === 'string' ? got.get(k) === v : v.test(got.get(k)!)))) sum += Number(m[3]);
    }
    return sum;
  };
  const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, ms: number): Promise<T> =>
    eventually(what, fn, ms, 250).catch(async (e: unknown) => {
      throw new Error(`${String(e)}\n${await diag()}`);
    });

  it('kubectl apply → GPU pod Running on a flex node; quota storm across a controller restart reaps the NIC; scale to zero leaves nothing', async () => {
    expect(await fs.readFile(dev.kubeconfigPath, 'utf8')).toContain(cp.server);
    expect(dev.armEndpoint).toMatch(/^https:\/\/127\.0\.0\.1:\d+/);

    // What the user does: the eastus2 H200 NodeClass + NodePool + the H200 deployment.
    const files = ['azureflexnodeclass-h200-eastus2.yaml', 'nodepool-h200-eastus2.yaml', 'h200-deployment.yaml'].map((f) => path.join(dev.examplesDir, f));
    const applied = await kubectl(cp, ['apply', ...files.flatMap((f) => ['-f', f])]);
    expect(applied.code, applied.stderr).toBe(0);
    // Empty nodes go after 5 s instead of the example's 30 min, so scale-to-zero fits the test.
    const patched = await kubectl(cp, ['patch', 'nodepool', 'h200-eastus2', '--type=merge', '-p', '{"spec":{"disruption":{"consolidateAfter":"5s"}}}']);
    expect(patched.code, patched.stderr).toBe(0);

    // 1. The pending GPU pod gets an azflex node in eastus2, and kube-scheduler puts it there.
    const [first] = await waitFor('a GPU pod Running on an azure-flex node', () => runningOnFlexNodes(1), 60_000);
    expect(first!.spec.providerID).toMatch(/^azure-flex:\/\/\/subscriptions\/.+\/virtualMachines\//i);
    expect(first!.metadata.labels?.['topology.kubernetes.io/region']).toBe('eastus2');
    expect(first!.metadata.labels?.['node.kubernetes.io/instance-type']).toBe('Standard_ND96isr_H200_v5');
    expect(dev.arm.currentVms().map((v) => v.name)).toEqual([first!.metadata.name]);
    // Registered and initialized as Karpenter does it: the kubelet's karpenter.sh/unregistered
    // taint swapped for the NodePool's, labels synced, Initialized once nvidia.com/gpu is allocatable.
    const initialized = await waitFor('the node labelled initialized', async () => {
      const n = (await adminRequest(cp, 'GET', `/api/v1/nodes/${first!.metadata.name}`)) as NodeObj & { spec: { taints?: Array<{ key: string }> } };
      return n.metadata.labels?.['karpenter.sh/initialized'] === 'true' ? n : undefined;
    }, 30_000);
    expect(initialized.metadata.labels?.['karpenter.sh/registered']).toBe('true');
    expect(initialized.metadata.labels?.['karpenter.sh/nodepool']).toBe('h200-eastus2');
    expect(initialized.spec.taints?.map((t) => t.key)).not.toContain('karpenter.sh/unregistered');
    expect(initialized.spec.taints?.map((t) => t.key)).toContain('nvidia.com/gpu');

    // 2. Quota storm: only the running VM's cores fit; a second replica's create is refused
    //    after its NIC exists, and ARM reserves that NIC for 180 s.
    dev.arm.injectFault({ kind: 'quota', location: 'eastus2', family: H200_FAMILY, cores: 96 });
    const scaled = await kubectl(cp, ['scale', 'deployment/h200-trainer', '--replicas=2']);
    expect(scaled.code, scaled.stderr).toBe(0);
    const reserved = await waitFor(
      'a refused create leaving a reserved NIC',
      async () => dev.arm.snapshot().nics.find((n) => n.reservedFor !== undefined && !dev.arm.currentVms().some((v) => v.id.toLowerCase() === n.reservedFor!.toLowerCase())),
      60_000,
    );

    // 2b. The refused NodeClaim explains itself: `kubectl describe` shows ARM's quota numbers
    //     (limit, usage, request) and until when ARM holds its NIC.
    const refused = await waitFor('the refused NodeClaim with Launched=False', async () => {
      const list = (await adminRequest(cp, 'GET', '/apis/karpenter.sh/v1/nodeclaims')) as { items: Array<{ metadata: { name: string; annotations?: Record<string, string> }; status?: { conditions?: Array<{ type: string; status: string; reason?: string }> } }> };
      return list.items.find((c) => c.metadata.annotations?.['flex.aks.azure.com/nic-reserved-until'] && c.status?.conditions?.some((x) => x.type === 'Launched' && x.status === 'False' && x.reason === 'OperationNotAllowed'));
    }, 60_000);
    const described = await kubectl(cp, ['describe', 'nodeclaim', refused.metadata.name]);
    expect(described.code, described.stderr).toBe(0);
    expect(described.stdout).toMatch(/cores quota in eastus2: limit 96, usage 96, request 96/);
    expect(described.stdout).toMatch(/reserved by ARM until \d{4}-\d{2}-\d{2}T/);
    expect(described.stdout).toMatch(/NicReserved/);
    expect(described.stdout).toContain('flex.aks.azure.com/nic-reserved-until');

    // 2c. The first controller's /metrics: upstream Karpenter's names and labels, non-zero.
    // Gauges refresh every 5 s: wait for the one that moves last.
    const early = await waitFor('the quota failure in /metrics', async () => {
      const t = await scrape();
      return sample(t, 'azflex_nics', { state: 'reserved-180s' }) >= 1 && sample(t, 'karpenter_nodepools_usage', { nodepool: 'h200-eastus2', resource_type: 'nvidia.com/gpu' }) >= 8 ? t : undefined;
    }, 30_000);
    expect(sample(early, 'karpenter_nodeclaims_created_total', { reason: 'provisioned', nodepool: 'h200-eastus2', min_values_relaxed: 'false' })).toBeGreaterThanOrEqual(2);
    expect(sample(early, 'karpenter_cloudprovider_errors_total', { controller: 'nodeclaim.lifecycle', method: 'Create', provider: 'azure-flex', error: 'InsufficientCapacityError', nodepool: 'h200-eastus2' })).toBeGreaterThanOrEqual(1);
    expect(sample(early, 'karpenter_nodepools_usage', { nodepool: 'h200-eastus2', resource_type: 'nvidia.com/gpu' })).toBeGreaterThanOrEqual(8);
    expect(sample(early, 'karpenter_nodepools_limit', { nodepool: 'h200-eastus2', resource_type: 'nvidia.com/gpu' })).toBeGreaterThan(0);
    expect(sample(early, 'azflex_vm_create_failures_total', { code: 'OperationNotAllowed', sku: 'Standard_ND96isr_H200_v5', region: 'eastus2' })).toBeGreaterThanOrEqual(1);
    expect(sample(early, 'azflex_nics', { state: 'reserved-180s' })).toBeGreaterThanOrEqual(1);

    // 3. Restart the controller in the middle of it: the new one takes the lease and resumes.
    const before = dev.controller();
    const after = await dev.restartController();
    expect(after).not.toBe(before);
    await waitFor('the new controller leads', async () => after.isLeader(), 30_000);

    // 4. Skip the 180 s reservation on ARM's clock; the NIC is reaped, nothing else leaks.
    await dev.served.clock.runUntil(dev.served.clock.now() + 181_000);
    await waitFor('the refused NIC reaped', async () => !dev.arm.snapshot().nics.some((n) => n.id === reserved.id), 60_000);
    expect(dev.arm.reapTimesSeconds().length).toBeGreaterThanOrEqual(1);
    expect(dev.arm.currentVms().length).toBe(1);

    // 5. Quota back: the second replica gets its node from the restarted controller, once
    //    the 30 min the refusal marked the offering unavailable have passed (skipped too).
    dev.arm.injectFault({ kind: 'quota', location: 'eastus2', family: H200_FAMILY, cores: 192 });
    await dev.served.clock.runUntil(dev.served.clock.now() + 31 * 60_000);
    const two = await waitFor('both replicas Running on azure-flex nodes', () => runningOnFlexNodes(2), 90_000);
    for (const n of two) expect(n.spec.providerID).toMatch(/^azure-flex:\/\/\//);

    // 6. Delete the deployment: the pods go, the empty nodes are consolidated, every VM, NIC
    //    and disk is deleted.
    const deleted = await kubectl(cp, ['delete', 'deployment', 'h200-trainer', '-n', 'default']);
    expect(deleted.code, deleted.stderr).toBe(0);
    //    GPU VM deletes take minutes on ARM's clock (docs/fidelity.md) and a NIC stays reserved
    //    180 s after its VM's create: skip ARM's clock ahead 30 s at every look.
    await waitFor('no VM, NIC or disk left in ARM', async () => {
      await dev.served.clock.runUntil(dev.served.clock.now() + 30_000);
      const s = dev.arm.snapshot();
      return s.vms.length === 0 && s.nics.length === 0 && s.disks.length === 0;
    }, 90_000);
    const leaks = dev.arm.leaks(new Set());
    expect({ nics: leaks.nics.length, vms: leaks.vms.length, disks: leaks.disks.length }).toEqual({ nics: 0, vms: 0, disks: 0 });
    await waitFor('no NodeClaims left', async () => ((await adminRequest(cp, 'GET', '/apis/karpenter.sh/v1/nodeclaims')) as { items: unknown[] }).items.length === 0, 30_000);

    // 7. The restarted controller counted what it saw: the refused NodeClaim and both nodes
    //    terminated, the second replica's NodeClaim created, the NIC reaped ~180 s after the failure.
    const late = await waitFor('the scale-down in /metrics', async () => {
      const t = await scrape();
      return sample(t, 'karpenter_nodepools_usage', { nodepool: 'h200-eastus2', resource_type: 'nvidia.com/gpu' }) === 0 ? t : undefined;
    }, 30_000);
    // Each in the zone its NodeClaim was given before the VM PUT (eastus2 is a zoned region;
    // a NodeClaim deleted before its launch chose a zone counts with zone="", as upstream's).
    expect(sample(late, 'karpenter_nodeclaims_terminated_total', { nodepool: 'h200-eastus2', capacity_type: 'on-demand', zone: /^eastus2-[123]$/ })).toBeGreaterThanOrEqual(3);
    expect(sample(late, 'karpenter_nodeclaims_created_total', { reason: 'provisioned', nodepool: 'h200-eastus2', min_values_relaxed: 'false' })).toBeGreaterThanOrEqual(1);
    expect(sample(late, 'azflex_nics_reaped_total', { reason: 'deleted' })).toBeGreaterThanOrEqual(1);
    expect(sample(late, 'karpenter_nodepools_usage', { nodepool: 'h200-eastus2', resource_type: 'nvidia.com/gpu' })).toBe(0);
  });
});
