import { describe, expect, it } from 'vitest';
import { StaticInstanceTypeCatalog } from '../../src/catalog/skus.js';
import { nodePoolSupport } from '../../src/provisioning/nodepool-support.js';
import { Provisioner } from '../../src/provisioning/provisioner.js';
import { Requirements } from '../../src/provisioning/requirements.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { SeededRandom, VirtualClock } from '../../src/sim/virtual-clock.js';
import { GPU_TAINT, GPU_TOLERATION, T0, makeNodeClass, makeNodePool, makePod, silentLog, setPods } from './fixtures.js';

const H200 = { key: 'node.kubernetes.io/instance-type', operator: 'In' as const, values: ['Standard_ND96isr_H200_v5'] };

function setup() {
  const clock = new VirtualClock(T0);
  const cluster = new FakeCluster(clock);
  cluster.putNodeClass(makeNodeClass());
  const h200 = makeNodePool('h200', { labels: { gpu: 'h200' }, taints: [GPU_TAINT], requirements: [H200] });
  // Upstream v1.15 NodePools azflex must not choke on: Gte, Balanced, static capacity.
  const gte = makeNodePool('cpu-gte', { labels: { pool: 'gte' }, requirements: [{ key: 'karpenter.azure.com/sku-cpu', operator: 'Gte', values: ['8'] }, { key: 'karpenter.azure.com/sku-gpu-count', operator: 'Lte', values: ['0'] }] });
  const balanced = makeNodePool('cpu-balanced', { labels: { pool: 'balanced' }, requirements: [{ key: 'karpenter.azure.com/sku-gpu-count', operator: 'In', values: ['0'] }] });
  balanced.spec.disruption.consolidationPolicy = 'Balanced';
  const statik = makeNodePool('static', { labels: { pool: 'static' }, requirements: [H200] });
  statik.spec.replicas = 2;
  for (const np of [h200, gte, balanced, statik]) cluster.putNodePool(np);
  const provisioner = new Provisioner({
    cluster, catalog: new StaticInstanceTypeCatalog(), clock, random: new SeededRandom(3),
    isOfferingUnavailable: () => false, clusterName: 'test', log: silentLog,
  });
  return { cluster, provisioner };
}

const pool = (cluster: FakeCluster, name: string) => cluster.nodePools.get(name)!;
const cond = (cluster: FakeCluster, name: string, type: string) => pool(cluster, name).status.conditions.find((c) => c.type === type);

describe('upstream NodePool features', () => {
  it('Gte and Lte are inclusive integer bounds', () => {
    const r = Requirements.fromSelectors([{ key: 'cpu', operator: 'Gte', values: ['8'] }, { key: 'cpu', operator: 'Lte', values: ['16'] }]).get('cpu')!;
    expect(['7', '8', '16', '17', 'x'].map((v) => r.has(v))).toEqual([false, true, true, false, false]);
    expect(Requirements.fromSelectors([{ key: 'c', operator: 'Lte', values: ['0'] }]).get('c')!.has('0')).toBe(true);
  });

  it('an unknown operator matches nothing instead of throwing, and blocks only its NodePool', () => {
    const np = makeNodePool('weird', { requirements: [{ key: 'a', operator: 'Between' as never, values: ['1', '2'] }] });
    expect(() => Requirements.fromSelectors(np.spec.template.spec.requirements)).not.toThrow();
    expect(nodePoolSupport(np).blocking.map((i) => i.reason)).toEqual(['UnsupportedRequirementOperator']);
  });

  it('Gte, Balanced and replicas beside an H200 pool: all provision, the static pool its replicas whatever is pending, Balanced explained on its status', async () => {
    const { cluster, provisioner } = setup();
    setPods(cluster, [
      makePod('train', { requests: { cpu: '8', memory: '64Gi', 'nvidia.com/gpu': '8' }, nodeSelector: { gpu: 'h200' }, tolerations: [GPU_TOLERATION] }),
      makePod('web-gte', { requests: { cpu: '6', memory: '8Gi' }, nodeSelector: { pool: 'gte' } }),
      makePod('web-balanced', { requests: { cpu: '1', memory: '1Gi' }, nodeSelector: { pool: 'balanced' } }),
      makePod('web-static', { requests: { cpu: '1', memory: '1Gi' }, nodeSelector: { pool: 'static' } }),
    ]);
    await provisioner.reconcile();
    const byPool = [...cluster.nodeClaims.values()].map((c) => c.metadata.labels['karpenter.sh/nodepool']).sort();
    expect(byPool).toEqual(['cpu-balanced', 'cpu-gte', 'h200', 'static', 'static']);
    const gteClaim = [...cluster.nodeClaims.values()].find((c) => c.metadata.labels['karpenter.sh/nodepool'] === 'cpu-gte')!;
    const cpus = gteClaim.spec.requirements.find((r) => r.key === 'node.kubernetes.io/instance-type')!.values!;
    expect(cpus.length).toBeGreaterThan(0);
    for (const name of cpus) expect((await new StaticInstanceTypeCatalog().get(name))!.vcpu).toBeGreaterThanOrEqual(8);

    expect(cond(cluster, 'h200', 'Ready')).toMatchObject({ status: 'True' });
    expect(cond(cluster, 'cpu-gte', 'Ready')).toMatchObject({ status: 'True' });
    expect(cond(cluster, 'cpu-balanced', 'Ready')).toMatchObject({ status: 'True' });
    expect(cond(cluster, 'cpu-balanced', 'FullySupported')).toMatchObject({ status: 'False', reason: 'ConsolidationPolicyUnsupported' });
    expect(cond(cluster, 'static', 'Ready')).toMatchObject({ status: 'True' });
    expect(cond(cluster, 'static', 'ReplicasReady')).toMatchObject({ status: 'False', reason: 'ReplicasPending', message: '0/2 nodes registered' });
    expect(pool(cluster, 'h200').status.resources?.['nvidia.com/gpu']).toBe('8');
    expect(pool(cluster, 'h200').status.nodes).toBe(0);

    const poolEvents = cluster.events.filter((e) => e.involvedObject.kind === 'NodePool');
    expect(poolEvents.map((e) => `${e.involvedObject.name}/${e.reason}`).sort()).toEqual(['cpu-balanced/ConsolidationPolicyUnsupported']);
    // A steady problem is not re-announced every pass.
    await provisioner.reconcile();
    expect(cluster.events.filter((e) => e.involvedObject.kind === 'NodePool')).toHaveLength(1);
  });
});
