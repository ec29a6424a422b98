import { describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES } from '../../src/catalog/skus.js';
import {
  Requirement, Requirements, firstUntoleratedTaint, instanceTypeRequirements, toleratesTaint,
} from '../../src/provisioning/requirements.js';
import type { NodeSelectorRequirement } from '../../src/ports/cluster.js';

const reqs = (...selectors: NodeSelectorRequirement[]): Requirements => Requirements.fromSelectors(selectors);
const h200 = STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_ND96isr_H200_v5')!;
const d8 = STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_D8s_v5')!;

describe('Requirement', () => {
  it('intersects In with NotIn, Exists and bounds', () => {
    const inSet = Requirement.fromSelector({ key: 'k', operator: 'In', values: ['1', '4', '8'] });
    expect([...inSet.intersection(Requirement.fromSelector({ key: 'k', operator: 'NotIn', values: ['4'] })).values]).toEqual(['1', '8']);
    expect(inSet.intersection(Requirement.exists('k')).operator()).toBe('In');
    expect([...inSet.intersection(Requirement.fromSelector({ key: 'k', operator: 'Gt', values: ['2'] })).values]).toEqual(['4', '8']);
    expect(inSet.intersection(Requirement.fromSelector({ key: 'k', operator: 'Lt', values: ['1'] })).isEmpty()).toBe(true);
  });

  it('treats Gt/Lt ranges with no integer left as empty', () => {
    const gt = Requirement.fromSelector({ key: 'k', operator: 'Gt', values: ['3'] });
    expect(gt.intersection(Requirement.fromSelector({ key: 'k', operator: 'Lt', values: ['4'] })).isEmpty()).toBe(true);
    expect(gt.intersection(Requirement.fromSelector({ key: 'k', operator: 'Lt', values: ['5'] })).has('4')).toBe(true);
    expect(gt.has('abc')).toBe(false);
    expect(Requirement.fromSelector({ key: 'k', operator: 'Gt', values: ['x'] }).operator()).toBe('DoesNotExist');
  });

  it('round-trips to selectors', () => {
    const r = Requirement.fromSelector({ key: 'k', operator: 'NotIn', values: ['b', 'a'] });
    expect(r.toSelectors()).toEqual([{ key: 'k', operator: 'NotIn', values: ['a', 'b'] }]);
    expect(Requirement.exists('k').toSelectors()).toEqual([{ key: 'k', operator: 'Exists' }]);
    expect(Requirement.doesNotExist('k').toSelectors()).toEqual([{ key: 'k', operator: 'DoesNotExist' }]);
  });
});

describe('Requirements', () => {
  it('intersects repeated keys when built from selectors', () => {
    const r = reqs({ key: 'k', operator: 'In', values: ['a', 'b'] }, { key: 'k', operator: 'In', values: ['b', 'c'] });
    expect(r.toSelectors()).toEqual([{ key: 'k', operator: 'In', values: ['b'] }]);
  });

  it('is compatible when values overlap, and not when they do not', () => {
    const pool = reqs({ key: 'gpu', operator: 'In', values: ['h200', 'a100'] });
    expect(pool.compatible(reqs({ key: 'gpu', operator: 'In', values: ['h200'] }))).toBeUndefined();
    expect(pool.compatible(reqs({ key: 'gpu', operator: 'In', values: ['t4'] }))).toMatch(/not satisfiable/);
  });

  it('rejects undefined custom labels but allows well-known ones and absence', () => {
    const pool = Requirements.EMPTY;
    expect(pool.compatible(reqs({ key: 'team', operator: 'In', values: ['a'] }))).toMatch(/does not have known values/);
    expect(pool.compatible(reqs({ key: 'team', operator: 'NotIn', values: ['a'] }))).toBeUndefined();
    expect(pool.compatible(reqs({ key: 'team', operator: 'DoesNotExist' }))).toBeUndefined();
    expect(pool.compatible(reqs({ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }))).toBeUndefined();
  });

  it('lets two "absence is fine" requirements coexist (Karpenter Intersects exception)', () => {
    const node = reqs({ key: 'k', operator: 'DoesNotExist' });
    expect(node.intersects(reqs({ key: 'k', operator: 'NotIn', values: ['x'] }))).toBeUndefined();
    expect(node.intersects(reqs({ key: 'k', operator: 'Exists' }))).toBeDefined();
    expect(reqs({ key: 'k', operator: 'In', values: ['x'] }).intersects(reqs({ key: 'k', operator: 'NotIn', values: ['x'] }))).toBeDefined();
  });

  it('reports single-valued In requirements as labels', () => {
    expect(reqs({ key: 'a', operator: 'In', values: ['1'] }, { key: 'b', operator: 'In', values: ['1', '2'] }).labels()).toEqual({ a: '1' });
  });
});

describe('instance type labels', () => {
  it('labels a GPU SKU with region, count and model', () => {
    const labels = instanceTypeRequirements(h200, 'eastus2');
    expect(labels.intersects(reqs({ key: 'karpenter.azure.com/sku-gpu-count', operator: 'Gt', values: ['7'] }))).toBeUndefined();
    expect(labels.intersects(reqs({ key: 'karpenter.azure.com/sku-gpu-name', operator: 'In', values: ['H200'] }))).toBeUndefined();
    expect(labels.intersects(reqs({ key: 'topology.kubernetes.io/region', operator: 'In', values: ['westeurope'] }))).toBeDefined();
    // H200 is LowPriorityCapable: on-demand and spot offerings, never reserved without a reservation.
    expect(labels.intersects(reqs({ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }))).toBeUndefined();
    expect(labels.intersects(reqs({ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['reserved'] }))).toBeDefined();
  });

  it('makes CPU SKUs fail a GPU-name Exists requirement', () => {
    const labels = instanceTypeRequirements(d8, 'eastus2');
    expect(labels.intersects(reqs({ key: 'karpenter.azure.com/sku-gpu-name', operator: 'Exists' }))).toBeDefined();
    expect(labels.intersects(reqs({ key: 'karpenter.azure.com/sku-gpu-name', operator: 'DoesNotExist' }))).toBeUndefined();
  });
});

describe('taints and tolerations', () => {
  const taint = { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' as const };
  it('matches by key, value and effect', () => {
    expect(toleratesTaint({ key: 'nvidia.com/gpu', operator: 'Equal', value: 'true', effect: 'NoSchedule' }, taint)).toBe(true);
    expect(toleratesTaint({ key: 'nvidia.com/gpu', value: 'false' }, taint)).toBe(false);
    expect(toleratesTaint({ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoExecute' }, taint)).toBe(false);
    expect(toleratesTaint({ operator: 'Exists' }, taint)).toBe(true);
  });

  it('ignores PreferNoSchedule taints', () => {
    expect(firstUntoleratedTaint([], [{ key: 'a', effect: 'PreferNoSchedule' }])).toBeUndefined();
    expect(firstUntoleratedTaint([], [taint])).toEqual(taint);
  });
});
