import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { builtInScenarioInput } from '../../src/sim/scenarios.js';
import type { ScenarioInput } from '../../src/sim/scenario.js';

/**
 * Hostile and careless input to `azflex simulate`, one test per class the issue lists: each
 * gets exit code 2 and exactly one line naming the field, before any simulation starts (a
 * hang or a memory blow-up would time this file out instead).
 */
let stderr: string[] = [];
let stdout: string[] = [];
beforeEach(() => {
  stderr = [];
  stdout = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (stderr.push(String(chunk)), true));
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (stdout.push(String(chunk)), true));
});
afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

const dir = mkdtempSync(join(tmpdir(), 'azflex-inputs-'));
let n = 0;
function file(content: string, ext = 'yaml'): string {
  const path = join(dir, `f${n++}.${ext}`);
  writeFileSync(path, content);
  return path;
}

/** quota-storm with one change, as a scenario file. */
function scenario(change: (s: ScenarioInput) => void): string {
  const s = builtInScenarioInput('quota-storm')!;
  change(s);
  return file(stringify(s));
}

async function refused(args: string[], message: string | RegExp, command: string[] = ['simulate']): Promise<void> {
  stderr = [];
  const code = await main([...command, ...args]);
  const text = stderr.join('');
  expect(code, text).toBe(2);
  expect(text.trimEnd().split('\n'), text).toHaveLength(1);
  expect(text).toMatch(message);
  expect(text).not.toMatch(/\n\s+at /);
}

describe('azflex simulate refuses hostile input with one line and exit 2', () => {
  it('hangs: --hours 1e9, intervals of 1e-9 s, repeatEverySeconds 0.001', async () => {
    await refused(['--hours', '1e9'], /--hours must be a number of hours above 0 and at most 336, got "1e9"/);
    await refused(['--scenario', scenario((s) => void (s.controller = { provisionIntervalSeconds: 1e-9 }))], /controller\.provisionIntervalSeconds: Too small: expected number to be >=1/);
    await refused(['--scenario', scenario((s) => void (s.controller = { resyncSeconds: 1e-9 }))], /controller\.resyncSeconds/);
    await refused(['--scenario', scenario((s) => void (s.workload[0]!.repeatEverySeconds = 0.001))], /workload\.0\.repeatEverySeconds: Too small: expected number to be >=60/);
  });

  it('memory blow-ups: count 1e9, restarts 1e9', async () => {
    await refused(['--scenario', scenario((s) => void (s.workload[0]!.count = 1e9))], /workload\.0\.count: Too big: expected number to be <=100000/);
    await refused(['--scenario', scenario((s) => void (s.faults = { restarts: 1e9 }))], /faults\.restarts: Too big/);
    await refused(['--restarts', '1000000000'], /--restarts must be a whole number from 0 to 1000/);
    await refused(['--scenario', scenario((s) => void Object.assign(s.workload[0]!, { count: 100_000, repeatEverySeconds: 60 }))], /more than 1000000 pods over the run/);
  });

  it('stack traces: an unparseable quantity, a fault for a region that does not exist, /30 and /8 subnets, --report into a missing directory', async () => {
    await refused(['--scenario', scenario((s) => void (s.workload[0]!.requests = { cpu: 'lots' }))], /workload\.0\.requests\.cpu: "lots" is not a Kubernetes quantity/);
    await refused(['--scenario', scenario((s) => void (s.faults = { schedule: [{ at: 60, fault: { kind: 'quota', location: 'westus9', cores: 0 } }] }))], /faults\.schedule\.0\.fault\.location: no region "westus9" in this world \(eastus2\)/);
    await refused(['--scenario', scenario((s) => void (s.nodeClasses[0]!.subnetPrefix = '10.1.0.0/30'))], /nodeClasses\.0\.subnetPrefix: "10\.1\.0\.0\/30": prefix length \/30 is outside \/16\.\.\/29/);
    await refused(['--scenario', scenario((s) => void (s.nodeClasses[0]!.subnetPrefix = '10.0.0.0/8'))], /prefix length \/8 is outside/);
    await refused(['--hours', '1', '--report', join(dir, 'no-such-dir', 'r.html')], /--report .*no-such-dir does not exist/);
  });

  it('silently ignored values: durations, budgets, limits, unknown SKUs, invalid IPs, duplicate names, an inverted bootSeconds', async () => {
    await refused(['--scenario', scenario((s) => void (s.nodePools[0]!.consolidateAfter = '5 minutes'))], /nodePools\.0\.consolidateAfter: invalid duration "5 minutes"/);
    await refused(['--scenario', scenario((s) => void (s.nodePools[0]!.budgets = [{ nodes: 'ten' }]))], /nodePools\.0\.budgets\.0\.nodes: a node count or a percentage/);
    await refused(['--scenario', scenario((s) => void (s.nodePools[0]!.limits = { cpu: '1e999x' }))], /nodePools\.0\.limits\.cpu: "1e999x" is not a Kubernetes quantity/);
    await refused(['--scenario', scenario((s) => void (s.nodePools[0]!.instanceTypes = ['Standard_H9000_v9']))], /nodePools\.0\.instanceTypes\.0: unknown VM size "Standard_H9000_v9"/);
    await refused(['--scenario', scenario((s) => void (s.regions[0]!.unavailableSkus = ['Standard_Nope']))], /regions\.0\.unavailableSkus\.0: unknown VM size/);
    await refused(['--scenario', scenario((s) => void (s.nodeClasses[0]!.subnetPrefix = '10.1.300.0/24'))], /"10\.1\.300\.0\/24" is not a valid IPv4 address/);
    await refused(['--scenario', scenario((s) => void (s.nodeClasses[0]!.subnetPrefix = '10.1.0.7/24'))], /has host bits set/);
    await refused(['--scenario', scenario((s) => void s.nodePools.push({ ...s.nodePools[0]! }))], /nodePools\.1\.name: duplicate name "h200"/);
    await refused(['--scenario', scenario((s) => void s.regions.push({ ...s.regions[0]! }))], /regions\.1: duplicate region "eastus2"/);
    await refused(['--scenario', scenario((s) => void (s.controller = { bootSeconds: [300, 120] }))], /controller\.bootSeconds: bootSeconds must be \[min, max\] with min ≤ max/);
    await refused(['--scenario', scenario((s) => void (s.faults = { schedule: [{ at: 99 * 3600, fault: { kind: 'throttle', drain: true } }] }))], /faults\.schedule\.0\.at: 356400 s is after the end of the run/);
  });

  it('seeds: whole numbers from 0 to 2^32 - 1, so distinct seeds are distinct runs', async () => {
    await refused(['--seed', '4294967296'], /--seed must be a whole number from 0 to 4294967295, got "4294967296"/);
    await refused(['--seed', '-1'], /--seed must be a whole number/);
    await refused(['--seeds', '1..99999999999'], /seeds are whole numbers from 0 to 4294967295/);
    await refused(['--workers', '2'], /--workers goes with --seeds/);
    await refused(['--seeds', '1..3', '--workers', '0'], /--workers must be a whole number from 1 to 64/);
    // The other commands that take a seed: the same range, not wrapped modulo 2^32.
    await refused(['--seed', '4294967297'], /--seed must be a whole number from 0 to 4294967295, got "4294967297"/, ['dev']);
    await refused(['--seed', '1e3'], /--seed must be a whole number from 0 to 4294967295, got "1e3"/, ['sim', 'serve-arm']);
  });

  it('ports of the controller: 1 to 65535', async () => {
    await refused(['--metrics-port', '65536'], /--metrics-port must be a whole number from 1 to 65535, got "65536"/, ['controller']);
    await refused(['--live-view-port', '9'.repeat(400)], /--live-view-port must be a whole number from 1 to 65535/, ['controller']);
  });

  it('files: capped in size, few YAML aliases, regular files only', async () => {
    await refused(['--scenario', file(`name: big\n#${'x'.repeat(1024 * 1024)}\n`)], /more than the 1048576-byte limit/);
    const laughs = ['a: &a ["x","x","x","x","x","x","x","x","x"]', ...Array.from({ length: 9 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`)].join('\n');
    await refused(['--scenario', file(laughs)], /[Ee]xcessive alias count/);
    await refused(['--scenario', '/dev/zero'], /\/dev\/zero: not a regular file/);
    const sub = join(dir, 'a-directory');
    mkdirSync(sub);
    await refused(['--scenario', sub], /a-directory: not a regular file/);
    await refused(['--world', file('name: w\nregions: [{ location: eastus2 }]\n'), '--manifests', '/dev/null'], /\/dev\/null: not a regular file/);
  });
});

describe('azflex simulate --manifests --world', () => {
  const manifests = (docs: object[]): string => {
    const d = mkdtempSync(join(dir, 'm-'));
    writeFileSync(join(d, 'all.yaml'), docs.map((x) => stringify(x)).join('---\n'));
    return d;
  };
  const nodeClass = (over: Record<string, unknown> = {}) => ({
    apiVersion: 'flex.aks.azure.com/v1alpha1', kind: 'AzureFlexNodeClass', metadata: { name: 'gpu' },
    spec: {
      subscriptionID: '11111111-1111-1111-1111-111111111111', location: 'eastus2', resourceGroup: 'rg',
      subnetID: '/subscriptions/11111111-1111-1111-1111-111111111111/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/s',
      imageReference: { publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' }, ...over,
    },
  });
  const nodePool = (spec: Record<string, unknown> = {}) => ({
    apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: 'gpu' },
    spec: {
      template: { spec: { nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'gpu' }, requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D8s_v5'] }] } },
      ...spec,
    },
  });
  const deployment = (requests: Record<string, string> = { cpu: '2' }, replicas = 3) => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
    spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx', resources: { requests } }] } } },
  });

  it('runs the examples in the quota-storm world and reports per NodePool; nothing leaks', async () => {
    const code = await main(['simulate', '--manifests', 'examples/', '--world', 'quota-storm', '--hours', '1', '--json', '--assert-no-leaks']);
    expect(code, stderr.join('')).toBe(0);
    const out = JSON.parse(stdout.join('')) as { nodePools: Record<string, { nodeClaimsCreated: number; nodesAtEnd: number }>; podsRunning: number; leakedNics: number };
    expect(Object.keys(out.nodePools)).toEqual(['cpu-d8s', 'h200-eastus2', 'h200-eastus2euap']);
    expect(out.nodePools['h200-eastus2']!.nodesAtEnd).toBe(1);
    expect(out.podsRunning).toBe(1);
    expect(out.leakedNics).toBe(0);
  });

  it('your manifests in your own world file: a Deployment gets nodes, a PDB is accepted', async () => {
    const world = file(stringify({ name: 'mine', hours: 1, regions: [{ location: 'eastus2', familyQuotaCores: { standardDSv5Family: 64 } }], subnets: [{ id: nodeClass().spec.subnetID, addressPrefix: '10.9.0.0/28' }] }));
    const pdb = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web' }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } } };
    const code = await main(['simulate', '--manifests', manifests([nodeClass(), nodePool(), deployment(), pdb]), '--world', world, '--json', '--assert-no-leaks']);
    expect(code, stderr.join('')).toBe(0);
    const out = JSON.parse(stdout.join('')) as { podsRunning: number; nodePools: Record<string, { nodesAtEnd: number }> };
    expect(out.podsRunning).toBe(3);
    expect(out.nodePools.gpu!.nodesAtEnd).toBeGreaterThan(0);
  });

  it('a Deployment with hostname anti-affinity gets one node per replica, though all would fit on one', async () => {
    const world = file(stringify({ name: 'mine', hours: 1, regions: [{ location: 'eastus2', familyQuotaCores: { standardDSv5Family: 64 } }], subnets: [{ id: nodeClass().spec.subnetID, addressPrefix: '10.9.0.0/28' }] }));
    const spread = deployment({ cpu: '1' }, 3);
    const template = spread.spec.template as { spec: Record<string, unknown> };
    template.spec.affinity = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'kubernetes.io/hostname' }] } };
    const code = await main(['simulate', '--manifests', manifests([nodeClass(), nodePool(), spread]), '--world', world, '--json', '--assert-no-leaks']);
    expect(code, stderr.join('')).toBe(0);
    const out = JSON.parse(stdout.join('')) as { podsRunning: number; nodePools: Record<string, { nodesAtEnd: number }>; podTimeToRunningSeconds: { count: number } };
    expect(out.podsRunning).toBe(3);
    expect(out.nodePools.gpu!.nodesAtEnd).toBe(3);
    expect(out.podTimeToRunningSeconds.count).toBe(3);
  });

  it('refuses bad manifests the way the API server and the controller would, naming file, object and field', async () => {
    await refused(['--manifests', manifests([nodeClass(), nodePool({ limitz: { cpu: '1' } })])], /all\.yaml \(document 2\): NodePool gpu: spec: must NOT have additional properties "limitz"/);
    await refused(['--manifests', manifests([nodeClass({ subscriptionID: 'not-a-guid' }), nodePool()])], /AzureFlexNodeClass gpu: /);
    await refused(['--manifests', manifests([nodeClass(), nodePool({ disruption: { consolidateAfter: '5 minutes' } })])], /NodePool gpu: spec\.disruption\.consolidateAfter/);
    await refused(['--manifests', manifests([nodeClass(), nodePool(), deployment({ cpu: 'lots' })])], /Deployment web: container c: resources\.cpu: "lots" is not a Kubernetes quantity/);
    await refused(['--manifests', manifests([nodeClass(), nodePool(), deployment({ cpu: '1' }, 1e9)])], /Deployment web: spec\.replicas: must be a whole number from 0 to 100000/);
    await refused(['--manifests', manifests([nodeClass(), nodePool(), nodePool()])], /NodePool gpu: duplicate name/);
    await refused(['--manifests', manifests([nodeClass(), nodePool(), { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'x' } }])], /kind ReplicationController is not simulated/);
    await refused(['--manifests', manifests([nodeClass({ location: 'westus9' }), nodePool()]), '--world', 'quota-storm'], /AzureFlexNodeClass gpu: location "westus9" is not a region of world quota-storm/);
    await refused(['--manifests', manifests([nodeClass(), nodePool()]), '--scenario', 'quota-storm'], /--scenario and --manifests do not go together/);
    await refused(['--world', 'quota-storm'], /--world goes with --manifests/);
    await refused(['--manifests', 'examples/', '--world', 'nowhere'], /unknown world "nowhere"/);
  });
});
