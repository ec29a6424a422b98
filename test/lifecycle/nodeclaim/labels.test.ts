import { describe, expect, it } from 'vitest';
import { launchLabels } from '../../../src/lifecycle/nodeclaim/labels.js';
import { STATIC_INSTANCE_TYPES } from '../../../src/catalog/skus.js';
import type { Node, NodeClaim } from '../../../src/ports/cluster.js';
import { builtInScenario } from '../../../src/sim/scenarios.js';
import { runSimulation } from '../../../src/sim/simulation.js';
import { makeNodeClaim } from '../../provisioning/fixtures.js';

/**
 * Upstream's launch gives the NodeClaim the labels of the instance type it launched (the
 * Azure provider's karpenter.azure.com/sku-*, arch, os, …), and registration copies them to
 * the Node: a pod that selects one of them by Gt, NotIn or Exists binds to the node made for it.
 */
describe('launch labels', () => {
  const h200 = STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_ND96isr_H200_v5')!;

  it('are the launched type\'s single-valued requirements, the Azure provider\'s label values, never overriding the NodeClaim\'s own', () => {
    const claim = makeNodeClaim('h200-abcde', { nodePool: 'h200', labels: { 'kubernetes.io/os': 'linux', 'karpenter.sh/capacity-type': 'on-demand' } });
    const labels = launchLabels(claim, h200, 'eastus2')!;
    expect(labels).toMatchObject({
      'node.kubernetes.io/instance-type': 'Standard_ND96isr_H200_v5',
      'karpenter.azure.com/sku-name': 'Standard_ND96isr_H200_v5',
      'karpenter.azure.com/sku-family': 'N',
      'karpenter.azure.com/sku-version': '5',
      'karpenter.azure.com/sku-cpu': '96',
      'karpenter.azure.com/sku-gpu-count': '8',
      'karpenter.azure.com/sku-gpu-name': 'H200',
      'karpenter.azure.com/sku-gpu-manufacturer': 'nvidia',
      'kubernetes.io/arch': 'amd64',
      'topology.kubernetes.io/region': 'eastus2',
    });
    expect(labels['karpenter.azure.com/sku-memory']).toBe(String(h200.memoryMiB));
    // Labels the NodeClaim has are its own (upstream: the NodeClaim's labels win).
    expect(labels).not.toHaveProperty('kubernetes.io/os');
    expect(labels).not.toHaveProperty('karpenter.sh/capacity-type');
    expect(launchLabels({ ...claim, metadata: { ...claim.metadata, labels: { ...claim.metadata.labels, ...labels } } }, h200, 'eastus2')).toBeUndefined();
  });

  it('reach every launched NodeClaim and its Node in a simulated quota storm', async () => {
    let claims: Map<string, NodeClaim> | undefined;
    let nodes: Map<string, Node> | undefined;
    await runSimulation({
      scenario: builtInScenario('quota-storm')!, seed: 3, strategy: 'machine', hours: 2, keepEventLog: false,
      onWorld: ({ cluster }) => { claims = cluster.nodeClaims; nodes = cluster.nodes; },
    });
    const registered = [...claims!.values()].filter((c) => c.status.nodeName);
    expect(registered.length).toBeGreaterThan(0);
    for (const claim of registered) {
      const type = STATIC_INSTANCE_TYPES.find((t) => t.name === claim.metadata.labels['node.kubernetes.io/instance-type']);
      expect(type, claim.metadata.name).toBeDefined();
      expect(claim.metadata.labels).toMatchObject({ 'karpenter.azure.com/sku-name': type!.name, 'karpenter.azure.com/sku-cpu': String(type!.vcpu), 'kubernetes.io/arch': type!.arch });
      const node = nodes!.get(claim.status.nodeName!)!;
      for (const [k, v] of Object.entries(claim.metadata.labels)) expect(node.metadata.labels[k], `${node.metadata.name} ${k}`).toBe(v);
    }
  });
});
