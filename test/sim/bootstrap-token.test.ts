import { describe, expect, it } from 'vitest';
import { parseScenario, type ScenarioInput } from '../../src/sim/scenario.js';
import { SIM_EPOCH_MS, runSimulation, type SimulationRun } from '../../src/sim/simulation.js';

/**
 * The bootstrap token rotates and expires under a running controller (no restart): VMs that
 * boot with a deleted or expired token never join (registration liveness reaps them), and the
 * controller's refreshed read puts the new token into every VM created after it.
 */
const SUB = '00000000-0000-0000-0000-000000000001';
const HOUR = 3600;

function world(bootstrapToken: ScenarioInput['bootstrapToken']): ScenarioInput {
  return {
    name: 'token',
    description: 'CPU nodes while the bootstrap token changes',
    hours: 6,
    regions: [{ subscriptionId: SUB, location: 'eastus2', regionalQuotaCores: 800, familyQuotaCores: { standardDSv5Family: 800 } }],
    nodeClasses: [{ name: 'cpu', location: 'eastus2', subscriptionID: SUB, subnetPrefix: '10.4.0.0/24' }],
    nodePools: [{ name: 'cpu', nodeClass: 'cpu', instanceTypes: ['Standard_D8s_v5'], labels: { workload: 'cpu' }, limits: { cpu: '800' } }],
    // A new wave every 20 minutes, each pod living 40: nodes come and go across the whole run.
    workload: [{ count: 6, prefix: 'svc', requests: { cpu: '3', memory: '8Gi' }, nodeSelector: { workload: 'cpu' }, lifetimeSeconds: 2400, repeatEverySeconds: 1200 }],
    faults: { nodeNeverJoinsRate: 0 },
    ...(bootstrapToken ? { bootstrapToken } : {}),
  };
}

async function expectHealthy(run: SimulationRun): Promise<void> {
  const r = run.result;
  expect(r.leakedNics + r.leakedVms + r.leakedDisks).toBe(0);
  expect(r.stuckNodeClaims).toBe(0);
  expect(run.invariantViolations).toEqual([]);
  // Every pod of the last wave runs on a registered node.
  const pods = await run.cluster.listPods();
  expect(pods.length).toBeGreaterThan(0);
  expect(pods.filter((p) => p.status.phase !== 'Running')).toEqual([]);
  expect((await run.cluster.listNodes()).length).toBeGreaterThan(0);
}

describe('bootstrap token rotation and expiry in the simulator', () => {
  it('a token rotated mid-run (the old one deleted): VMs created after the refresh join, nothing leaks, no restart', async () => {
    const scenario = parseScenario(world({ rotateAtSeconds: [2 * HOUR + 90, 4 * HOUR + 90] }), 'rotate');
    const run = await runSimulation({ scenario, seed: 4, strategy: 'machine', keepEventLog: true });
    expect(run.result.restarts).toBe(0);
    await expectHealthy(run);
    // NodeClaims launched after the second rotation registered: the new token reached them.
    const late = (await run.cluster.listNodeClaims()).filter((c) => Date.parse(c.metadata.creationTimestamp) - SIM_EPOCH_MS > 4 * HOUR * 1000 + 10 * 60_000);
    expect(late.length).toBeGreaterThan(0);
    expect(late.every((c) => c.status.conditions.some((k) => k.type === 'Registered' && k.status === 'True'))).toBe(true);
    expect(run.bootstrapTokens!.rotations).toBe(2);
    // Only VMs rendered before the controller's refresh (at most DEFAULT_BOOTSTRAP_REFRESH_MS) carry a deleted token.
    // Rotated 90 s after a wave's VMs were created: those boot with the deleted token, are refused
    // and reaped by registration liveness; their pods run on the replacements.
    expect(run.bootstrapTokens!.joinsRefused).toBeGreaterThan(0);
  });

  it('a token that expires, then is rotated: no VM is created with the dead token, provisioning resumes after the rotation', async () => {
    const scenario = parseScenario(world({ ttlSeconds: 2 * HOUR + 90, rotateAtSeconds: [3 * HOUR] }), 'expire');
    const run = await runSimulation({ scenario, seed: 4, strategy: 'machine', keepEventLog: true });
    expect(run.result.restarts).toBe(0);
    await expectHealthy(run);
    const late = (await run.cluster.listNodeClaims()).filter((c) => Date.parse(c.metadata.creationTimestamp) - SIM_EPOCH_MS > 3 * HOUR * 1000 + 10 * 60_000);
    expect(late.length).toBeGreaterThan(0);
    expect(late.every((c) => c.status.conditions.some((k) => k.type === 'Registered' && k.status === 'True'))).toBe(true);
    // VMs created just before the expiry boot after it and are refused; none is created after it.
    expect(run.bootstrapTokens!.joinsRefused).toBeGreaterThan(0);
    expect(run.bootstrapTokens!.deadTokenRenders).toBe(0);
  });

  it('the same world without a token plan keeps the one token (the built-in scenarios)', async () => {
    const run = await runSimulation({ scenario: parseScenario(world(undefined), 'plain'), seed: 4, strategy: 'machine', keepEventLog: true });
    await expectHealthy(run);
  });
});
