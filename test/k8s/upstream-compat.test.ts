import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { ensureKarpenterCrds, ensureUpstreamExamples, KARPENTER_OLDEST } from '../../scripts/upstream-karpenter.mjs';
import { StaticInstanceTypeCatalog } from '../../src/catalog/skus.js';
import { CryptoRandom, RealClock } from '../../src/platform/real-clock.js';
import { Provisioner } from '../../src/provisioning/provisioner.js';
import { adminKubeConfig, adminRequest, kubectl, startControlPlane, type ControlPlane, type ControlPlaneInfo } from './harness.js';
import { ensureNamespace, forceDelete, makeAdapter, nodeClassBody } from './fixtures.js';

const info = inject('k8s');
const nodeClassCrd = path.resolve(import.meta.dirname, '../../crds/flex.aks.azure.com_azureflexnodeclasses.yaml');
const NS = 'compat';
const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec?: Record<string, unknown>;
}

const flexRef = (name: string) => ({ group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name });
function nodePool(name: string, spec: Record<string, unknown>, requirements: unknown[], disruption?: Record<string, unknown>): Obj {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: { ...spec, ...(disruption ? { disruption } : {}), template: { metadata: { labels: { pool: name } }, spec: { nodeClassRef: flexRef('compat-eastus2'), requirements } } },
  };
}

async function pendingPod(cp: ControlPlaneInfo, name: string, pool: string, requests: Record<string, string>): Promise<void> {
  await adminRequest(cp, 'POST', `/api/v1/namespaces/${NS}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      nodeSelector: { pool },
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
      containers: [{ name: 'c', image: 'busybox', resources: { requests, limits: requests['nvidia.com/gpu'] ? { 'nvidia.com/gpu': requests['nvidia.com/gpu'] } : {} } }],
    },
  });
  // What kube-scheduler writes when no node fits (no scheduler runs on this API server).
  await adminRequest(cp, 'PATCH', `/api/v1/namespaces/${NS}/pods/${name}/status`, {
    status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/0 nodes are available' }] },
  });
}

/**
 * The provisioner against a real API server carrying upstream's CRDs: H200 beside NodePools
 * using what upstream's latest release added (Gte/Lte, Balanced, static replicas). Returns
 * the NodePools that got NodeClaims and each NodePool's conditions as `kubectl` shows them.
 */
async function provisionBesideUpstreamFeatures(cp: ControlPlaneInfo, pools: Obj[]): Promise<{ provisioned: string[]; conditions: Record<string, Array<{ type: string; status: string; reason: string }>>; events: string[] }> {
  await ensureNamespace(cp, NS);
  await adminRequest(cp, 'POST', '/apis/flex.aks.azure.com/v1alpha1/azureflexnodeclasses', nodeClassBody('compat-eastus2'));
  for (const p of pools) {
    const r = await kubectl(cp, ['apply', '-f', '-'], stringify(p));
    expect(r.code, `${p.metadata.name}: ${r.stderr}`).toBe(0);
  }
  await pendingPod(cp, 'trainer', 'compat-h200', { cpu: '8', memory: '64Gi', 'nvidia.com/gpu': '8' });
  for (const p of pools) if (p.metadata.name !== 'compat-h200') await pendingPod(cp, `web-${p.metadata.name}`, p.metadata.name, { cpu: '2', memory: '2Gi' });

  const a = makeAdapter(adminKubeConfig(cp), 'compat');
  a.cluster.start();
  try {
    await a.cluster.waitForSync();
    const provisioner = new Provisioner({
      cluster: a.cluster, catalog: new StaticInstanceTypeCatalog(), clock: new RealClock(), random: new CryptoRandom(),
      isOfferingUnavailable: () => false, clusterName: 'compat', log: quiet,
    });
    await provisioner.reconcile();
  } finally {
    await a.cluster.stop();
  }
  const claims = (await adminRequest(cp, 'GET', '/apis/karpenter.sh/v1/nodeclaims')) as { items: Array<{ metadata: { name: string; labels: Record<string, string> } }> };
  const provisioned = [...new Set(claims.items.map((c) => c.metadata.labels['karpenter.sh/nodepool']!))].sort();
  const conditions: Record<string, Array<{ type: string; status: string; reason: string }>> = {};
  for (const p of pools) {
    const got = (await adminRequest(cp, 'GET', `/apis/karpenter.sh/v1/nodepools/${p.metadata.name}`)) as { status?: { conditions?: Array<{ type: string; status: string; reason: string }> } };
    conditions[p.metadata.name] = got.status?.conditions ?? [];
  }
  const ev = (await adminRequest(cp, 'GET', '/apis/events.k8s.io/v1/namespaces/default/events')) as { items: Array<{ regarding: { kind: string; name: string }; reason: string }> };
  const events = ev.items.filter((e) => e.regarding.kind === 'NodePool').map((e) => `${e.regarding.name}/${e.reason}`).sort();
  for (const c of claims.items) await forceDelete(cp, `/apis/karpenter.sh/v1/nodeclaims/${c.metadata.name}`);
  return { provisioned, conditions, events };
}

const condition = (list: Array<{ type: string; status: string; reason: string }> | undefined, type: string) => list?.find((c) => c.type === type);

describe('upstream Karpenter compatibility (newest release CRDs on the shared API server)', () => {
  it('every upstream example NodePool (aws/karpenter-provider-aws examples/v1) applies', async () => {
    const examples = await ensureUpstreamExamples();
    const pools: Obj[] = [];
    for (const file of examples.files) {
      for (const doc of parseAllDocuments(await fs.readFile(file, 'utf8'))) {
        const o = doc.toJSON() as Obj | null;
        if (o?.kind === 'NodePool') pools.push({ ...o, metadata: { ...o.metadata, name: `upstream-${path.basename(file, '.yaml')}-${o.metadata.name}` } });
      }
    }
    expect(pools.length).toBeGreaterThanOrEqual(15);
    const applied: string[] = [];
    for (const p of pools) {
      const r = await kubectl(info, ['apply', '-f', '-'], stringify(p));
      const ref = (p.spec?.template as { spec?: { nodeClassRef?: { group?: string } } } | undefined)?.spec?.nodeClassRef;
      if (ref?.group?.includes('/')) {
        // Upstream's own bug (v1.15.1 windows-custom-userdata.yaml: group "karpenter.k8s.aws/v1"):
        // upstream's CRD rejects it, so must any API server; azflex is not involved.
        expect(r.code).not.toBe(0);
        expect(r.stderr).toMatch(/nodeClassRef.group in body should match/);
        continue;
      }
      expect(r.code, `${p.metadata.name}: ${r.stderr}`).toBe(0);
      applied.push(p.metadata.name);
    }
    expect(applied.length).toBeGreaterThanOrEqual(pools.length - 1);
    const listed = await kubectl(info, ['get', 'nodepools', '-o', 'name']);
    for (const name of applied) expect(listed.stdout).toContain(`nodepool.karpenter.sh/${name}`);
    for (const name of applied) await kubectl(info, ['delete', 'nodepool', name, '--wait=false']);
  });

  it('Gte and Balanced NodePools beside H200: H200 and Gte provision, Balanced provisions with a FullySupported=False condition, a static NodePool gets its replicas without pods', async () => {
    const pools = [
      nodePool('compat-h200', {}, [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_ND96isr_H200_v5'] }]),
      nodePool('compat-gte', {}, [{ key: 'karpenter.azure.com/sku-cpu', operator: 'Gte', values: ['4'] }, { key: 'karpenter.azure.com/sku-gpu-count', operator: 'Lte', values: ['0'] }]),
      nodePool('compat-balanced', {}, [{ key: 'karpenter.azure.com/sku-gpu-count', operator: 'In', values: ['0'] }], { consolidationPolicy: 'Balanced', consolidateAfter: '1m' }),
      nodePool('compat-static', { replicas: 2 }, [{ key: 'karpenter.azure.com/sku-gpu-count', operator: 'In', values: ['0'] }]),
    ];
    const { provisioned, conditions, events } = await provisionBesideUpstreamFeatures(info, pools);
    expect(provisioned).toEqual(['compat-balanced', 'compat-gte', 'compat-h200', 'compat-static']);
    expect(condition(conditions['compat-h200'], 'Ready')?.status).toBe('True');
    expect(condition(conditions['compat-gte'], 'Ready')?.status).toBe('True');
    expect(condition(conditions['compat-balanced'], 'FullySupported')).toMatchObject({ status: 'False', reason: 'ConsolidationPolicyUnsupported' });
    expect(condition(conditions['compat-static'], 'Ready')?.status).toBe('True');
    expect(condition(conditions['compat-static'], 'ReplicasReady')).toMatchObject({ status: 'False', reason: 'ReplicasPending' });
    expect(events).toEqual(expect.arrayContaining(['compat-balanced/ConsolidationPolicyUnsupported']));
    // The columns upstream's CRD prints: NODES and READY are filled.
    const table = await kubectl(info, ['get', 'nodepool', 'compat-h200']);
    expect(table.stdout).toMatch(/compat-h200\s+compat-eastus2\s+0\s+True/);
    for (const p of pools) await forceDelete(info, `/apis/karpenter.sh/v1/nodepools/${p.metadata.name}`);
  });
});

describe(`oldest supported Karpenter release (${KARPENTER_OLDEST}) CRDs`, () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startControlPlane({ binaries: info.binaries });
    const oldest = await ensureKarpenterCrds(KARPENTER_OLDEST);
    const files = [...oldest.files, nodeClassCrd].flatMap((f) => ['-f', f]);
    const applied = await kubectl(cp, ['apply', '--server-side', ...files]);
    expect(applied.code, applied.stderr).toBe(0);
    const established = await kubectl(cp, ['wait', '--for=condition=Established', '--timeout=60s', ...files]);
    expect(established.code, established.stderr).toBe(0);
  });
  afterAll(async () => {
    await cp?.stop();
  });

  it('takes azflex examples, NodeClaims and NodePool status; H200 provisions beside a Balanced-free pool', async () => {
    const examples = path.resolve(import.meta.dirname, '../../examples');
    const r = await kubectl(cp, ['apply', '--dry-run=server', '-f', examples]);
    expect(r.code, r.stderr).toBe(0);
    const pools = [
      nodePool('compat-h200', {}, [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_ND96isr_H200_v5'] }]),
      nodePool('compat-gt', {}, [{ key: 'karpenter.azure.com/sku-cpu', operator: 'Gt', values: ['3'] }, { key: 'karpenter.azure.com/sku-gpu-count', operator: 'In', values: ['0'] }]),
    ];
    const { provisioned, conditions } = await provisionBesideUpstreamFeatures(cp, pools);
    expect(provisioned).toEqual(['compat-gt', 'compat-h200']);
    expect(condition(conditions['compat-h200'], 'Ready')?.status).toBe('True');
  });
});
