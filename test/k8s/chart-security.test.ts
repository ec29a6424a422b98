import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { adminRequest, run } from './harness.js';
import { chartDir, ciValues, renderChart, type K8sObject } from './chart-render.js';

/**
 * The chart's security-facing values and the defects a review found: the README's install
 * command must render as written, a sidecar's own volumeMounts must merge with the extra ones
 * into one key, the PDB must let a not-Ready replica be evicted, and secure metrics, the
 * NetworkPolicy and the node agent pin must render as documented.
 */
const info = inject('k8s');

type Container = { name: string; args?: string[]; volumeMounts?: Array<{ name: string; mountPath: string }>; livenessProbe?: { httpGet: { scheme?: string } }; readinessProbe?: { httpGet: { scheme?: string } } };
type Deployment = K8sObject & { spec: { template: { spec: { containers: Container[]; volumes: Array<{ name: string; secret?: { secretName: string } }> } } } };

function all(objs: K8sObject[], kind: string): K8sObject[] {
  return objs.filter((o) => o.kind === kind);
}

function deployment(objs: K8sObject[]): Deployment {
  return all(objs, 'Deployment')[0] as Deployment;
}

/** The `--set` pairs of the README's `helm install` command, placeholders filled with valid values. */
function readmeInstallSets(): string[] {
  const readme = readFileSync(path.join(chartDir, 'README.md'), 'utf8');
  const block = /```sh\n(helm install azflex[\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('no helm install command in charts/azflex/README.md');
  const fill: Record<string, string> = {
    'settings.clusterEndpoint': 'https://my-aks-dns-1a2b.hcp.westeurope.azmk8s.io:443',
    'azure.subscriptionID': '00000000-0000-0000-0000-000000000000',
    'azure.tenantID': '11111111-1111-1111-1111-111111111111',
    'azure.clientID': '22222222-2222-2222-2222-222222222222',
    'nodeAgent.sha256.amd64': 'f'.repeat(64),
  };
  return [...block.matchAll(/--set\s+([^=\s]+)=(\S+)/g)].flatMap(([, key, value]) => ['--set', `${key}=${value!.includes('<') ? fill[key!] ?? 'x' : value}`]);
}

describe('charts/azflex security values and review findings', () => {
  it('the README install command renders as written (it sets settings.clusterEndpoint and pins the node agent)', async () => {
    const sets = readmeInstallSets();
    expect(sets).toContain('settings.clusterEndpoint=https://my-aks-dns-1a2b.hcp.westeurope.azmk8s.io:443');
    const r = await run(info.binaries.helm, ['template', 'azflex', chartDir, '-n', 'azflex-system', ...sets]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`--node-agent-sha256=amd64=${'f'.repeat(64)}`);
  });

  it('a sidecar with its own volumeMounts plus extraVolumeMounts and sidecarVolumeMounts renders one volumeMounts key', async () => {
    const values = {
      controller: {
        extraVolumeMounts: [{ name: 'extra', mountPath: '/extra' }],
        sidecarContainer: [{ name: 'side', image: 'busybox', volumeMounts: [{ name: 'own', mountPath: '/own' }] }, { name: 'bare', image: 'busybox' }],
        sidecarVolumeMounts: [{ name: 'sv', mountPath: '/sv' }],
      },
    };
    const file = path.join(info.dir, 'sidecar-values.json');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, JSON.stringify(values));
    const r = await run(info.binaries.helm, ['template', 'azflex', chartDir, '-f', ciValues, '-f', file]);
    expect(r.code, r.stderr).toBe(0);
    // YAML forbids duplicate keys: the parser reports them as errors.
    for (const doc of parseAllDocuments(r.stdout)) expect(doc.errors.map((e) => e.message)).toEqual([]);
    const objs = await renderChart(info, 'azflex', 'azflex', ['-f', file]);
    const byName = new Map(deployment(objs).spec.template.spec.containers.map((c) => [c.name, c]));
    expect(byName.get('side')!.volumeMounts!.map((m) => m.name)).toEqual(['own', 'extra', 'sv']);
    expect(byName.get('bare')!.volumeMounts!.map((m) => m.name)).toEqual(['extra', 'sv']);
  });

  it('the PodDisruptionBudget evicts a replica that is not Ready (unhealthyPodEvictionPolicy), and the API server accepts it', async () => {
    const objs = await renderChart(info, 'azflex', 'azflex');
    const pdb = all(objs, 'PodDisruptionBudget')[0] as K8sObject & { spec: Record<string, unknown> };
    expect(pdb.spec.unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
  });

  it('secure metrics: HTTPS probes, review RBAC, a metrics-reader ClusterRole, the TLS Secret mounted, the ServiceMonitor on https with a bearer token', async () => {
    const plain = await renderChart(info, 'azflex', 'azflex');
    expect(deployment(plain).spec.template.spec.containers[0]!.args).not.toContain('--metrics-secure=true');
    expect(JSON.stringify(all(plain, 'ClusterRole'))).not.toContain('tokenreviews');
    const objs = await renderChart(info, 'azflex', 'azflex', ['--set', 'controller.metrics.secure.enabled=true', '--set', 'controller.metrics.secure.certSecretName=azflex-metrics-tls', '--set', 'serviceMonitor.enabled=true']);
    const c = deployment(objs).spec.template.spec.containers[0]!;
    expect(c.args).toEqual(expect.arrayContaining(['--metrics-secure=true', '--metrics-cert-dir=/etc/azflex/metrics-tls']));
    expect([c.livenessProbe!.httpGet.scheme, c.readinessProbe!.httpGet.scheme]).toEqual(['HTTPS', 'HTTPS']);
    expect(c.volumeMounts).toContainEqual({ name: 'metrics-tls', mountPath: '/etc/azflex/metrics-tls', readOnly: true });
    expect(deployment(objs).spec.template.spec.volumes).toContainEqual({ name: 'metrics-tls', secret: { secretName: 'azflex-metrics-tls' } });
    const roles = all(objs, 'ClusterRole') as Array<K8sObject & { rules: Array<{ apiGroups?: string[]; resources?: string[]; nonResourceURLs?: string[]; verbs: string[] }> }>;
    const controllerRole = roles.find((r) => r.metadata.name === 'azflex')!;
    expect(controllerRole.rules).toEqual(expect.arrayContaining([
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ]));
    expect(roles.find((r) => r.metadata.name === 'azflex-metrics-reader')!.rules).toEqual([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    const sm = all(objs, 'ServiceMonitor')[0] as K8sObject & { spec: { endpoints: Array<Record<string, unknown>> } };
    expect(sm.spec.endpoints[0]).toMatchObject({ scheme: 'https', bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' });
    expect(sm.spec.endpoints[0]).not.toHaveProperty('tlsConfig');
    // Self-signed at start: the ServiceMonitor cannot verify it.
    const selfSigned = await renderChart(info, 'azflex', 'azflex', ['--set', 'controller.metrics.secure.enabled=true', '--set', 'serviceMonitor.enabled=true']);
    expect(deployment(selfSigned).spec.template.spec.containers[0]!.args).not.toContain('--metrics-cert-dir=/etc/azflex/metrics-tls');
    expect((all(selfSigned, 'ServiceMonitor')[0] as K8sObject & { spec: { endpoints: Array<Record<string, unknown>> } }).spec.endpoints[0]).toMatchObject({ tlsConfig: { insecureSkipVerify: true } });
  });

  it('the NetworkPolicy admits only the metrics port, from the given peers', async () => {
    expect(all(await renderChart(info, 'azflex', 'azflex'), 'NetworkPolicy')).toEqual([]);
    const peers = JSON.stringify([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
    const objs = await renderChart(info, 'azflex', 'azflex', ['--set', 'networkPolicy.enabled=true', '--set-json', `networkPolicy.metricsFrom=${peers}`]);
    const np = all(objs, 'NetworkPolicy')[0] as K8sObject & { spec: Record<string, unknown> };
    expect(np.spec).toEqual({
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'azflex', 'app.kubernetes.io/instance': 'azflex' } },
      policyTypes: ['Ingress'],
      ingress: [{ ports: [{ port: 'http-metrics', protocol: 'TCP' }], from: JSON.parse(peers) }],
    });
  });

  it('passes the node agent pin and mirror as flags', async () => {
    const objs = await renderChart(info, 'azflex', 'azflex', ['--set', `nodeAgent.sha256.amd64=${'a'.repeat(64)}`, '--set', `nodeAgent.sha256.arm64=${'b'.repeat(64)}`, '--set', 'nodeAgent.url=https://mirror.example.com/flex', '--set', 'nodeAgent.version=v0.0.19']);
    expect(deployment(objs).spec.template.spec.containers[0]!.args).toEqual(expect.arrayContaining([
      '--node-agent-version=v0.0.19',
      `--node-agent-sha256=amd64=${'a'.repeat(64)},arm64=${'b'.repeat(64)}`,
      '--node-agent-url=https://mirror.example.com/flex',
    ]));
    expect(deployment(await renderChart(info, 'azflex', 'azflex')).spec.template.spec.containers[0]!.args!.some((a) => a.startsWith('--node-agent-sha256'))).toBe(false);
  });

  it('helm install --dry-run=server with secure metrics, the NetworkPolicy and the PDB: the API server accepts every object', async () => {
    const ns = 'azflex-security';
    await adminRequest(info, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }).catch(() => undefined);
    const r = await run(info.binaries.helm, [
      'install', 'sec', chartDir, '-n', ns, '-f', ciValues, '--dry-run=server',
      '--set', 'controller.metrics.secure.enabled=true', '--set', 'networkPolicy.enabled=true', '--set', `nodeAgent.sha256.amd64=${'c'.repeat(64)}`,
    ], { KUBECONFIG: info.kubeconfigPath });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('kind: NetworkPolicy');
    expect(r.stdout).toContain('unhealthyPodEvictionPolicy: AlwaysAllow');
    expect(r.stdout).not.toContain('WARNING: nodeAgent.sha256 is not set');
  });
});
