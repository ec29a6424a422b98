import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as https from 'node:https';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import { DEFAULT_RESOURCE_GROUP, DEFAULT_SUBNET_ID, defaultFakeArmConfig } from '../../src/sim/arm/defaults.js';
import { adminKubeConfigYaml, adminRequest, eventually } from './harness.js';
import { ensureNamespace, forceDelete } from './fixtures.js';
import { freePort } from '../../src/dev/control-plane.js';
import { managedIdentityEndpoint } from '../../src/dev/managed-identity.js';

const info = inject('k8s');
const ns = 'azflex-live-catalog';
const NAME = 'live-catalog-d';
const AFNC = '/apis/flex.aks.azure.com/v1alpha1/azureflexnodeclasses';
const NC = '/apis/karpenter.sh/v1/nodeclaims';
const repo = path.resolve(import.meta.dirname, '../..');

interface RawNodeClaim {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { nodeClassRef: { name: string } };
  status?: { providerID?: string; conditions?: Array<{ type: string; status: string }> };
}

/** Managed-identity endpoint that DefaultAzureCredential reads (IDENTITY_ENDPOINT/IDENTITY_HEADER): an ARM token without Entra ID. */


function armGet<T>(endpoint: string, ca: Buffer, apiPath: string): Promise<T> {
  return new Promise((resolve, reject) => {
    https
      .get(`${endpoint}${apiPath}`, { ca, headers: { authorization: 'Bearer test' } }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve(JSON.parse(text) as T) : reject(new Error(`ARM ${res.statusCode}: ${text}`))));
      })
      .on('error', reject);
  });
}

/**
 * `azflex controller` (the CLI, as its own process, default flags: live SKU catalog) against
 * the test API server and `azflex sim serve-arm`: a NodePool that allows any D-series size
 * gets a NodeClaim and a VM of a D size the static list does not have, chosen from the
 * Resource SKUs route.
 */
describe('azflex controller × azflex sim serve-arm: the live SKU catalog', () => {
  let work: string;
  let serveArm: ChildProcess | undefined;
  let controller: ChildProcess | undefined;
  let identity: { url: string; close: () => void } | undefined;
  let arm: { endpoint: string; caCertPath: string; subscriptionId: string };
  let armLog = '';
  let output = '';

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'azflex-live-catalog-'));
    await ensureNamespace(info, ns);
    await adminRequest(info, 'POST', `/api/v1/namespaces/${ns}/secrets`, {
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 'azflex-bootstrap-token' }, stringData: { token: 'abcdef.0123456789abcdef' },
    }).catch((e: { code?: number }) => {
      if (e.code !== 409) throw e;
    });
    const kubeconfig = path.join(work, 'kubeconfig');
    writeFileSync(kubeconfig, adminKubeConfigYaml(info), { mode: 0o600 });
    const caFile = path.join(work, 'cluster-ca.crt');
    writeFileSync(caFile, Buffer.from(info.caData, 'base64'));
    const scenario = path.join(work, 'arm.json');
    const cfg = defaultFakeArmConfig();
    writeFileSync(scenario, JSON.stringify({ ...cfg, latencyMs: { ...cfg.latencyMs, vmCreate: { min: 1000, max: 2000 } } }));
    serveArm = spawn(process.execPath, [path.join(repo, 'bin/azflex.mjs'), 'sim', 'serve-arm', '--scenario', scenario], { stdio: ['ignore', 'pipe', 'pipe'] });
    serveArm.stderr?.on('data', (c: Buffer) => (armLog += c.toString()));
    arm = await new Promise((resolve, reject) => {
      let line = '';
      serveArm?.stdout?.on('data', (c: Buffer) => {
        line += c.toString();
        if (line.includes('\n')) resolve(JSON.parse(line.slice(0, line.indexOf('\n'))));
      });
      serveArm?.on('exit', (code) => reject(new Error(`serve-arm exited ${code}: ${armLog}`)));
    });
    identity = await managedIdentityEndpoint('live-catalog-secret');
    controller = spawn(process.execPath, [
      path.join(repo, 'bin/azflex.mjs'), 'controller',
      '--cluster-name=live-catalog', `--kubeconfig=${kubeconfig}`, '--leader-elect=false', `--leader-election-namespace=${ns}`,
      `--metrics-port=${await freePort()}`, `--arm-endpoint=${arm.endpoint}`, `--arm-ca-file=${arm.caCertPath}`,
      `--api-server-endpoint=${info.server}`, `--cluster-ca-file=${caFile}`, `--node-agent-sha256=amd64=${'0'.repeat(64)}`,
    ], {
      // The node resource group as the Azure provider's chart passes it (controller.env), parentheses and all.
      env: { ...process.env, IDENTITY_ENDPOINT: identity.url, IDENTITY_HEADER: 'live-catalog-secret', AZURE_SUBSCRIPTION_ID: arm.subscriptionId, AZURE_NODE_RESOURCE_GROUP: 'MC_live(catalog)' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    controller.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    controller.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  }, 60_000);

  afterAll(async () => {
    if (controller && controller.exitCode === null) {
      controller.kill('SIGTERM');
      await new Promise((r) => controller?.once('exit', r));
    }
    serveArm?.kill('SIGTERM');
    identity?.close();
    const claims = ((await adminRequest(info, 'GET', NC)) as { items: RawNodeClaim[] }).items.filter((c) => c.spec.nodeClassRef.name === NAME);
    for (const c of claims) await forceDelete(info, `${NC}/${c.metadata.name}`);
    await forceDelete(info, `/apis/karpenter.sh/v1/nodepools/${NAME}`);
    await forceDelete(info, `${AFNC}/${NAME}`);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('lists SKUs from the Resource SKUs route and launches a D-series size that is not in the static list', async () => {
    await adminRequest(info, 'POST', AFNC, {
      apiVersion: 'flex.aks.azure.com/v1alpha1',
      kind: 'AzureFlexNodeClass',
      metadata: { name: NAME },
      spec: {
        subscriptionID: arm.subscriptionId, location: 'eastus2', resourceGroup: DEFAULT_RESOURCE_GROUP, subnetID: DEFAULT_SUBNET_ID,
        imageReference: { publisher: 'Canonical', offer: 'ubuntu-24_04-lts', sku: 'server', version: 'latest' },
      },
    });
    await adminRequest(info, 'POST', '/apis/karpenter.sh/v1/nodepools', {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: NAME },
      spec: {
        template: {
          metadata: { labels: { pool: NAME } },
          spec: {
            nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: NAME },
            requirements: [{ key: 'karpenter.azure.com/sku-family', operator: 'In', values: ['D'] }],
          },
        },
      },
    });
    await adminRequest(info, 'POST', `/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' },
      spec: { nodeSelector: { pool: NAME }, containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '12', memory: '24Gi' } } }] },
    });
    // What kube-scheduler reports for a pod no node can take.
    await adminRequest(info, 'PATCH', `/api/v1/namespaces/${ns}/pods/web/status`, {
      status: { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/0 nodes', lastTransitionTime: new Date().toISOString() }] },
    });

    const claim = await eventually(
      'a Launched NodeClaim of the D pool',
      async () => {
        if (controller?.exitCode !== null) throw new Error(`the controller exited (${controller?.exitCode}):\n${output}`);
        const items = ((await adminRequest(info, 'GET', NC)) as { items: RawNodeClaim[] }).items;
        const c = items.find((x) => x.spec.nodeClassRef.name === NAME);
        return c?.status?.conditions?.some((x) => x.type === 'Launched' && x.status === 'True') ? c : undefined;
      },
      90_000,
      500,
    ).catch((e: unknown) => {
      throw new Error(`${e instanceof Error ? e.message : String(e)}\ncontroller output:\n${output.slice(-6000)}`);
    });
    const ca = readFileSync(arm.caCertPath);
    const vms = await armGet<{ value: Array<{ name: string; properties: { hardwareProfile: { vmSize: string } } }> }>(
      arm.endpoint, ca, `/subscriptions/${arm.subscriptionId}/providers/Microsoft.Compute/virtualMachines?api-version=2024-07-01`,
    );
    expect(vms.value).toHaveLength(1);
    const size = vms.value[0]!.properties.hardwareProfile.vmSize;
    // 12 CPUs, 24 GiB: the cheapest D size that fits has 16 vCPUs (Dasv5, AMD) — not one of the five static SKUs.
    expect(size).toBe('Standard_D16as_v5');
    expect(STATIC_INSTANCE_TYPES.map((t) => t.name)).not.toContain(size);
    expect(claim.metadata.labels?.['karpenter.azure.com/sku-family']).toBe('D');
    // AKS's labels, the cluster's from AZURE_NODE_RESOURCE_GROUP as AKS writes it on its nodes.
    expect(claim.metadata.labels).toMatchObject({
      'kubernetes.azure.com/cluster': 'MC_live-catalog-z', 'kubernetes.azure.com/mode': 'user', 'karpenter.azure.com/placement-scope': 'zonal', 'kubernetes.azure.com/sku-cpu': '16',
    });
    // The controller read the catalog from the Resource SKUs route (one location-filtered listing).
    const state = await armGet<{ armCalls: Record<string, Record<string, number>> }>(arm.endpoint, ca, '/_sim/state');
    expect(state.armCalls['sku.list']?.['200']).toBeGreaterThanOrEqual(1);
    expect(output).toMatch(/listed Resource SKUs/);
  }, 120_000);
});
