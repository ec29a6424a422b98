import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { adminKubeConfig, startControlPlane, type ControlPlane, type EnvtestBinaries } from '../../src/dev/control-plane.js';
import { installCrds } from '../../src/dev/dev.js';
import { DevKubelet } from '../../src/dev/kubelet.js';
import { KubeClient } from '../../src/k8s/client.js';
import { DEFAULT_SUBNET_ID, DEFAULT_SUBSCRIPTION_ID, defaultFakeArmConfig } from '../../src/sim/arm/defaults.js';
import { serveArm, type ServedArm } from '../../src/sim/arm/https-face.js';
import type { FakeArmConfig } from '../../src/sim/arm/types.js';
import { bundleApp } from '../../scripts/bundle-app.mjs';
import { controllerAuditPolicy } from './measure.js';
import { SIM_NODE_AGENT } from '../../src/sim/userdata.js';
import { freePort } from '../../src/dev/control-plane.js';
import { managedIdentityEndpoint } from '../../src/dev/managed-identity.js';

/**
 * The cluster the scale benchmark measures the controller in: etcd, kube-apiserver (watch
 * cache on, as in a real cluster), kube-scheduler, kube-controller-manager, KWOK, the fake
 * ARM over HTTPS with node registration of booted VMs (`azflex dev`'s, in this process since
 * it reads the fake ARM's VMs), and `azflex controller` as its own OS process, bundled as
 * the image bundles it and with the chart's NODE_OPTIONS, with its own ServiceAccount so the
 * audit log tells its requests apart.
 */

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '..', '..');
export const BENCH_NAMESPACE = 'azflex';
const SERVICE_ACCOUNT = 'azflex-controller';
export const CONTROLLER_USER = `system:serviceaccount:${BENCH_NAMESPACE}:${SERVICE_ACCOUNT}`;
export const INSTANCE_TYPE = 'Standard_D8s_v5';
export const NODEPOOL = 'scale';

/** Quota and subnet for 10,000 D8s nodes, VMs that boot in seconds, and no ARM throttling: the controller is what is measured. */
export function benchArmConfig(): FakeArmConfig {
  const base = defaultFakeArmConfig();
  return {
    ...base,
    regions: [{ subscriptionId: DEFAULT_SUBSCRIPTION_ID, location: 'eastus2', familyQuotaCores: { standardDSv5Family: 1_000_000 }, regionalQuotaCores: 1_000_000 }],
    subnets: [{ id: DEFAULT_SUBNET_ID, addressPrefix: '10.1.0.0/16' }],
    latencyMs: {
      read: { min: 5, max: 20 },
      nicPut: { min: 50, max: 200 },
      vmPut: { min: 50, max: 200 },
      vmCreate: { min: 2_000, max: 5_000 },
      vmDelete: { min: 2_000, max: 5_000 },
    },
    computeThrottling: false,
  };
}

export interface ScaleStack {
  cp: ControlPlane;
  client: KubeClient;
  served: ServedArm;
  controller: ChildProcess;
  auditLog: string;
  stop(): Promise<void>;
}



/**
 * The controller bundled as the image bundles it (scripts/bundle-app.mjs), so the benchmark
 * measures the code the image loads. Outside the checkout: a dependency the bundle missed
 * fails here as it would in the image, instead of resolving from node_modules.
 */
export async function compileController(): Promise<string> {
  const outDir = path.join(tmpdir(), `azflex-bench-app-${createHash('sha256').update(repoRoot).digest('hex').slice(0, 8)}`);
  await fs.rm(outDir, { recursive: true, force: true });
  await bundleApp(outDir);
  return path.join(outDir, 'dist', 'cli', 'main.js');
}

/** NODE_OPTIONS the chart gives the controller (values.yaml controller.nodeOptions): its heap is sized as deployed. */
export async function chartNodeOptions(): Promise<string> {
  const values = parse(await fs.readFile(path.join(repoRoot, 'charts', 'azflex', 'values.yaml'), 'utf8')) as { controller?: { nodeOptions?: unknown } };
  const options = values.controller?.nodeOptions;
  return typeof options === 'string' ? options : '';
}

/** MALLOC_ARENA_MAX the chart gives the controller (values.yaml controller.mallocArenaMax). */
export async function chartMallocArenaMax(): Promise<string | undefined> {
  const values = parse(await fs.readFile(path.join(repoRoot, 'charts', 'azflex', 'values.yaml'), 'utf8')) as { controller?: { mallocArenaMax?: unknown } };
  const arenas = values.controller?.mallocArenaMax;
  return typeof arenas === 'number' || typeof arenas === 'string' ? String(arenas) : undefined;
}

async function kubectl(cp: ControlPlane, args: string[]): Promise<string> {
  const { stdout } = await run(cp.binaries.kubectl, args, { env: { ...process.env, KUBECONFIG: cp.kubeconfigPath } });
  return stdout;
}

/** The controller's ServiceAccount (cluster-admin: RBAC is not what is measured) and a kubeconfig with its token. */
async function controllerKubeconfig(cp: ControlPlane, file: string): Promise<void> {
  await kubectl(cp, ['create', 'serviceaccount', SERVICE_ACCOUNT, '-n', BENCH_NAMESPACE]);
  await kubectl(cp, ['create', 'clusterrolebinding', SERVICE_ACCOUNT, '--clusterrole=cluster-admin', `--serviceaccount=${BENCH_NAMESPACE}:${SERVICE_ACCOUNT}`]);
  const token = (await kubectl(cp, ['create', 'token', SERVICE_ACCOUNT, '-n', BENCH_NAMESPACE, '--duration=24h'])).trim();
  const yaml = [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{name: bench, cluster: {server: "${cp.server}", certificate-authority-data: ${cp.caData}}}]`,
    `users: [{name: controller, user: {token: ${token}}}]`,
    'contexts: [{name: bench, context: {cluster: bench, user: controller}}]',
    'current-context: bench',
    '',
  ].join('\n');
  await fs.writeFile(file, yaml, { mode: 0o600 });
}

export async function applyNodePool(client: KubeClient): Promise<void> {
  const nodeClass = {
    apiVersion: 'flex.aks.azure.com/v1alpha1',
    kind: 'AzureFlexNodeClass',
    metadata: { name: NODEPOOL },
    spec: {
      subscriptionID: DEFAULT_SUBSCRIPTION_ID,
      location: 'eastus2',
      resourceGroup: /\/resourceGroups\/([^/]+)/.exec(DEFAULT_SUBNET_ID)![1],
      subnetID: DEFAULT_SUBNET_ID,
      imageReference: { publisher: 'Canonical', offer: '0001-com-ubuntu-server-jammy', sku: '22_04-lts-gen2', version: 'latest' },
      osDiskSizeGB: 64,
    },
  };
  const nodePool = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: NODEPOOL },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: NODEPOOL },
          requirements: [
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: [INSTANCE_TYPE] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          ],
          expireAfter: 'Never',
        },
      },
      // Nothing is consolidated away while the figures are taken.
      disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never' },
    },
  };
  await client.call('create nodeclass', (o) => client.custom.createClusterCustomObject({ group: 'flex.aks.azure.com', version: 'v1alpha1', plural: 'azureflexnodeclasses', body: nodeClass }, o));
  await client.call('create nodepool', (o) => client.custom.createClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', body: nodePool }, o));
}

export async function waitReady(port: number, child: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`azflex controller exited ${child.exitCode}: see ${logFile}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`azflex controller not ready in 120 s: see ${logFile}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const BENCH_CLUSTER_NAME = 'azflex-bench';

export async function startScaleStack(binaries: EnvtestBinaries, dir: string, log: (msg: string) => void): Promise<ScaleStack> {
  const cleanups: Array<() => Promise<void> | void> = [];
  const stop = async (): Promise<void> => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  };
  try {
    log('bundling the controller as the image does');
    const main = await compileController();
    const cp = await startControlPlane({
      binaries,
      scheduler: true,
      controllerManager: true,
      kwok: true,
      watchCache: true,
      auditPolicy: controllerAuditPolicy(CONTROLLER_USER),
      scale: true,
      dir: path.join(dir, 'control-plane'),
    });
    cleanups.push(() => cp.stop());
    log(`control plane up at ${cp.server}`);
    await installCrds(binaries.kubectl, cp.kubeconfigPath);
    const client = new KubeClient(adminKubeConfig(cp), { userAgent: 'azflex-bench' });
    await kubectl(cp, ['create', 'namespace', BENCH_NAMESPACE]);
    await kubectl(cp, ['create', 'secret', 'generic', 'azflex-bootstrap-token', '-n', BENCH_NAMESPACE, '--from-literal=token-id=abcdef', '--from-literal=token-secret=0123456789abcdef']);
    const kubeconfig = path.join(dir, 'controller.kubeconfig');
    await controllerKubeconfig(cp, kubeconfig);
    await fs.writeFile(path.join(dir, 'cluster-ca.crt'), Buffer.from(cp.caData, 'base64'));

    const served = await serveArm({ host: '127.0.0.1', scenarioConfig: benchArmConfig(), seed: 1, clockMode: 'realtime', lroRetryAfterSeconds: 1 });
    cleanups.push(() => served.close());
    const onError = (e: unknown): void => log(`node registration: ${e instanceof Error ? e.message : String(e)}`);
    // Every 5 s (test harness): each tick lists all Nodes and NodeClaims, megabytes at 1,000 Nodes.
    const kubelet = new DevKubelet({ client, arm: served.arm, clusterName: BENCH_CLUSTER_NAME, instanceTypes: served.arm.instanceTypes(), bootDelayMs: 1_000, pollMs: 5_000, onError });
    kubelet.start();
    cleanups.push(() => kubelet.stop());
    await applyNodePool(client);

    const identity = await managedIdentityEndpoint('scale-bench');
    cleanups.push(() => identity.close());
    const metricsPort = await freePort();
    const logFile = path.join(dir, 'controller.log');
    const out = createWriteStream(logFile);
    // As the chart runs it: its heap cap and glibc arena count.
    const arenas = await chartMallocArenaMax();
    const controller = spawn(
      process.execPath,
      [
        main, 'controller', `--cluster-name=${BENCH_CLUSTER_NAME}`, `--kubeconfig=${kubeconfig}`, `--leader-election-namespace=${BENCH_NAMESPACE}`,
        `--metrics-port=${metricsPort}`, `--arm-endpoint=${served.endpoint}`, `--arm-ca-file=${served.caCertPath}`,
        `--api-server-endpoint=${cp.server}`, `--cluster-ca-file=${path.join(dir, 'cluster-ca.crt')}`, '--log-level=warn', `--node-agent-sha256=amd64=${SIM_NODE_AGENT.sha256.amd64}`,
      ],
      { env: { ...process.env, NODE_OPTIONS: await chartNodeOptions(), ...(arenas ? { MALLOC_ARENA_MAX: arenas } : {}), POD_NAME: 'azflex-bench', IDENTITY_ENDPOINT: identity.url, IDENTITY_HEADER: 'scale-bench', AZURE_SUBSCRIPTION_ID: DEFAULT_SUBSCRIPTION_ID }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    controller.stdout?.pipe(out);
    controller.stderr?.pipe(out);
    cleanups.push(async () => {
      if (controller.exitCode !== null || controller.signalCode !== null) return;
      const exited = new Promise((r) => controller.once('exit', r));
      controller.kill('SIGTERM');
      await exited;
    });
    await waitReady(metricsPort, controller, logFile);
    log(`controller pid ${controller.pid} ready`);
    return { cp, client, served, controller, auditLog: path.join(cp.dir, 'audit.log'), stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
