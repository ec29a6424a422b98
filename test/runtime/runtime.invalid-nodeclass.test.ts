import { describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES, StaticInstanceTypeCatalog } from '../../src/catalog/skus.js';
import type { AzureFlexNodeClass, NodeClaim } from '../../src/ports/cluster.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { DEFAULT_RUNTIME_CONFIG } from '../../src/runtime/deps.js';
import { MemoryEventLog } from '../../src/runtime/event-log.js';
import { FakeArm } from '../../src/sim/arm/fake-arm.js';
import { FakeCluster } from '../../src/sim/cluster.js';
import { renderSimUserData } from '../../src/sim/userdata.js';
import { SeededRandom, VirtualClock } from '../../src/sim/virtual-clock.js';

const SUB = '00000000-0000-0000-0000-000000000001';
const meta = (name: string) => ({ name, uid: name, labels: {}, annotations: {}, finalizers: [] as string[], creationTimestamp: '2026-01-01T00:00:00Z' });

describe('an invalid AzureFlexNodeClass', () => {
  it('causes no ARM write: the NodeClaim fails to launch with a Warning Event and is deleted', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const arm = new FakeArm({
      clock,
      random: new SeededRandom(1),
      config: { regions: [{ subscriptionId: SUB, location: 'eastus2', familyQuotaCores: {} }], subnets: [] },
      instanceTypes: STATIC_INSTANCE_TYPES,
    });
    const cluster = new FakeCluster(clock);
    const nodeClass: AzureFlexNodeClass = {
      metadata: meta('broken'),
      spec: {
        subscriptionID: SUB, location: 'eastus2', resourceGroup: 'rg', subnetID: 'subnet-1', // not an ARM id
        imageReference: { publisher: 'p', offer: 'o', sku: 's', version: 'latest' }, securityType: 'Standard',
        osDiskSizeGB: 128, sshPublicKeys: [], allocateNodePublicIP: false, maxPodsPerNode: 110, tags: {},
      },
      status: { conditions: [] },
    };
    cluster.putNodeClass(nodeClass);
    const claim: NodeClaim = {
      metadata: { ...meta('cpu-abcde'), labels: { 'karpenter.sh/nodepool': 'cpu' }, finalizers: ['karpenter.sh/termination'] },
      spec: {
        nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'broken' },
        requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D8s_v5'] }],
        resources: { requests: { cpu: '1' } }, taints: [], startupTaints: [],
      },
      status: { conditions: [] },
    };
    await cluster.createNodeClaim(claim);
    const runtime = new Runtime({
      arm, cluster, clock, random: new SeededRandom(2), catalog: new StaticInstanceTypeCatalog(), userData: renderSimUserData,
      eventLog: new MemoryEventLog(), config: { ...DEFAULT_RUNTIME_CONFIG, clusterName: 'test' },
    });
    const started = runtime.start();
    await clock.runUntil(clock.now() + 10 * 60_000);
    await started;
    runtime.stop();
    const calls = arm.armCalls();
    for (const write of ['nic.put', 'vm.put', 'nic.delete', 'vm.delete', 'disk.delete']) expect(calls[write]).toBeUndefined();
    expect(cluster.nodeClaims.size).toBe(0);
    expect(cluster.events.map((e) => `${e.type} ${e.reason} ${e.message}`)).toContain('Warning LaunchFailed launching NodeClaim failed: InvalidParameter');
  });
});
