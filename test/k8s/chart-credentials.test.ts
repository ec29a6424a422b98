import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { DefaultAzureCredential, type DefaultAzureCredentialOptions } from '@azure/identity';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { renderChart, type K8sObject } from './chart-render.js';

const info = inject('k8s');
const TENANT = '11111111-1111-1111-1111-111111111111';
const CLIENT = '22222222-2222-2222-2222-222222222222';
const ARM_SCOPE = 'https://management.azure.com/.default';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: unknown };
}
interface Request {
  server: 'entra' | 'msi';
  method: string;
  path: string;
  form: URLSearchParams;
  headers: http.IncomingHttpHeaders;
}

/** The controller container's env as the kubelet would set it (`secrets` answers secretKeyRefs). */
function containerEnv(objs: K8sObject[], secrets: Record<string, Record<string, string>>): Record<string, string> {
  const dep = objs.find((o) => o.kind === 'Deployment') as K8sObject & { spec: { template: { spec: { containers: Array<{ env: EnvVar[] }> } } } };
  const env: Record<string, string> = {};
  for (const e of dep.spec.template.spec.containers[0]!.env) {
    if (e.value !== undefined) env[e.name] = e.value;
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) env[e.name] = secrets[ref.name]![ref.key]!;
  }
  return env;
}

/** What the AKS workload-identity webhook adds to a pod labelled azure.workload.identity/use whose ServiceAccount names a client ID. */
function workloadIdentityWebhook(objs: K8sObject[], tokenFile: string, authorityHost: string): Record<string, string> {
  const dep = objs.find((o) => o.kind === 'Deployment') as K8sObject & { spec: { template: { metadata: { labels: Record<string, string> } } } };
  const sa = objs.find((o) => o.kind === 'ServiceAccount')!;
  if (dep.spec.template.metadata.labels['azure.workload.identity/use'] !== 'true') return {};
  const clientId = sa.metadata.annotations?.['azure.workload.identity/client-id'];
  if (!clientId) return {};
  return {
    AZURE_CLIENT_ID: clientId,
    AZURE_TENANT_ID: sa.metadata.annotations?.['azure.workload.identity/tenant-id'] ?? TENANT,
    AZURE_FEDERATED_TOKEN_FILE: tokenFile,
    AZURE_AUTHORITY_HOST: authorityHost,
  };
}

/**
 * The chart and the controller agree on credentials: for each `azure.credentials` mode,
 * the Deployment's env (plus what the platform adds: the workload-identity webhook's
 * variables, or a managed-identity endpoint) makes the controller's DefaultAzureCredential
 * take exactly that mode's path, seen from the token request a local Entra ID / identity
 * endpoint receives. No real Azure.
 */
describe('chart credentials × DefaultAzureCredential', () => {
  const requests: Request[] = [];
  let entra: https.Server;
  let msi: http.Server;
  let ca: string;
  let authorityHost: string;
  let msiEndpoint: string;
  let work: string;
  const saved = { ...process.env };

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'azflex-creds-'));
    const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
      keySize: 2048,
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
    } as Parameters<typeof generate>[1]);
    ca = pems.cert;
    const record = (server: Request['server'], req: http.IncomingMessage, body: string): Request => {
      const r = { server, method: req.method ?? '', path: new URL(req.url ?? '/', 'http://x').pathname, form: new URLSearchParams(body), headers: req.headers };
      requests.push(r);
      return r;
    };
    const collect = (req: http.IncomingMessage): Promise<string> =>
      new Promise((resolve) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => resolve(body));
      });
    entra = https.createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
      void collect(req).then((body) => {
        const r = record('entra', req, body);
        const tenant = r.path.split('/')[1]!;
        res.setHeader('content-type', 'application/json');
        if (r.path.endsWith('/.well-known/openid-configuration')) {
          const base = `${authorityHost}/${tenant}`;
          res.end(JSON.stringify({
            issuer: `${base}/v2.0`, token_endpoint: `${base}/oauth2/v2.0/token`, authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
            end_session_endpoint: `${base}/oauth2/v2.0/logout`, jwks_uri: `${base}/discovery/v2.0/keys`,
          }));
        } else res.end(JSON.stringify({ token_type: 'Bearer', expires_in: 3600, ext_expires_in: 3600, access_token: `entra-${r.form.get('grant_type')}` }));
      });
    });
    msi = http.createServer((req, res) => {
      void collect(req).then((body) => {
        record('msi', req, body);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ access_token: 'msi-token', expires_on: String(Math.floor(Date.now() / 1000) + 3600), resource: 'https://management.azure.com/', token_type: 'Bearer' }));
      });
    });
    await new Promise<void>((r) => entra.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => msi.listen(0, '127.0.0.1', r));
    authorityHost = `https://127.0.0.1:${(entra.address() as AddressInfo).port}`;
    msiEndpoint = `http://127.0.0.1:${(msi.address() as AddressInfo).port}/msi/token`;
  });

  afterAll(() => {
    process.env = saved;
    entra?.close();
    msi?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** The controller's credential (src/azure/sdk-adapter.ts: `new DefaultAzureCredential()`) under exactly `env`. */
  async function tokenUnder(env: Record<string, string>): Promise<{ token: string; requests: Request[] }> {
    process.env = { PATH: saved.PATH ?? '', ...env };
    requests.length = 0;
    // Only the test's trust anchor and its private authority differ from production.
    const options: DefaultAzureCredentialOptions = { tlsOptions: { ca }, disableInstanceDiscovery: true } as DefaultAzureCredentialOptions;
    const token = await new DefaultAzureCredential(options).getToken(ARM_SCOPE);
    return { token: token.token, requests: [...requests] };
  }

  it('workloadIdentity: WorkloadIdentityCredential exchanges the projected ServiceAccount token for the annotated client ID', async () => {
    const objs = await renderChart(info, 'azflex', 'azflex', ['--set', 'azure.credentials=workloadIdentity']);
    const tokenFile = path.join(work, 'azure-identity-token');
    writeFileSync(tokenFile, 'projected.sa.jwt');
    const env = { ...containerEnv(objs, {}), ...workloadIdentityWebhook(objs, tokenFile, authorityHost) };
    expect(env.AZURE_TOKEN_CREDENTIALS).toBe('WorkloadIdentityCredential');
    expect(env).not.toHaveProperty('AZFLEX_CREDENTIALS');
    // Identity endpoints a node would also offer must not be used.
    const got = await tokenUnder({ ...env, IDENTITY_ENDPOINT: msiEndpoint, IDENTITY_HEADER: 'h' });
    expect(got.token).toBe('entra-client_credentials');
    const tokenRequest = got.requests.find((r) => r.path === `/${TENANT}/oauth2/v2.0/token`)!;
    expect(tokenRequest.form.get('client_id')).toBe(CLIENT);
    expect(tokenRequest.form.get('client_assertion')).toBe('projected.sa.jwt');
    expect(tokenRequest.form.get('client_assertion_type')).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    expect(got.requests.some((r) => r.server === 'msi')).toBe(false);
  });

  it('servicePrincipal: EnvironmentCredential with the client secret from azure.clientSecretName', async () => {
    const objs = await renderChart(info, 'azflex', 'azflex', ['--set', 'azure.credentials=servicePrincipal', '--set', 'azure.clientSecretName=azflex-sp']);
    const env = containerEnv(objs, { 'azflex-sp': { AZURE_CLIENT_ID: 'sp-client', AZURE_CLIENT_SECRET: 'sp-secret' } });
    expect(env.AZURE_TOKEN_CREDENTIALS).toBe('EnvironmentCredential');
    const got = await tokenUnder({ ...env, AZURE_AUTHORITY_HOST: authorityHost, IDENTITY_ENDPOINT: msiEndpoint, IDENTITY_HEADER: 'h' });
    const tokenRequest = got.requests.find((r) => r.path === `/${TENANT}/oauth2/v2.0/token`)!;
    expect(tokenRequest.form.get('client_id')).toBe('sp-client');
    expect(tokenRequest.form.get('client_secret')).toBe('sp-secret');
    expect(got.requests.some((r) => r.server === 'msi')).toBe(false);
  });

  it('managedIdentity: ManagedIdentityCredential for azure.clientID, never Entra ID directly', async () => {
    const objs = await renderChart(info, 'azflex', 'azflex', ['--set', 'azure.credentials=managedIdentity']);
    const env = containerEnv(objs, {});
    expect(env.AZURE_TOKEN_CREDENTIALS).toBe('ManagedIdentityCredential');
    // The node's identity endpoint (IMDS on AKS; the App Service-style variables here).
    const got = await tokenUnder({ ...env, AZURE_AUTHORITY_HOST: authorityHost, IDENTITY_ENDPOINT: msiEndpoint, IDENTITY_HEADER: 'h' });
    expect(got.token).toBe('msi-token');
    expect(got.requests.map((r) => r.server)).toEqual(['msi']);
    const url = new URL(`http://x${got.requests[0]!.path}`);
    expect(url.pathname).toBe('/msi/token');
    expect(JSON.stringify(got.requests[0]!.headers)).toContain('"x-identity-header":"h"');
  });

  it('rejects a servicePrincipal release without a tenant and an unknown mode, at render time', async () => {
    await expect(renderChart(info, 'azflex', 'azflex', ['--set', 'azure.credentials=servicePrincipal', '--set', 'azure.clientSecretName=s', '--set', 'azure.tenantID='])).rejects.toThrow(/azure.tenantID is required/);
    await expect(renderChart(info, 'azflex', 'azflex', ['--set', 'azure.credentials=password'])).rejects.toThrow(/azure.credentials must be/);
  });
});
