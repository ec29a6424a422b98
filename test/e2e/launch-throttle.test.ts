import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/sim/scenario.js';
import { runSimulation } from '../../src/sim/simulation.js';

const SUB = '00000000-0000-0000-0000-000000000001';

/**
 * Compute's PutVM30Min policy says wait 20 minutes (Retry-After 1200 s): NodeClaims whose VM
 * create ARM throttled were never launched, so none may be deleted for a launch timeout
 * (5 min) meanwhile; they show Launched=Unknown/Throttled and launch once ARM lets them.
 */
describe('NodeClaims that ARM makes wait are not launch failures', () => {
  it('a 20-minute Compute throttle at the start: no LaunchTimeout, every NodeClaim launches after it, 2 writes per node', async () => {
    const scenario = parseScenario({
      name: 'launch-throttle',
      hours: 1,
      regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 1000, familyQuotaCores: { standardDSv5Family: 1000 } }],
      nodeClasses: [{ name: 'cpu-eastus2', location: 'eastus2', subscriptionID: SUB, subnetPrefix: '10.4.0.0/24' }],
      nodePools: [{ name: 'cpu', nodeClass: 'cpu-eastus2', instanceTypes: ['Standard_D8s_v5'], labels: { workload: 'cpu' }, limits: { cpu: '400' } }],
      workload: [{ count: 40, prefix: 'web', requests: { cpu: '3', memory: '8Gi' }, nodeSelector: { workload: 'cpu' } }],
      faults: { schedule: [{ at: 0, fault: { kind: 'computeThrottle', location: 'eastus2', policy: 'PutVM30Min' } }] },
    }, 'launch-throttle');
    const run = await runSimulation({ scenario, seed: 3, strategy: 'machine', hours: 1, keepEventLog: true });
    const r = run.result;
    expect(run.cluster.events.filter((e) => e.reason === 'LaunchTimeout')).toEqual([]);
    expect(r.nodeClaimsLaunched).toBeGreaterThan(0);
    expect(r.nodeClaimsLaunched).toBe(r.nodeClaimsCreated);
    expect(r.podsPending).toBe(0);
    // Each node cost its NIC PUT and VM PUT; the throttled tries cost no write (empty nodes consolidated later cost a VM DELETE).
    expect(r.armCalls['vm.put']?.['429'] ?? 0).toBeGreaterThan(0);
    expect(r.armCalls['nic.put']).toEqual({ '201': r.nodeClaimsLaunched });
    expect(r.armCalls['vm.put']?.['201']).toBe(r.nodeClaimsLaunched);
    expect(r.armCalls['nic.delete']).toBeUndefined();
    expect(r.leakedNics + r.leakedVms + r.leakedDisks + r.stuckNodeClaims).toBe(0);
    expect(run.invariantViolations).toEqual([]);
  });
});
