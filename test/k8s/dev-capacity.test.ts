import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDev, type DevEnvironment } from '../../src/dev/dev.js';
import { defaultFakeArmConfig } from '../../src/sim/arm/defaults.js';
import { refFromId, TAG } from '../../src/azure/naming.js';
import { devWaits, FAST_ARM_LATENCY } from './fixtures.js';
import { adminRequest, kubectl, type ControlPlaneInfo } from './harness.js';

const shared = inject('k8s');

interface ClaimObj {
  metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
  status?: { nodeName?: string };
}
interface NodeObj {
  metadata: { name: string };
  status?: { conditions?: Array<{ type: string; status: string }> };
}
interface EventObj {
  reason?: string;
  message?: string;
  involvedObject?: { kind?: string; name?: string };
}

const POOL = 'cpu-static';

/** A static NodePool (spec.replicas) on the CPU example's NodeClass: opt-in like cpu-d8s, so no pod lands there by accident. */
const staticPool = (replicas: number, name = POOL, capacityTypes = ['on-demand']) => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name },
  spec: {
    replicas,
    template: {
      metadata: { labels: { workload: 'azflex-cpu-static' } },
      spec: {
        nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'cpu-eastus2' },
        requirements: [
          { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D8s_v5'] },
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: capacityTypes },
        ],
        taints: [{ key: 'azflex.io/cross-region', effect: 'NoSchedule' }],
        expireAfter: 'Never',
      },
    },
    limits: { nodes: '4' },
  },
});

/**
 * Static capacity and node repair in `azflex dev`, against the real API server with upstream's
 * CRDs: the pool holds `replicas` nodes with nothing pending, follows `kubectl scale` through
 * the CRD's scale subresource, and a node whose GPU condition (as node-problem-detector would
 * set it) matches a configured repair policy past its toleration is replaced; then nothing is
 * left in ARM once the pool goes. A spot pool gets Spot VMs, and an eviction is replaced.
 */
describe('azflex dev: static capacity, node repair and spot', () => {
  let dev: DevEnvironment;
  let cp: ControlPlaneInfo;
  let stateDir: string;

  beforeAll(async () => {
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'azflex-dev-static-'));
    dev = await startDev({
      stateDir,
      armConfig: { ...defaultFakeArmConfig(), latencyMs: FAST_ARM_LATENCY },
      seed: 11,
      binaries: shared.binaries,
      logLevel: process.env.AZFLEX_DEV_LOG === 'debug' ? 'debug' : 'warn',
      bootDelayMs: 500,
      repairPolicies: [{ conditionType: 'GpuXidError', conditionStatus: 'True', tolerationMs: 3_000 }],
    });
    cp = dev.controlPlane;
    const applied = await kubectl(cp, ['apply', '-f', path.join(dev.examplesDir, 'azureflexnodeclass-cpu-eastus2.yaml')]);
    expect(applied.code, applied.stderr).toBe(0);
  });

  afterAll(async () => {
    await dev?.stop();
    if (stateDir && !process.env.AZFLEX_KEEP_ENVTEST) await fs.rm(stateDir, { recursive: true, force: true });
  });

  const claims = async (pool = POOL): Promise<ClaimObj[]> =>
    ((await adminRequest(cp, 'GET', `/apis/karpenter.sh/v1/nodeclaims?labelSelector=karpenter.sh%2Fnodepool%3D${pool}`)) as { items: ClaimObj[] }).items;
  const readyNode = async (name: string | undefined): Promise<boolean> => {
    if (!name) return false;
    const node = (await adminRequest(cp, 'GET', `/api/v1/nodes/${name}`).catch(() => undefined)) as NodeObj | undefined;
    return node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  };
  /** Exactly `n` live NodeClaims, each with a Ready Node. */
  const readyClaims = async (n: number, pool = POOL): Promise<ClaimObj[] | undefined> => {
    const live = (await claims(pool)).filter((c) => !c.metadata.deletionTimestamp);
    if (live.length !== n) return undefined;
    for (const c of live) if (!(await readyNode(c.status?.nodeName))) return undefined;
    return live;
  };
  const diag = async (): Promise<string> => {
    const got = await kubectl(cp, ['get', 'nodepools,nodeclaims,nodes', '-o', 'wide']);
    const s = dev.arm.snapshot();
    return `${got.stdout}\nARM: ${s.vms.length} VMs, ${s.nics.length} NICs, ${s.disks.length} disks`;
  };
  const { waitFor, waitSkipping } = devWaits(() => dev.served.clock, diag);

  it('holds replicas nodes with nothing pending, follows kubectl scale, and replaces a node past its repair policy', async () => {
    const created = await kubectl(cp, ['apply', '-f', '-'], JSON.stringify(staticPool(2)));
    expect(created.code, created.stderr).toBe(0);
    await waitFor('two NodeClaims with Ready nodes, no pod asking', () => readyClaims(2), 120_000);
    await waitFor('the NodePool status counts 2 nodes', async () => {
      const pool = (await adminRequest(cp, 'GET', `/apis/karpenter.sh/v1/nodepools/${POOL}`)) as { status?: { nodes?: number } };
      return pool.status?.nodes === 2;
    }, 30_000);

    // The scale subresource of upstream's CRD sets spec.replicas.
    const up = await kubectl(cp, ['scale', 'nodepool', POOL, '--replicas=3']);
    expect(up.code, up.stderr).toBe(0);
    await waitFor('three NodeClaims with Ready nodes', () => readyClaims(3), 120_000);
    const down = await kubectl(cp, ['scale', 'nodepool', POOL, '--replicas=2']);
    expect(down.code, down.stderr).toBe(0);
    const kept = await waitSkipping('back to two NodeClaims', () => readyClaims(2), 120_000);

    // node-problem-detector reports a GPU fault: past the 3 s toleration the node is repaired.
    const victim = kept[0]!;
    const now = new Date().toISOString();
    const condition = { type: 'GpuXidError', status: 'True', reason: 'XID79', message: 'GPU has fallen off the bus', lastTransitionTime: now, lastHeartbeatTime: now };
    const patched = await kubectl(cp, ['patch', 'node', victim.status!.nodeName!, '--subresource=status', '--type=strategic', '-p', JSON.stringify({ status: { conditions: [condition] } })]);
    expect(patched.code, patched.stderr).toBe(0);
    const replaced = await waitSkipping('the repaired NodeClaim replaced, two Ready again', async () => {
      const r = await readyClaims(2);
      return r && !r.some((c) => c.metadata.name === victim.metadata.name) ? r : undefined;
    }, 180_000);
    expect(replaced.map((c) => c.metadata.name)).toContain(kept[1]!.metadata.name);
    const events = ((await adminRequest(cp, 'GET', '/api/v1/events')) as { items: EventObj[] }).items;
    expect(events.some((e) => e.involvedObject?.name === victim.metadata.name && e.reason === 'DisruptionTerminating' && (e.message ?? '').includes('Unhealthy')), await diag()).toBe(true);

    // The pool goes: every NodeClaim, VM, NIC and disk with it.
    const deleted = await kubectl(cp, ['delete', 'nodepool', POOL]);
    expect(deleted.code, deleted.stderr).toBe(0);
    await waitSkipping('no NodeClaim, VM, NIC or disk left', async () => {
      const s = dev.arm.snapshot();
      return (await claims()).length === 0 && s.vms.length === 0 && s.nics.length === 0 && s.disks.length === 0;
    }, 180_000);
  }, 900_000);

  it('a spot pool gets Spot VMs labelled spot, and a node ARM evicts is replaced', async () => {
    const created = await kubectl(cp, ['apply', '-f', '-'], JSON.stringify(staticPool(1, 'cpu-spot', ['spot'])));
    expect(created.code, created.stderr).toBe(0);
    const [first] = await waitFor('a spot NodeClaim with a Ready node', () => readyClaims(1, 'cpu-spot'), 120_000);
    expect(first!.metadata.labels?.['karpenter.sh/capacity-type']).toBe('spot');
    const vm = dev.arm.currentVms().find((v) => v.tags[TAG.nodeClaim] === first!.metadata.name);
    expect(vm && dev.arm.vmGet(refFromId(vm.id))?.priority, await diag()).toBe('Spot');

    // ARM evicts every Spot VM (eviction policy Delete): the NodeClaim goes, another takes its place.
    dev.arm.injectFault({ kind: 'spotEviction', location: 'eastus2', evictFraction: 1 });
    const [second] = await waitSkipping('the evicted NodeClaim replaced by a spot one with a Ready node', async () => {
      const r = await readyClaims(1, 'cpu-spot');
      return r && r[0]!.metadata.name !== first!.metadata.name ? r : undefined;
    }, 180_000);
    expect(second!.metadata.labels?.['karpenter.sh/capacity-type']).toBe('spot');
    const events = ((await adminRequest(cp, 'GET', '/api/v1/events')) as { items: EventObj[] }).items;
    expect(events.some((e) => e.involvedObject?.name === first!.metadata.name && e.reason === 'SpotInterrupted'), await diag()).toBe(true);

    const deleted = await kubectl(cp, ['delete', 'nodepool', 'cpu-spot']);
    expect(deleted.code, deleted.stderr).toBe(0);
    await waitSkipping('no spot NodeClaim, VM, NIC or disk left', async () => {
      const s = dev.arm.snapshot();
      return (await claims('cpu-spot')).length === 0 && s.vms.length === 0 && s.nics.length === 0 && s.disks.length === 0;
    }, 180_000);
  }, 600_000);
});
