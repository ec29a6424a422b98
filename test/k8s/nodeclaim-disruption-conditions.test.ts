/**
 * The disruption conditions on a real kube-apiserver with upstream Karpenter's NodeClaim CRD
 * (newest release): a drifted and a consolidatable NodeClaim show Drifted and Consolidatable as
 * `kubectl get nodeclaim -o jsonpath` reads them, a pass that changes nothing writes nothing, and
 * once the budget lets them go each shows its DisruptionReason (Drifted, Empty) as it is deleted.
 */
import { describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { StaticInstanceTypeCatalog } from '../../src/catalog/skus.js';
import { DisruptionController } from '../../src/disruption/controller.js';
import { RealClock } from '../../src/platform/real-clock.js';
import { NODEPOOL_HASH_VERSION } from '../../src/provisioning/nodepool-hash.js';
import { ANNOTATION_NODEPOOL_HASH, ANNOTATION_NODEPOOL_HASH_VERSION } from '../../src/apis/well-known.js';
import { adminKubeConfig, adminRequest, kubectl } from './harness.js';
import { ensureNamespace, forceDelete, makeAdapter, nodeClaimObject, nodeClassBody } from './fixtures.js';

const info = inject('k8s');
const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const POOL = 'conds-pool';
const CLASS = 'conds-eastus2';

const jsonpath = async (claim: string, type: string, field: string): Promise<string> => {
  const r = await kubectl(info, ['get', 'nodeclaim', claim, '-o', `jsonpath={.status.conditions[?(@.type=="${type}")].${field}}`]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
};

describe('NodeClaim disruption conditions on upstream CRDs', () => {
  it('a drifted and a consolidatable NodeClaim show Drifted and Consolidatable to kubectl; an unchanged pass writes nothing; disrupted, each shows its DisruptionReason', async () => {
    await ensureNamespace(info, 'conds');
    await adminRequest(info, 'POST', '/apis/flex.aks.azure.com/v1alpha1/azureflexnodeclasses', nodeClassBody(CLASS));
    const pool = {
      apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: POOL },
      spec: {
        // A budget of 0: the pass marks, never deletes.
        disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '1m', budgets: [{ nodes: '0' }] },
        template: { spec: { nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: CLASS }, requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D8s_v5'] }] } },
      },
    };
    const applied = await kubectl(info, ['apply', '-f', '-'], stringify(pool));
    expect(applied.code, applied.stderr).toBe(0);

    const a = makeAdapter(adminKubeConfig(info), 'conds');
    a.cluster.start();
    const claims = ['conds-drifted', 'conds-idle'];
    try {
      await a.cluster.waitForSync();
      const longAgo = new Date(Date.now() - 10 * 60_000).toISOString();
      for (const name of claims) {
        const drifted = name === 'conds-drifted';
        const claim = nodeClaimObject(name, CLASS, {
          labels: { 'karpenter.sh/nodepool': POOL, 'node.kubernetes.io/instance-type': 'Standard_D8s_v5' },
          // A template hash of the current version that is not the pool's: NodePoolDrifted.
          annotations: drifted ? { [ANNOTATION_NODEPOOL_HASH]: 'stale', [ANNOTATION_NODEPOOL_HASH_VERSION]: NODEPOOL_HASH_VERSION } : {},
          // Deleting leaves it Terminating, so kubectl still shows it.
          finalizers: ['karpenter.sh/termination'],
        });
        await a.cluster.createNodeClaim(claim);
        const ready = ['Launched', 'Registered', 'Initialized', 'Ready'].map((type) => ({ type, status: 'True' as const, reason: type, message: '', lastTransitionTime: longAgo }));
        const providerID = `azure-flex:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/${name}`;
        await a.cluster.updateNodeClaimStatus(name, { providerID, nodeName: name, conditions: ready });
        // Its node, Ready (a NotReady node counts against the budget as disrupted already).
        await adminRequest(info, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { providerID } });
        await adminRequest(info, 'PATCH', `/api/v1/nodes/${name}/status`, {
          status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: '', lastHeartbeatTime: longAgo, lastTransitionTime: longAgo }] },
        });
      }
      for (let i = 0; i < 100 && (await a.cluster.listNodes()).filter((n) => claims.includes(n.metadata.name) && n.status.conditions.length > 0).length < claims.length; i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const controller = new DisruptionController({ cluster: a.cluster, catalog: new StaticInstanceTypeCatalog(), clock: new RealClock(), log: quiet });
      expect(await controller.reconcile()).toEqual([]);

      expect(await jsonpath('conds-drifted', 'Drifted', 'status')).toBe('True');
      expect(await jsonpath('conds-drifted', 'Drifted', 'reason')).toBe('NodePoolDrifted');
      expect(await jsonpath('conds-idle', 'Drifted', 'status')).toBe('');
      // Initialized 10 minutes ago, no pod since, consolidateAfter 1m.
      for (const name of claims) {
        expect(await jsonpath(name, 'Consolidatable', 'status')).toBe('True');
        expect(await jsonpath(name, 'Consolidatable', 'reason')).toBe('Consolidatable');
        expect(await jsonpath(name, 'Ready', 'status')).toBe('True');
        expect(await jsonpath(name, 'DisruptionReason', 'status')).toBe('');
      }

      // Nothing changed: the next pass sends no status write.
      const statusWrites = () => a.records.filter((r) => r.method === 'PATCH' && /\/nodeclaims\/[^/]+\/status$/.test(r.path)).length;
      const before = statusWrites();
      await controller.reconcile();
      expect(statusWrites()).toBe(before);

      // The budget opens: both are disrupted, each showing why before its deletion.
      const opened = await kubectl(info, ['patch', 'nodepool', POOL, '--type', 'merge', '-p', JSON.stringify({ spec: { disruption: { budgets: [{ nodes: '100%' }] } } })]);
      expect(opened.code, opened.stderr).toBe(0);
      for (let i = 0; i < 100 && (await a.cluster.listNodePools()).find((p) => p.metadata.name === POOL)?.spec.disruption.budgets[0]?.nodes !== '100%'; i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const decided = await controller.reconcile();
      expect(decided.map((d) => [d.nodeClaim, d.kind]).sort()).toEqual([['conds-drifted', 'Drifted'], ['conds-idle', 'Empty']]);
      expect(await jsonpath('conds-drifted', 'DisruptionReason', 'reason')).toBe('Drifted');
      expect(await jsonpath('conds-idle', 'DisruptionReason', 'reason')).toBe('Empty');
      const terminating = await kubectl(info, ['get', 'nodeclaim', 'conds-idle', '-o', 'jsonpath={.metadata.deletionTimestamp}']);
      expect(terminating.stdout).not.toBe('');
    } finally {
      await a.cluster.stop();
      for (const name of claims) {
        await forceDelete(info, `/apis/karpenter.sh/v1/nodeclaims/${name}`);
        await adminRequest(info, 'DELETE', `/api/v1/nodes/${name}`).catch(() => undefined);
      }
      await kubectl(info, ['delete', 'nodepool', POOL, '--wait=false']);
    }
  });
});
