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

/**
 * A real control plane for tests and `azflex dev`: etcd + kube-apiserver (+ optionally kube-scheduler) on
 * loopback, serving TLS with a throwaway CA, RBAC authorization, and ServiceAccount tokens
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
  stop(): Promise<void>;
}

export interface StartOptions {
  binaries: EnvtestBinaries;
  /** Also run kube-scheduler (for `azflex dev`-style runs). */
  scheduler?: boolean;
  /** Where logs and data live; a fresh temp dir when omitted. */
  dir?: string;
  startTimeoutMs?: number;
}

async function freePort(): Promise<number> {
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
  const deadline = Date.now() + (o.startTimeoutMs ?? 90_000);
  const procs: ChildProcess[] = [];
  const exitOf = (p: ChildProcess) => (): string | undefined =>
    p.exitCode !== null ? `exit ${p.exitCode}` : p.signalCode !== null ? `signal ${p.signalCode}` : undefined;

  const stopAll = async (): Promise<void> => {
    for (const p of [...procs].reverse()) await stopProcess(p);
  };

  try {
    const etcd = spawnLogged(
      o.binaries.etcd,
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
    procs.push(etcd);
    await waitFor(
      'etcd',
      deadline,
      async () => {
        const res = await fetch(`${etcdUrl}/health`);
        return res.ok;
      },
      exitOf(etcd),
    );

    const apiserver = spawnLogged(
      o.binaries.kubeApiserver,
      [
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
        // No controller-manager runs, so nothing would create the "default" SA that the
        // ServiceAccount admission plugin insists on for every pod.
        '--disable-admission-plugins=ServiceAccount',
        // Watches go to etcd directly, so an etcd compaction yields a genuine 410 Gone.
        '--watch-cache=false',
        '--enable-priority-and-fairness=false',
        '--profiling=false',
        '--allow-privileged=true',
        '--v=1',
      ],
      path.join(dir, 'kube-apiserver.log'),
    );
    procs.push(apiserver);

    const ca = await fs.readFile(path.join(pki, 'ca.crt'));
    const cert = await fs.readFile(path.join(pki, 'admin.crt'));
    const key = await fs.readFile(path.join(pki, 'admin.key'));
    const server = `https://127.0.0.1:${apiPort}`;
    await waitFor(
      'kube-apiserver',
      deadline,
      async () => (await httpsGet(`${server}/readyz`, { ca, cert, key })).status === 200,
      exitOf(apiserver),
    ).catch(async (e: unknown) => {
      throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- kube-apiserver.log ---\n${await tailOf(path.join(dir, 'kube-apiserver.log'))}`);
    });

    const info: ControlPlaneInfo = {
      server,
      caData: ca.toString('base64'),
      adminCertData: cert.toString('base64'),
      adminKeyData: key.toString('base64'),
      kubeconfigPath: path.join(dir, 'admin.kubeconfig'),
      etcdUrl,
      dir,
      binaries: o.binaries,
    };
    await fs.writeFile(info.kubeconfigPath, adminKubeConfigYaml(info), { mode: 0o600 });

    if (o.scheduler) {
      const scheduler = spawnLogged(
        o.binaries.kubeScheduler,
        [`--kubeconfig=${info.kubeconfigPath}`, '--leader-elect=false', '--v=2', '--bind-address=127.0.0.1', `--secure-port=${await freePort()}`],
        path.join(dir, 'kube-scheduler.log'),
      );
      procs.push(scheduler);
    }

    return {
      ...info,
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


/** Admin credentials (client certificate in system:masters) for in-process clients. */
export function adminKubeConfig(info: ControlPlaneInfo): KubeConfig {
  return kubeConfigFromYaml(adminKubeConfigYaml(info), info.dir);
}
