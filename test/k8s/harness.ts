import { spawn } from 'node:child_process';
import * as https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { tokenKubeConfig } from '../../src/k8s/client.js';
import type { ControlPlaneInfo } from '../../src/dev/control-plane.js';

/**
 * The control plane itself lives in src/dev/control-plane.ts (`azflex dev` starts the same
 * one); this file re-exports it and adds the client helpers the tests use.
 */
export {
  adminKubeConfig,
  adminKubeConfigYaml,
  startControlPlane,
  type ControlPlane,
  type ControlPlaneInfo,
  type EnvtestBinaries,
  type StartOptions,
} from '../../src/dev/control-plane.js';

// --- client helpers used by the tests ---------------------------------------------------

/** TokenRequest API: a short-lived token for namespace/serviceAccount (the SA must exist). */
export async function mintServiceAccountToken(info: ControlPlaneInfo, namespace: string, serviceAccount: string, expirationSeconds = 3600): Promise<string> {
  const res = await adminRequest(info, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds },
  });
  const token = (res as { status?: { token?: string } }).status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${serviceAccount} returned no token`);
  return token;
}

export function serviceAccountKubeConfig(info: ControlPlaneInfo, token: string): KubeConfig {
  return tokenKubeConfig(info.server, info.caData, token);
}

/** Raw admin request (setup/cleanup in tests; the code under test uses src/k8s). */
export async function adminRequest(info: ControlPlaneInfo, method: string, apiPath: string, body?: unknown): Promise<unknown> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const url = new URL(info.server + apiPath);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        method,
        hostname: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        ca: Buffer.from(info.caData, 'base64'),
        cert: Buffer.from(info.adminCertData, 'base64'),
        key: Buffer.from(info.adminKeyData, 'base64'),
        headers: payload
          ? { 'Content-Type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json', 'Content-Length': payload.length }
          : {},
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          const parsed: unknown = text ? JSON.parse(text) : undefined;
          if ((res.statusCode ?? 0) >= 300) reject(Object.assign(new Error(`${method} ${apiPath}: HTTP ${res.statusCode} ${text.slice(0, 500)}`), { code: res.statusCode }));
          else resolve(parsed);
        });
      },
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl/helm; never throws on a non-zero exit (tests assert on the result). */
export async function run(bin: string, args: string[], env: Record<string, string> = {}, input?: string): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    // A command that exits without reading its stdin closes the pipe under our write (EPIPE):
    // its exit code and output are what the caller asserts on, so that error is not one.
    child.stdin.on('error', () => undefined);
    if (input === undefined) child.stdin.end();
    else child.stdin.end(input);
  });
}

export function kubectl(info: ControlPlaneInfo, args: string[], input?: string): Promise<CommandResult> {
  return run(info.binaries.kubectl, args, { KUBECONFIG: info.kubeconfigPath }, input);
}

/** Forces an etcd compaction at the current revision: older watches then get 410 Gone. */
export async function compactEtcd(info: ControlPlaneInfo): Promise<number> {
  const range = await fetch(`${info.etcdUrl}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from('/').toString('base64') }) });
  const header = ((await range.json()) as { header?: { revision?: string } }).header;
  const revision = Number(header?.revision ?? 0);
  const res = await fetch(`${info.etcdUrl}/v3/kv/compaction`, { method: 'POST', body: JSON.stringify({ revision: String(revision), physical: true }) });
  if (!res.ok) throw new Error(`etcd compaction failed: HTTP ${res.status} ${await res.text()}`);
  return revision;
}

export async function eventually<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 15_000, stepMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${last instanceof Error ? last.message : String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
