import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { DEV_CLUSTER_NAME, startDevController, type DevControllerOptions } from '../app/dev.js';
import type { PeriodicIntervals } from '../controllers/periodic.js';
import type { ControllerProcess } from '../app/process.js';
import { KubeClient } from '../k8s/client.js';
import { createRedactingLogger } from '../log/redact.js';
import type { RuntimeConfig } from '../runtime/deps.js';
import type { RepairPolicy } from '../disruption/repair.js';
import type { FakeArm } from '../sim/arm/fake-arm.js';
import { serveArm, type ServedArm } from '../sim/arm/https-face.js';
import type { FakeArmConfig } from '../sim/arm/types.js';
import { adminKubeConfig, adminKubeConfigYaml, startControlPlane, type ControlPlane, type EnvtestBinaries } from './control-plane.js';
import { DevKubelet } from './kubelet.js';
import { DevVolumes } from './volumes.js';
import { writeDevExamples } from './examples.js';

/**
 * `azflex dev`: a whole cluster on one machine. Real etcd, kube-apiserver, kube-scheduler and
 * kube-controller-manager (envtest binaries), KWOK's fake kubelets, the CRDs, the fake ARM over
 * HTTPS on a realtime clock, the node registration of booted VMs (kubelet.ts), the disk
 * provisioner (volumes.ts), and the real controller process (leader election, informers,
 * SdkAzure against the fake ARM's endpoint) running in-process.
 */

export const DEV_NAMESPACE = 'azflex';
const BOOTSTRAP_SECRET = 'azflex-bootstrap-token';

export interface DevOptions {
  stateDir: string;
  /** The fake ARM's setup (`default`, a built-in scenario, a file: see resolveArmConfig). */
  armConfig: FakeArmConfig;
  /** The cluster's name (its controller's --cluster-name); DEV_CLUSTER_NAME by default. */
  clusterName?: string;
  /**
   * Another environment's fake ARM, shared instead of serving one (built from `armConfig`):
   * two clusters whose NodeClasses use the same resource groups. Its owner closes it.
   */
  sharedArm?: ServedArm;
  seed?: number;
  /** Defaults to scripts/envtest.mjs (cache, PATH or a Go build). */
  binaries?: EnvtestBinaries;
  logLevel?: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** VM Succeeded → Node registered. */
  bootDelayMs?: number;
  /** A silent Node's grace before the node lifecycle controller marks it Unknown (kube default 50 s). */
  nodeMonitorGracePeriodSeconds?: number;
  /** Retry-After the fake ARM puts on LROs (ARM says 10 s; dev polls faster). */
  lroRetryAfterSeconds?: number;
  intervals?: PeriodicIntervals;
  runtimeConfig?: Partial<RuntimeConfig>;
  /** Node repair policies besides the Azure provider's (`azflex dev --repair-policies`). */
  repairPolicies?: readonly RepairPolicy[];
}

export interface DevEnvironment {
  kubeconfigPath: string;
  armEndpoint: string;
  armCaCertPath: string;
  /** Examples rewritten for the fake ARM's subscription and subnets. */
  examplesDir: string;
  controlPlane: ControlPlane;
  served: ServedArm;
  arm: FakeArm;
  /** The controller process running now (replaced by restartController). */
  controller(): ControllerProcess | undefined;
  stopController(): Promise<void>;
  startController(): Promise<ControllerProcess>;
  restartController(): Promise<ControllerProcess>;
  stop(): Promise<void>;
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

async function defaultBinaries(): Promise<EnvtestBinaries> {
  const { ensureEnvtest } = await import('../../scripts/envtest.mjs');
  return ensureEnvtest();
}

export async function startDev(o: DevOptions): Promise<DevEnvironment> {
  const stateDir = path.resolve(o.stateDir);
  await fs.mkdir(stateDir, { recursive: true });
  const log: Logger = createRedactingLogger({ level: o.logLevel ?? 'info', name: 'azflex-dev' });
  const binaries = o.binaries ?? (await defaultBinaries());
  const cleanups = new Cleanups(log);

  try {
    const cpDir = path.join(stateDir, 'control-plane');
    const controlPlane = await startDevControlPlane(o, binaries, cpDir);
    cleanups.push(() => controlPlane.stop());
    const kubeconfigPath = path.join(stateDir, 'kubeconfig');
    await fs.writeFile(kubeconfigPath, adminKubeConfigYaml(controlPlane), { mode: 0o600 });
    const kubeConfig = adminKubeConfig(controlPlane);
    const client = new KubeClient(kubeConfig, { userAgent: 'azflex-dev' });
    await installCrds(binaries.kubectl, kubeconfigPath);
    await createDevNamespace(client);

    const served = o.sharedArm ?? (await serveDevArm(o));
    if (!o.sharedArm) cleanups.push(() => served.close());
    const armCa = await fs.readFile(served.caCertPath);

    const clusterName = o.clusterName ?? DEV_CLUSTER_NAME;
    startNodeAgents(o, { client, served, clusterName, log }, cleanups);

    const controllers = new DevControllers({
      kubeConfig,
      clusterName,
      log,
      apiServer: { endpoint: controlPlane.server, caCertFile: path.join(cpDir, 'pki', 'ca.crt') },
      namespace: DEV_NAMESPACE,
      bootstrapSecret: BOOTSTRAP_SECRET,
      arm: { endpoint: served.endpoint, tlsCa: armCa, clock: served.clock },
      ...(o.intervals ? { intervals: o.intervals } : {}),
      ...(o.runtimeConfig ? { runtimeConfig: o.runtimeConfig } : {}),
      ...(o.repairPolicies ? { repairPolicies: o.repairPolicies } : {}),
    });
    await controllers.start();
    cleanups.push(() => controllers.stop());

    const examplesDir = path.join(stateDir, 'examples');
    await writeDevExamples(path.join(repoRoot, 'examples'), examplesDir, o.armConfig);

    return {
      kubeconfigPath,
      armEndpoint: served.endpoint,
      armCaCertPath: served.caCertPath,
      examplesDir,
      controlPlane,
      served,
      arm: served.arm,
      controller: () => controllers.current(),
      stopController: () => controllers.stop(),
      startController: () => controllers.start(),
      restartController: async () => {
        await controllers.stop();
        return controllers.start();
      },
      stop: () => cleanups.run(),
    };
  } catch (e) {
    await cleanups.run();
    throw e;
  }
}

/** What the environment has started, stopped in reverse order; a failing stop is logged, not thrown. */
class Cleanups {
  private readonly stops: Array<() => Promise<void>> = [];

  constructor(private readonly log: Logger) {}

  push(stop: () => Promise<void>): void {
    this.stops.push(stop);
  }

  async run(): Promise<void> {
    for (const fn of this.stops.splice(0).reverse()) {
      try {
        await fn();
      } catch (e) {
        this.log.warn({ err: e }, 'stopping');
      }
    }
  }
}

async function startDevControlPlane(o: DevOptions, binaries: EnvtestBinaries, cpDir: string): Promise<ControlPlane> {
  // etcd data from an earlier run would hold objects whose VMs no longer exist.
  await fs.rm(cpDir, { recursive: true, force: true });
  return startControlPlane({
    binaries,
    scheduler: true,
    controllerManager: o.nodeMonitorGracePeriodSeconds ? { nodeMonitorGracePeriodSeconds: o.nodeMonitorGracePeriodSeconds } : true,
    kwok: true,
    dir: cpDir,
  });
}

/** The controller's namespace, with a kubeadm-shaped bootstrap token: the user data the controller renders embeds it. */
async function createDevNamespace(client: KubeClient): Promise<void> {
  await client.call('create namespace', (o) => client.core.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: DEV_NAMESPACE } } }, o));
  const tokenId = randomBytes(3).toString('hex');
  const tokenSecret = randomBytes(8).toString('hex');
  await client.call('create bootstrap secret', (o) =>
    client.core.createNamespacedSecret(
      { namespace: DEV_NAMESPACE, body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: BOOTSTRAP_SECRET }, stringData: { 'token-id': tokenId, 'token-secret': tokenSecret } } },
      o,
    ),
  );
}

/** The fake ARM over HTTPS on a realtime clock, built from the options' setup. */
function serveDevArm(o: DevOptions): Promise<ServedArm> {
  return serveArm({
    host: '127.0.0.1',
    scenarioConfig: o.armConfig,
    seed: o.seed ?? 1,
    clockMode: 'realtime',
    lroRetryAfterSeconds: o.lroRetryAfterSeconds ?? 1,
  });
}

/** What stands in for the nodes' own agents: registration of booted VMs (kubelet) and the disk provisioner. */
function startNodeAgents(
  o: DevOptions,
  env: { client: KubeClient; served: ServedArm; clusterName: string; log: Logger },
  cleanups: Cleanups,
): void {
  const { client, served, clusterName, log } = env;
  const onError = (what: string) => (e: unknown): void => log.warn({ err: e }, what);
  const kubelet = new DevKubelet({ client, arm: served.arm, clusterName, instanceTypes: served.arm.instanceTypes(), bootDelayMs: o.bootDelayMs ?? 2_000, onError: onError('kubelet') });
  const volumes = new DevVolumes({ client, onError: onError('volumes') });
  volumes.start();
  kubelet.start();
  cleanups.push(() => kubelet.stop());
  cleanups.push(() => volumes.stop());
}

/**
 * The in-process controller, one at a time: each start is a new replica identity
 * (azflex-dev-1, -2, ...), as a restarted pod would be.
 */
class DevControllers {
  private generation = 0;
  private running: ControllerProcess | undefined;

  constructor(private readonly options: Omit<DevControllerOptions, 'identity'>) {}

  current(): ControllerProcess | undefined {
    return this.running;
  }

  async start(): Promise<ControllerProcess> {
    if (this.running) throw new Error('a controller is already running');
    this.generation += 1;
    this.running = await startDevController({ ...this.options, identity: `azflex-dev-${this.generation}` });
    return this.running;
  }

  async stop(): Promise<void> {
    const proc = this.running;
    this.running = undefined;
    if (proc) await proc.shutdown('azflex dev: controller stop');
  }
}

/**
 * Upstream Karpenter's karpenter.sh CRDs (the newest release, fetched through the Go module
 * proxy into ~/.cache/azflex/upstream) and azflex's AzureFlexNodeClass CRD: what an AKS
 * cluster with node auto-provisioning plus the azflex chart has.
 */
export async function installCrds(kubectl: string, kubeconfig: string): Promise<void> {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  const { ensureKarpenterCrds } = await import('../../scripts/upstream-karpenter.mjs');
  const run = promisify(execFile);
  const upstream = await ensureKarpenterCrds();
  const files = [...upstream.files, path.join(repoRoot, 'crds', 'flex.aks.azure.com_azureflexnodeclasses.yaml')].flatMap((f) => ['-f', f]);
  const env = { ...process.env, KUBECONFIG: kubeconfig };
  await run(kubectl, ['apply', '--server-side', ...files], { env });
  await run(kubectl, ['wait', '--for=condition=Established', '--timeout=60s', ...files], { env });
}
