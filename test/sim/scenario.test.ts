import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/sim/scenario.js';

const base = {
  name: 'static-rules',
  hours: 1,
  regions: [{ location: 'eastus2', familyQuotaCores: { standardDSv5Family: 64 } }],
  nodeClasses: [{ name: 'eastus2', location: 'eastus2' }],
  workload: [{ count: 1, prefix: 'web', requests: { cpu: '1' } }],
};
const pool = { name: 'static', nodeClass: 'eastus2', instanceTypes: ['Standard_D8s_v5'], replicas: 2 };

/** Upstream's CRD rules for static NodePools (karpenter.sh_nodepools.yaml x-kubernetes-validations), held by the scenario schema too. */
describe('scenario NodePools with replicas (static capacity)', () => {
  it('accepts a static pool with only a nodes limit', () => {
    expect(parseScenario({ ...base, nodePools: [{ ...pool, limits: { nodes: '3' } }] }, 's.yaml').nodePools[0]).toMatchObject({ replicas: 2, limits: { nodes: '3' } });
  });

  it("refuses 'weight' on a static pool, naming the field", () => {
    expect(() => parseScenario({ ...base, nodePools: [{ ...pool, weight: 10 }] }, 's.yaml')).toThrow(/nodePools\.0\.weight.*'weight' is not supported on static NodePools/);
  });

  it('refuses limits other than nodes on a static pool, naming the field', () => {
    expect(() => parseScenario({ ...base, nodePools: [{ ...pool, limits: { cpu: '64' } }] }, 's.yaml')).toThrow(/nodePools\.0\.limits.*only 'limits.nodes' is supported/);
  });
});
