import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/sim/manifests.js';
import { parseWorld, scenarioOfWorld } from '../../src/sim/world.js';
import { runSimulation, settledInvariants } from '../../src/sim/simulation.js';
import { placementOf } from '../../src/sim/placement.js';
import { clusterNamesFor } from '../../src/azure/naming.js';
import { ScenarioError } from '../../src/sim/scenario.js';

/**
 * A running cluster in --manifests (issue 26, item 3): examples/running-cluster/ is what
 * `kubectl get nodes,pods,nodeclaims,nodepools,azureflexnodeclasses -A -o yaml` prints for 3
 * AKS system nodes and 2 azflex H200 nodes with running pods, plus a new Deployment.
 */
const SNAPSHOT = 'examples/running-cluster/snapshot.yaml';
const EXAMPLE = ['examples/running-cluster/'];
const ADOPTED = ['gpu-h200-x7k2p', 'gpu-h200-m4q9z'];
const dir = mkdtempSync(join(tmpdir(), 'azflex-snapshot-'));
/** An adopted NodeClaim's VM name in the world's cluster (names carry the cluster's hash). */
const vmNameOf = (nodeClaim: string, cluster = 'aks-eastus2'): string => clusterNamesFor(nodeClaim, cluster).vm;
const world = parseWorld({ name: 'h200-room', hours: 2, clusterName: 'aks-eastus2', regions: [{ location: 'eastus2', regionalQuotaCores: 1000, familyQuotaCores: { standardNDSH200v5Family: 768 } }] }, 'test world');

/** The parts of kubectl's objects the refusals below edit. */
interface Item {
  kind: string;
  metadata: { name: string };
  spec: { template: { spec: { nodeClassRef: unknown } }; nodeClassRef: unknown };
  status: { phase?: string; allocatable?: unknown };
}

async function simulate(paths: string[]) {
  const cluster = loadManifests(paths);
  return runSimulation({ scenario: scenarioOfWorld(world, cluster), cluster, seed: 1, strategy: 'machine', keepEventLog: false });
}

describe('a snapshot of a running cluster in --manifests', () => {
  it('zone spread counts the running pods, the azflex nodes are adopted (not duplicated, not leaked) and the system nodes left alone', async () => {
    const run = await simulate(EXAMPLE);
    const placement = placementOf(run.cluster);
    const zoneOf = new Map(placement.nodes.map((n) => [n.name, n.zone]));
    const inference = placement.pods.filter((p) => p.name.startsWith('inference-'));
    expect(inference.every((p) => p.node !== undefined)).toBe(true);
    const perZone = (pods: typeof inference) => {
      const out: Record<string, number> = {};
      for (const p of pods) out[zoneOf.get(p.node!)!] = (out[zoneOf.get(p.node!)!] ?? 0) + 1;
      return out;
    };
    // The running replicas are in eastus2-1 and eastus2-2: counting them, the 4 new ones are
    // 1, 1 and 2 (spreading the new ones alone would give 2, 1, 1 or leave eastus2-3 short).
    expect(perZone(inference)).toEqual({ 'eastus2-1': 2, 'eastus2-2': 2, 'eastus2-3': 2 });
    expect(perZone(inference.filter((p) => p.name.startsWith('inference-large-')))).toEqual({ 'eastus2-1': 1, 'eastus2-2': 1, 'eastus2-3': 2 });

    // Adopted: each existing NodeClaim keeps its one VM, NIC and disk; only the 4 new replicas made NodeClaims.
    expect(run.result.nodeClaimsCreated).toBe(4);
    const snap = run.arm.snapshot();
    expect(snap.vms).toHaveLength(6);
    expect(snap.nics).toHaveLength(6);
    for (const name of ADOPTED) {
      expect(snap.vms.filter((v) => v.name === vmNameOf(name)).map((v) => v.provisioningState)).toEqual(['Succeeded']);
      expect(run.cluster.nodeClaims.get(name)?.metadata.deletionTimestamp).toBeUndefined();
      expect(placement.pods.filter((p) => p.node === `azflex-${name}`).map((p) => p.name).sort()).toHaveLength(2);
    }
    expect(run.result).toMatchObject({ leakedNics: 0, leakedVms: 0, leakedDisks: 0, stuckNodeClaims: 0, failedVmsLeft: 0, podsPending: 0 });
    expect(settledInvariants(run.arm, run.cluster)).toEqual([]);

    // The system pool is capacity azflex does not own: still there, Ready, its pods where they ran.
    const system = [...run.cluster.nodes.values()].filter((n) => n.metadata.name.startsWith('aks-system-'));
    expect(system).toHaveLength(3);
    for (const node of system) {
      expect(node.status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
      expect(node.metadata.deletionTimestamp).toBeUndefined();
    }
    expect(placement.pods.find((p) => p.name === 'metrics-server-5dfc656944-8zj6k')?.node).toBe('aks-system-26381945-vmss000002');
  });

  it('without the room for new nodes, the running cluster is still all there and the new replicas say why they wait', async () => {
    const cluster = loadManifests(EXAMPLE);
    const full = parseWorld({ name: 'no-room', hours: 1, regions: [{ location: 'eastus2', regionalQuotaCores: 1000, familyQuotaCores: { standardNDSH200v5Family: 192 } }] }, 'test world');
    const run = await runSimulation({ scenario: scenarioOfWorld(full, cluster), cluster, seed: 1, strategy: 'machine', keepEventLog: false });
    const placement = placementOf(run.cluster);
    expect(run.result.nodeClaimsCreated).toBe(0);
    expect(placement.pods.filter((p) => p.pending).map((p) => p.name.replace(/-[a-z0-9]{5}$/, ''))).toEqual(Array(4).fill('inference-large-77b6dff669'));
    for (const p of placement.pods.filter((x) => x.pending)) expect(p.pending).toMatch(/standardNDSH200v5Family quota in eastus2 cannot hold the VM: limit 192, usage 192/);
    expect(placement.pods.filter((p) => p.node)).toHaveLength(10);
    expect(run.arm.snapshot().vms.map((v) => v.name).sort()).toEqual(ADOPTED.map((n) => vmNameOf(n, full.clusterName)).sort());
  });

  it('reads kubectl\'s List with the fields only the API server writes, and refuses what it cannot place precisely', () => {
    const list = parse(readFileSync(SNAPSHOT, 'utf8')) as { items: Item[] };
    const write = (items: unknown[]): string => {
      const path = join(dir, `s${Math.random().toString(36).slice(2)}.yaml`);
      writeFileSync(path, stringify({ apiVersion: 'v1', kind: 'List', items }));
      return path;
    };
    const setup = loadManifests([SNAPSHOT]);
    expect(setup.existing?.nodes).toHaveLength(5);
    expect(setup.existing?.nodeClaims.map((c) => c.metadata.name)).toEqual(ADOPTED);
    expect(setup.existing?.pods).toHaveLength(10);
    expect(setup.workloads).toHaveLength(0);

    // Node auto-provisioning's NodePool and NodeClaims are another provisioner's; finished pods hold nothing.
    const nap = structuredClone(list.items.find((i) => i.kind === 'NodePool')!);
    nap.metadata.name = 'nap-default';
    nap.spec.template.spec.nodeClassRef = { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' };
    const napClaim = structuredClone(list.items.find((i) => i.kind === 'NodeClaim')!);
    napClaim.metadata.name = 'default-abcde';
    napClaim.spec.nodeClassRef = { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' };
    const done = structuredClone(list.items.find((i) => i.kind === 'Pod')!);
    done.metadata.name = 'job-done';
    done.status.phase = 'Succeeded';
    // A pod still pending in the snapshot is scheduled like any other, under its own name.
    const waiting = structuredClone(list.items.find((i) => i.kind === 'Pod' && i.metadata.name.startsWith('inference-'))!) as Item & { spec: { nodeName?: string } };
    waiting.metadata.name = 'inference-6c9d8b7f5d-zz9zz';
    delete waiting.spec.nodeName;
    waiting.status = { phase: 'Pending' };
    const more = loadManifests([write([...list.items, nap, napClaim, done, waiting])]);
    expect(more.workloads.map((w) => [w.name, w.replicas, w.podNames.from, w.template.ownerKind])).toEqual([['inference-6c9d8b7f5d-zz9zz', 1, 'own', 'ReplicaSet']]);
    expect(more.ignored).toEqual(expect.arrayContaining(['NodePool/nap-default (node auto-provisioning\'s)', 'NodeClaim/default-abcde (another provisioner\'s)', 'Pod/kube-system/job-done (Succeeded: holds nothing)']));
    expect(more.existing?.nodeClaims).toHaveLength(2);

    const refusal = (items: unknown[]): string => {
      try {
        loadManifests([write(items)]);
      } catch (err) {
        expect(err).toBeInstanceOf(ScenarioError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    const without = (pred: (i: Item) => boolean) => list.items.filter((i) => !pred(i));
    expect(refusal([...list.items, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'default' }, data: { password: 'aHVudGVyMg==' } }]))
      .toMatch(/Secret db: Secrets are refused: .*take them out/);
    expect(refusal(without((i) => i.kind === 'Node' && i.metadata.name === 'aks-system-26381945-vmss000002')))
      .toMatch(/Pod kube-proxy-h2c8q: spec\.nodeName: no Node "aks-system-26381945-vmss000002" in the manifests/);
    expect(refusal(without((i) => i.kind === 'NodeClaim' && i.metadata.name === 'gpu-h200-x7k2p')))
      .toMatch(/Node azflex-gpu-h200-x7k2p: spec\.providerID: an azflex VM's, but no NodeClaim in the manifests has status\.nodeName "azflex-gpu-h200-x7k2p"/);
    expect(refusal(without((i) => i.kind === 'NodePool')))
      .toMatch(/NodeClaim gpu-h200-x7k2p: metadata\.labels\.karpenter\.sh\/nodepool: no NodePool "gpu-h200" in the manifests/);
    const bare = structuredClone(list.items.find((i) => i.kind === 'Node')!);
    delete bare.status.allocatable;
    expect(refusal([...without((i) => i.kind === 'Node' && i.metadata.name === bare.metadata.name), bare])).toMatch(/status\.allocatable is required/);
  });
});
