import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { adminKubeConfig, adminKubeConfigYaml, freePort, startControlPlane, type ControlPlane, type EnvtestBinaries } from '../../src/dev/control-plane.js';
import { installCrds } from '../../src/dev/dev.js';
import { DevKubelet } from '../../src/dev/kubelet.js';
import { managedIdentityEndpoint } from '../../src/dev/managed-identity.js';
import { KubeApiError, KubeClient, PatchStrategy } from '../../src/k8s/client.js';
import { DEFAULT_SUBSCRIPTION_ID } from '../../src/sim/arm/defaults.js';
import { serveArm, type ServedArm } from '../../src/sim/arm/https-face.js';
import { SIM_NODE_AGENT } from '../../src/sim/userdata.js';
import { peakRssMiB } from './measure.js';
import { applyNodePool, BENCH_NAMESPACE, benchArmConfig, chartMallocArenaMax, chartNodeOptions, compileController, waitReady } from './stack.js';

/**
 * The controller's memory at a size, cheaply and repeatably (`npm run bench:scale --
 * --memory-only [PODS]`): the `azflex controller` process, bundled and started as in the
 * full benchmark (stack.ts), against etcd, kube-apiserver (watch cache on) and
 * kube-scheduler only. Its own NodeClaims, fake-ARM VMs and Nodes come from the controller
 * itself; what a kubelet would report this file writes once through the API (Nodes Ready,
 * bound pods Running), so no KWOK heartbeats or controller-manager share the two cores.
 *
 * Figures: the resident set with an empty cluster (the fixed cost: node, modules, metrics),
 * the peak over the ramp to `pods` Running pods (VmHWM), heap and external memory at their
 * highest scrape and after a settle, and a fresh process's peak on the full cluster (a
 * restart relists everything and starts every actor at once).
 */

export interface ControllerMemoryEntry {
  pods: number;
  nodes: number;
  nodeClaims: number;
  /** The controller's NODE_OPTIONS and MALLOC_ARENA_MAX (the chart's unless overridden) as it ran. */
  nodeOptions: string;
  mallocArenaMax: string | null;
  /** Empty cluster (a NodeClass and a NodePool), 10 s after /readyz. */
  startupRssMiB: number;
  startupHeapUsedMiB: number;
  startupExternalMiB: number;
  /** VmHWM over the ramp and the settle. */
  peakRssMiB: number;
  peakHeapUsedMiB: number;
  peakExternalMiB: number;
  /** After the settle, everything Running and nothing changing. */
  settledRssMiB: number;
  settledHeapUsedMiB: number;
  settledExternalMiB: number;
  /** A new process started on the full cluster: VmHWM once it has settled. */
  restartPeakRssMiB: number;
  rampSeconds: number;
}

export interface MemoryRunOptions {
  pods: number;
  /** In place of the chart's controller.nodeOptions. */
  nodeOptions?: string;
  timeoutMs: number;
  settleMs?: number;
  /** A controller compiled by an earlier run (its dist/cli/main.js), to compare settings without compiling again. */
  prebuilt?: string;
  /** Writes a heap snapshot of the settled controller into the run's directory (kept). */
  heapSnapshot?: boolean;
  log: (msg: string) => void;
}

const NAMESPACE = 'default';
const MERGE = { patch: PatchStrategy.MergePatch };
const MIB = 1024 * 1024;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const round = (mib: number): number => Math.round(mib * 10) / 10;

interface Controller {
  child: ChildProcess;
  metricsPort: number;
}

interface World {
  cp: ControlPlane;
  client: KubeClient;
  served: ServedArm;
  dir: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cleanups: Array<() => Promise<void> | void>;
}

async function startController(w: World, main: string, name: string): Promise<Controller> {
  const metricsPort = await freePort();
  const logFile = path.join(w.dir, `${name}.log`);
  const out = createWriteStream(logFile);
  const child = spawn(process.execPath, [main, 'controller', ...w.args, `--metrics-port=${metricsPort}`], { cwd: w.dir, env: { ...w.env, POD_NAME: name }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  w.cleanups.push(() => stopController({ child, metricsPort }));
  await waitReady(metricsPort, child, logFile);
  return { child, metricsPort };
}

async function stopController(c: Controller): Promise<void> {
  if (c.child.exitCode !== null || c.child.signalCode !== null) return;
  const exited = new Promise((r) => c.child.once('exit', r));
  c.child.kill('SIGTERM');
  await exited;
}

/** Heap used and external memory, MiB, from the controller's own /metrics. */
async function heapMiB(c: Controller): Promise<{ heapUsed: number; external: number }> {
  const text = await (await fetch(`http://127.0.0.1:${c.metricsPort}/metrics`)).text();
  const value = (name: string): number => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN) / MIB;
  return { heapUsed: round(value('nodejs_heap_size_used_bytes')), external: round(value('nodejs_external_memory_bytes')) };
}

async function rssMiB(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  return round(Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN) / 1024);
}

/** Highest heap and external memory seen by a scrape every 15 s (a usual Prometheus interval: each scrape costs memory too) until stopped. */
function sampleHeap(c: Controller): { stop: () => Promise<{ heapUsed: number; external: number }> } {
  const peak = { heapUsed: 0, external: 0 };
  let running = true;
  const loop = (async () => {
    while (running) {
      const now = await heapMiB(c).catch(() => ({ heapUsed: 0, external: 0 }));
      peak.heapUsed = Math.max(peak.heapUsed, now.heapUsed);
      peak.external = Math.max(peak.external, now.external);
      await sleep(15_000);
    }
  })();
  return { stop: async () => ((running = false), await loop, peak) };
}

/** Pods as a Deployment's ReplicaSet makes them (750m: ten to a D8s_v5 node). */
function pod(i: number): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `scale-base-6d9f7c5b8-${i.toString(36).padStart(5, '0')}`,
      namespace: NAMESPACE,
      labels: { app: 'scale-base', 'pod-template-hash': '6d9f7c5b8' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'scale-base-6d9f7c5b8', uid: '00000000-0000-4000-8000-000000000001', controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '750m', memory: '512Mi' } } }],
    },
  };
}

async function inBatches<T>(items: readonly T[], width: number, fn: (t: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(fn));
}

interface Listed {
  items: Array<{
    metadata: { name: string; resourceVersion?: string };
    spec?: { taints?: Array<{ key: string }> };
    status?: { conditions?: Array<{ type: string }> };
  }>;
}

/** The taint the API server puts on a new Node until the node lifecycle controller sees it Ready. */
const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';

/** Writes that lose a race (409, a JSON Patch test that failed) or find nothing are retried on the next pass. */
function ignoreRace(e: unknown): void {
  if (!(e instanceof KubeApiError && [404, 409, 422].includes(e.code))) throw e;
}

/**
 * What each kubelet and the node lifecycle controller would write, once: a new Node Ready
 * and without the not-ready taint, a pod the scheduler bound Running. Returns how many pods
 * are not yet Running.
 */
async function actAsKubelets(client: KubeClient): Promise<number> {
  const now = new Date().toISOString();
  const nodes = (await client.call('list nodes', (o) => client.core.listNode({}, o))) as unknown as Listed;
  const unready = nodes.items.filter((n) => !n.status?.conditions?.some((c) => c.type === 'Ready'));
  const ready = { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now }] } };
  await inBatches(unready, 32, (n) => client.call('node ready', (o) => client.core.patchNodeStatus({ name: n.metadata.name, body: ready }, o), MERGE).then(() => undefined, ignoreRace));
  // The controller edits the same list (it drops karpenter.sh/unregistered): only if unchanged since the list.
  const tainted = nodes.items.filter((n) => n.spec?.taints?.some((t) => t.key === NOT_READY_TAINT));
  await inBatches(tainted, 32, (n) => {
    const body = [
      { op: 'test', path: '/metadata/resourceVersion', value: n.metadata.resourceVersion },
      { op: 'replace', path: '/spec/taints', value: n.spec!.taints!.filter((t) => t.key !== NOT_READY_TAINT) },
    ];
    return client.call('node untaint', (o) => client.core.patchNode({ name: n.metadata.name, body }, o), { patch: PatchStrategy.JsonPatch }).then(() => undefined, ignoreRace);
  });
  const bound = (await client.call('list bound pods', (o) => client.core.listNamespacedPod({ namespace: NAMESPACE, fieldSelector: 'status.phase=Pending,spec.nodeName!=' }, o))) as unknown as Listed;
  const running = {
    status: {
      phase: 'Running',
      startTime: now,
      conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map((type) => ({ type, status: 'True', lastTransitionTime: now })),
      containerStatuses: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', imageID: '', ready: true, restartCount: 0, started: true, state: { running: { startedAt: now } } }],
    },
  };
  await inBatches(bound.items, 32, (p) => client.call('pod running', (o) => client.core.patchNamespacedPodStatus({ name: p.metadata.name, namespace: NAMESPACE, body: running }, o), MERGE).then(() => undefined, ignoreRace));
  const notRunning = (await client.call('list not running', (o) => client.core.listNamespacedPod({ namespace: NAMESPACE, fieldSelector: 'status.phase!=Running' }, o))) as unknown as Listed;
  return notRunning.items.length;
}

async function countOf(client: KubeClient, what: 'nodes' | 'nodeclaims'): Promise<number> {
  const res = (what === 'nodes'
    ? await client.call('list nodes', (o) => client.core.listNode({}, o))
    : await client.call('list nodeclaims', (o) => client.custom.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' }, o))) as unknown as Listed;
  return res.items.length;
}

async function startWorld(binaries: EnvtestBinaries, dir: string, o: MemoryRunOptions, cleanups: Array<() => Promise<void> | void>): Promise<World> {
  const cp = await startControlPlane({ binaries, scheduler: true, watchCache: true, scale: true, dir: path.join(dir, 'control-plane') });
  cleanups.push(() => cp.stop());
  o.log(`control plane up at ${cp.server}`);
  await installCrds(binaries.kubectl, cp.kubeconfigPath);
  const client = new KubeClient(adminKubeConfig(cp), { userAgent: 'azflex-bench' });
  await client.call('create namespace', (x) => client.core.createNamespace({ body: { metadata: { name: BENCH_NAMESPACE } } }, x));
  const secret = { metadata: { name: 'azflex-bootstrap-token' }, stringData: { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef' } };
  await client.call('create secret', (x) => client.core.createNamespacedSecret({ namespace: BENCH_NAMESPACE, body: secret }, x));
  const kubeconfig = path.join(dir, 'controller.kubeconfig');
  await fs.writeFile(kubeconfig, adminKubeConfigYaml(cp), { mode: 0o600 });
  await fs.writeFile(path.join(dir, 'cluster-ca.crt'), Buffer.from(cp.caData, 'base64'));
  const served = await serveArm({ host: '127.0.0.1', scenarioConfig: benchArmConfig(), seed: 1, clockMode: 'realtime', lroRetryAfterSeconds: 1 });
  cleanups.push(() => served.close());
  const kubelet = new DevKubelet({ client, arm: served.arm, clusterName: 'azflex-bench', instanceTypes: served.arm.instanceTypes(), bootDelayMs: 1_000, pollMs: 2_000, onError: (e) => o.log(`node registration: ${e instanceof Error ? e.message : String(e)}`) });
  kubelet.start();
  cleanups.push(() => kubelet.stop());
  await applyNodePool(client);
  const identity = await managedIdentityEndpoint('scale-bench');
  cleanups.push(() => identity.close());
  const args = [
    '--cluster-name=azflex-bench', `--kubeconfig=${kubeconfig}`, `--leader-election-namespace=${BENCH_NAMESPACE}`, `--arm-endpoint=${served.endpoint}`, `--arm-ca-file=${served.caCertPath}`,
    `--api-server-endpoint=${cp.server}`, `--cluster-ca-file=${path.join(dir, 'cluster-ca.crt')}`, '--log-level=warn', `--node-agent-sha256=amd64=${SIM_NODE_AGENT.sha256.amd64}`,
  ];
  const nodeOptions = `${o.nodeOptions ?? (await chartNodeOptions())}${o.heapSnapshot ? ' --heapsnapshot-signal=SIGUSR2' : ''}`;
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: nodeOptions, IDENTITY_ENDPOINT: identity.url, IDENTITY_HEADER: 'scale-bench', AZURE_SUBSCRIPTION_ID: DEFAULT_SUBSCRIPTION_ID };
  // The chart's arenas unless the bench's environment says otherwise (empty: glibc's default).
  env.MALLOC_ARENA_MAX ??= await chartMallocArenaMax();
  if (env.MALLOC_ARENA_MAX === '') delete env.MALLOC_ARENA_MAX;
  return { cp, client, served, dir, args, env, cleanups };
}

/** A heap snapshot of the controller (its cwd is the run's directory); it takes memory of its own, so after the figures. */
async function heapSnapshot(c: Controller, dir: string, log: (msg: string) => void): Promise<void> {
  const before = new Set(await fs.readdir(dir));
  c.child.kill('SIGUSR2');
  for (let i = 0; i < 120 && !(await fs.readdir(dir)).some((f) => !before.has(f) && f.endsWith('.heapsnapshot')); i++) await sleep(1_000);
  log(`heap snapshot written in ${dir}`);
}

async function measure(w: World, main: string, o: MemoryRunOptions): Promise<ControllerMemoryEntry> {
  const { client } = w;
  let c = await startController(w, main, 'azflex-memory');
  await sleep(10_000);
  const startupRss = await rssMiB(c.child.pid!);
  const startupHeap = await heapMiB(c);
  o.log(`empty cluster: RSS ${startupRss} MiB, heap used ${startupHeap.heapUsed} MiB, external ${startupHeap.external} MiB`);

  const t0 = Date.now();
  const sampler = sampleHeap(c);
  await inBatches(Array.from({ length: o.pods }, (_, i) => i), 64, (i) => client.call('create pod', (x) => client.core.createNamespacedPod({ namespace: NAMESPACE, body: pod(i) }, x)).then(() => undefined));
  o.log(`${o.pods} pods created in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  let lastLog = Date.now();
  for (let left = o.pods; left > 0; ) {
    if (c.child.exitCode !== null) throw new Error(`the controller exited (${c.child.exitCode}) during the ramp: see ${w.dir}`);
    if (Date.now() - t0 > o.timeoutMs) throw new Error(`ramp: ${left} pods not Running after ${o.timeoutMs / 1000} s`);
    left = await actAsKubelets(client);
    if (Date.now() - lastLog > 30_000) {
      lastLog = Date.now();
      o.log(`ramp: ${left} pods not Running, ${await countOf(client, 'nodeclaims')} NodeClaims, RSS ${await rssMiB(c.child.pid!)} MiB`);
    }
    await sleep(2_000);
  }
  const rampSeconds = Math.round((Date.now() - t0) / 1000);
  o.log(`ramp: ${o.pods} pods Running in ${rampSeconds} s`);
  await sleep(o.settleMs ?? 30_000);
  const settled = { rss: await rssMiB(c.child.pid!), ...(await heapMiB(c)) };
  const peak = await sampler.stop();
  const peakRss = await peakRssMiB(c.child.pid!);
  if (o.heapSnapshot) await heapSnapshot(c, w.dir, o.log);

  await stopController(c);
  c = await startController(w, main, 'azflex-memory-restarted');
  await sleep(o.settleMs ?? 30_000);
  const restartPeak = await peakRssMiB(c.child.pid!);
  await stopController(c);
  return {
    pods: o.pods,
    nodes: await countOf(client, 'nodes'),
    nodeClaims: await countOf(client, 'nodeclaims'),
    nodeOptions: w.env.NODE_OPTIONS ?? '',
    mallocArenaMax: w.env.MALLOC_ARENA_MAX ?? null,
    startupRssMiB: startupRss,
    startupHeapUsedMiB: startupHeap.heapUsed,
    startupExternalMiB: startupHeap.external,
    peakRssMiB: peakRss,
    peakHeapUsedMiB: peak.heapUsed,
    peakExternalMiB: peak.external,
    settledRssMiB: settled.rss,
    settledHeapUsedMiB: settled.heapUsed,
    settledExternalMiB: settled.external,
    restartPeakRssMiB: restartPeak,
    rampSeconds,
  };
}

export async function measureControllerMemory(binaries: EnvtestBinaries, o: MemoryRunOptions): Promise<ControllerMemoryEntry> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'azflex-memory-'));
  const cleanups: Array<() => Promise<void> | void> = [];
  try {
    if (!o.prebuilt) o.log('bundling the controller as the image does');
    const main = o.prebuilt ?? (await compileController());
    const world = await startWorld(binaries, dir, o, cleanups);
    return await measure(world, main, o);
  } finally {
    for (const fn of cleanups.splice(0).reverse()) await fn();
    if (!process.env.AZFLEX_KEEP_ENVTEST && !o.heapSnapshot) await fs.rm(dir, { recursive: true, force: true });
  }
}
