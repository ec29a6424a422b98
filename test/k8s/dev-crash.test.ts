import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_CLUSTER_NAME } from '../../src/app/dev.js';
import { DEV_NAMESPACE, startDev, type DevEnvironment } from '../../src/dev/dev.js';
import { defaultFakeArmConfig, DEFAULT_SUBSCRIPTION_ID } from '../../src/sim/arm/defaults.js';
import { SeededRandom } from '../../src/sim/virtual-clock.js';
import { FAST_ARM_LATENCY } from './fixtures.js';
import { adminRequest, eventually, kubectl, type ControlPlaneInfo } from './harness.js';
import { SIM_NODE_AGENT } from '../../src/sim/userdata.js';
import { freePort } from '../../src/dev/control-plane.js';
import { managedIdentityEndpoint } from '../../src/dev/managed-identity.js';

const shared = inject('k8s');
const repo = path.resolve(import.meta.dirname, '../..');
const LEASE = `/apis/coordination.k8s.io/v1/namespaces/${DEV_NAMESPACE}/leases/azflex-controller`;



/**
 * The crash-at-any-await property on the real `azflex controller` process, with real leader
 * election and informers, in `azflex dev` during a quota storm: only three D8s VMs fit the
 * family quota, six are wanted, so VM creates are refused and leave ARM-reserved NICs. The
 * controller is SIGKILLed at random moments (one right after a VM PUT reached ARM),
 * kube-apiserver restarts under it, two replicas run and the leader is killed. Then the
 * workload goes, and ARM's own listing must hold no NIC, VM or disk, the cluster no NodeClaim.
 */
describe('azflex controller crashes during a quota storm in azflex dev', () => {
  let dev: DevEnvironment;
  let cp: ControlPlaneInfo;
  let stateDir: string;
  let identity: { url: string; close: () => void };
  const replicas = new Map<string, ChildProcess>();
  let generation = 0;

  const startReplica = async (): Promise<string> => {
    const id = `crash-${++generation}`;
    const out = createWriteStream(path.join(stateDir, `${id}.log`));
    const child = spawn(
      process.execPath,
      [
        path.join(repo, 'bin/azflex.mjs'), 'controller', `--cluster-name=${DEV_CLUSTER_NAME}`, `--kubeconfig=${dev.kubeconfigPath}`,
        `--leader-election-namespace=${DEV_NAMESPACE}`, '--lease-duration=6s', '--renew-deadline=4s', '--retry-period=1s',
        `--metrics-port=${await freePort()}`, `--arm-endpoint=${dev.armEndpoint}`, `--arm-ca-file=${dev.armCaCertPath}`,
        `--api-server-endpoint=${cp.server}`, `--cluster-ca-file=${path.join(cp.dir, 'pki', 'ca.crt')}`, '--sku-catalog=static', '--log-level=warn', `--node-agent-sha256=amd64=${SIM_NODE_AGENT.sha256.amd64}`,
      ],
      { env: { ...process.env, POD_NAME: id, IDENTITY_ENDPOINT: identity.url, IDENTITY_HEADER: 'crash', AZURE_SUBSCRIPTION_ID: DEFAULT_SUBSCRIPTION_ID }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    replicas.set(id, child);
    return id;
  };
  const kill = async (id: string): Promise<void> => {
    const child = replicas.get(id);
    replicas.delete(id);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  };
  const leader = async (): Promise<string | undefined> => ((await adminRequest(cp, 'GET', LEASE).catch(() => undefined)) as { spec?: { holderIdentity?: string } } | undefined)?.spec?.holderIdentity;
  const vmPuts = (): number => Object.values(dev.arm.armCalls()['vm.put'] ?? {}).reduce((a, b) => a + b, 0);
  const diag = async (): Promise<string> => {
    const got = await kubectl(cp, ['get', 'nodeclaims,nodes,pods', '-A', '-o', 'wide']);
    const s = dev.arm.snapshot();
    return `${got.stdout}\nARM: ${s.vms.length} VMs, ${s.nics.length} NICs, ${s.disks.length} disks, reservations ${JSON.stringify(s.reservations)}`;
  };
  const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, ms: number): Promise<T> =>
    eventually(what, fn, ms, 250).catch(async (e: unknown) => {
      throw new Error(`${String(e)}\n${await diag()}`);
    });

  beforeAll(async () => {
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'azflex-dev-crash-'));
    const base = defaultFakeArmConfig();
    dev = await startDev({
      stateDir,
      // Three D8s VMs fit: the fourth create is refused after its NIC exists. Usages are
      // unreadable (a role without usages/read), so the controller meets the quota by refusal and
      // the crashes land on the NIC-reservation path this test is for.
      armConfig: {
        ...base,
        regions: base.regions.map((r) => ({ ...r, familyQuotaCores: { ...r.familyQuotaCores, standardDSv5Family: 24 } })),
        latencyMs: FAST_ARM_LATENCY,
        usages: { readable: false },
      },
      seed: 11,
      binaries: shared.binaries,
      logLevel: 'warn',
      bootDelayMs: 500,
    });
    cp = dev.controlPlane;
    // The controller under test is the OS process below, not azflex dev's in-process one.
    await dev.stopController();
    identity = await managedIdentityEndpoint('crash');
    const files = ['azureflexnodeclass-cpu-eastus2.yaml', 'nodepool-cpu-d8s.yaml'].map((f) => path.join(dev.examplesDir, f));
    const applied = await kubectl(cp, ['apply', ...files.flatMap((f) => ['-f', f])]);
    expect(applied.code, applied.stderr).toBe(0);
    const patched = await kubectl(cp, ['patch', 'nodepool', 'cpu-d8s', '--type=merge', '-p', '{"spec":{"disruption":{"consolidationPolicy":"WhenEmpty","consolidateAfter":"5s"}}}']);
    expect(patched.code, patched.stderr).toBe(0);
  });

  afterAll(async () => {
    for (const id of [...replicas.keys()]) await kill(id);
    identity?.close();
    await dev?.stop();
    if (stateDir && !process.env.AZFLEX_KEEP_ENVTEST) await fs.rm(stateDir, { recursive: true, force: true });
  });

  it('five SIGKILLs, an API server restart and a killed leader leak no NIC, VM or disk and leave no NodeClaim', async () => {
    const random = new SeededRandom(27);
    let current = await startReplica();
    await adminRequest(cp, 'POST', '/apis/apps/v1/namespaces/default/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'storm', namespace: 'default' },
      spec: {
        replicas: 6,
        selector: { matchLabels: { app: 'storm' } },
        template: {
          metadata: { labels: { app: 'storm' } },
          spec: {
            terminationGracePeriodSeconds: 0,
            nodeSelector: { workload: 'azflex-cpu' },
            tolerations: [{ key: 'azflex.io/cross-region', operator: 'Exists', effect: 'NoSchedule' }],
            // One to a D8s node.
            containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '6' } } }],
          },
        },
      },
    });

    // 1. Killed right after a VM PUT reached ARM (its response may never be read).
    const puts = vmPuts();
    await waitFor('a VM PUT', async () => vmPuts() > puts, 90_000);
    await kill(current);
    let kills = 1;
    current = await startReplica();

    // 2. Four more kills at random moments of the storm.
    for (; kills < 5; kills++) {
      await new Promise((r) => setTimeout(r, 2_000 + Math.floor(random.next() * 8_000)));
      await kill(current);
      current = await startReplica();
    }

    // 3. kube-apiserver restarts under the running controller: its watches and lease renewals fail, then resume.
    await new Promise((r) => setTimeout(r, 3_000));
    await dev.controlPlane.restartApiServer();

    // 4. A second replica; the leader is killed and the standby takes over.
    const standby = await startReplica();
    const leading = await waitFor('a leader among the two replicas', async () => {
      const l = await leader();
      return l === current || l === standby ? l : undefined;
    }, 60_000);
    await kill(leading);
    const survivor = leading === current ? standby : current;
    await waitFor('the survivor leads', async () => (await leader()) === survivor, 60_000);
    expect(kills + 1).toBeGreaterThanOrEqual(6);

    // The storm played out: the quota's three nodes run a pod each, the other three wait.
    const phases = await waitFor('three storm pods Running', async () => {
      const list = (await adminRequest(cp, 'GET', '/api/v1/namespaces/default/pods?labelSelector=app%3Dstorm')) as { items: Array<{ status?: { phase?: string } }> };
      const got = list.items.map((p) => p.status?.phase ?? '');
      return got.filter((p) => p === 'Running').length >= 3 ? got : undefined;
    }, 180_000);
    expect(phases.filter((p) => p === 'Running')).toHaveLength(3);
    expect(phases.filter((p) => p === 'Pending')).toHaveLength(3);

    // 5. The workload goes: every node is consolidated away, every reserved NIC reaped once its 180 s end.
    await adminRequest(cp, 'DELETE', '/apis/apps/v1/namespaces/default/deployments/storm');
    await waitFor('no VM, NIC or disk in ARM', async () => {
      const s = dev.arm.snapshot();
      return s.vms.length === 0 && s.nics.length === 0 && s.disks.length === 0;
    }, 300_000);
    await waitFor('no NodeClaim left', async () => ((await adminRequest(cp, 'GET', '/apis/karpenter.sh/v1/nodeclaims')) as { items: unknown[] }).items.length === 0, 60_000);
    const leaks = dev.arm.leaks(new Set());
    expect({ nics: leaks.nics.length, vms: leaks.vms.length, disks: leaks.disks.length }).toEqual({ nics: 0, vms: 0, disks: 0 });
  }, 900_000);
});
