import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ensureUpstreamMetrics, type UpstreamMetricFamily } from '../../scripts/upstream-karpenter.mjs';
import { refreshClusterGauges } from '../../src/metrics/cluster-state.js';
import { createAzflexMetrics, createKarpenterMetrics } from '../../src/metrics/karpenter.js';
import { karpenterControllerMetrics, runtimeMetricsListener, runtimeMetricsObserver } from '../../src/metrics/runtime.js';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import type { Node, NodeClaim, Pod } from '../../src/ports/cluster.js';
import { AzureError } from '../../src/ports/azure.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { T0, iso, makeNodeClaim, makeNodeClass, makeNodePool, makePod } from '../provisioning/fixtures.js';

/**
 * azflex's karpenter_* metrics against upstream Karpenter's own: the families, types, label
 * names and histogram buckets its code registers (sigs.k8s.io/karpenter, built and dumped by
 * scripts/upstream-metrics through the Go module proxy, cached, never committed), compared
 * with what azflex's /metrics exposition actually shows after every metric path ran once.
 */

/** Upstream families azflex does not export, and why. Kept exact: a new upstream family fails the test until decided. */
const NOT_EXPORTED: Record<string, string> = Object.fromEntries([
  ...[
    'karpenter_cluster_state_synced', 'karpenter_cluster_state_unsynced_time_seconds',
  ].map((n) => [n, 'azflex has no separate cluster state to fall out of sync: every pass reads the informer caches, and /readyz and /healthz say when those are not synced or stop hearing from the API server']),
  ...[
    'karpenter_consolidation_moves_total', 'karpenter_consolidation_score', 'karpenter_voluntary_disruption_consolidation_timeouts_total',
    'karpenter_voluntary_disruption_decision_evaluation_duration_seconds', 'karpenter_voluntary_disruption_decisions_by_nodepool_total',
    'karpenter_voluntary_disruption_decisions_total', 'karpenter_voluntary_disruption_eligible_nodes', 'karpenter_voluntary_disruption_failed_validations_total',
    'karpenter_voluntary_disruption_queue_failures_total', 'karpenter_voluntary_disruption_terminate_first_decisions_total',
    'karpenter_pods_disruption_initiated_total',
  ].map((n) => [n, 'the disruption controller has no command queue, validation pass, scoring or multi-node consolidation; each NodeClaim it disrupts is counted in karpenter_nodeclaims_disrupted_total']),
  ['karpenter_nodepools_cost_total', 'prices only rank sizes (docs/install.md): not a cost figure to publish'],
  ['karpenter_nodepools_cost_tracker_errors_total', 'prices only rank sizes (docs/install.md): not a cost figure to publish'],
  ...[
    'karpenter_nodes_termination_duration_seconds', 'karpenter_nodes_lifetime_duration_seconds',
  ].map((n) => [n, 'node-level timing is not measured; karpenter_nodeclaims_termination_duration_seconds times the whole NodeClaim termination']),
  ...['karpenter_nodes_drained_total', 'karpenter_pods_drained_total', 'karpenter_pods_eviction_requests_total']
    .map((n) => [n, 'the drain (src/lifecycle/nodeclaim/termination.ts) is not instrumented yet']),
  ...[
    'karpenter_pods_bound_duration_seconds', 'karpenter_pods_provisioning_bound_duration_seconds', 'karpenter_pods_provisioning_scheduling_undecided_time_seconds',
    'karpenter_pods_provisioning_startup_duration_seconds', 'karpenter_pods_provisioning_unbound_time_seconds', 'karpenter_pods_provisioning_unstarted_time_seconds',
    'karpenter_pods_scheduling_decision_duration_seconds', 'karpenter_pods_startup_duration_seconds', 'karpenter_pods_unbound_time_seconds', 'karpenter_pods_unstarted_time_seconds',
  ].map((n) => [n, 'per-pod timing is not tracked; karpenter_pods_state has every pod\'s state']),
  ...[
    'karpenter_scheduler_ignored_pods_count', 'karpenter_scheduler_pending_pods_by_effective_zone_count', 'karpenter_scheduler_queue_depth',
    'karpenter_scheduler_unfinished_work_seconds',
  ].map((n) => [n, 'the provisioner\'s passes are not queued or split by scheduling id: karpenter_scheduler_scheduling_duration_seconds and unschedulable_pods_count cover them']),
]);

interface Family { type: string; labels: Set<string>; buckets: number[]; series: number }

/** The text exposition format, as Prometheus reads it: families by name (TYPE lines), label names and buckets of their samples. */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const familyOf = (sample: string): Family | undefined => {
    for (const suffix of ['', '_bucket', '_sum', '_count', '_total']) {
      if (suffix && !sample.endsWith(suffix)) continue;
      const f = families.get(suffix && suffix !== '_total' ? sample.slice(0, -suffix.length) : sample);
      if (f) return f;
    }
    return undefined;
  };
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      families.set(type[1]!, { type: type[2]!, labels: new Set(), buckets: [], series: 0 });
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`unparsable exposition line: ${line}`);
    const family = familyOf(sample[1]!);
    if (!family) throw new Error(`sample without a TYPE: ${line}`);
    family.series++;
    for (const m of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      if (m[1] === 'le' && sample[1]!.endsWith('_bucket')) {
        if (m[2] !== '+Inf' && !family.buckets.includes(Number(m[2]))) family.buckets.push(Number(m[2]));
      } else if (m[1] !== 'quantile') family.labels.add(m[1]!);
    }
  }
  return families;
}

const node = (name: string, labels: Record<string, string>, extra: Partial<Node['status']> = {}): Node => ({
  metadata: { name, uid: `uid-${name}`, labels, annotations: {}, finalizers: [], creationTimestamp: iso(T0) },
  spec: { taints: [] },
  status: {
    capacity: { cpu: '8', memory: '32Gi', pods: '110' }, allocatable: { cpu: '7900m', memory: '30Gi', pods: '110' },
    conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: '', lastTransitionTime: iso(T0) }], ...extra,
  },
});

/** Every azflex metric path once: cluster-state gauges, the runtime's observer and listener, the periodic controllers' observers. */
async function exercise(): Promise<{ text: string; registry: Registry }> {
  const registry = new Registry();
  const k = createKarpenterMetrics(registry);
  const a = createAzflexMetrics(registry);
  const cluster = new FakeCluster(new VirtualClock(T0), undefined);
  cluster.putNodeClass(makeNodeClass());
  cluster.putNodePool(makeNodePool('gpu', { limits: { cpu: '1000', 'nvidia.com/gpu': '64' }, consolidationPolicy: 'WhenEmptyOrUnderutilized' }));
  // Node auto-provisioning's pool beside ours: its NodePool gauges are NAP's to report.
  cluster.putNodePool(makeNodePool('nap', { kind: 'AKSNodeClass', limits: { cpu: '500' } }));
  const flexLabels = {
    'karpenter.sh/nodepool': 'gpu', 'karpenter.sh/capacity-type': 'on-demand', 'topology.kubernetes.io/zone': 'eastus2-1',
    'topology.kubernetes.io/region': 'eastus2', 'node.kubernetes.io/instance-type': 'Standard_D8s_v5', 'kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux',
  };
  const claim: NodeClaim = makeNodeClaim('gpu-abcde', {
    nodePool: 'gpu', launchedAs: 'Standard_D8s_v5', nodeName: 'aks-flex-1', labels: flexLabels,
    conditions: ['Launched', 'Registered', 'Initialized', 'Ready'].map((type) => ({ type, status: 'True' as const, reason: type, message: '', lastTransitionTime: iso(T0) })),
    capacity: { cpu: '8', memory: '32Gi', pods: '110' }, allocatable: { cpu: '7900m', memory: '30Gi', pods: '110' },
  });
  claim.spec.terminationGracePeriod = '1h';
  cluster.putNodeClaim(claim);
  cluster.putNodeClaim(makeNodeClaim('gpu-fghij', { nodePool: 'gpu', labels: { 'karpenter.sh/capacity-type': 'on-demand' } }));
  cluster.putNode(node('aks-flex-1', flexLabels));
  cluster.putNode(node('aks-nap-1', { 'karpenter.sh/nodepool': 'nap', 'kubernetes.io/os': 'linux' }));
  cluster.putNode(node('aks-system-1', { 'kubernetes.io/os': 'linux' }, { phase: 'Running' }));
  const owned = (pod: Pod, kind: string, apiVersion: string, name: string): Pod => ({
    ...pod, owner: { apiVersion, kind, name },
    spec: { ...pod.spec, containers: pod.spec.containers.map((c) => ({ ...c, resources: { ...c.resources, limits: { memory: '2Gi' } } })) },
  });
  for (const pod of [
    owned(makePod('web-1', { nodeName: 'aks-flex-1', ownerKind: 'ReplicaSet', containers: [{ cpu: '1', memory: '1Gi' }] }), 'ReplicaSet', 'apps/v1', 'web-6d4b'),
    owned(makePod('agent-x', { nodeName: 'aks-flex-1', ownerKind: 'DaemonSet', containers: [{ cpu: '100m' }] }), 'DaemonSet', 'apps/v1', 'agent'),
    makePod('pending-1'),
  ]) cluster.putPod(pod);
  await refreshClusterGauges(cluster, { list: async () => [...STATIC_INSTANCE_TYPES] }, k, a, T0 + 60_000);

  const observer = runtimeMetricsObserver(a, k, undefined, (name) => cluster.nodeClaims.get(name));
  const capacity = new AzureError('AllocationFailed', 409, 'no capacity');
  observer.cloudProviderCall?.({ method: 'Create', nodeClaim: 'gpu-abcde', seconds: 42, error: capacity });
  observer.cloudProviderCall?.({ method: 'Delete', nodeClaim: 'gpu-abcde', seconds: 3 });
  observer.vmCreateFailed?.({ nodeClaim: 'gpu-abcde', nodePool: 'gpu', sku: 'Standard_D8s_v5', region: 'eastus2', subscription: 's' }, capacity);
  observer.launchFailed?.({ nodeClaim: 'gpu-abcde', nodePool: 'gpu', code: 'AllocationFailed', message: 'no capacity', insufficientCapacity: true });
  observer.instanceLost?.({ nodeClaim: 'gpu-abcde', nodePool: 'gpu', reason: 'instance_stopped', message: 'VM deallocated' });
  observer.instanceLost?.({ nodeClaim: 'gpu-fghij', nodePool: 'gpu', reason: 'garbage_collected', message: 'VM gone' });
  observer.instanceLost?.({ nodeClaim: 'gpu-spot1', nodePool: 'gpu', reason: 'spot_interrupted', message: 'spot VM evicted' });

  const controllers = karpenterControllerMetrics(k);
  controllers.onNodeClaimCreated(claim);
  controllers.onReplacementCreated(claim);
  controllers.onSchedulingDuration(0.2);
  controllers.onUnschedulablePods(2);
  controllers.onNodeClaimDisrupted({ nodeClaim: 'gpu-abcde', nodePool: 'gpu', kind: 'Underutilized', detail: '' }, 'WhenEmptyOrUnderutilized', claim);
  controllers.onNodeClaimDisrupted({ nodeClaim: 'gpu-abcde', nodePool: 'gpu', kind: 'Drifted', detail: '' }, 'WhenEmptyOrUnderutilized', cluster.nodeClaims.get('gpu-fghij'));
  controllers.onNodeClaimDisrupted({ nodeClaim: 'gpu-fghij', nodePool: 'gpu', kind: 'Unhealthy', detail: '', repairedCondition: 'GpuXidError' }, 'WhenEmptyOrUnderutilized', cluster.nodeClaims.get('gpu-fghij'));
  controllers.onNodeClaimTimedOut({ nodeClaim: 'gpu-fghij', nodePool: 'gpu', failure: 'RegistrationTimeout' }, cluster.nodeClaims.get('gpu-fghij')!);
  k.reconcileErrors.inc({ controller: 'provisioner' });

  const listener = runtimeMetricsListener(a, k, (name) => cluster.nodeClaims.get(name)?.metadata.labels);
  listener({ t: T0, actor: 'nodeclaim/gpu-abcde', kind: 'transition', from: 'launched', to: 'registered' });
  listener({ t: T0 + 1000, actor: 'nodeclaim/gpu-abcde', kind: 'transition', from: 'initialized', to: 'terminating.draining' });
  listener({ t: T0 + 95_000, actor: 'nodeclaim/gpu-abcde', kind: 'transition', from: 'terminating.finalizing', to: 'deleted' });
  listener({ t: T0, actor: 'nic/gpu-abcde-nic', kind: 'transition', from: 'attaching', to: 'vm-failed' });
  listener({ t: T0 + 183_000, actor: 'nic/gpu-abcde-nic', kind: 'transition', from: 'deleting', to: 'reaped' });
  return { text: await registry.metrics(), registry };
}

describe('metrics match upstream Karpenter (v1.15, its own registered families)', () => {
  it('every karpenter_* family azflex exports is upstream\'s: same type, label names and buckets', async () => {
    const upstream = new Map<string, UpstreamMetricFamily>((await ensureUpstreamMetrics()).families.map((f) => [f.name, f]));
    const { text } = await exercise();
    const ours = parseExposition(text);
    const shared = [...ours.keys()].filter((n) => n.startsWith('karpenter_') || n.startsWith('controller_runtime_'));
    expect(shared.length).toBeGreaterThan(15);
    for (const name of shared) {
      const mine = ours.get(name)!;
      const theirs = upstream.get(name);
      expect(theirs, `${name} is not an upstream metric`).toBeDefined();
      expect(mine.series, `${name} was never set: its labels are unchecked`).toBeGreaterThan(0);
      expect(mine.type, name).toBe(theirs!.type);
      expect([...mine.labels].sort(), name).toEqual(theirs!.labels);
      if (theirs!.type === 'histogram') expect(mine.buckets, name).toEqual(theirs!.buckets);
    }
    // What azflex leaves out of upstream's families is decided and listed, no more, no less.
    const missing = [...upstream.keys()].filter((n) => n.startsWith('karpenter_') && !ours.has(n)).sort();
    expect(missing).toEqual(Object.keys(NOT_EXPORTED).sort());
  }, 900_000);

  it('uses upstream\'s label values', async () => {
    const { registry, text } = await exercise();
    const values = async (name: string) => (await registry.getSingleMetric(name)!.get()).values.filter((v) => v.value > 0).map((v) => v.labels);
    // NodePool gauges only for azflex's own NodePools; NAP reports its pool.
    expect(new Set((await values('karpenter_nodepools_limit')).map((l) => l.nodepool))).toEqual(new Set(['gpu']));
    expect(await values('karpenter_nodepools_limit')).toContainEqual({ nodepool: 'gpu', resource_type: 'nvidia.com/gpu' });
    // Node gauges cover every node, with the node's own nodepool label and whether azflex manages it.
    const alloc = (await values('karpenter_nodes_allocatable')).filter((l) => l.resource_type === 'cpu');
    expect(alloc.map((l) => [l.node_name, l.nodepool, l.managed, l.phase]).sort()).toEqual([
      ['aks-flex-1', 'gpu', 'true', ''], ['aks-nap-1', 'nap', 'false', ''], ['aks-system-1', '', 'false', 'Running'],
    ]);
    expect(await values('karpenter_nodes_total_daemon_requests')).toContainEqual(expect.objectContaining({ node_name: 'aks-flex-1', resource_type: 'cpu' }));
    // Pods: owner as an API path, scheduled means bound, managed means on any Karpenter node.
    const pods = await values('karpenter_pods_state');
    expect(pods).toContainEqual(expect.objectContaining({ name: 'web-1', owner: '/apis/apps/v1/namespaces/default/replicasets/web-6d4b', scheduled: 'true', managed: 'true', nodepool: 'gpu', zone: 'eastus2-1' }));
    expect(pods).toContainEqual(expect.objectContaining({ name: 'pending-1', owner: '', scheduled: 'false', managed: 'false', node: '' }));
    // Created: provisioned, and underutilized for a consolidation replacement.
    expect((await values('karpenter_nodeclaims_created_total')).map((l) => l.reason).sort()).toEqual(['provisioned', 'underutilized']);
    // Disrupted: snake-cased policy only for consolidation, termination mode from the NodeClaim's grace period.
    const disrupted = await values('karpenter_nodeclaims_disrupted_total');
    expect(disrupted).toContainEqual({ reason: 'underutilized', nodepool: 'gpu', capacity_type: 'on-demand', consolidation_policy: 'when_empty_or_underutilized', termination_mode: 'eventual' });
    expect(disrupted).toContainEqual({ reason: 'drifted', nodepool: 'gpu', capacity_type: 'on-demand', consolidation_policy: '', termination_mode: 'graceful' });
    // Node repair: reason unhealthy, and upstream's per-condition breakdown with the condition in snake case.
    expect(disrupted).toContainEqual({ reason: 'unhealthy', nodepool: 'gpu', capacity_type: 'on-demand', consolidation_policy: '', termination_mode: 'graceful' });
    expect(await values('karpenter_nodeclaims_unhealthy_disrupted_total')).toEqual([{ condition: 'gpu_xid_error', nodepool: 'gpu', capacity_type: 'on-demand', image_id: '', termination_mode: 'graceful' }]);
    expect(disrupted).toContainEqual({ reason: 'registration_timeout', nodepool: 'gpu', capacity_type: 'on-demand', consolidation_policy: '', termination_mode: 'graceful' });
    expect(disrupted).toContainEqual(expect.objectContaining({ reason: 'insufficient_capacity', consolidation_policy: '' }));
    // A lost instance: core's garbage collection (gone), the AWS provider's interruption kinds (stopped, terminated).
    expect(disrupted).toContainEqual({ reason: 'instance_stopped', nodepool: 'gpu', capacity_type: 'on-demand', consolidation_policy: '', termination_mode: 'eventual' });
    expect(disrupted).toContainEqual({ reason: 'garbage_collected', nodepool: 'gpu', capacity_type: 'on-demand', consolidation_policy: '', termination_mode: 'graceful' });
    // A spot VM evicted by ARM: the AWS provider's spot interruption kind.
    expect(disrupted).toContainEqual(expect.objectContaining({ reason: 'spot_interrupted', nodepool: 'gpu', consolidation_policy: '' }));
    // Budgets: the default 10% of one initialized NodeClaim rounds up to 1 for every reason.
    expect(await values('karpenter_nodepools_allowed_disruptions')).toEqual(expect.arrayContaining([{ nodepool: 'gpu', reason: 'drifted' }, { nodepool: 'gpu', reason: 'empty' }, { nodepool: 'gpu', reason: 'underutilized' }]));
    expect((await registry.getSingleMetric('karpenter_nodepools_allowed_disruptions')!.get()).values.map((v) => v.value)).toEqual([1, 1, 1]);
    // Termination timed from its start (terminating.*) to deleted: 94 s.
    expect(text).toContain('karpenter_nodeclaims_termination_duration_seconds_sum{nodepool="gpu"} 94');
    expect(text).toContain('karpenter_nodeclaims_instance_termination_duration_seconds_sum{nodepool="gpu"} 3');
    // Cloud provider: upstream's error categories and the NodeClaim's NodePool; provider "azure-flex" (the Azure provider says "azure").
    expect(await values('karpenter_cloudprovider_errors_total')).toEqual([
      { controller: 'nodeclaim.lifecycle', method: 'Create', provider: 'azure-flex', error: 'InsufficientCapacityError', nodepool: 'gpu' },
    ]);
  });
});
