import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EnvtestBinaries } from '../../src/dev/control-plane.js';
import type { KubeClient } from '../../src/k8s/client.js';
import { armCallTotals, countBy, cpuSeconds, isSteadyLoad, peakRssMiB, readAudit } from './measure.js';
import { startScaleStack, type ScaleStack } from './stack.js';

/**
 * One size of the controller scale benchmark: a Deployment of `pods` pods (10 fit a D8s
 * node) ramps the cluster up to about pods/10 nodes; after a settling pause, a quiet window
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
  burstToNodeClaimsSeconds: number;
  burstToRunningSeconds: number;
  /** Served fake-ARM calls per operation, whole run. */
  armCalls: Record<string, number>;
  rampSeconds: number;
  steadyWindowSeconds: number;
  /** The quiet window's requests (watches and Lease renewals left out) by verb and resource. */
  steadyApiRequests: Record<string, number>;
  nodeClaims: number;
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

export async function measureControllerScale(binaries: EnvtestBinaries, o: ScaleRunOptions): Promise<ControllerScaleEntry> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'azflex-scale-'));
  const stack = await startScaleStack(binaries, dir, o.log);
  const pid = stack.controller.pid!;
  const { client } = stack;
  try {
    const t0 = Date.now();
    await client.call('create deployment', (x) => client.apps.createNamespacedDeployment({ namespace: NAMESPACE, body: deployment('scale-base', o.pods) }, x));
    await until('ramp', o, stack, async () => (await readyReplicas(client, 'scale-base')) >= o.pods, async () => undefined, 2_000);
    const rampTo = Date.now();
    const rampSeconds = (rampTo - t0) / 1000;
    o.log(`ramp: ${o.pods} pods Running in ${rampSeconds.toFixed(0)} s`);

    await sleep(o.settleMs ?? 30_000);
    const steadyFrom = Date.now();
    await sleep(o.steadyWindowMs ?? 60_000);
    const steadyTo = Date.now();

    const tb = Date.now();
    const before = await count(client, 'nodeclaims');
    const claimSteps: Array<{ at: number; n: number }> = [];
    await client.call('create deployment', (x) => client.apps.createNamespacedDeployment({ namespace: NAMESPACE, body: deployment('scale-burst', o.burstPods) }, x));
    let runningAt = 0;
    await until(
      'burst',
      o,
      stack,
      async () => {
        if ((await readyReplicas(client, 'scale-burst')) < o.burstPods) return false;
        runningAt = Date.now();
        return true;
      },
      async () => void claimSteps.push({ at: Date.now(), n: await count(client, 'nodeclaims') }),
      500,
    );
    const finalClaims = claimSteps.at(-1)!.n;
    const claimsAt = claimSteps.find((s) => s.n >= finalClaims)!.at;
    o.log(`burst: ${finalClaims - before} NodeClaims in ${((claimsAt - tb) / 1000).toFixed(1)} s, Running in ${((runningAt - tb) / 1000).toFixed(1)} s`);

    const audit = await readAudit(stack.auditLog);
    const steady = audit.filter((r) => r.at >= steadyFrom && r.at < steadyTo && isSteadyLoad(r));
    const perSecond = (n: number): number => Math.round((n / rampSeconds) * 100) / 100;
    const ramp = countBy(audit.filter((r) => r.at >= t0 && r.at < rampTo && isSteadyLoad(r)), (r) => r.verb);
    return {
      nodes: await count(client, 'nodes'),
      pods: o.pods + o.burstPods,
      peakRssMiB: await peakRssMiB(pid),
      cpuSeconds: await cpuSeconds(pid),
      steadyApiRequestsPerSecond: Math.round((steady.length / ((steadyTo - steadyFrom) / 1000)) * 1000) / 1000,
      apiRequestsByVerb: countBy(audit, (r) => r.verb),
      rampApiRequestsPerSecond: Object.fromEntries(Object.entries(ramp).map(([verb, n]) => [verb, perSecond(n)])),
      burstPods: o.burstPods,
      burstToNodeClaimsSeconds: Math.round((claimsAt - tb) / 100) / 10,
      burstToRunningSeconds: Math.round((runningAt - tb) / 100) / 10,
      armCalls: armCallTotals(stack.served.arm.armCalls()),
      rampSeconds: Math.round(rampSeconds),
      steadyWindowSeconds: Math.round((steadyTo - steadyFrom) / 1000),
      steadyApiRequests: countBy(steady, (r) => `${r.verb} ${r.resource}`),
      nodeClaims: finalClaims,
    };
  } finally {
    await stack.stop();
    if (!process.env.AZFLEX_KEEP_ENVTEST) await fs.rm(dir, { recursive: true, force: true });
  }
}
