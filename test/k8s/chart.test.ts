import { describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { diffChartCrds } from '../../scripts/sync-chart-crds.mjs';
import { REQUIRED_CLUSTER_RULES, requiredNamespacedRules, type PolicyRule } from '../../src/k8s/rbac.js';
import { adminRequest, kubectl, run } from './harness.js';
import { chartDir, ciValues, renderChart, type K8sObject } from './chart-render.js';

const info = inject('k8s');

function normalize(rules: PolicyRule[]): string[] {
  return rules
    .flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}|${res}|${v}|${(r.resourceNames ?? []).join(',')}`))))
    .sort();
}

function byKind(objs: K8sObject[], kind: string): K8sObject {
  const o = objs.find((x) => x.kind === kind);
  if (!o) throw new Error(`no ${kind} rendered`);
  return o;
}

describe('charts/azflex', () => {
  it('passes helm lint (strict) with the CI values', async () => {
    const r = await run(info.binaries.helm, ['lint', '--strict', chartDir, '-f', ciValues]);
    expect(r.stdout).toContain('0 chart(s) failed');
    expect(r.code).toBe(0);
  });

  it('refuses to render without a cluster name (required value)', async () => {
    const r = await run(info.binaries.helm, ['template', 'x', chartDir]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/clusterName is required|azure.clientID is required/);
  });

  it('carries byte-identical copies of crds/', async () => {
    expect(await diffChartCrds()).toEqual([]);
  });

  it('renders a 2-replica, restricted, workload-identity Deployment with PDB and metrics Service', async () => {
    const objs = await renderChart(info, 'azflex', 'azflex-system');
    const kinds = objs.map((o) => o.kind).sort();
    expect(kinds).toEqual(['ClusterRole', 'ClusterRoleBinding', 'Deployment', 'PodDisruptionBudget', 'Role', 'RoleBinding', 'Service', 'ServiceAccount']);
    const dep = byKind(objs, 'Deployment') as K8sObject & {
      spec: {
        replicas: number;
        template: {
          metadata: { labels: Record<string, string> };
          spec: {
            securityContext: Record<string, unknown>;
            containers: Array<{ args: string[]; securityContext: Record<string, unknown>; livenessProbe: { httpGet: { path: string } }; readinessProbe: { httpGet: { path: string } } }>;
          };
        };
      };
    };
    expect(dep.spec.replicas).toBe(2);
    expect(dep.spec.template.metadata.labels['azure.workload.identity/use']).toBe('true');
    const c = dep.spec.template.spec.containers[0];
    expect(c?.args).toContain('--leader-elect=true');
    expect(c?.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
    expect(dep.spec.template.spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(c?.livenessProbe.httpGet.path).toBe('/healthz');
    expect(c?.readinessProbe.httpGet.path).toBe('/readyz');
    const sa = byKind(objs, 'ServiceAccount');
    expect(sa.metadata.annotations?.['azure.workload.identity/client-id']).toBe('22222222-2222-2222-2222-222222222222');
    expect(sa.metadata.labels?.['azure.workload.identity/use']).toBe('true');
    expect((byKind(objs, 'PodDisruptionBudget') as K8sObject & { spec: { maxUnavailable: number } }).spec.maxUnavailable).toBe(1);
  });

  it('grants exactly the rules src/k8s/rbac.ts declares (least privilege)', async () => {
    const objs = await renderChart(info, 'azflex', 'azflex-system');
    const cr = byKind(objs, 'ClusterRole') as K8sObject & { rules: PolicyRule[] };
    expect(normalize(cr.rules)).toEqual(normalize(REQUIRED_CLUSTER_RULES));
    const role = byKind(objs, 'Role') as K8sObject & { rules: PolicyRule[] };
    expect(normalize(role.rules)).toEqual(normalize(requiredNamespacedRules('azflex-controller', 'azflex-bootstrap-token')));
  });

  it('every rendered object passes kubectl apply --dry-run=server, under the restricted Pod Security level', async () => {
    const ns = 'azflex-chart-dryrun';
    await adminRequest(info, 'POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
    });
    const objs = await renderChart(info, 'azflex', ns);
    const r = await kubectl(info, ['apply', '--dry-run=server', '-f', '-'], objs.map((o) => `---\n${stringify(o)}`).join(''));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(objs.length);
  });
});
