import { describe, expect, it } from 'vitest';
import { parseScenario, type ScenarioInput } from '../../src/sim/scenario.js';
import { runSimulation } from '../../src/sim/simulation.js';

/**
 * VMs taken away under the controller (deallocated, powered off or deleted by a person or a
 * tool, as the fault schedule's `vmAction` does): the controller reacts as upstream Karpenter
 * does to a vanished or stopped instance. The NodeClaim is deleted with a Warning Event on it
 * and its Node, its pods get a replacement node, and the VM, NIC and disk are cleaned up.
 */
const SUB = '00000000-0000-0000-0000-000000000001';

function world(faults: NonNullable<ScenarioInput['faults']>['schedule']): ScenarioInput {
  return {
    name: 'taken-away',
    description: 'CPU nodes, some deallocated, powered off or deleted outside the controller',
    hours: 3,
    regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 400, familyQuotaCores: { standardDSv5Family: 400 } }],
    nodeClasses: [{ name: 'cpu', location: 'eastus2', subscriptionID: SUB, subnetPrefix: '10.4.0.0/24' }],
    nodePools: [{ name: 'cpu', nodeClass: 'cpu', instanceTypes: ['Standard_D8s_v5'], labels: { workload: 'cpu' }, limits: { cpu: '400' } }],
    workload: [{ count: 12, prefix: 'svc', requests: { cpu: '3', memory: '8Gi' }, nodeSelector: { workload: 'cpu' } }],
    faults: { nodeNeverJoinsRate: 0, schedule: faults ?? [] },
  };
}

describe('launched NodeClaims whose VM is taken away', () => {
  it('deallocated, powered off and deleted VMs: each NodeClaim is deleted with Events, its pods run again on new nodes, nothing leaks', async () => {
    const scenario = parseScenario(world([
      { at: 3600, fault: { kind: 'vmAction', location: 'eastus2', action: 'deallocate', fraction: 0.3 } },
      { at: 4800, fault: { kind: 'vmAction', location: 'eastus2', action: 'powerOff', fraction: 0.3 } },
      { at: 6000, fault: { kind: 'vmAction', location: 'eastus2', action: 'delete', fraction: 0.3 } },
    ]), 'taken-away');
    // Seed 2: each fault draws which VMs it hits from the fake's random, which the usages reads' latencies also draw from.
    const run = await runSimulation({ scenario, seed: 2, strategy: 'machine', keepEventLog: true });
    const r = run.result;
    expect(r.leakedNics + r.leakedVms + r.leakedDisks).toBe(0);
    expect(r.stuckNodeClaims).toBe(0);
    expect(run.invariantViolations).toEqual([]);

    const taken = run.eventLog.entries.filter((e) => e.kind === 'transition' && e.to === 'instance-lost');
    const events = run.cluster.events.filter((e) => e.reason === 'InstanceStopping' || e.reason === 'InstanceTerminating');
    const stopped = events.filter((e) => e.reason === 'InstanceStopping' && e.involvedObject.kind === 'NodeClaim');
    const terminated = events.filter((e) => e.reason === 'InstanceTerminating' && e.involvedObject.kind === 'NodeClaim');
    expect(stopped.length).toBeGreaterThan(0);
    expect(terminated.length).toBeGreaterThan(0);
    expect(taken.length).toBe(stopped.length + terminated.length);
    // The Node gets the same Event as its NodeClaim.
    expect(events.filter((e) => e.involvedObject.kind === 'Node').length).toBe(taken.length);
    expect(stopped[0]!.message).toMatch(/is (deallocated|stopped|deallocating|stopping)/);
    // Replacements: more NodeClaims launched than the first wave needed, and every pod runs at the end.
    expect(r.nodeClaimsLaunched).toBeGreaterThan(taken.length);
    // Running on a Ready node: the sim (like a cluster without taint-based eviction) keeps a pod
    // "Running" on a node whose VM is gone, so the node's readiness is what tells.
    const pods = await run.cluster.listPods();
    const ready = new Set((await run.cluster.listNodes()).filter((n) => n.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True')).map((n) => n.metadata.name));
    expect(pods.length).toBe(12);
    expect(pods.filter((p) => p.status.phase !== 'Running' || !ready.has(p.spec.nodeName ?? ''))).toEqual([]);
    // Every NodeClaim left has a provisioned, running VM (the taken ones were deleted, their VMs too).
    const vms = run.arm.currentVms();
    for (const claim of await run.cluster.listNodeClaims()) {
      const vm = vms.find((v) => v.tags['karpenter.sh_nodeclaim'] === claim.metadata.name);
      expect([claim.metadata.name, vm?.provisioningState, vm?.powerState]).toEqual([claim.metadata.name, 'Succeeded', undefined]);
    }
    expect(vms.length).toBe((await run.cluster.listNodeClaims()).length);
  });

  it('without vmAction faults the controller never looks for a lost instance', async () => {
    const run = await runSimulation({ scenario: parseScenario(world([]), 'quiet'), seed: 3, strategy: 'machine', hours: 1, keepEventLog: true });
    expect(run.eventLog.entries.filter((e) => e.event === 'getInstanceState' || e.to === 'confirming-instance')).toEqual([]);
  });
});
