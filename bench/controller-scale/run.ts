import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EnvtestBinaries } from '../../src/dev/control-plane.js';
import { PatchStrategy, type KubeClient } from '../../src/k8s/client.js';
import { armCallTotals, countBy, cpuSeconds, isSteadyLoad, peakRssMiB, readAudit } from './measure.js';
import { startScaleStack, type ScaleStack } from './stack.js';

/**
 * One size of the controller scale benchmark: a Deployment of `pods` pods (10 fit a D8s
 * node) ramps the cluster up to about pods/10 nodes, a burst at a time; after a settling pause, a quiet window
 * counts the API requests the controller sends when nothing changes; then a second
 * Deployment of `burstPods` pods arrives at once, timed to all its NodeClaims and to all its
 * pods Running.
 */

export interface ControllerScaleEntry {
  nodes: number;
  pods: number;
  peakRssMiB: number;
  cpuSeconds: number;
  steadyApiRequestsPerSecond: number;
  /** Whole run, every verb (watches included), as the API server's audit log counted them. */
  apiRequestsByVerb: Record<string, number>;
  /** The ramp's requests per second by verb (watches and Lease renewals left out, as in steady state). */
  rampApiRequestsPerSecond: Record<string, number>;
  burstPods: number;
  /**
   * From the burst's 1,000 pods all pending (each marked Unschedulable by kube-scheduler, or
   * already bound) to all their NodeClaims created: the controller's share, Karpenter's batch
   * window plus a pass. The target (15 s) is on this figure.
   */
  burstToNodeClaimsSeconds: number;
  /** From the burst Deployment's creation to all its pods pending: the ReplicaSet controller's and kube-scheduler's share. */
  burstPendingSeconds: number;
  /** From the burst Deployment's creation to all its NodeClaims created (the two above overlap: claims come while pods still turn pending). */
  burstDeploymentToNodeClaimsSeconds: number;
  /** From the burst Deployment's creation to all its pods Running. */
  burstToRunningSeconds: number;
  /** Served fake-ARM calls per operation, whole run. */
  armCalls: Record<string, number>;
  rampSeconds: number;
  steadyWindowSeconds: number;
  /** The quiet window's requests (watches and Lease renewals left out) by verb and resource. */
  steadyApiRequests: Record<string, number>;
  /** NodeClaims at the end, and those the burst added. */
  nodeClaims: number;
  burstNodeClaims: number;
}

export interface ScaleRunOptions {
  pods: number;
  burstPods: number;
  /** Give up on the ramp (or the burst) after this long. */
  timeoutMs: number;
  steadyWindowMs?: number;
  settleMs?: number;
  log: (msg: string) => void;
}

const NAMESPACE = 'default';

function deployment(name: string, replicas: number): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 0,
          // 750m: ten to a D8s_v5 once its kube-reserved is taken off.
          containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '750m', memory: '512Mi' } } }],
        },
      },
    },
  };
}

async function count(client: KubeClient, what: 'nodes' | 'nodeclaims'): Promise<number> {
  // limit=1: the API server says how many are left without sending them.
  const res = (what === 'nodes'
    ? await client.call('count nodes', (o) => client.core.listNode({ limit: 1 }, o))
    : await client.call('count nodeclaims', (o) => client.custom.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims', limit: 1 }, o))) as unknown as {
    items: unknown[];
    metadata?: { remainingItemCount?: number };
  };
  return res.items.length + (res.metadata?.remainingItemCount ?? 0);
}

async function readyReplicas(client: KubeClient, name: string): Promise<number> {
  const d = (await client.call('get deployment', (o) => client.apps.readNamespacedDeployment({ name, namespace: NAMESPACE }, o))) as unknown as { status?: { readyReplicas?: number } };
  return d.status?.readyReplicas ?? 0;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls until `done`, recording the NodeClaim count at each step; throws after the timeout. */
async function until(what: string, o: ScaleRunOptions, stack: ScaleStack, done: () => Promise<boolean>, onStep: () => Promise<void>, stepMs: number): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  let lastLog = 0;
  for (;;) {
    if (stack.controller.exitCode !== null) throw new Error(`the controller exited (${stack.controller.exitCode}) during ${what}`);
    await onStep();
    if (await done()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not done in ${o.timeoutMs / 1000} s`);
    if (Date.now() - lastLog > 30_000) {
      lastLog = Date.now();
      o.log(`${what}: ${await count(stack.client, 'nodeclaims')} NodeClaims, ${await count(stack.client, 'nodes')} Nodes`);
    }
    await sleep(stepMs);
  }
}

interface PodObj {
  status?: { conditions?: Array<{ type: string; status: string; reason?: string }> };
}

/** Burst pods the scheduler has tried at least once: marked Unschedulable (pending, for Karpenter) or already bound. */
async function triedPods(client: KubeClient, name: string): Promise<number> {
  const list = (await client.call('list burst pods', (o) => client.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `app=${name}` }, o))) as unknown as { items: PodObj[] };
  return list.items.filter((p) => p.status?.conditions?.some((c) => c.type === 'PodScheduled' && (c.status === 'True' || c.reason === 'Unschedulable'))).length;
}

/**
 * The base Deployment grows a burst at a time, each step Running before the next: a real
 * cluster grows so, and it keeps the scheduler's queue of pending pods (each retried whenever
 * a Node joins) at one burst rather than the whole size.
 */
async function ramp(client: KubeClient, o: ScaleRunOptions, stack: ScaleStack): Promise<void> {
  for (let replicas = Math.min(o.burstPods, o.pods); ; replicas = Math.min(replicas + o.burstPods, o.pods)) {
    if (replicas === Math.min(o.burstPods, o.pods)) {
      await client.call('create deployment', (x) => client.apps.createNamespacedDeployment({ namespace: NAMESPACE, body: deployment('scale-base', replicas) }, x));
    } else {
      const body = { spec: { replicas } };
      await client.call('scale deployment', (x) => client.apps.patchNamespacedDeployment({ name: 'scale-base', namespace: NAMESPACE, body }, x), { patch: PatchStrategy.MergePatch });
    }
    await until(`ramp to ${replicas}`, o, stack, async () => (await readyReplicas(client, 'scale-base')) >= replicas, async () => undefined, 2_000);
    if (replicas >= o.pods) return;
  }
}

interface BurstTimes {
  /** From the Deployment's creation to every pod tried by the scheduler (pending or bound). */
  pendingSeconds: number;
  /** From every pod pending to the last NodeClaim. */
  nodeClaimsSeconds: number;
  /** From the Deployment's creation to the last NodeClaim. */
  deploymentToNodeClaimsSeconds: number;
  runningSeconds: number;
  nodeClaims: number;
}

async function burst(client: KubeClient, o: ScaleRunOptions, stack: ScaleStack): Promise<BurstTimes> {
  const tb = Date.now();
  const before = await count(client, 'nodeclaims');
  const claimSteps: Array<{ at: number; n: number }> = [];
  await client.call('create deployment', (x) => client.apps.createNamespacedDeployment({ namespace: NAMESPACE, body: deployment('scale-burst', o.burstPods) }, x));
  let pendingAt = 0;
  let runningAt = 0;
  const step = async (): Promise<void> => {
    claimSteps.push({ at: Date.now(), n: await count(client, 'nodeclaims') });
    if (!pendingAt && (await triedPods(client, 'scale-burst')) >= o.burstPods) pendingAt = Date.now();
  };
  const done = async (): Promise<boolean> => {
    if ((await readyReplicas(client, 'scale-burst')) < o.burstPods) return false;
    runningAt = Date.now();
    return true;
  };
  await until('burst', o, stack, done, step, 500);
  const finalClaims = claimSteps.at(-1)!.n;
  const claimsAt = claimSteps.find((s) => s.n >= finalClaims)!.at;
  const seconds = (ms: number): number => Math.round(ms / 100) / 10;
  const out = {
    pendingSeconds: seconds(pendingAt - tb),
    nodeClaimsSeconds: seconds(Math.max(0, claimsAt - pendingAt)),
    deploymentToNodeClaimsSeconds: seconds(claimsAt - tb),
    runningSeconds: seconds(runningAt - tb),
    nodeClaims: finalClaims - before,
  };
  o.log(`burst: all pending in ${out.pendingSeconds} s, ${out.nodeClaims} NodeClaims ${out.nodeClaimsSeconds} s later, Running ${out.runningSeconds} s after the Deployment`);
  return out;
}

export async function measureControllerScale(binaries: EnvtestBinaries, o: ScaleRunOptions): Promise<ControllerScaleEntry> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'azflex-scale-'));
  const stack = await startScaleStack(binaries, dir, o.log);
  const pid = stack.controller.pid!;
  const { client } = stack;
  try {
    const t0 = Date.now();
    await ramp(client, o, stack);
    const rampTo = Date.now();
    const rampSeconds = (rampTo - t0) / 1000;
    o.log(`ramp: ${o.pods} pods Running in ${rampSeconds.toFixed(0)} s`);

    await sleep(o.settleMs ?? 30_000);
    const steadyFrom = Date.now();
    await sleep(o.steadyWindowMs ?? 60_000);
    const steadyTo = Date.now();

    const b = await burst(client, o, stack);

    const audit = await readAudit(stack.auditLog);
    const steady = audit.filter((r) => r.at >= steadyFrom && r.at < steadyTo && isSteadyLoad(r));
    const perSecond = (n: number): number => Math.round((n / rampSeconds) * 100) / 100;
    const rampRequests = countBy(audit.filter((r) => r.at >= t0 && r.at < rampTo && isSteadyLoad(r)), (r) => r.verb);
    return {
      nodes: await count(client, 'nodes'),
      pods: o.pods + o.burstPods,
      peakRssMiB: await peakRssMiB(pid),
      cpuSeconds: await cpuSeconds(pid),
      steadyApiRequestsPerSecond: Math.round((steady.length / ((steadyTo - steadyFrom) / 1000)) * 1000) / 1000,
      apiRequestsByVerb: countBy(audit, (r) => r.verb),
      rampApiRequestsPerSecond: Object.fromEntries(Object.entries(rampRequests).map(([verb, n]) => [verb, perSecond(n)])),
      burstPods: o.burstPods,
      burstToNodeClaimsSeconds: b.nodeClaimsSeconds,
      burstPendingSeconds: b.pendingSeconds,
      burstDeploymentToNodeClaimsSeconds: b.deploymentToNodeClaimsSeconds,
      burstToRunningSeconds: b.runningSeconds,
      armCalls: armCallTotals(stack.served.arm.armCalls()),
      rampSeconds: Math.round(rampSeconds),
      steadyWindowSeconds: Math.round((steadyTo - steadyFrom) / 1000),
      steadyApiRequests: countBy(steady, (r) => `${r.verb} ${r.resource}`),
      nodeClaims: await count(client, 'nodeclaims'),
      burstNodeClaims: b.nodeClaims,
    };
  } finally {
    await stack.stop();
    if (!process.env.AZFLEX_KEEP_ENVTEST) await fs.rm(dir, { recursive: true, force: true });
  }
}
