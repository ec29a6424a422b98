import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { FakeCluster } from '../../src/sim/cluster.js';
import { loadManifests } from '../../src/sim/manifests.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { Workload } from '../../src/sim/workload.js';

const SUBNET = '/subscriptions/11111111-1111-1111-1111-111111111111/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/s';
const container = { name: 'c', image: 'nginx', resources: { requests: { cpu: '1' } } };
const template = (app: string) => ({ metadata: { labels: { app: app.slice(0, 63) } }, spec: { containers: [container] } });
const deployment = (name: string, replicas: number) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { replicas, selector: { matchLabels: { app: name.slice(0, 63) } }, template: template(name) } });
const statefulSet = (name: string, replicas: number) => ({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name }, spec: { replicas, serviceName: name, selector: { matchLabels: { app: name } }, template: template(name) } });
const job = (name: string, parallelism: number) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { parallelism, template: { ...template(name), spec: { ...template(name).spec, restartPolicy: 'Never' } } } });
const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [container] } });
const nodePool = { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: 'p' }, spec: { template: { spec: { nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'c' }, requirements: [] } } } };
const nodeClass = { apiVersion: 'flex.aks.azure.com/v1alpha1', kind: 'AzureFlexNodeClass', metadata: { name: 'c' }, spec: { subscriptionID: '11111111-1111-1111-1111-111111111111', location: 'eastus2', resourceGroup: 'rg', subnetID: SUBNET, imageReference: { publisher: 'p', offer: 'o', sku: 's', version: 'latest' } } };

/** The pods the simulated controllers create at the start for these manifests. */
async function podsOf(docs: object[]): Promise<Map<string, Record<string, string>>> {
  const file = join(mkdtempSync(join(tmpdir(), 'azflex-pod-names-')), 'm.yaml');
  writeFileSync(file, [nodeClass, nodePool, ...docs].map((d) => stringify(d)).join('---\n'));
  const clock = new VirtualClock(0);
  const cluster = new FakeCluster(clock);
  new Workload(cluster, clock, loadManifests([file]).workloads).start(60_000);
  await clock.runUntil(1000);
  return new Map([...cluster.pods.values()].map((p) => [p.metadata.name, p.metadata.labels]));
}

const SUFFIX = '[bcdfghjklmnpqrstvwxz2456789]{5}';

describe('simulated pod names are the ones Kubernetes gives, and never collide where its would not', () => {
  it('a bare Pod keeps its name; StatefulSet replicas are <name>-<ordinal>; Deployment pods <name>-<pod-template-hash>-<5>; Job pods <name>-<5>', async () => {
    const pods = await podsOf([pod('db'), statefulSet('db', 2), deployment('web', 2), job('web', 2), statefulSet('web-0', 2), pod('web-0-0-0')]);
    // Before, a bare Pod was `<name>-0` (StatefulSet db's first replica), and a Deployment's and a
    // Job's pods were both `<name>-0-<i>` (StatefulSet web-0's replicas): one of each pair was never created.
    expect(pods.size).toBe(1 + 2 + 2 + 2 + 2 + 1);
    expect(['db', 'db-0', 'db-1', 'web-0-0', 'web-0-1', 'web-0-0-0'].every((n) => pods.has(n))).toBe(true);
    const deploymentPods = [...pods].filter(([, labels]) => labels.app === 'web' && labels['pod-template-hash'] !== undefined);
    expect(deploymentPods).toHaveLength(2);
    for (const [name, labels] of deploymentPods) expect(name).toMatch(new RegExp(`^web-${labels['pod-template-hash']}-${SUFFIX}$`));
    const jobPods = [...pods].filter(([, labels]) => labels['job-name'] === 'web');
    expect(jobPods.map(([name]) => name)).toEqual([expect.stringMatching(new RegExp(`^web-${SUFFIX}$`)), expect.stringMatching(new RegExp(`^web-${SUFFIX}$`))]);
    expect(jobPods[0]![1]['batch.kubernetes.io/job-name']).toBe('web');
  });

  it('a generated name that a bare Pod or a StatefulSet replica will take is drawn again, as the controllers retry after AlreadyExists', async () => {
    const first = [...(await podsOf([job('batch', 1)])).keys()][0]!;
    const [, suffix] = /^batch-(.*)$/.exec(first)!;
    // A bare Pod of exactly that name, declared after the Job, still gets it; the Job's pod another.
    const pods = await podsOf([job('batch', 1), pod(first)]);
    expect(pods.size).toBe(2);
    expect(pods.has(first)).toBe(true);
    expect(pods.get(first)!['job-name']).toBeUndefined();
    expect(suffix).toMatch(new RegExp(`^${SUFFIX}$`));
  });

  it('long names: the generateName prefix is cut to 58 characters, so a pod name is at most 63', async () => {
    const name = 'd'.repeat(100);
    const pods = await podsOf([deployment(name, 1), job('j'.repeat(63), 1)]);
    for (const n of pods.keys()) expect(n.length).toBeLessThanOrEqual(63);
  });
});
