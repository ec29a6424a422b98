import { describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import { schedule, type SchedulingInput } from '../../src/provisioning/scheduler.js';
import { GPU_TAINT, GPU_TOLERATION, makeNodeClaim, makeNodeClass, makeNodePool, makePod } from './fixtures.js';

const base = (over: Partial<SchedulingInput>): SchedulingInput => ({
  pendingPods: [],
  nodePools: [makeNodePool('default')],
  nodeClasses: [makeNodeClass()],
  instanceTypes: STATIC_INSTANCE_TYPES,
  existingNodeClaims: [],
  daemonSetPods: [],
  isOfferingUnavailable: () => false,
  ...over,
});

const gpuPods = (n: number, gpus: string, extra: Parameters<typeof makePod>[1] = {}) =>
  Array.from({ length: n }, (_, i) => makePod(`gpu-${gpus}-${i}`, { requests: { cpu: '4', memory: '32Gi', 'nvidia.com/gpu': gpus }, tolerations: [GPU_TOLERATION], ...extra }));

describe('schedule', () => {
  it('packs small CPU pods onto the cheapest SKU that holds them', () => {
    const pods = Array.from({ length: 10 }, (_, i) => makePod(`web-${i}`, { requests: { cpu: '500m', memory: '1Gi' } }));
    // Pinned to amd64, as a pool of amd64 images is: unpinned, two arm64 D4ps_v5 are cheaper.
    const amd64 = makeNodePool('default', { requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] });
    const result = schedule(base({ pendingPods: pods, nodePools: [amd64] }));
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims).toHaveLength(1);
    const [plan] = result.nodeClaims;
    expect(plan!.instanceType.name).toBe('Standard_D8s_v5');
    expect(plan!.podKeys).toHaveLength(10);
    expect(plan!.requests).toMatchObject({ cpu: '5', memory: '10Gi', pods: '10' });
    expect(plan!.requirements).toContainEqual({ key: 'topology.kubernetes.io/region', operator: 'In', values: ['eastus2'] });
    expect(plan!.requirements).toContainEqual({ key: 'karpenter.sh/nodepool', operator: 'In', values: ['default'] });
  });

  it('honours nodeSelector on GPU model and picks a SKU offering it', () => {
    const pool = makeNodePool('gpu', { taints: [GPU_TAINT] });
    const pods = gpuPods(8, '1', { nodeSelector: { 'karpenter.azure.com/sku-gpu-name': 'H200' } });
    const result = schedule(base({ pendingPods: pods, nodePools: [pool] }));
    expect(result.unschedulable).toEqual([]);
    expect(result.nodeClaims).toHaveLength(1);
    expect(result.nodeClaims[0]!.instanceType.name).toBe('Standard_ND96isr_H200_v5');
  });

  it('prefers cheaper per-pod placement: two one-GPU A100 pods get two 1-GPU VMs, not an 8-GPU one', () => {
    const pool = makeNodePool('gpu', { taints: [GPU_TAINT], requirements: [{ key: 'karpenter.azure.com/sku-gpu-name', operator: 'In', values: ['A100'] }] });
    const result = schedule(base({ pendingPods: gpuPods(2, '1'), nodePools: [pool] }));
    expect(result.nodeClaims.map((c) => c.instanceType.name)).toEqual(['Standard_NC24ads_A100_v4', 'Standard_NC24ads_A100_v4']);
  });

  it('says why a pod asking for more GPUs than any SKU has is unschedulable', () => {
    const pool = makeNodePool('gpu', { taints: [GPU_TAINT] });
    const result = schedule(base({ pendingPods: gpuPods(1, '16'), nodePools: [pool] }));
    expect(result.nodeClaims).toEqual([]);
    expect(result.unschedulable[0]!.reason).toBe('no SKU in catalog offers 16 nvidia.com/gpu');
  });

  it('keeps pods off NodePools whose taints they do not tolerate, ignoring startup taints', () => {
    const tainted = makeNodePool('gpu', { taints: [GPU_TAINT] });
    const result = schedule(base({ pendingPods: [makePod('p')], nodePools: [tainted] }));
    expect(result.unschedulable[0]!.reason).toContain('did not tolerate taint nvidia.com/gpu=true:NoSchedule');
    const startupOnly = makeNodePool('gpu', { startupTaints: [GPU_TAINT] });
    expect(schedule(base({ pendingPods: [makePod('p')], nodePools: [startupOnly] })).nodeClaims).toHaveLength(1);
  });

  it('counts in-flight NodeClaims against limits and never goes over', () => {
    const pool = makeNodePool('h200', { taints: [GPU_TAINT], limits: { 'nvidia.com/gpu': '16' }, requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_ND96isr_H200_v5'] }] });
    const inFlight = makeNodeClaim('h200-aaaaa', { nodePool: 'h200', launchedAs: 'Standard_ND96isr_H200_v5' });
    const result = schedule(base({ pendingPods: gpuPods(3, '8'), nodePools: [pool], existingNodeClaims: [inFlight] }));
    // The in-flight claim takes one pod, one new claim brings the pool to 16 GPUs, the third waits.
    expect(result.existingPlacements).toEqual([{ nodeClaimName: 'h200-aaaaa', podKeys: ['default/gpu-8-0'] }]);
    expect(result.nodeClaims).toHaveLength(1);
    expect(result.unschedulable.map((u) => u.reason)).toEqual(['NodePool h200 limit nvidia.com/gpu=16 reached']);
  });

  it('does not count a deleting NodeClaim as capacity but still against limits', () => {
    const pool = makeNodePool('h200', { taints: [GPU_TAINT], limits: { 'nvidia.com/gpu': '8' } });
    const deleting = makeNodeClaim('h200-aaaaa', { nodePool: 'h200', launchedAs: 'Standard_ND96isr_H200_v5', deletionTimestamp: '2026-01-01T00:00:00Z' });
    const result = schedule(base({ pendingPods: gpuPods(1, '8'), nodePools: [pool], existingNodeClaims: [deleting] }));
    expect(result.existingPlacements).toEqual([]);
    expect(result.unschedulable[0]!.reason).toBe('NodePool h200 limit nvidia.com/gpu=8 reached');
  });

  it('tries NodePools by weight', () => {
    const low = makeNodePool('a-low', { weight: 1 });
    const high = makeNodePool('z-high', { weight: 50 });
    const result = schedule(base({ pendingPods: [makePod('p')], nodePools: [low, high] }));
    expect(result.nodeClaims[0]!.nodePoolName).toBe('z-high');
  });

  it('ORs required node affinity terms and applies Gt on GPU count', () => {
    const pool = makeNodePool('gpu', { taints: [GPU_TAINT] });
    const pod = makePod('p', {
      requests: { cpu: '1', 'nvidia.com/gpu': '1' }, tolerations: [GPU_TOLERATION],
      affinityTerms: [
        [{ key: 'topology.kubernetes.io/region', operator: 'In', values: ['westeurope'] }],
        [{ key: 'karpenter.azure.com/sku-gpu-count', operator: 'Gt', values: ['4'] }, { key: 'karpenter.azure.com/sku-gpu-name', operator: 'NotIn', values: ['H200'] }],
      ],
    });
    const result = schedule(base({ pendingPods: [pod], nodePools: [pool] }));
    expect(result.nodeClaims.map((c) => c.instanceTypeOptions.map((t) => t.name))).toEqual([['Standard_ND96amsr_A100_v4']]);
  });

  it('rejects custom labels the NodePool does not define, and accepts template labels', () => {
    const pool = makeNodePool('gpu', { labels: { gpu: 'h200' }, taints: [GPU_TAINT] });
    const ok = schedule(base({ pendingPods: gpuPods(1, '1', { nodeSelector: { gpu: 'h200' } }), nodePools: [pool] }));
    expect(ok.nodeClaims).toHaveLength(1);
    const bad = schedule(base({ pendingPods: gpuPods(1, '1', { nodeSelector: { team: 'x' } }), nodePools: [pool] }));
    expect(bad.unschedulable[0]!.reason).toContain('label "team" does not have known values');
  });

  it('names the request no matching SKU can meet', () => {
    const cpuOnly = makeNodePool('cpu', { requirements: [{ key: 'karpenter.azure.com/sku-gpu-count', operator: 'In', values: ['0'] }] });
    const result = schedule(base({ pendingPods: [makePod('p', { requests: { cpu: '1', 'nvidia.com/gpu': '1' } })], nodePools: [cpuOnly] }));
    expect(result.unschedulable[0]!.reason).toBe('NodePool cpu: no instance type in eastus2 matching the requirements has room for 1 nvidia.com/gpu');
    const gpuOnly = makeNodePool('gpu', { requirements: [{ key: 'karpenter.azure.com/sku-gpu-name', operator: 'In', values: ['B200'] }] });
    expect(schedule(base({ pendingPods: [makePod('q')], nodePools: [gpuOnly] })).unschedulable[0]!.reason)
      .toBe('NodePool gpu: no instance type in eastus2 matches the requirements');
  });

  it('skips offerings in the unavailable cache and says so', () => {
    const pool = makeNodePool('h200', { taints: [GPU_TAINT], requirements: [{ key: 'karpenter.azure.com/sku-gpu-name', operator: 'In', values: ['H200'] }] });
    const result = schedule(base({ pendingPods: gpuPods(1, '8'), nodePools: [pool], isOfferingUnavailable: (sku) => sku.includes('H200') }));
    expect(result.nodeClaims).toEqual([]);
    expect(result.unschedulable[0]!.reason).toContain('offerings unavailable (Standard_ND96isr_H200_v5 on-demand in eastus2)');
  });

  it('only offers SKUs available in the NodeClass location', () => {
    const result = schedule(base({ pendingPods: gpuPods(1, '8'), nodeClasses: [makeNodeClass('eastus2', 'uksouth')] }));
    expect(result.nodeClaims[0]!.instanceTypeOptions.map((t) => t.name)).toEqual(['Standard_ND96isr_H200_v5']);
  });

  it('charges DaemonSet overhead and kube-reserved on every node', () => {
    const daemon = makePod('ds', { requests: { cpu: '1', memory: '1Gi' }, ownerKind: 'DaemonSet' });
    const pods = Array.from({ length: 8 }, (_, i) => makePod(`p${i}`, { requests: { cpu: '1', memory: '1Gi' } }));
    const result = schedule(base({ pendingPods: pods, daemonSetPods: [daemon], nodePools: [makeNodePool('cpu', { requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D8s_v5'] }] })] }));
    // 8 vCPU − ~0.1 reserved − 1 for the DaemonSet leaves room for 6 one-core pods per node.
    expect(result.nodeClaims.map((c) => c.podKeys.length)).toEqual([6, 2]);
    expect(result.nodeClaims[0]!.requests.cpu).toBe('7');
  });

  it('places pending pods on in-flight NodeClaims before creating new ones', () => {
    const claim = makeNodeClaim('default-bbbbb', { nodePool: 'default', instanceTypes: ['Standard_D8s_v5'] });
    const result = schedule(base({ pendingPods: [makePod('a'), makePod('b')], existingNodeClaims: [claim] }));
    expect(result.nodeClaims).toEqual([]);
    expect(result.existingPlacements[0]!.podKeys).toEqual(['default/a', 'default/b']);
  });

  it('only counts on an in-flight NodeClaim for pods that every SKU it may launch as satisfies', () => {
    const pool = makeNodePool('gpu', { taints: [GPU_TAINT] });
    const a100 = makeNodeClaim('gpu-aaaaa', { nodePool: 'gpu', launchedAs: 'Standard_ND96amsr_A100_v4', taints: [GPU_TAINT] });
    const either = makeNodeClaim('gpu-bbbbb', { nodePool: 'gpu', instanceTypes: ['Standard_ND96amsr_A100_v4', 'Standard_ND96isr_H200_v5'], taints: [GPU_TAINT] });
    const pods = gpuPods(1, '1', { nodeSelector: { 'karpenter.azure.com/sku-gpu-name': 'H200' } });
    const result = schedule(base({ pendingPods: pods, nodePools: [pool], existingNodeClaims: [a100, either] }));
    expect(result.existingPlacements).toEqual([]);
    expect(result.nodeClaims.map((c) => c.instanceType.name)).toEqual(['Standard_ND96isr_H200_v5']);
    const anyGpu = schedule(base({ pendingPods: gpuPods(1, '1'), nodePools: [pool], existingNodeClaims: [either] }));
    expect(anyGpu.existingPlacements.map((p) => p.nodeClaimName)).toEqual(['gpu-bbbbb']);
  });

  it('ignores NodePools that reference another NodeClass kind', () => {
    const result = schedule(base({ pendingPods: [makePod('a')], nodePools: [makeNodePool('aks', { kind: 'AKSNodeClass' })] }));
    expect(result.unschedulable[0]!.reason).toBe('no NodePool references a ready AzureFlexNodeClass');
  });

  it('reports invalid quantities instead of throwing', () => {
    const result = schedule(base({ pendingPods: [makePod('a', { requests: { cpu: 'lots' } })] }));
    expect(result.unschedulable[0]!.reason).toMatch(/invalid resource requests/);
  });

  it('bin-packs mixed shapes first-fit decreasing', () => {
    const big = Array.from({ length: 2 }, (_, i) => makePod(`big-${i}`, { requests: { cpu: '5', memory: '8Gi' } }));
    const small = Array.from({ length: 4 }, (_, i) => makePod(`small-${i}`, { requests: { cpu: '1', memory: '1Gi' } }));
    const result = schedule(base({ pendingPods: [...small, ...big], nodePools: [makeNodePool('cpu', { requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D8s_v5'] }] })] }));
    expect(result.nodeClaims).toHaveLength(2);
    expect(result.nodeClaims.map((c) => c.podKeys.length)).toEqual([3, 3]);
  });
});

describe('schedule: capacity types', () => {
  const withSpot = STATIC_INSTANCE_TYPES.map((t) => (t.name === 'Standard_D8s_v5' ? { ...t, spotPricePerHour: 0.05 } : t));
  // amd64 pinned: the point is the capacity type, and the catalog's arm64 sizes are cheaper still.
  const capacity = (values: string[]) => makeNodePool('default', { requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values }, { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] });
  const capacityOf = (plan: { requirements: { key: string; values?: string[] }[] }) => plan.requirements.find((r) => r.key === 'karpenter.sh/capacity-type')?.values;
  const pods = [makePod('web', { requests: { cpu: '1', memory: '1Gi' } })];

  it('leaves the launch both capacity types a [spot, on-demand] NodePool allows', () => {
    const result = schedule(base({ pendingPods: pods, instanceTypes: withSpot, nodePools: [capacity(['spot', 'on-demand'])] }));
    expect(capacityOf(result.nodeClaims[0]!)).toEqual(['on-demand', 'spot']);
  });

  it('a NodePool that names no capacity type gets on-demand, as the AWS provider defaulted it', () => {
    const result = schedule(base({ pendingPods: pods, instanceTypes: withSpot }));
    expect(capacityOf(result.nodeClaims[0]!)).toEqual(['on-demand']);
  });

  it('plans only the capacity types the NodePool allows', () => {
    expect(capacityOf(schedule(base({ pendingPods: pods, instanceTypes: withSpot, nodePools: [capacity(['on-demand'])] })).nodeClaims[0]!)).toEqual(['on-demand']);
    const spotOnly = schedule(base({ pendingPods: pods, instanceTypes: withSpot, nodePools: [capacity(['spot'])] }));
    expect(spotOnly.nodeClaims[0]!.instanceType.name).toBe('Standard_D8s_v5');
    expect(capacityOf(spotOnly.nodeClaims[0]!)).toEqual(['spot']);
  });

  it('a spot offering marked unavailable leaves on-demand; spot-only then has nothing to plan', () => {
    const spotMarked = (_sku: string, _region: string, ct: string) => ct === 'spot';
    const both = schedule(base({ pendingPods: pods, instanceTypes: withSpot, nodePools: [capacity(['spot', 'on-demand'])], isOfferingUnavailable: spotMarked }));
    expect(capacityOf(both.nodeClaims[0]!)).toEqual(['on-demand']);
    const spotOnly = schedule(base({ pendingPods: pods, instanceTypes: withSpot, nodePools: [capacity(['spot'])], isOfferingUnavailable: spotMarked }));
    expect(spotOnly.nodeClaims).toEqual([]);
  });

  it('ranks a size by its cheapest allowed offering: a cheap spot size beats a cheaper on-demand one', () => {
    const d4 = { ...withSpot.find((t) => t.name === 'Standard_D8s_v5')!, name: 'Standard_D4s_v5', vcpu: 4, memoryMiB: 16 * 1024, pricePerHour: 0.192, spotPricePerHour: undefined };
    const types = [...withSpot, d4];
    const both = schedule(base({ pendingPods: pods, instanceTypes: types, nodePools: [capacity(['spot', 'on-demand'])] }));
    expect(both.nodeClaims[0]!.instanceType.name).toBe('Standard_D8s_v5');
    const onDemand = schedule(base({ pendingPods: pods, instanceTypes: types, nodePools: [capacity(['on-demand'])] }));
    expect(onDemand.nodeClaims[0]!.instanceType.name).toBe('Standard_D4s_v5');
  });
});
