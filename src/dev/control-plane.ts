import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as https from 'node:https';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { generate } from 'selfsigned';
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeConfigFromYaml } from '../k8s/client.js';
import { kwokConfigYaml, schedulerConfigYaml } from './component-configs.js';

/**
 * A real control plane for tests, `azflex dev` and the scale benchmark: etcd + kube-apiserver
 * (+ optionally kube-scheduler, kube-controller-manager and KWOK's fake kubelets) on loopback, serving TLS with a throwaway CA, RBAC authorization, and ServiceAccount tokens
 * issued by the TokenRequest API. Admin access is a client certificate in system:masters;
 * RBAC tests mint a ServiceAccount token and talk as that SA.
 *
 * etcd listens on plain HTTP on 127.0.0.1 (as controller-runtime's envtest does): it is
 * reachable only from this machine, and the tests use etcd's HTTP gateway to force a
 * compaction (which is how a real 410 Gone is produced).
 */

export interface EnvtestBinaries {
  etcd: string;
  kubeApiserver: string;
  kubeScheduler: string;
  kubeControllerManager: string;
  kwok: string;
  helm: string;
  kubectl: string;
}

export interface ControlPlaneInfo {
  /** https://127.0.0.1:port */
  server: string;
  /** PEM, base64 (kubeconfig certificate-authority-data). */
  caData: string;
  adminCertData: string;
  adminKeyData: string;
  kubeconfigPath: string;
  etcdUrl: string;
  dir: string;
  binaries: EnvtestBinaries;
}

export interface ControlPlane extends ControlPlaneInfo {
  /** SIGTERM then a fresh kube-apiserver on the same port and etcd (a control-plane upgrade or crash). */
  restartApiServer(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * KWOK manages exactly the Nodes carrying this label: removing it is a kubelet going silent
 * (its Lease stops renewing, and the node lifecycle controller takes over), which a label
 * selector turns into a watch DELETED for KWOK (an annotation selector would not).
 */
export const KWOK_MANAGED_LABEL = 'kwok.x-k8s.io/managed';

/** Client QPS of the scheduler and controller-manager in a `scale` control plane (test harness). */
const SCALE_QPS = 300;
/** node-monitor-grace-period in a `scale` control plane (test harness; kube's default is 50 s). */
const SCALE_NODE_GRACE_SECONDS = 300;

export interface ControllerManagerOptions {
  /** How long a Node may go without a heartbeat before it is Unknown and tainted (kube default 50 s). */
  nodeMonitorGracePeriodSeconds?: number;
}

export interface StartOptions {
  binaries: EnvtestBinaries;
  /** Also run kube-scheduler (for `azflex dev`-style runs). */
  scheduler?: boolean;
  /** Also run kube-controller-manager (Deployments, ReplicaSets, Jobs, node lifecycle, pod GC, PV binding). */
  controllerManager?: boolean | ControllerManagerOptions;
  /** Also run KWOK: Nodes labelled KWOK_MANAGED_LABEL=true get heartbeats, their pods run. */
  kwok?: boolean;
  /** The API server's watch cache (a real cluster's); off by default so an etcd compaction yields 410 Gone. */
  watchCache?: boolean;
  /** An audit policy (YAML); events go as JSON lines to `<dir>/audit.log`. */
  auditPolicy?: string;
  /**
   * Test-harness settings for thousands of Nodes (the scale benchmark): scheduler and
   * controller-manager clients at 300 QPS (defaults 50 and 20), no in-flight request limits on
   * the API server, the scheduler scoring a tenth of the Nodes, without preemption (the
   * benchmark's pods share one priority), and a 5-minute node-monitor grace period.
   */
  scale?: boolean;
  /** Where logs and data live; a fresh temp dir when omitted. */
  dir?: string;
  startTimeoutMs?: number;
}

/** A free loopback port (for servers the tests, the bench and azflex dev start as processes). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * CA, serving cert (SANs for loopback and the in-cluster names), admin client cert in
 * system:masters, and the ServiceAccount signing key pair. Pure Node (the selfsigned npm
 * package and node:crypto), so a machine without the openssl CLI runs the tests too.
 */
async function generatePki(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  const notAfterDate = new Date(Date.now() + 2 * 24 * 3600 * 1000);
  const ca = await generate([{ name: 'commonName', value: 'azflex-test-ca' }], {
    algorithm: 'sha256',
    keySize: 2048,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const signed = (cn: string, org: string | undefined, extensions: Parameters<typeof generate>[1]) =>
    generate([...(org ? [{ name: 'organizationName', value: org }] : []), { name: 'commonName', value: cn }], {
      algorithm: 'sha256',
      keySize: 2048,
      notAfterDate,
      ca: { key: ca.private, cert: ca.cert },
      ...extensions,
    });
  const serving = await signed('kube-apiserver', undefined, {
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '10.0.0.1' },
          ...['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'].map((value) => ({ type: 2 as const, value })),
        ],
      },
    ],
  });
  const admin = await signed('azflex-test-admin', 'system:masters', {
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
  });
  const sa = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  const files: Record<string, string> = {
    'ca.crt': ca.cert,
    'serving.crt': serving.cert,
    'serving.key': serving.private,
    'admin.crt': admin.cert,
    'admin.key': admin.private,
    'sa.key': sa.privateKey,
    'sa.pub': sa.publicKey,
  };
  for (const [name, pem] of Object.entries(files)) await fs.writeFile(path.join(dir, name), pem, { mode: 0o600 });
}

function spawnLogged(bin: string, args: string[], logFile: string): ChildProcess {
  const out = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  return child;
}

async function tailOf(file: string): Promise<string> {
  try {
    const text = await fs.readFile(file, 'utf8');
    return text.slice(-3000);
  } catch {
    return '(no log)';
  }
}

function httpsGet(url: string, tls: https.RequestOptions): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ...tls, timeout: 5000 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

async function waitFor(what: string, deadline: number, probe: () => Promise<boolean>, exited: () => string | undefined): Promise<void> {
  for (;;) {
    const dead = exited();
    if (dead) throw new Error(`${what}: process exited (${dead})`);
    try {
      if (await probe()) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`${what}: not ready in time`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

export function adminKubeConfigYaml(info: Pick<ControlPlaneInfo, 'server' | 'caData' | 'adminCertData' | 'adminKeyData'>): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: envtest',
    '  cluster:',
    `    server: ${info.server}`,
    `    certificate-authority-data: ${info.caData}`,
    'users:',
    '- name: admin',
    '  user:',
    `    client-certificate-data: ${info.adminCertData}`,
    `    client-key-data: ${info.adminKeyData}`,
    'contexts:',
    '- name: envtest',
    '  context:',
    '    cluster: envtest',
    '    user: admin',
    'current-context: envtest',
    '',
  ].join('\n');
}

export async function startControlPlane(o: StartOptions): Promise<ControlPlane> {
  const dir = o.dir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'azflex-envtest-')));
  const pki = path.join(dir, 'pki');
  await generatePki(pki);
  const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
  const startTimeoutMs = o.startTimeoutMs ?? 90_000;
  const deadline = Date.now() + startTimeoutMs;
  const procs: ChildProcess[] = [];
  const stopAll = async (): Promise<void> => {
    for (const p of [...procs].reverse()) await stopProcess(p);
  };

  try {
    procs.push(await startEtcd(o.binaries.etcd, dir, etcdUrl, peerPort, deadline));
    if (o.auditPolicy) await fs.writeFile(path.join(dir, 'audit-policy.yaml'), o.auditPolicy);
    const tls = { ca: await fs.readFile(path.join(pki, 'ca.crt')), cert: await fs.readFile(path.join(pki, 'admin.crt')), key: await fs.readFile(path.join(pki, 'admin.key')) };
    const server = `https://127.0.0.1:${apiPort}`;
    const apiServer = new ApiServerProcess(o.binaries.kubeApiserver, apiServerArgs(o, dir, etcdUrl, apiPort), { dir, server, tls }, procs);
    await apiServer.start(deadline);

    const info: ControlPlaneInfo = {
      server,
      caData: tls.ca.toString('base64'),
      adminCertData: tls.cert.toString('base64'),
      adminKeyData: tls.key.toString('base64'),
      kubeconfigPath: path.join(dir, 'admin.kubeconfig'),
      etcdUrl,
      dir,
      binaries: o.binaries,
    };
    await fs.writeFile(info.kubeconfigPath, adminKubeConfigYaml(info), { mode: 0o600 });
    await startAddOns(o, info, procs);

    return {
      ...info,
      restartApiServer: () => apiServer.restart(Date.now() + startTimeoutMs),
      stop: async () => {
        await stopAll();
        if (!o.dir && !process.env.AZFLEX_KEEP_ENVTEST) await fs.rm(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

/** How a process ended, or undefined while it runs. */
function exitStatus(p: ChildProcess): string | undefined {
  return p.exitCode !== null ? `exit ${p.exitCode}` : p.signalCode !== null ? `signal ${p.signalCode}` : undefined;
}

async function startEtcd(bin: string, dir: string, etcdUrl: string, peerPort: number, deadline: number): Promise<ChildProcess> {
  const etcd = spawnLogged(
    bin,
    [
      `--data-dir=${path.join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
      // Test data is disposable; fsync dominates etcd latency on CI disks.
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
    path.join(dir, 'etcd.log'),
  );
  await waitFor(
    'etcd',
    deadline,
    async () => {
      const res = await fetch(`${etcdUrl}/health`);
      return res.ok;
    },
    () => exitStatus(etcd),
  );
  return etcd;
}

function apiServerArgs(o: StartOptions, dir: string, etcdUrl: string, apiPort: number): string[] {
  const pki = path.join(dir, 'pki');
  return [
    `--etcd-servers=${etcdUrl}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${apiPort}`,
    `--cert-dir=${pki}`,
    `--tls-cert-file=${path.join(pki, 'serving.crt')}`,
    `--tls-private-key-file=${path.join(pki, 'serving.key')}`,
    `--client-ca-file=${path.join(pki, 'ca.crt')}`,
    '--authorization-mode=RBAC',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${path.join(pki, 'sa.pub')}`,
    `--service-account-signing-key-file=${path.join(pki, 'sa.key')}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    // Tests create pods in namespaces the moment they exist, before the controller-manager
    // (when it runs at all) has made the "default" SA this admission plugin insists on.
    '--disable-admission-plugins=ServiceAccount',
    // Without it watches go to etcd directly, so an etcd compaction yields a genuine 410 Gone.
    `--watch-cache=${o.watchCache ?? false}`,
    '--enable-priority-and-fairness=false',
    // Test harness at scale: KWOK's thousands of fake kubelets queue rather than get 429s.
    ...(o.scale ? ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0'] : []),
    '--profiling=false',
    '--allow-privileged=true',
    ...(o.auditPolicy
      ? [`--audit-policy-file=${path.join(dir, 'audit-policy.yaml')}`, `--audit-log-path=${path.join(dir, 'audit.log')}`, '--audit-log-format=json', '--audit-log-mode=batch']
      : []),
    '--v=1',
  ];
}

/** The kube-apiserver process, which restartApiServer replaces on the same port and etcd. */
class ApiServerProcess {
  private current: ChildProcess | undefined;

  constructor(
    private readonly bin: string,
    private readonly args: string[],
    private readonly at: { dir: string; server: string; tls: https.RequestOptions },
    /** The control plane's processes, in start order (stopped in reverse). */
    private readonly procs: ChildProcess[],
  ) {}

  async start(until: number): Promise<void> {
    const logFile = path.join(this.at.dir, 'kube-apiserver.log');
    const apiserver = spawnLogged(this.bin, this.args, logFile);
    this.current = apiserver;
    // Second in line after etcd: stopped before it, after everything that talks to it.
    this.procs.splice(1, 0, apiserver);
    await waitFor(
      'kube-apiserver',
      until,
      async () => (await httpsGet(`${this.at.server}/readyz`, this.at.tls)).status === 200,
      () => exitStatus(apiserver),
    ).catch(async (e: unknown) => {
      throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- kube-apiserver.log ---\n${await tailOf(logFile)}`);
    });
  }

  async restart(until: number): Promise<void> {
    const old = this.current;
    if (old) {
      this.procs.splice(this.procs.indexOf(old), 1);
      await stopProcess(old);
    }
    await this.start(until);
  }
}

/** kube-scheduler, kube-controller-manager and KWOK, as the options ask, each added to `procs` as it starts. */
async function startAddOns(o: StartOptions, info: ControlPlaneInfo, procs: ChildProcess[]): Promise<void> {
  if (o.scheduler) procs.push(await spawnScheduler(o.binaries.kubeScheduler, info, o.scale === true));
  // Test harness at scale: KWOK renewing 1,000 Leases on a loaded machine runs late, and a Node
  // marked Unknown gets its pods marked NotReady, which KWOK never turns back.
  const grace = (typeof o.controllerManager === 'object' ? o.controllerManager.nodeMonitorGracePeriodSeconds : undefined) ?? (o.scale ? SCALE_NODE_GRACE_SECONDS : 50);
  const qps = o.scale ? [`--kube-api-qps=${SCALE_QPS}`, `--kube-api-burst=${SCALE_QPS * 2}`] : [];
  if (o.controllerManager) procs.push(spawnControllerManager(o.binaries.kubeControllerManager, info, grace, qps));
  // A kubelet's 40 s Lease against the default 50 s grace; a shorter grace gets a Lease that
  // still renews (every quarter of it) well inside it.
  if (o.kwok) procs.push(await spawnKwok(o.binaries.kwok, info, Math.min(40, Math.max(4, Math.floor(grace * 0.8)))));
}

async function spawnScheduler(bin: string, info: ControlPlaneInfo, scale: boolean): Promise<ChildProcess> {
  const config = path.join(info.dir, 'kube-scheduler.yaml');
  const settings = scale ? { qps: SCALE_QPS, percentageOfNodesToScore: 10, noPreemption: true } : {};
  await fs.writeFile(config, schedulerConfigYaml({ kubeconfigPath: info.kubeconfigPath, ...settings }));
  return spawnLogged(bin, [`--config=${config}`, '--v=2', '--bind-address=127.0.0.1', `--secure-port=${await freePort()}`], path.join(info.dir, 'kube-scheduler.log'));
}

/**
 * kube-controller-manager with its default controllers (all but the bootstrap-token ones):
 * what envtest lacks. No cloud provider, so a Node's lifecycle is the node lifecycle
 * controller's (NotReady/unreachable taints, taint-based eviction) and azflex's.
 */
function spawnControllerManager(bin: string, info: ControlPlaneInfo, graceSeconds: number, qps: string[]): ChildProcess {
  const pki = path.join(info.dir, 'pki');
  return spawnLogged(
    bin,
    [
      `--kubeconfig=${info.kubeconfigPath}`,
      '--leader-elect=false',
      // No serving endpoint: nothing scrapes it, and it would need delegated authentication.
      '--secure-port=0',
      `--service-account-private-key-file=${path.join(pki, 'sa.key')}`,
      `--root-ca-file=${path.join(pki, 'ca.crt')}`,
      '--node-monitor-period=2s',
      `--node-monitor-grace-period=${graceSeconds}s`,
      ...qps,
      '--v=1',
    ],
    path.join(info.dir, 'kube-controller-manager.log'),
  );
}

/**
 * KWOK, the fake kubelets: for each Node labelled KWOK_MANAGED_LABEL=true it fills in the
 * status (Ready, addresses; capacity as registered), renews the node Lease as a kubelet does,
 * and runs the pods bound there (Running with an IP, deletion confirmed).
 */
async function spawnKwok(bin: string, info: ControlPlaneInfo, leaseSeconds: number): Promise<ChildProcess> {
  const config = path.join(info.dir, 'kwok.yaml');
  await fs.writeFile(config, kwokConfigYaml());
  return spawnLogged(
    bin,
    [
      `--config=${config}`,
      `--kubeconfig=${info.kubeconfigPath}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-label-selector=${KWOK_MANAGED_LABEL}=true`,
      // Renewed every quarter of it, as a kubelet does; the Node's status every few minutes (kwok.yaml).
      `--node-lease-duration-seconds=${leaseSeconds}`,
      '--cidr=10.244.0.0/16',
      '--node-ip=10.224.0.1',
    ],
    path.join(info.dir, 'kwok.log'),
  );
}

/** Admin credentials (client certificate in system:masters) for in-process clients. */
export function adminKubeConfig(info: ControlPlaneInfo): KubeConfig {
  return kubeConfigFromYaml(adminKubeConfigYaml(info), info.dir);
}
