import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDev, type DevEnvironment } from '../../src/dev/dev.js';
import { DEFAULT_SUBSCRIPTION_ID, defaultFakeArmConfig } from '../../src/sim/arm/defaults.js';
import { FAST_ARM_LATENCY } from './fixtures.js';
import { adminRequest, eventually, kubectl, type ControlPlaneInfo } from './harness.js';

const shared = inject('k8s');

interface Taint {
  key: string;
  effect: string;
}
interface NodeObj {
  metadata: { name: string };
  spec: { providerID?: string; taints?: Taint[] };
  status?: { conditions?: Array<{ type: string; status: string }> };
}
interface PodObj {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status?: { phase?: string };
}

const CROSS_REGION = { key: 'azflex.io/cross-region', operator: 'Exists', effect: 'NoSchedule' };

function deployment(name: string, replicas: number, cpu: string, extraTolerations: unknown[] = []): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 0,
          nodeSelector: { workload: 'azflex-cpu' },
          tolerations: [CROSS_REGION, ...extraTolerations],
          containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu } } }],
        },
      },
    },
  };
}

/**
 * `azflex dev` runs kube-controller-manager and KWOK: the interactions with azflex a real
 * cluster has. A VM that stops leaves a silent kubelet; the node lifecycle controller marks
 * the Node Unknown, taints it unreachable and evicts its pods, and azflex, seeing the Node
 * not Ready, finds the VM stopped and replaces the NodeClaim. A drain goes through the
 * eviction API, and the PodDisruptionBudget the disruption controller keeps current holds it.
 */
describe('azflex dev: node lifecycle and PDBs from kube-controller-manager', () => {
  let dev: DevEnvironment;
  let cp: ControlPlaneInfo;
  let stateDir: string;

  beforeAll(async () => {
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'azflex-dev-lifecycle-'));
    dev = await startDev({
      stateDir,
      armConfig: { ...defaultFakeArmConfig(), latencyMs: FAST_ARM_LATENCY },
      seed: 7,
      binaries: shared.binaries,
      logLevel: process.env.AZFLEX_DEV_LOG === 'debug' ? 'debug' : 'warn',
      bootDelayMs: 500,
      // Short, yet with a Lease renewed every 4 s on a loaded 2-core machine.
      nodeMonitorGracePeriodSeconds: 20,
    });
    cp = dev.controlPlane;
    const files = ['azureflexnodeclass-cpu-eastus2.yaml', 'nodepool-cpu-d8s.yaml'].map((f) => path.join(dev.examplesDir, f));
    const applied = await kubectl(cp, ['apply', ...files.flatMap((f) => ['-f', f])]);
    expect(applied.code, applied.stderr).toBe(0);
  });

  afterAll(async () => {
    await dev?.stop();
    if (stateDir && !process.env.AZFLEX_KEEP_ENVTEST) await fs.rm(stateDir, { recursive: true, force: true });
  });

  const pods = async (app: string): Promise<PodObj[]> => ((await adminRequest(cp, 'GET', `/api/v1/namespaces/default/pods?labelSelector=app%3D${app}`)) as { items: PodObj[] }).items;
  const node = async (name: string): Promise<NodeObj | undefined> =>
    (await adminRequest(cp, 'GET', `/api/v1/nodes/${name}`).catch((e: { code?: number }) => {
      if (e.code === 404) return undefined;
      throw e;
    })) as NodeObj | undefined;
  const running = async (app: string, n: number): Promise<PodObj[] | undefined> => {
    const live = (await pods(app)).filter((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp);
    return live.length >= n ? live : undefined;
  };
  const diag = async (): Promise<string> => {
    const got = await kubectl(cp, ['get', 'nodeclaims,nodes,pods,pdb', '-A', '-o', 'wide']);
    const s = dev.arm.snapshot();
    return `${got.stdout}\nARM: ${s.vms.length} VMs, ${s.nics.length} NICs, ${s.disks.length} disks`;
  };
  const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, ms: number): Promise<T> =>
    eventually(what, fn, ms, 250).catch(async (e: unknown) => {
      throw new Error(`${String(e)}\n${await diag()}`);
    });

  it('a stopped VM: its Node goes NotReady and is tainted NoExecute, its pod is evicted and runs again on a new node', async () => {
    // Five seconds of toleration instead of the admission plugin's 300.
    const tolerate = ['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready'].map((key) => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 }));
    // Two nodes: with every Node silent the node lifecycle controller would assume a network
    // partition of the control plane and stop evicting (its full-disruption mode).
    await adminRequest(cp, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('lost', 2, '6', tolerate));
    const both = await waitFor('two pods Running on two flex nodes', () => running('lost', 2), 120_000);
    const victim = both[0]!;
    const lostNode = victim.spec.nodeName!;
    expect(both[1]!.spec.nodeName).not.toBe(lostNode);
    // KWOK made it Ready, and the node lifecycle controller lifted the not-ready taint.
    const ready = await node(lostNode);
    expect(ready?.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(ready?.spec.taints?.map((t) => t.key) ?? []).not.toContain('node.kubernetes.io/not-ready');

    const vm = dev.arm.currentVms().find((v) => v.name === lostNode)!;
    const resourceGroup = /\/resourceGroups\/([^/]+)/i.exec(vm.id)![1]!;
    expect(dev.arm.beginPowerAction({ subscriptionId: DEFAULT_SUBSCRIPTION_ID, resourceGroup, name: vm.name }, 'powerOff')).toBeDefined();
    const silent = await waitFor('the Node NotReady and tainted NoExecute', async () => {
      const n = await node(lostNode);
      const notReady = n?.status?.conditions?.some((c) => c.type === 'Ready' && c.status !== 'True');
      const tainted = n?.spec.taints?.some((t) => ['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready'].includes(t.key) && t.effect === 'NoExecute');
      return notReady && tainted ? n : undefined;
    }, 90_000);
    expect(silent.metadata.name).toBe(lostNode);

    await waitFor('the victim replaced by a pod Running on another node', async () => {
      const r = await running('lost', 2);
      return r && !r.some((p) => p.metadata.uid === victim.metadata.uid || p.spec.nodeName === lostNode);
    }, 180_000);
    // Its NodeClaim goes once its NIC does, which ARM keeps reserved 180 s after the VM's
    // create: skip ARM's clock (the in-process controller's runtime clock) past that.
    await dev.served.clock.runUntil(dev.served.clock.now() + 181_000);
    await waitFor('the lost Node gone', async () => (await node(lostNode)) === undefined, 120_000);
    await waitFor('the victim pod gone', async () => !(await pods('lost')).some((p) => p.metadata.uid === victim.metadata.uid), 120_000);
    await adminRequest(cp, 'DELETE', '/apis/apps/v1/namespaces/default/deployments/lost');
    await waitFor('the lost pods gone', async () => (await pods('lost')).length === 0, 60_000);
  }, 600_000);

  it('a drain waits for the PodDisruptionBudget the disruption controller computes', async () => {
    await adminRequest(cp, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('guarded', 2, '1'));
    const both = await waitFor('two guarded pods Running', () => running('guarded', 2), 90_000);
    await adminRequest(cp, 'POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'guarded', namespace: 'default' },
      spec: { minAvailable: 2, selector: { matchLabels: { app: 'guarded' } } },
    });
    // Only kube-controller-manager fills in a PDB's status; the eviction API refuses without it.
    await waitFor('the PDB observed with no disruption allowed', async () => {
      const pdb = (await adminRequest(cp, 'GET', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/guarded')) as { status?: { observedGeneration?: number; currentHealthy?: number; disruptionsAllowed?: number } };
      return pdb.status?.observedGeneration === 1 && pdb.status.currentHealthy === 2 && pdb.status.disruptionsAllowed === 0;
    }, 30_000);

    // Deleting a node's NodeClaim drains it through the eviction API.
    const drained = both[0]!.spec.nodeName!;
    const claims = (await adminRequest(cp, 'GET', '/apis/karpenter.sh/v1/nodeclaims')) as { items: Array<{ metadata: { name: string }; status?: { nodeName?: string } }> };
    const claim = claims.items.find((c) => c.status?.nodeName === drained)!;
    expect(claim, await diag()).toBeDefined();
    await adminRequest(cp, 'DELETE', `/apis/karpenter.sh/v1/nodeclaims/${claim.metadata.name}`);
    await waitFor('the node tainted for disruption', async () => (await node(drained))?.spec.taints?.some((t) => t.key === 'karpenter.sh/disrupted'), 30_000);
    // Held: ten seconds later every guarded pod still runs where it ran.
    await new Promise((r) => setTimeout(r, 10_000));
    const held = (await running('guarded', 2)) ?? [];
    expect(held.map((p) => p.metadata.uid).sort()).toEqual(both.map((p) => p.metadata.uid).sort());
    expect(await node(drained)).toBeDefined();

    // The budget lifted: the drain finishes, the evicted pods run elsewhere, the node goes.
    await adminRequest(cp, 'DELETE', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/guarded');
    await waitFor('the drained node gone', async () => (await node(drained)) === undefined, 120_000);
    const after = await waitFor('two guarded pods Running off the drained node', async () => {
      const r = await running('guarded', 2);
      return r && r.every((p) => p.spec.nodeName !== drained) ? r : undefined;
    }, 120_000);
    expect(after).toHaveLength(2);
    await adminRequest(cp, 'DELETE', '/apis/apps/v1/namespaces/default/deployments/guarded');
  }, 600_000);
});
