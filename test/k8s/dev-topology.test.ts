import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDev, type DevEnvironment } from '../../src/dev/dev.js';
import { DEFAULT_SUBNET_ID, DEFAULT_SUBSCRIPTION_ID, defaultFakeArmConfig } from '../../src/sim/arm/defaults.js';
import { FAST_ARM_LATENCY } from './fixtures.js';
import { adminRequest, eventually, kubectl, type ControlPlaneInfo } from './harness.js';

const shared = inject('k8s');

interface PodObj {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { nodeName?: string };
  status?: { phase?: string };
}
interface NodeObj {
  metadata: { name: string; labels?: Record<string, string> };
}

/**
 * `azflex dev` with examples/topology/ (issue 12): the real kube-scheduler, the real API
 * server and the controller agree on hostname anti-affinity (one node per replica), a zone
 * spread (one zone per replica), a zonal Azure disk in westeurope zone 2 (its pod's node
 * is in westeurope-2, though the eastus2 pool comes first), and a claim that binds
 * Immediately (dev's volume provisioner gives it a westeurope disk; its pod follows).
 */
describe('azflex dev: topology examples', () => {
  let dev: DevEnvironment;
  let cp: ControlPlaneInfo;
  let stateDir: string;

  beforeAll(async () => {
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'azflex-dev-topology-'));
    const base = defaultFakeArmConfig();
    dev = await startDev({
      stateDir,
      armConfig: {
        ...base,
        latencyMs: FAST_ARM_LATENCY,
        regions: [
          { subscriptionId: DEFAULT_SUBSCRIPTION_ID, location: 'eastus2', familyQuotaCores: { standardDSv5Family: 200 }, regionalQuotaCores: 400 },
          { subscriptionId: DEFAULT_SUBSCRIPTION_ID, location: 'westeurope', familyQuotaCores: { standardDSv5Family: 200 }, regionalQuotaCores: 400 },
        ],
        subnets: [{ id: DEFAULT_SUBNET_ID, addressPrefix: '10.1.0.0/24' }],
      },
      seed: 12,
      binaries: shared.binaries,
      logLevel: process.env.AZFLEX_DEV_LOG === 'debug' ? 'debug' : 'warn',
      bootDelayMs: 300,
    });
    cp = dev.controlPlane;
  });

  afterAll(async () => {
    await dev?.stop();
    if (stateDir && !process.env.AZFLEX_KEEP_ENVTEST) await fs.rm(stateDir, { recursive: true, force: true });
  });

  const podsOf = async (app: string): Promise<PodObj[]> =>
    ((await adminRequest(cp, 'GET', `/api/v1/namespaces/default/pods?labelSelector=app%3D${app}`)) as { items: PodObj[] }).items;
  const nodeOf = async (pod: PodObj): Promise<NodeObj> => (await adminRequest(cp, 'GET', `/api/v1/nodes/${pod.spec.nodeName}`)) as NodeObj;
  const running = async (app: string, n: number): Promise<NodeObj[] | undefined> => {
    const pods = (await podsOf(app)).filter((p) => p.status?.phase === 'Running' && p.spec.nodeName);
    return pods.length >= n ? Promise.all(pods.map(nodeOf)) : undefined;
  };
  const diag = async (): Promise<string> => (await kubectl(cp, ['get', 'nodeclaims,nodes,pods,pvc,pv', '-A', '-o', 'wide'])).stdout;
  const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, ms: number): Promise<T> =>
    eventually(what, fn, ms, 250).catch(async (e: unknown) => {
      throw new Error(`${String(e)}\n${await diag()}`);
    });

  it('one node per anti-affine replica, one zone per spread replica, the zonal-disk pod in westeurope-2, and the Immediate disk\'s pod in its zone', async () => {
    const cpu = ['azureflexnodeclass-cpu-eastus2.yaml', 'nodepool-cpu-d8s.yaml'].map((f) => path.join(dev.examplesDir, f));
    const applied = await kubectl(cp, ['apply', ...cpu.flatMap((f) => ['-f', f]), '-f', path.join(dev.examplesDir, 'topology')]);
    expect(applied.code, applied.stderr).toBe(0);

    const zonal = await waitFor('the zonal-disk pod Running', () => running('zonal-db', 1), 90_000);
    expect(zonal[0]!.metadata.labels).toMatchObject({ 'topology.kubernetes.io/region': 'westeurope', 'topology.kubernetes.io/zone': 'westeurope-2' });
    const vm = dev.arm.currentVms().find((v) => v.name === zonal[0]!.metadata.name)!;
    expect(vm).toMatchObject({ location: 'westeurope', zone: '2' });

    const spread = await waitFor('three zone-spread replicas Running', () => running('zone-spread', 3), 90_000);
    expect(new Set(spread.map((n) => n.metadata.labels?.['topology.kubernetes.io/zone'])).size).toBe(3);

    const apart = await waitFor('three anti-affine replicas Running', () => running('one-per-node', 3), 90_000);
    expect(new Set(apart.map((n) => n.metadata.name)).size).toBe(3);

    // The Immediate claim was provisioned before any pod, in a zone of the cluster's region
    // (westeurope), and its pod runs on a node azflex planned in that zone.
    const immediate = await waitFor('the Immediate-disk pod Running', () => running('immediate-disk', 1), 90_000);
    const claim = (await adminRequest(cp, 'GET', '/api/v1/namespaces/default/persistentvolumeclaims/immediate-data')) as { spec: { volumeName?: string }; status: { phase?: string } };
    expect(claim.status.phase).toBe('Bound');
    const pv = (await adminRequest(cp, 'GET', `/api/v1/persistentvolumes/${claim.spec.volumeName}`)) as { spec: { nodeAffinity: { required: { nodeSelectorTerms: Array<{ matchExpressions: Array<{ key: string; values: string[] }> }> } } } };
    const pvZone = pv.spec.nodeAffinity.required.nodeSelectorTerms[0]!.matchExpressions[0]!;
    expect(pvZone.key).toBe('topology.disk.csi.azure.com/zone');
    expect(pvZone.values[0]).toMatch(/^westeurope-[123]$/);
    expect(immediate[0]!.metadata.labels?.['topology.kubernetes.io/zone']).toBe(pvZone.values[0]);

    // Every VM azflex made in a zoned region is zonal, and its node carries that zone.
    for (const v of dev.arm.currentVms()) {
      const node = (await adminRequest(cp, 'GET', `/api/v1/nodes/${v.name}`).catch(() => undefined)) as NodeObj | undefined;
      if (node) expect(node.metadata.labels?.['topology.kubernetes.io/zone']).toBe(`${v.location}-${v.zone}`);
    }
  });
});
