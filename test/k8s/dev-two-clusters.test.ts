import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDev, type DevEnvironment } from '../../src/dev/dev.js';
import { defaultFakeArmConfig } from '../../src/sim/arm/defaults.js';
import { clusterNamesFor, TAG } from '../../src/azure/naming.js';
import { FAST_ARM_LATENCY } from './fixtures.js';
import { adminRequest, eventually, kubectl } from './harness.js';

const shared = inject('k8s');

interface ClaimObj {
  metadata: { name: string; deletionTimestamp?: string };
  status?: { nodeName?: string };
}
interface NodeObj {
  metadata: { name: string };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

const POOL = 'cpu-d8s';
/** Names as Karpenter generates them: a restored backup brings the same ones into a second cluster. */
const CLAIMS = ['cpu-d8s-7xk2p', 'cpu-d8s-q9m4z'];

/** The CPU example's NodePool as a backup holds it, kept from consolidating the idle nodes away. */
const nodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: POOL },
  spec: {
    template: {
      metadata: { labels: { workload: 'azflex-cpu' } },
      spec: {
        nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'cpu-eastus2' },
        requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D8s_v5'] }],
        taints: [{ key: 'azflex.io/cross-region', effect: 'NoSchedule' }],
        expireAfter: 'Never',
      },
    },
    disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never' },
  },
};

const nodeClaim = (name: string) => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodeClaim',
  metadata: { name, labels: { 'karpenter.sh/nodepool': POOL, workload: 'azflex-cpu' } },
  spec: {
    nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'cpu-eastus2' },
    requirements: [
      { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D8s_v5'] },
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
      { key: 'karpenter.sh/nodepool', operator: 'In', values: [POOL] },
    ],
    taints: [{ key: 'azflex.io/cross-region', effect: 'NoSchedule' }],
    expireAfter: 'Never',
  },
});

/**
 * Two `azflex dev` clusters share one fake ARM, and their NodeClasses the same resource group
 * (issue 28): each its own etcd, kube-apiserver, scheduler, controller-manager, KWOK, node
 * registration and controller (`--cluster-name` team-a and team-b). Both hold the same
 * NodeClaims, applied from identical manifests as a restored backup would. Through ARM's own
 * listing: each cluster's VMs, NICs and disks carry its own hashed names and cluster tag, each
 * cluster's Nodes register, deleting team-a's NodeClaims touches nothing of team-b's, and at
 * the end nothing is left.
 */
describe('azflex dev: two clusters share a resource group and their NodeClaim names', () => {
  const names = ['team-a', 'team-b'] as const;
  const devs: DevEnvironment[] = [];
  let stateDir: string;

  beforeAll(async () => {
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'azflex-dev-two-'));
    const common = {
      armConfig: { ...defaultFakeArmConfig(), latencyMs: FAST_ARM_LATENCY },
      seed: 28,
      binaries: shared.binaries,
      logLevel: process.env.AZFLEX_DEV_LOG === 'debug' ? ('debug' as const) : ('warn' as const),
      bootDelayMs: 500,
    };
    devs.push(await startDev({ ...common, stateDir: path.join(stateDir, names[0]), clusterName: names[0] }));
    devs.push(await startDev({ ...common, stateDir: path.join(stateDir, names[1]), clusterName: names[1], sharedArm: devs[0]!.served }));
    for (const dev of devs) {
      const applied = await kubectl(dev.controlPlane, ['apply', '-f', path.join(dev.examplesDir, 'azureflexnodeclass-cpu-eastus2.yaml')]);
      expect(applied.code, applied.stderr).toBe(0);
    }
  }, 300_000);

  afterAll(async () => {
    // The second shares the first's fake ARM: it stops first.
    for (const dev of [...devs].reverse()) await dev.stop();
    if (stateDir && !process.env.AZFLEX_KEEP_ENVTEST) await fs.rm(stateDir, { recursive: true, force: true });
  });

  const arm = () => devs[0]!.arm;
  const claims = async (dev: DevEnvironment): Promise<ClaimObj[]> =>
    ((await adminRequest(dev.controlPlane, 'GET', '/apis/karpenter.sh/v1/nodeclaims')) as { items: ClaimObj[] }).items;
  const readyNodes = async (dev: DevEnvironment): Promise<string[]> => {
    const nodes = ((await adminRequest(dev.controlPlane, 'GET', '/api/v1/nodes')) as { items: NodeObj[] }).items;
    return nodes.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).map((n) => n.metadata.name).sort();
  };
  /** Every VM, NIC and disk of a cluster in ARM's listing, by its cluster tag. */
  const resourcesOf = (cluster: string) => {
    const s = arm().snapshot();
    const of = <T extends { tags: Record<string, string> }>(rs: readonly T[]): T[] => rs.filter((r) => r.tags[TAG.cluster] === cluster);
    return { vms: of(s.vms), nics: of(s.nics).map(({ id, name, tags }) => ({ id, name, tags })), disks: of(s.disks) };
  };
  const diag = async (): Promise<string> => {
    const lines: string[] = [];
    for (const dev of devs) lines.push((await kubectl(dev.controlPlane, ['get', 'nodepools,nodeclaims,nodes', '-o', 'wide'])).stdout);
    const s = arm().snapshot();
    lines.push(`ARM: VMs ${s.vms.map((v) => v.name).join(' ')}; NICs ${s.nics.map((n) => n.name).join(' ')}; disks ${s.disks.map((d) => d.name).join(' ')}`);
    return lines.join('\n');
  };
  /** Skips ARM's clock (both in-process runtimes') past NIC reservations and VM deletes while waiting. */
  const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, ms: number): Promise<T> =>
    eventually(what, async () => {
      await devs[0]!.served.clock.runUntil(devs[0]!.served.clock.now() + 30_000);
      return fn();
    }, ms, 250).catch(async (e: unknown) => {
      throw new Error(`${String(e)}\n${await diag()}`);
    });

  it("each cluster's nodes come up under its own names; deleting one cluster's NodeClaims leaves the other's resources alone; nothing leaks", async () => {
    for (const dev of devs) {
      const applied = await kubectl(dev.controlPlane, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [nodePool, ...CLAIMS.map(nodeClaim)] }));
      expect(applied.code, applied.stderr).toBe(0);
    }
    const expectedNodes = (cluster: string): string[] => CLAIMS.map((c) => clusterNamesFor(c, cluster).vm).sort();
    for (const [i, cluster] of names.entries()) {
      const dev = devs[i]!;
      await waitFor(`${cluster}: both NodeClaims with Ready Nodes`, async () => {
        const ready = await readyNodes(dev);
        const bound = (await claims(dev)).filter((c) => c.status?.nodeName).length;
        return bound === CLAIMS.length && ready.length === CLAIMS.length;
      }, 180_000);
      // The Nodes are the cluster's own VMs: none of the other cluster's joined here.
      expect(await readyNodes(dev)).toEqual(expectedNodes(cluster));
    }

    // ARM holds both clusters' VMs in the one resource group, each under its cluster's hashed names and tag.
    expect(arm().snapshot().vms).toHaveLength(2 * CLAIMS.length);
    for (const cluster of names) {
      const own = resourcesOf(cluster);
      expect(own.vms.map((v) => v.name).sort()).toEqual(expectedNodes(cluster));
      expect(own.vms.map((v) => v.tags[TAG.nodeClaim]).sort()).toEqual(CLAIMS);
      expect(new Set(own.vms.map((v) => v.id.split('/')[4]!.toLowerCase())).size).toBe(1);
      expect(own.nics.map((n) => n.name).sort()).toEqual(CLAIMS.map((c) => clusterNamesFor(c, cluster).nic).sort());
      expect(own.disks.map((d) => d.name).sort()).toEqual(CLAIMS.map((c) => clusterNamesFor(c, cluster).osDisk).sort());
    }
    expect(resourcesOf(names[0]).vms[0]!.id.split('/')[4]).toBe(resourcesOf(names[1]).vms[0]!.id.split('/')[4]);

    // team-a's NodeClaims go: its VMs, NICs and disks with them, and not one of team-b's changes.
    const before = JSON.stringify(resourcesOf(names[1]));
    const deleted = await kubectl(devs[0]!.controlPlane, ['delete', 'nodeclaims', '--all', '--wait=false']);
    expect(deleted.code, deleted.stderr).toBe(0);
    await waitFor("team-a's NodeClaims, VMs, NICs and disks gone", async () => {
      const a = resourcesOf(names[0]);
      return (await claims(devs[0]!)).length === 0 && a.vms.length + a.nics.length + a.disks.length === 0;
    }, 180_000);
    expect(JSON.stringify(resourcesOf(names[1]))).toBe(before);
    expect(await readyNodes(devs[1]!)).toEqual(expectedNodes(names[1]));

    // Then team-b's: nothing of either cluster is left, and no resource is a leak.
    const deletedB = await kubectl(devs[1]!.controlPlane, ['delete', 'nodeclaims', '--all', '--wait=false']);
    expect(deletedB.code, deletedB.stderr).toBe(0);
    await waitFor('no NodeClaim, VM, NIC or disk left', async () => {
      const s = arm().snapshot();
      return (await claims(devs[1]!)).length === 0 && s.vms.length + s.nics.length + s.disks.length === 0;
    }, 180_000);
    const leaks = arm().leaks(new Set());
    expect({ nics: leaks.nics.length, vms: leaks.vms.length, disks: leaks.disks.length }).toEqual({ nics: 0, vms: 0, disks: 0 });
  }, 600_000);
});
