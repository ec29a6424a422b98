import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { KubeBootstrapSource } from '../../src/k8s/bootstrap.js';
import { stringify } from 'yaml';
import { NodeClassStatusController } from '../../src/controllers/nodeclass/status.js';
import { NodeClassTerminationController, WAITING_EVENT_INTERVAL_MS } from '../../src/controllers/nodeclass/termination.js';
import { nodeClassHash } from '../../src/apis/nodeclass-hash.js';
import { LeaderElector } from '../../src/k8s/leader-election.js';
import { REQUIRED_CLUSTER_RULES, allows, requestAttributes, requiredNamespacedRules, type PolicyRule } from '../../src/k8s/rbac.js';
import { RealClock } from '../../src/platform/real-clock.js';
import type { AzureFlexNodeClass } from '../../src/ports/cluster.js';
import { adminRequest, eventually, kubectl, mintServiceAccountToken, serviceAccountKubeConfig } from './harness.js';
import { renderChart } from './chart-render.js';
import { ensureNamespace, makeAdapter, ManualClock, nodeClaimObject, nodeClassBody, type Adapter } from './fixtures.js';
import { ANNOTATION_NODECLASS_HASH, FINALIZER_NODECLASS } from '../../src/apis/well-known.js';

const info = inject('k8s');
const ns = 'azflex-rbac';
const release = 'azflex';
const AFNC = '/apis/flex.aks.azure.com/v1alpha1/azureflexnodeclasses';

interface EventList {
  items: Array<{ reason: string; type: string; note: string; regarding: { name: string; kind: string } }>;
}

async function eventsFor(name: string, reason: string): Promise<EventList['items']> {
  const list = (await adminRequest(info, 'GET', '/apis/events.k8s.io/v1/namespaces/default/events')) as EventList;
  return list.items.filter((e) => e.regarding.name === name && e.reason === reason);
}

async function getClass(name: string): Promise<AzureFlexNodeClass['metadata'] & { status?: { conditions?: Array<{ type: string; status: string; reason: string }> } }> {
  const raw = (await adminRequest(info, 'GET', `${AFNC}/${name}`)) as { metadata: AzureFlexNodeClass['metadata']; status?: { conditions?: Array<{ type: string; status: string; reason: string }> } };
  return { ...raw.metadata, status: raw.status ?? {} };
}

function ruleTriples(rules: PolicyRule[]): Set<string> {
  return new Set(rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}|${res}|${v}`)))));
}

/**
 * Everything in this file runs as the chart's ServiceAccount, bound by the chart's rendered
 * ClusterRole/Role — the upstream PR's failure mode (403 on every reconcile) cannot pass.
 */
describe('NodeClass controllers and the adapter under the chart-rendered RBAC', () => {
  let sa: Adapter;
  const clock = new ManualClock();

  beforeAll(async () => {
    await ensureNamespace(info, ns);
    const objs = (await renderChart(info, release, ns)).filter((o) =>
      ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(o.kind),
    );
    expect(objs).toHaveLength(5);
    const applied = await kubectl(info, ['apply', '-f', '-'], objs.map((o) => `---\n${stringify(o)}`).join(''));
    expect(applied.code, applied.stderr).toBe(0);
    const token = await mintServiceAccountToken(info, ns, release);
    sa = makeAdapter(serviceAccountKubeConfig(info, token), 'rbac-test');
    sa.cluster.start();
    await sa.cluster.waitForSync();
  });

  afterAll(async () => {
    await sa.cluster.stop();
  });

  it('cannot do what the ClusterRole does not grant (the token really is least-privileged)', async () => {
    const c = sa.client;
    await expect(c.call('list secrets', (o) => c.core.listNamespacedSecret({ namespace: 'kube-system' }, o))).rejects.toMatchObject({ reason: 'Forbidden' });
    await expect(
      c.call('delete class', (o) => c.custom.deleteClusterCustomObject({ group: 'flex.aks.azure.com', version: 'v1alpha1', plural: 'azureflexnodeclasses', name: 'anything' }, o)),
    ).rejects.toMatchObject({ reason: 'Forbidden' });
  });

  it('status: adds the finalizer and drift hash, sets ValidationSucceeded/Ready True', async () => {
    await adminRequest(info, 'POST', AFNC, nodeClassBody('rbac-valid', { tags: { b: '2', a: '1' } }));
    const status = new NodeClassStatusController({ cluster: sa.cluster, clock });
    const nc = await eventually('class cached', async () => (await sa.cluster.listNodeClasses()).find((c) => c.metadata.name === 'rbac-valid'));
    const result = await status.reconcileOne(nc);
    expect(result?.ok).toBe(true);
    const got = await getClass('rbac-valid');
    expect(got.finalizers).toContain(FINALIZER_NODECLASS);
    expect(got.annotations[ANNOTATION_NODECLASS_HASH]).toBe(nodeClassHash(nc));
    expect(got.status?.conditions?.map((c) => `${c.type}=${c.status}`).sort()).toEqual(['Ready=True', 'ValidationSucceeded=True']);
    // Steady state: once the cache has our writes, another pass writes nothing.
    const later = await eventually('cache caught up', async () => (await sa.cluster.listNodeClasses()).find((c) => c.metadata.name === 'rbac-valid' && c.status.conditions.length === 2));
    const writes = sa.records.filter((r) => r.method !== 'GET').length;
    await status.reconcileOne(later);
    expect(sa.records.filter((r) => r.method !== 'GET').length).toBe(writes);
  });

  it('status: a schema-valid but unsupported class gets ValidationSucceeded=False and one Warning Event', async () => {
    await adminRequest(info, 'POST', AFNC, nodeClassBody('rbac-invalid', { allocateNodePublicIP: true }));
    const status = new NodeClassStatusController({ cluster: sa.cluster, clock });
    await eventually('class cached', async () => (await sa.cluster.listNodeClasses()).some((c) => c.metadata.name === 'rbac-invalid'));
    await status.reconcile();
    const got = await getClass('rbac-invalid');
    const validation = got.status?.conditions?.find((c) => c.type === 'ValidationSucceeded');
    expect(validation).toMatchObject({ status: 'False', reason: 'UnsupportedPublicIP' });
    expect(got.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
    await status.reconcile();
    const events = await eventsFor('rbac-invalid', 'ValidationFailed');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'Warning', regarding: { kind: 'AzureFlexNodeClass' } });
    expect(events[0]?.note).toContain('allocateNodePublicIP');
  });

  it('termination: blocks deletion while NodeClaims reference the class, re-emits the Event every 10 minutes', async () => {
    const term = new NodeClassTerminationController({ cluster: sa.cluster, clock });
    await sa.cluster.createNodeClaim(nodeClaimObject('rbac-claim', 'rbac-valid'));
    await sa.cluster.createNodeClaim(nodeClaimObject('rbac-other-claim', 'some-other-class'));
    await adminRequest(info, 'DELETE', `${AFNC}/rbac-valid`);
    await eventually('deletion seen', async () => (await sa.cluster.listNodeClasses()).find((c) => c.metadata.name === 'rbac-valid')?.metadata.deletionTimestamp);
    await term.reconcile();
    await term.reconcile();
    expect((await getClass('rbac-valid')).finalizers).toContain(FINALIZER_NODECLASS);
    let waiting = await eventsFor('rbac-valid', 'WaitingOnNodeClaimTermination');
    expect(waiting).toHaveLength(1);
    expect(waiting[0]?.note).toBe('Waiting on NodeClaim termination for rbac-claim');
    clock.advance(WAITING_EVENT_INTERVAL_MS - 1000);
    await term.reconcile();
    expect(await eventsFor('rbac-valid', 'WaitingOnNodeClaimTermination')).toHaveLength(1);
    clock.advance(1000);
    await term.reconcile();
    waiting = await eventsFor('rbac-valid', 'WaitingOnNodeClaimTermination');
    expect(waiting).toHaveLength(2);
    // The status controller must not resurrect a terminating class's finalizer or status.
    const status = new NodeClassStatusController({ cluster: sa.cluster, clock });
    const terminating = (await sa.cluster.listNodeClasses()).find((c) => c.metadata.name === 'rbac-valid');
    expect(terminating && (await status.reconcileOne(terminating))).toBeUndefined();

    await sa.cluster.deleteNodeClaim('rbac-claim');
    await eventually('claim gone from cache', async () => (await sa.cluster.getNodeClaim('rbac-claim')) === undefined);
    await term.reconcile();
    await eventually('class deleted', async () => {
      try {
        await getClass('rbac-valid');
        return false;
      } catch (e) {
        return (e as { code?: number }).code === 404;
      }
    });
    await sa.cluster.deleteNodeClaim('rbac-other-claim');
  });

  it('every other adapter path (conflict re-reads, nodes, pools, eviction, lease) works as the ServiceAccount', async () => {
    // NodePool status, with a forced conflict (re-read needs get).
    await adminRequest(info, 'POST', '/apis/karpenter.sh/v1/nodepools', {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'rbac-pool' },
      spec: { template: { spec: { nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'x' }, requirements: [] } } },
    });
    await eventually('pool cached', async () => (await sa.cluster.listNodePools()).some((p) => p.metadata.name === 'rbac-pool'));
    await sa.cluster.informers.nodePools.stop();
    await adminRequest(info, 'PATCH', '/apis/karpenter.sh/v1/nodepools/rbac-pool', { metadata: { labels: { bump: '1' } } });
    await sa.cluster.updateNodePoolStatus('rbac-pool', { resources: { nodes: '0' }, conditions: [] });
    sa.cluster.informers.nodePools.start();

    // NodeClaim finalizer with a conflict, then status.
    await sa.cluster.createNodeClaim(nodeClaimObject('rbac-nc', 'x'));
    await eventually('nc cached', async () => sa.cluster.getNodeClaim('rbac-nc'));
    await sa.cluster.informers.nodeClaims.stop();
    await adminRequest(info, 'PATCH', '/apis/karpenter.sh/v1/nodeclaims/rbac-nc', { metadata: { labels: { bump: '1' } } });
    await sa.cluster.patchNodeClaimMetadata('rbac-nc', { finalizers: ['karpenter.sh/termination'] });
    await sa.cluster.updateNodeClaimStatus('rbac-nc', { conditions: [] });
    sa.cluster.informers.nodeClaims.start();
    await sa.cluster.patchNodeClaimMetadata('rbac-nc', { finalizers: [] });
    await sa.cluster.deleteNodeClaim('rbac-nc');

    // NodeClass status with a conflict.
    await adminRequest(info, 'POST', AFNC, nodeClassBody('rbac-conflict'));
    await eventually('class cached', async () => (await sa.cluster.listNodeClasses()).some((c) => c.metadata.name === 'rbac-conflict'));
    await sa.cluster.informers.nodeClasses.stop();
    await adminRequest(info, 'PATCH', `${AFNC}/rbac-conflict`, { metadata: { labels: { bump: '1' } } });
    await sa.cluster.updateNodeClassStatus('rbac-conflict', { conditions: [] });
    sa.cluster.informers.nodeClasses.start();
    await adminRequest(info, 'DELETE', `${AFNC}/rbac-conflict`);

    // Nodes: taint patch with a conflict, then delete.
    await adminRequest(info, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'rbac-node' } });
    await eventually('node cached', async () => (await sa.cluster.listNodes()).some((n) => n.metadata.name === 'rbac-node'));
    await sa.cluster.informers.nodes.stop();
    await adminRequest(info, 'PATCH', '/api/v1/nodes/rbac-node', { metadata: { labels: { bump: '1' } } });
    await sa.cluster.patchNode('rbac-node', { unschedulable: true, taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] });
    sa.cluster.informers.nodes.start();
    await sa.cluster.deleteNode('rbac-node');

    // Eviction and a pod Event.
    await adminRequest(info, 'POST', `/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'victim', namespace: ns },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    expect(await sa.cluster.evictPod(ns, 'victim')).toBe(true);
    await sa.cluster.recordEvent({ involvedObject: { kind: 'Pod', name: 'victim', namespace: ns }, type: 'Normal', reason: 'Evicted', message: 'test' });

    // The bootstrap token Secret new nodes join with: the one Secret the chart lets us read.
    await adminRequest(info, 'POST', `/api/v1/namespaces/${ns}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'azflex-bootstrap-token', namespace: ns },
      data: { token: Buffer.from('abcdef.0123456789abcdef').toString('base64') },
    });
    const caFile = join(mkdtempSync(join(tmpdir(), 'azflex-ca-')), 'ca.crt');
    writeFileSync(caFile, '-----BEGIN CERTIFICATE-----\ntest\n-----END CERTIFICATE-----\n');
    const bootstrap = await new KubeBootstrapSource(sa.client, {
      apiServerEndpoint: 'https://aks.example:443', caCertFile: caFile, namespace: ns, secretName: 'azflex-bootstrap-token', kubernetesVersion: 'v1.34.4',
    }).get();
    expect(bootstrap.token).toBe('abcdef.0123456789abcdef');
    expect(bootstrap.kubernetesVersion).toBe('1.34.4');

    // Leader election on the chart's lease name, released on stop (create, get, update).
    const elector = new LeaderElector({ client: sa.client, clock: new RealClock(), namespace: ns, name: 'azflex-controller', identity: 'rbac-pod', leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 200 });
    elector.start();
    await eventually('leads', async () => elector.isLeader());
    await new Promise((r) => setTimeout(r, 300));
    await elector.stop();
    expect(sa.errors.map(String)).toEqual([]);
  });

  it('reads PVCs, PVs and StorageClasses for volume topology (a zonal Azure disk pins its zone)', async () => {
    await adminRequest(info, 'POST', '/apis/storage.k8s.io/v1/storageclasses', {
      apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'rbac-zonal' }, provisioner: 'disk.csi.azure.com',
      volumeBindingMode: 'WaitForFirstConsumer', allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['westeurope-2'] }] }],
    });
    await adminRequest(info, 'POST', '/api/v1/persistentvolumes', {
      apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'rbac-disk' },
      spec: {
        capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: 'rbac-zonal',
        csi: { driver: 'disk.csi.azure.com', volumeHandle: '/subscriptions/x/resourceGroups/rg/providers/Microsoft.Compute/disks/d' },
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.disk.csi.azure.com/zone', operator: 'In', values: ['westeurope-2'] }] }] } },
      },
    });
    await adminRequest(info, 'POST', `/api/v1/namespaces/${ns}/persistentvolumeclaims`, {
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'rbac-data' },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'rbac-zonal', volumeName: 'rbac-disk', resources: { requests: { storage: '1Gi' } } },
    });
    const claim = await eventually('PVC in the cache', async () => (await sa.cluster.listPersistentVolumeClaims()).find((c) => c.metadata.name === 'rbac-data'));
    expect(claim).toMatchObject({ metadata: { namespace: ns }, spec: { storageClassName: 'rbac-zonal', volumeName: 'rbac-disk' } });
    const pv = await eventually('PV in the cache', async () => (await sa.cluster.listPersistentVolumes()).find((v) => v.metadata.name === 'rbac-disk'));
    expect(pv.spec.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions).toEqual([{ key: 'topology.disk.csi.azure.com/zone', operator: 'In', values: ['westeurope-2'] }]);
    const sc = await eventually('StorageClass in the cache', async () => (await sa.cluster.listStorageClasses()).find((c) => c.metadata.name === 'rbac-zonal'));
    expect(sc).toMatchObject({ provisioner: 'disk.csi.azure.com', volumeBindingMode: 'WaitForFirstConsumer', allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['westeurope-2'] }] }] });
  });

  it('made no forbidden request, and used every verb the chart grants (no more, no less)', () => {
    const forbidden = sa.records.filter((r) => r.status === 403);
    const unexpected = forbidden.filter((r) => !r.path.includes('/secrets') && !(r.method === 'DELETE' && r.path.endsWith('/anything')));
    expect(unexpected).toEqual([]);
    const rules = [...REQUIRED_CLUSTER_RULES, ...requiredNamespacedRules('azflex-controller', 'azflex-bootstrap-token')];
    const used = new Set<string>();
    for (const r of sa.records) {
      if (r.status === 403) continue;
      const attrs = requestAttributes(r);
      expect(allows(rules, attrs), `${r.method} ${r.path}`).toBe(true);
      used.add(`${attrs.apiGroup}|${attrs.resource}|${attrs.verb}`);
    }
    expect([...used].sort()).toEqual([...ruleTriples(rules)].sort());
  });
});
