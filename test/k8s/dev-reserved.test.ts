import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { resolveArmConfig } from '../../src/cli/commands/sim-serve-arm.js';
import { startDev, type DevEnvironment } from '../../src/dev/dev.js';
import type { AzureFlexNodeClass, NodePool } from '../../src/ports/cluster.js';
import { clusterOfScenario } from '../../src/sim/cluster-setup.js';
import { builtInScenario } from '../../src/sim/scenarios.js';
import { devWaits, FAST_ARM_LATENCY } from './fixtures.js';
import { adminRequest, kubectl, type ControlPlaneInfo } from './harness.js';

const shared = inject('k8s');

interface PodObj {
  metadata: { name: string; deletionTimestamp?: string };
  status?: { phase?: string };
}

const scenario = builtInScenario('reserved-h200')!;
const setup = clusterOfScenario(scenario, new Date(0).toISOString());

/** The scenario's NodeClass as `kubectl apply` takes it (the controller's spec is the CRD's). */
const nodeClassWire = (nc: AzureFlexNodeClass) => ({
  apiVersion: 'flex.aks.azure.com/v1alpha1',
  kind: 'AzureFlexNodeClass',
  metadata: { name: nc.metadata.name },
  spec: nc.spec,
});
const nodePoolWire = (np: NodePool) => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: np.metadata.name },
  spec: np.spec,
});

/** The scenario's wave of five H200 pods as a Deployment. */
const wave = setup.workloads[0]!;
const requests = wave.template.spec.containers[0]!.resources.requests;
const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'train', namespace: 'default' },
  spec: {
    replicas: wave.replicas,
    selector: { matchLabels: { app: 'train' } },
    template: {
      metadata: { labels: { app: 'train' } },
      spec: {
        terminationGracePeriodSeconds: 0,
        nodeSelector: wave.template.spec.nodeSelector,
        tolerations: wave.template.spec.tolerations,
        // An extended resource (nvidia.com/gpu) needs its limit equal to its request.
        containers: [{ name: 'train', image: 'registry.k8s.io/pause:3.10', resources: { requests, limits: { 'nvidia.com/gpu': requests['nvidia.com/gpu'] } } }],
      },
    },
  },
};

/**
 * The reserved-h200 world of `azflex simulate` in `azflex dev`: eastus2 without H200 quota,
 * westus3 with a capacity reservation group of 2 H200 (its NodePool allows reserved and
 * on-demand), swedencentral with on-demand quota for 3. Through the real API server, the SDK
 * against the fake ARM's HTTPS face and kube-scheduler, five H200 pods get 2 reserved nodes in
 * westus3 and 3 on-demand nodes in swedencentral, no create is refused for quota, and nothing
 * is left in ARM once the NodeClaims go.
 */
describe('azflex dev: capacity reservations across three regions', () => {
  let dev: DevEnvironment;
  let cp: ControlPlaneInfo;
  let stateDir: string;

  beforeAll(async () => {
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'azflex-dev-reserved-'));
    dev = await startDev({
      stateDir,
      armConfig: { ...(await resolveArmConfig('reserved-h200')), latencyMs: FAST_ARM_LATENCY },
      seed: 3,
      binaries: shared.binaries,
      logLevel: process.env.AZFLEX_DEV_LOG === 'debug' ? 'debug' : 'warn',
      bootDelayMs: 500,
    });
    cp = dev.controlPlane;
  });

  afterAll(async () => {
    await dev?.stop();
    if (stateDir && !process.env.AZFLEX_KEEP_ENVTEST) await fs.rm(stateDir, { recursive: true, force: true });
  });

  const diag = async (): Promise<string> => {
    const got = await kubectl(cp, ['get', 'nodeclaims,nodes,pods', '-A', '-o', 'wide']);
    const s = dev.arm.snapshot();
    return `${got.stdout}\nARM: ${s.vms.length} VMs, ${s.nics.length} NICs, ${s.disks.length} disks\ncalls: ${JSON.stringify(dev.arm.armCalls())}`;
  };
  const { waitFor, waitSkipping } = devWaits(() => dev.served.clock, diag);
  const running = async (): Promise<PodObj[] | undefined> => {
    const pods = ((await adminRequest(cp, 'GET', '/api/v1/namespaces/default/pods?labelSelector=app%3Dtrain')) as { items: PodObj[] }).items;
    const live = pods.filter((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp);
    return live.length === wave.replicas ? live : undefined;
  };

  it('five H200 pods: 2 reserved nodes in westus3, 3 on-demand in swedencentral, none refused for quota, nothing left after', async () => {
    const objects = [...setup.nodeClasses.map(nodeClassWire), ...setup.nodePools.map(nodePoolWire)];
    const applied = await kubectl(cp, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
    expect(applied.code, applied.stderr).toBe(0);
    // The CRD keeps the reservation groups (a field it dropped would leave the NodeClass without them).
    const westus3 = (await adminRequest(cp, 'GET', '/apis/flex.aks.azure.com/v1alpha1/azureflexnodeclasses/h200-westus3')) as { spec: { capacityReservationGroupIDs?: string[] } };
    expect(westus3.spec.capacityReservationGroupIDs).toEqual(setup.nodeClasses[1]!.spec.capacityReservationGroupIDs);

    await adminRequest(cp, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment);
    await waitFor('five H200 pods Running', running, 180_000);

    const got = await kubectl(cp, ['get', 'nodeclaims', '-L', 'karpenter.sh/capacity-type', '-L', 'topology.kubernetes.io/region', '--no-headers']);
    expect(got.code, got.stderr).toBe(0);
    // NAME TYPE CAPACITY ZONE NODE READY AGE CAPACITY-TYPE REGION: the last two columns are the labels asked for.
    const rows = got.stdout.trim().split('\n').map((l) => l.trim().split(/\s+/).slice(-2).join(' ')).sort();
    expect(rows, got.stdout).toEqual(['on-demand swedencentral', 'on-demand swedencentral', 'on-demand swedencentral', 'reserved westus3', 'reserved westus3']);
    const calls = dev.arm.armCalls();
    expect(calls['vm.put']?.['409'] ?? 0, JSON.stringify(calls)).toBe(0);
    const group = dev.arm.capacityReservationGroupGet({ subscriptionId: scenario.regions[1]!.subscriptionId, resourceGroup: 'azflex-reservations', name: 'h200-crg' });
    expect(group?.reservations[0]?.allocatedVmIds).toHaveLength(2);

    // The pods go, then their NodeClaims: every VM, NIC and disk with them.
    await adminRequest(cp, 'DELETE', '/apis/apps/v1/namespaces/default/deployments/train');
    const deleted = await kubectl(cp, ['delete', 'nodeclaims', '--all', '--wait=false']);
    expect(deleted.code, deleted.stderr).toBe(0);
    await waitSkipping('no NodeClaim, VM, NIC or disk left', async () => {
      const s = dev.arm.snapshot();
      const claims = ((await adminRequest(cp, 'GET', '/apis/karpenter.sh/v1/nodeclaims')) as { items: unknown[] }).items;
      return claims.length === 0 && s.vms.length === 0 && s.nics.length === 0 && s.disks.length === 0;
    }, 240_000);
  }, 900_000);
});
