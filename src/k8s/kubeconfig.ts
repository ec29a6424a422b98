import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as https from 'node:https';
import { homedir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';

const execFileP = promisify(execFile);

/**
 * How to reach and authenticate to an API server.
 *
 * Why not just client-node's KubeConfig: @kubernetes/client-node 2.0.1 imports undici 8 at
 * module load, and undici 8 requires Node >= 22.19 (it binds zlib.createZstdDecompress at
 * import time), so on the Node 20 this repo supports, `import '@kubernetes/client-node'`
 * throws. This loader covers what a controller needs — in-cluster ServiceAccount (with
 * token rotation), kubeconfig files with client certs, bearer tokens, token files and exec
 * credential plugins (kubelogin) — and `authFromClientNode` bridges a client-node KubeConfig
 * where that library loads (Node >= 22.19), without importing it here.
 */
export interface KubeAuth {
  server: string;
  /** HTTPS agent carrying CA and client certificate; reused across requests (keep-alive). */
  agent: https.Agent | undefined;
  /** Extra headers per request (Authorization), re-evaluated each time so rotated tokens apply. */
  headers(): Promise<Record<string, string>>;
}

interface NamedCluster {
  name: string;
  cluster: {
    server: string;
    'certificate-authority'?: string;
    'certificate-authority-data'?: string;
    'insecure-skip-tls-verify'?: boolean;
    'tls-server-name'?: string;
  };
}
interface ExecConfig {
  command: string;
  args?: string[];
  env?: Array<{ name: string; value: string }>;
  apiVersion?: string;
}
interface NamedUser {
  name: string;
  user: {
    'client-certificate'?: string;
    'client-certificate-data'?: string;
    'client-key'?: string;
    'client-key-data'?: string;
    token?: string;
    tokenFile?: string;
    exec?: ExecConfig;
  };
}
interface KubeConfigFile {
  clusters?: NamedCluster[];
  users?: NamedUser[];
  contexts?: Array<{ name: string; context: { cluster: string; user: string } }>;
  'current-context'?: string;
}

function readMaybe(file: string | undefined, data: string | undefined, baseDir: string): Buffer | undefined {
  if (data) return Buffer.from(data, 'base64');
  if (file) return readFileSync(path.resolve(baseDir, file));
  return undefined;
}

function agentFor(opts: { ca?: Buffer; cert?: Buffer; key?: Buffer; insecure?: boolean; servername?: string }): https.Agent {
  const ao: https.AgentOptions = { keepAlive: true };
  if (opts.ca) ao.ca = opts.ca;
  if (opts.cert) ao.cert = opts.cert;
  if (opts.key) ao.key = opts.key;
  if (opts.insecure) ao.rejectUnauthorized = false;
  if (opts.servername) ao.servername = opts.servername;
  return new https.Agent(ao);
}

function bearer(token: string | undefined): Record<string, string> {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** Runs a client.authentication.k8s.io exec plugin, caching its token until it expires. */
function execTokenSource(exec: ExecConfig): () => Promise<string | undefined> {
  let cached: { token: string; expiresAt: number } | undefined;
  return async () => {
    // Wall clock is right here: credential expiry is wall-clock time issued by the plugin.
    if (cached && cached.expiresAt - 60_000 > Date.now()) return cached.token;
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const e of exec.env ?? []) env[e.name] = e.value;
    env.KUBERNETES_EXEC_INFO = JSON.stringify({
      apiVersion: exec.apiVersion ?? 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { interactive: false },
    });
    const { stdout } = await execFileP(exec.command, exec.args ?? [], { env });
    const cred = JSON.parse(stdout) as { status?: { token?: string; expirationTimestamp?: string } };
    const token = cred.status?.token;
    if (!token) throw new Error(`exec credential plugin ${exec.command} returned no token`);
    const exp = cred.status?.expirationTimestamp ? Date.parse(cred.status.expirationTimestamp) : Date.now() + 5 * 60_000;
    cached = { token, expiresAt: exp };
    return token;
  };
}

/** Parses kubeconfig YAML (one file) for its current (or the named) context. */
export function authFromKubeConfigYaml(text: string, baseDir: string, contextName?: string): KubeAuth {
  const cfg = (parseYaml(text) ?? {}) as KubeConfigFile;
  const ctxName = contextName ?? cfg['current-context'];
  const ctx = cfg.contexts?.find((c) => c.name === ctxName)?.context;
  if (!ctx) throw new Error(`kubeconfig has no context "${ctxName ?? ''}"`);
  const cluster = cfg.clusters?.find((c) => c.name === ctx.cluster)?.cluster;
  if (!cluster) throw new Error(`kubeconfig has no cluster "${ctx.cluster}"`);
  const user = cfg.users?.find((u) => u.name === ctx.user)?.user ?? {};
  const agentOpts: Parameters<typeof agentFor>[0] = {};
  const ca = readMaybe(cluster['certificate-authority'], cluster['certificate-authority-data'], baseDir);
  if (ca) agentOpts.ca = ca;
  const cert = readMaybe(user['client-certificate'], user['client-certificate-data'], baseDir);
  if (cert) agentOpts.cert = cert;
  const key = readMaybe(user['client-key'], user['client-key-data'], baseDir);
  if (key) agentOpts.key = key;
  if (cluster['insecure-skip-tls-verify']) agentOpts.insecure = true;
  if (cluster['tls-server-name']) agentOpts.servername = cluster['tls-server-name'];
  let headers: () => Promise<Record<string, string>> = async () => ({});
  if (user.token) {
    const token = user.token;
    headers = async () => bearer(token);
  } else if (user.tokenFile) {
    const file = path.resolve(baseDir, user.tokenFile);
    headers = async () => bearer(readFileSync(file, 'utf8').trim());
  } else if (user.exec) {
    const source = execTokenSource(user.exec);
    headers = async () => bearer(await source());
  }
  return { server: cluster.server, agent: cluster.server.startsWith('https:') ? agentFor(agentOpts) : undefined, headers };
}

export const IN_CLUSTER_SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** In-cluster ServiceAccount. The token file is re-read on every request: kubelet rotates it. */
export function inClusterAuth(saDir = IN_CLUSTER_SA_DIR): KubeAuth {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT ?? '443';
  if (!host) throw new Error('not running in a cluster: KUBERNETES_SERVICE_HOST is unset');
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const tokenFile = path.join(saDir, 'token');
  return {
    server,
    agent: agentFor({ ca: readFileSync(path.join(saDir, 'ca.crt')) }),
    headers: async () => bearer(readFileSync(tokenFile, 'utf8').trim()),
  };
}

/** A bearer token (a ServiceAccount's in RBAC tests) against a server with a known CA. */
export function tokenAuth(server: string, caData: string, token: string): KubeAuth {
  return { server, agent: agentFor({ ca: Buffer.from(caData, 'base64') }), headers: async () => bearer(token) };
}

/**
 * kubectl's order: an explicit file, else $KUBECONFIG (first entry), else ~/.kube/config,
 * else the in-cluster ServiceAccount.
 */
export function loadKubeAuth(opts: { file?: string; context?: string } = {}): KubeAuth {
  const candidates = [opts.file, process.env.KUBECONFIG?.split(path.delimiter)[0], path.join(homedir(), '.kube', 'config')];
  for (const file of candidates) {
    if (file && existsSync(file)) return authFromKubeConfigYaml(readFileSync(file, 'utf8'), path.dirname(file), opts.context);
    if (file && file === opts.file) throw new Error(`kubeconfig ${file} does not exist`);
  }
  return inClusterAuth();
}

/** Bridge for a client-node KubeConfig (usable where client-node loads: Node >= 22.19). */
export function authFromClientNode(kc: KubeConfig): KubeAuth {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('KubeConfig has no current cluster');
  let agent: https.Agent | undefined;
  return {
    server: cluster.server,
    get agent(): https.Agent | undefined {
      return agent;
    },
    headers: async () => {
      const opts: https.RequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      if (opts.agent instanceof https.Agent) agent = opts.agent;
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) out[k] = String(v);
      return out;
    },
  };
}
