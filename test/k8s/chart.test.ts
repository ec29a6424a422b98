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
    expect(r.stderr).toMatch(/settings.clusterName is required|azure.clientID is required/);
  });

  it('carries byte-identical copies of crds/ (karpenter.sh ones only as the opt-in karpenter-crds/)', async () => {
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

  it('passes settings.nodeResourceGroup as --node-resource-group (the kubernetes.azure.com/cluster label), and nothing when it is empty', async () => {
    const args = async (extra: string[]) => ((byKind(await renderChart(info, 'azflex', 'azflex-system', extra), 'Deployment') as K8sObject & {
      spec: { template: { spec: { containers: Array<{ args: string[] }> } } };
    }).spec.template.spec.containers[0]!.args);
    expect((await args([])).filter((a) => a.startsWith('--node-resource-group'))).toEqual([]);
    expect(await args(['--set', 'settings.nodeResourceGroup=MC_ml(prod)_aks_westeurope'])).toContain('--node-resource-group=MC_ml(prod)_aks_westeurope');
  });

  it('sets the controller\'s NODE_OPTIONS from controller.nodeOptions (V8 heap sized within the memory limit), and leaves the image\'s when empty', async () => {
    const nodeOptions = async (extra: string[]) => ((byKind(await renderChart(info, 'azflex', 'azflex-system', extra), 'Deployment') as K8sObject & {
      spec: { template: { spec: { containers: Array<{ env: Array<{ name: string; value?: string }> }> } } };
    }).spec.template.spec.containers[0]!.env.filter((e) => e.name === 'NODE_OPTIONS').map((e) => e.value));
    expect(await nodeOptions([])).toEqual(['--max-old-space-size=256 --max-semi-space-size=2']);
    expect(await nodeOptions(['--set', 'controller.nodeOptions='])).toEqual([]);
  });

  it('sets MALLOC_ARENA_MAX from controller.mallocArenaMax (two glibc arenas by default), and none when empty', async () => {
    const arenas = async (extra: string[]) => ((byKind(await renderChart(info, 'azflex', 'azflex-system', extra), 'Deployment') as K8sObject & {
      spec: { template: { spec: { containers: Array<{ env: Array<{ name: string; value?: string }> }> } } };
    }).spec.template.spec.containers[0]!.env.filter((e) => e.name === 'MALLOC_ARENA_MAX').map((e) => e.value));
    expect(await arenas([])).toEqual(['2']);
    expect(await arenas(['--set', 'controller.mallocArenaMax=4'])).toEqual(['4']);
    expect(await arenas(['--set', 'controller.mallocArenaMax='])).toEqual([]);
  });

  it('keeps the controller off Karpenter-made nodes and its replicas on different hosts (hard), image by digest on request', async () => {
    const objs = await renderChart(info, 'azflex', 'azflex-system', ['--set', 'controller.image.digest=sha256:0123']);
    const spec = (byKind(objs, 'Deployment') as K8sObject & { spec: { template: { spec: Record<string, unknown> } } }).spec.template.spec as {
      affinity: { nodeAffinity: unknown; podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: Array<{ topologyKey: string; labelSelector: unknown }> } };
      topologySpreadConstraints: Array<{ topologyKey: string; whenUnsatisfiable: string }>;
      containers: Array<{ image: string }>;
    };
    expect(spec.affinity.nodeAffinity).toEqual({
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'karpenter.sh/nodepool', operator: 'DoesNotExist' }] }] },
    });
    expect(spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]).toMatchObject({ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { 'app.kubernetes.io/instance': 'azflex' } } });
    expect(spec.topologySpreadConstraints[0]).toMatchObject({ topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule' });
    expect(spec.containers[0]!.image).toBe('ghcr.io/azflex/azflex@sha256:0123');
    expect(objs.some((o) => o.kind === 'CustomResourceDefinition')).toBe(false);
    const withCrds = await renderChart(info, 'azflex', 'azflex-system', ['--set', 'karpenterCRDs.install=true', '--set', 'serviceMonitor.enabled=true']);
    const crds = withCrds.filter((o) => o.kind === 'CustomResourceDefinition');
    expect(crds.map((c) => c.metadata.name).sort()).toEqual(['nodeclaims.karpenter.sh', 'nodepools.karpenter.sh']);
    for (const c of crds) expect(c.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    expect(withCrds.some((o) => o.kind === 'ServiceMonitor')).toBe(true);
  });

  it('helm install succeeds beside upstream karpenter.sh CRDs (node auto-provisioning) and leaves them untouched', async () => {
    type Crd = { metadata: { resourceVersion: string; generation: number; labels?: Record<string, string> }; spec: { versions: Array<{ schema: unknown }> } };
    const before = await Promise.all(['nodepools', 'nodeclaims'].map((n) => adminRequest(info, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${n}.karpenter.sh`) as Promise<Crd>));
    const ns = 'azflex-helm';
    const r = await run(info.binaries.helm, ['install', 'azflex-nap', chartDir, '-n', ns, '--create-namespace', '-f', ciValues], { KUBECONFIG: info.kubeconfigPath });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('STATUS: deployed');
    // NOTES: the bootstrap Secret the chart does not create, and whose CRDs are in use.
    expect(r.stdout).toMatch(/create secret generic azflex-bootstrap-token/);
    expect(r.stdout).toMatch(/karpenter.sh CRDs: not installed by this chart/);
    const after = await Promise.all(['nodepools', 'nodeclaims'].map((n) => adminRequest(info, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${n}.karpenter.sh`) as Promise<Crd>));
    for (const [i, crd] of after.entries()) {
      expect(crd.metadata.resourceVersion).toBe(before[i]!.metadata.resourceVersion);
      expect(crd.metadata.labels?.['app.kubernetes.io/managed-by']).toBeUndefined();
    }
    // Still upstream's (Gte exists only there since v1.9; azflex's copy is not what is served).
    expect(JSON.stringify(after[0]!.spec.versions)).toContain('"Gte"');
    const nodeClassCrd = (await adminRequest(info, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/azureflexnodeclasses.flex.aks.azure.com')) as Crd;
    expect(nodeClassCrd.spec.versions.length).toBeGreaterThan(0);
    const dep = (await adminRequest(info, 'GET', `/apis/apps/v1/namespaces/${ns}/deployments/azflex-nap`)) as { spec: { replicas: number } };
    expect(dep.spec.replicas).toBe(2);
    const un = await run(info.binaries.helm, ['uninstall', 'azflex-nap', '-n', ns], { KUBECONFIG: info.kubeconfigPath });
    expect(un.code, un.stderr).toBe(0);
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
