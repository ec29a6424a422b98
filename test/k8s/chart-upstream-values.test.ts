import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { ensureUpstreamChartValues } from '../../scripts/upstream-karpenter.mjs';
import { adminRequest, run } from './harness.js';
import { chartDir, ciValues, renderChart, type K8sObject } from './chart-render.js';

const info = inject('k8s');

/**
 * A Karpenter user's Helm values should mean the same to this chart. The reference is the
 * upstream chart's own values file (aws/karpenter-provider-aws charts/karpenter/values.yaml,
 * fetched through the Go module proxy, never committed): every value in it is either one this
 * chart takes under the same name, or listed here with why azflex has no use for it. A new
 * upstream value fails the first test until someone decides.
 */
const NOT_APPLICABLE: Record<string, string> = {
  'controller.healthProbe': 'probes are served by the metrics server, on controller.metrics.port',
  logOutputPaths: 'logs are JSON lines on stdout (pino)',
  logErrorOutputPaths: 'logs are JSON lines on stdout (pino)',
  'settings.batchMaxDuration': 'no batching window: the provisioner runs every 10 s and at once after a capacity failure',
  'settings.batchIdleDuration': 'no batching window: the provisioner runs every 10 s and at once after a capacity failure',
  'settings.preferencePolicy': 'preferences are always honoured, then relaxed, as upstream\'s default Respect',
  'settings.minValuesPolicy': 'minValues is always strict, as upstream\'s default Strict',
  'settings.clusterCABundle': 'nodes get the CA of the controller\'s own API server connection',
  'settings.vmMemoryOverheadPercent': 'memory overhead comes from the Azure SKU catalog',
  'settings.isolatedVPC': 'AWS only', 'settings.eksControlPlane': 'AWS only', 'settings.interruptionQueue': 'AWS only (SQS)',
  'settings.enableZonalShift': 'AWS only', 'settings.reservedENIs': 'AWS only', 'settings.amiRefreshInterval': 'AWS only',
  'settings.subnetRefreshInterval': 'AWS only', 'settings.securityGroupRefreshInterval': 'AWS only', 'settings.awsFeatureGates': 'AWS only',
  'settings.enableDRA': 'no dynamic resource allocation', 'settings.ignoreDRARequests': 'no dynamic resource allocation',
  'settings.legacyNodeRepair': 'no node repair', 'settings.disableClusterStateObservability': 'cluster-state metrics are always on',
  'settings.disableDryRun': 'no dry-run launches',
  'settings.featureGates': 'none of upstream\'s feature gates exist in azflex (spot, node repair, overlays, static capacity are not implemented)',
  webhook: 'azflex runs no webhooks',
};

/** Values whose content is a Kubernetes API object or free-form map: compared as one leaf. */
const FREE_FORM = new Set(['additionalLabels', 'additionalAnnotations', 'podLabels', 'podAnnotations', 'nodeSelector', 'affinity', 'strategy',
  'podSecurityContext', 'dnsConfig', 'controller.securityContext', 'controller.resources', 'serviceMonitor.endpointConfig',
  'serviceMonitor.additionalLabels', 'service.annotations', 'serviceAccount.annotations', 'initContainers']);

type Tree = Record<string, unknown>;
const isMap = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Upstream value paths this chart neither takes nor lists in NOT_APPLICABLE. */
function undecided(upstream: Tree, ours: Tree, prefix = ''): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(upstream)) {
    const p = prefix ? `${prefix}.${key}` : key;
    if (p in NOT_APPLICABLE) continue;
    if (!(key in ours)) {
      out.push(p);
      continue;
    }
    if (FREE_FORM.has(p)) continue;
    if (isMap(value) && Object.keys(value).length > 0 && isMap(ours[key])) out.push(...undecided(value, ours[key], p));
  }
  return out;
}

type Pod = {
  metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown> & {
    containers: Array<{ name: string; image: string; imagePullPolicy: string; args: string[]; ports: Array<{ containerPort: number }>; envFrom?: unknown; volumeMounts: Array<{ name: string }>; securityContext: unknown }>;
    volumes: Array<{ name: string }>;
  };
};
type Deployment = K8sObject & { spec: { replicas: number; revisionHistoryLimit: number; strategy: unknown; template: Pod } };

function one(objs: K8sObject[], kind: string): K8sObject {
  const found = objs.filter((o) => o.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!;
}

let valuesDir: Promise<string> | undefined;
afterAll(async () => {
  if (valuesDir) await rm(await valuesDir, { recursive: true, force: true });
});

async function valuesFile(name: string, values: unknown): Promise<string> {
  valuesDir ??= mkdtemp(path.join(tmpdir(), 'azflex-values-'));
  const file = path.join(await valuesDir, `${name}.yaml`);
  await writeFile(file, stringify(values));
  return file;
}

describe('chart values named as in upstream Karpenter\'s chart', () => {
  it('takes every value of upstream\'s values.yaml, or says why azflex has no use for it', async () => {
    const upstream = parse(readFileSync((await ensureUpstreamChartValues()).file, 'utf8')) as Tree;
    const ours = parse(readFileSync(path.join(chartDir, 'values.yaml'), 'utf8')) as Tree;
    expect(undecided(upstream, ours)).toEqual([]);
    // And every value listed as not applicable is still one upstream has (the list stays true).
    const has = (tree: Tree, p: string) => p.split('.').reduce<unknown>((t, k) => (isMap(t) ? t[k] : undefined), tree) !== undefined;
    expect(Object.keys(NOT_APPLICABLE).filter((p) => p !== 'webhook' && !has(upstream, p))).toEqual([]);
  });

  it('renders with a Karpenter user\'s values file as it is (upstream\'s own), plus azflex\'s required values', async () => {
    const upstreamFile = (await ensureUpstreamChartValues()).file;
    const objs = await renderChart(info, 'karpenter', 'kube-system', ['-f', upstreamFile, '-f', ciValues]);
    const dep = one(objs, 'Deployment') as Deployment;
    const upstream = parse(readFileSync(upstreamFile, 'utf8')) as { topologySpreadConstraints: Array<{ topologyKey: string }>; podDisruptionBudget: { name: string } };
    // Upstream's choices show through: zone spread, its PDB name, its pod security context.
    expect((dep.spec.template.spec.topologySpreadConstraints as Array<{ topologyKey: string }>)[0]!.topologyKey).toBe(upstream.topologySpreadConstraints[0]!.topologyKey);
    expect(one(objs, 'PodDisruptionBudget').metadata.name).toBe(upstream.podDisruptionBudget.name);
    expect(dep.spec.template.spec.securityContext).toMatchObject({ fsGroup: 65532 });
    // terminationGracePeriodSeconds: null leaves Kubernetes' default, not "<no value>".
    expect(dep.spec.template.spec.terminationGracePeriodSeconds).toBeUndefined();
  });

  it('honours each shared value under its upstream name', async () => {
    const file = await valuesFile('upstream-names', {
      nameOverride: 'flex', fullnameOverride: 'gpu-flex',
      additionalLabels: { team: 'ml' }, additionalAnnotations: { owner: 'platform' },
      imagePullPolicy: 'Always',
      replicas: 3, revisionHistoryLimit: 4, strategy: { type: 'Recreate' },
      podSecurityContext: { fsGroup: 2000, runAsNonRoot: true },
      terminationGracePeriodSeconds: 45, hostNetwork: true, schedulerName: 'custom', dnsPolicy: 'ClusterFirstWithHostNet', dnsConfig: { options: [{ name: 'ndots', value: '1' }] },
      initContainers: [{ name: 'wait', image: 'busybox' }],
      extraVolumes: [{ name: 'extra', emptyDir: {} }],
      controller: {
        containerName: 'azflex', envFrom: [{ configMapRef: { name: 'env' } }], extraVolumeMounts: [{ name: 'extra', mountPath: '/extra' }],
        securityContext: { runAsNonRoot: true, readOnlyRootFilesystem: true }, metrics: { port: 9090 },
        sidecarContainer: [{ name: 'proxy', image: 'proxy:1' }], sidecarVolumeMounts: [{ name: 'tmp', mountPath: '/scratch' }],
      },
      service: { annotations: { 'prometheus.io/scrape': 'true' } },
      serviceMonitor: { enabled: true, relabelings: [{ targetLabel: 'provider', replacement: 'azflex' }], metricRelabelings: [{ action: 'keep', regex: 'karpenter_.*', sourceLabels: ['__name__'] }], sampleLimit: 5000 },
      additionalClusterRoleRules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
    });
    const objs = await renderChart(info, 'rel', 'platform', ['-f', file]);
    for (const o of objs) {
      expect(o.metadata.labels?.team, `${o.kind} label`).toBe('ml');
      expect(o.metadata.annotations?.owner, `${o.kind} annotation`).toBe('platform');
    }
    const dep = one(objs, 'Deployment') as Deployment;
    expect(dep.metadata.name).toBe('gpu-flex');
    expect(dep.spec.template.metadata.labels['app.kubernetes.io/name']).toBe('flex');
    expect(dep.spec).toMatchObject({ replicas: 3, revisionHistoryLimit: 4, strategy: { type: 'Recreate' } });
    const pod = dep.spec.template.spec;
    expect(pod).toMatchObject({ securityContext: { fsGroup: 2000 }, terminationGracePeriodSeconds: 45, hostNetwork: true, schedulerName: 'custom', dnsPolicy: 'ClusterFirstWithHostNet', dnsConfig: { options: [{ name: 'ndots' }] } });
    expect(pod.initContainers).toEqual([{ name: 'wait', image: 'busybox' }]);
    expect(pod.volumes.map((v) => v.name)).toEqual(['tmp', 'extra']);
    const [controller, sidecar] = pod.containers;
    expect(controller).toMatchObject({ name: 'azflex', imagePullPolicy: 'Always', envFrom: [{ configMapRef: { name: 'env' } }], securityContext: { runAsNonRoot: true, readOnlyRootFilesystem: true } });
    expect(controller!.ports[0]!.containerPort).toBe(9090);
    expect(controller!.args).toContain('--metrics-port=9090');
    expect(controller!.volumeMounts.map((m) => m.name)).toEqual(['tmp', 'extra']);
    expect(sidecar).toMatchObject({ name: 'proxy', image: 'proxy:1', volumeMounts: [{ name: 'extra' }, { name: 'tmp', mountPath: '/scratch' }] });
    const svc = one(objs, 'Service') as K8sObject & { spec: { ports: Array<{ port: number }> } };
    expect(svc.metadata.annotations?.['prometheus.io/scrape']).toBe('true');
    expect(svc.spec.ports[0]!.port).toBe(9090);
    const sm = one(objs, 'ServiceMonitor') as K8sObject & { spec: { sampleLimit: number; endpoints: Array<Record<string, unknown>> } };
    expect(sm.spec.sampleLimit).toBe(5000);
    expect(sm.spec.endpoints[0]).toMatchObject({ port: 'http-metrics', relabelings: [{ targetLabel: 'provider' }], metricRelabelings: [{ action: 'keep' }] });
    const cr = objs.find((o) => o.kind === 'ClusterRole') as K8sObject & { rules: Array<{ resources: string[] }> };
    expect(cr.rules.at(-1)).toEqual({ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] });
  });

  it('takes the workload identity client ID from serviceAccount.annotations, as the Azure provider\'s chart does, without duplicate keys', async () => {
    const file = await valuesFile('wi', {
      settings: { clusterName: 'c', clusterEndpoint: 'https://c.hcp.westeurope.azmk8s.io:443' },
      serviceAccount: { annotations: { 'azure.workload.identity/client-id': '33333333-3333-3333-3333-333333333333' } },
      podLabels: { 'azure.workload.identity/use': 'true', team: 'ml' },
    });
    // A key set both by the chart and by the user must appear once (YAML forbids duplicate keys).
    const r = await run(info.binaries.helm, ['template', 'azflex', chartDir, '-n', 'azflex', '-f', file]);
    expect(r.code, r.stderr).toBe(0);
    for (const doc of parseAllDocuments(r.stdout)) expect(doc.errors.map((e) => e.message)).toEqual([]);
    const objs = await renderChart(info, 'azflex', 'azflex', ['-f', file, '--set', 'azure.clientID=']);
    expect(one(objs, 'ServiceAccount').metadata.annotations?.['azure.workload.identity/client-id']).toBe('33333333-3333-3333-3333-333333333333');
    const dep = one(objs, 'Deployment') as Deployment;
    expect(dep.spec.template.metadata.labels).toMatchObject({ 'azure.workload.identity/use': 'true', team: 'ml', 'app.kubernetes.io/name': 'azflex' });
  });

  it('renders for the oldest and newest Kubernetes the chart supports, and refuses older', async () => {
    for (const v of ['1.30.0', '1.34.4', '1.36.0']) {
      const objs = await renderChart(info, 'azflex', 'azflex', ['--kube-version', v]);
      expect(objs.some((o) => o.kind === 'Deployment'), v).toBe(true);
    }
    const old = await run(info.binaries.helm, ['template', 'azflex', chartDir, '-f', ciValues, '--kube-version', '1.29.0']);
    expect(old.code).not.toBe(0);
    expect(old.stderr).toMatch(/kubeVersion|incompatible/i);
  });

  it('helm install --dry-run=server in a custom namespace with one replica (no PDB) and upstream-named values', async () => {
    const ns = 'platform-karpenter';
    await adminRequest(info, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const r = await run(info.binaries.helm, [
      'install', 'flex', chartDir, '-n', ns, '-f', ciValues, '--dry-run=server',
      '--set', 'replicas=1', '--set', 'fullnameOverride=flex-ctl', '--set', 'additionalLabels.team=ml', '--set', 'controller.metrics.port=9090',
    ], { KUBECONFIG: info.kubeconfigPath });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('STATUS: pending-install');
    expect(r.stdout).not.toContain('kind: PodDisruptionBudget');
    expect(r.stdout).toContain('name: flex-ctl');
    expect(r.stdout).toContain('port-forward svc/flex-ctl-metrics 9090');
  });
});
