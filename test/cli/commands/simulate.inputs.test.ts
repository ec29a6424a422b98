import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { cliHarness } from './cli-harness.js';

/**
 * Hostile and careless input to `azflex simulate`, one test per class the issue lists: each
 * gets exit code 2 and exactly one line naming the field, before any simulation starts (a
 * hang or a memory blow-up would time this file out instead).
 */
const { out: cli, dir, file, scenario, refused } = cliHarness('azflex-inputs-');

describe('azflex simulate refuses hostile input with one line and exit 2', () => {
  it('hangs: --hours 1e9, intervals of 1e-9 s, repeatEverySeconds 0.001', async () => {
    await refused(['--hours', '1e9'], /--hours must be a decimal number of hours above 0 and at most 336 \(such as 8 or 0\.5\), got "1e9"/);
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

  it('numbers in another notation, backwards and open ranges: --hours 0x10 / 1e-300, --seeds 5..1 / 1.. / 0x10, --workers 1.5, --port 0x10', async () => {
    await refused(['--hours', '0x10'], /--hours must be a decimal number of hours/);
    await refused(['--hours', '1e-300'], /--hours must be a decimal number of hours/);
    await refused(['--hours', 'Infinity'], /--hours must be a decimal number of hours/);
    await refused(['--seeds', '5..1'], /seed range "5\.\.1" runs backwards/);
    await refused(['--seeds', '1..'], /seeds are whole numbers from 0 to 4294967295, got "1\.\."/);
    await refused(['--seeds', '0x10'], /seeds are whole numbers/);
    await refused(['--seeds', '1..3', '--workers', '1.5'], /--workers must be a whole number from 1 to 64, got "1\.5"/);
    await refused(['--port', '0x10'], /--port must be a whole number from 0 to 65535, got "0x10"/, ['sim', 'serve-arm']);
    // commander's "Did you mean …?" joins the error on its one line.
    await refused(['--hourz', '1'], /unknown option '--hourz' \(Did you mean --hours\?\)/);
  });

  it('ports of the controller: 1 to 65535', async () => {
    await refused(['--metrics-port', '65536'], /--metrics-port must be a whole number from 1 to 65535, got "65536"/, ['controller']);
    await refused(['--live-view-port', '9'.repeat(400)], /--live-view-port must be a whole number from 1 to 65535/, ['controller']);
  });

  it('the controller: bounded durations, lease > renew > retry, a cluster name, an https ARM endpoint, usable kubeconfig and price files', async () => {
    const controller = ['controller', '--cluster-name', 'c'];
    await refused(['--sku-catalog-refresh', '99999999999h'], /--sku-catalog-refresh <d>' argument '99999999999h' is invalid\. must be a duration like 15s or 1m from 1m … 168h/, controller);
    await refused(['--lease-duration', '0s'], /must be a duration like 15s or 1m from 1s … 10m/, controller);
    await refused(['--lease-duration', '5s', '--renew-deadline', '10s'], /--lease-duration \(5s\) must be longer than --renew-deadline \(10s\)/, controller);
    await refused(['--cluster-name', ''], /--cluster-name <name>' argument '' is invalid/, ['controller']);
    await refused(['--arm-endpoint', 'not a url'], /must be an https:\/\/ URL/, controller);
    await refused(['--node-resource-group', 'MC_rg/aks'], /--node-resource-group <name>' argument 'MC_rg\/aks' is invalid\. must be an Azure resource group name/, controller);
    await refused(['--node-resource-group', 'rg.'], /must be an Azure resource group name .*not ending in \./, controller);
    await refused(['--repair-policies', 'GpuXidError=Maybe:5m'], /--repair-policies .* argument 'GpuXidError=Maybe:5m' is invalid\. repair policy "GpuXidError=Maybe:5m": expected Type=True\|False\|Unknown:duration/, controller);
    await refused(['--kubeconfig', join(dir, 'no-such-kubeconfig'), '--leader-elect', 'false'], /kubeconfig .*no-such-kubeconfig does not exist/, controller);
    await refused(['--kubeconfig', '/dev/zero', '--leader-elect', 'false'], /kubeconfig \/dev\/zero: not a regular file/, controller);
    await refused(['--kubeconfig', file('\u0000\u0001 binary: [garbage'), '--leader-elect', 'false'], /kubeconfig .*: /, controller);
    await refused(['--kubeconfig', file(`${'['.repeat(10_000)}${']'.repeat(10_000)}`), '--leader-elect', 'false'], /kubeconfig .*: collections nested more than 64 levels deep/, controller);
    await refused(['--price-overrides', '/dev/zero'], /--price-overrides: \/dev\/zero: not a regular file/, controller);
    await refused(['--price-overrides', file('a: 1\n---\nb: 2\n')], /--price-overrides: .*: one YAML document expected, found 2/, controller);
  });

  it('serve-arm, dev and viz: scenario files are bounded like simulate\'s, a state dir or an output dir that is a file is refused', async () => {
    await refused(['--scenario', '/dev/zero'], /\/dev\/zero: not a regular file/, ['sim', 'serve-arm']);
    await refused(['--scenario', file(`#${'x'.repeat(1024 * 1024)}\n`)], /more than the 1048576-byte limit/, ['sim', 'serve-arm']);
    await refused(['--scenario', file('{"a": [1\n')], /not valid YAML/, ['sim', 'serve-arm']);
    await refused(['--scenario', '/dev/zero'], /\/dev\/zero: not a regular file/, ['dev']);
    await refused(['--state-dir', file('')], /--state-dir .*: not a directory/, ['dev']);
    await refused(['--clusters', '3'], /--clusters must be a whole number from 1 to 2, got "3"/, ['dev']);
    await refused(['--machine', 'nic', '--out', file('')], /--out .*: cannot make that directory/, ['viz']);
  });

  it('files: capped in size, few YAML aliases, regular files only', async () => {
    await refused(['--scenario', file(`name: big\n#${'x'.repeat(1024 * 1024)}\n`)], /more than the 1048576-byte limit/);
    const laughs = ['a: &a ["x","x","x","x","x","x","x","x","x"]', ...Array.from({ length: 9 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`)].join('\n');
    await refused(['--scenario', file(laughs)], /YAML aliases expand it to more than 1000000 values/);
    await refused(['--scenario', '/dev/zero'], /\/dev\/zero: not a regular file/);
    const sub = join(dir, 'a-directory');
    mkdirSync(sub);
    await refused(['--scenario', sub], /a-directory: not a regular file/);
    await refused(['--world', file('name: w\nregions: [{ location: eastus2 }]\n'), '--manifests', '/dev/null'], /\/dev\/null: not a regular file/);
    // Nesting: a parser that recurses per level would overflow its stack (and take seconds and 400 MB to say so).
    await refused(['--scenario', file(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)], /collections nested more than 64 levels deep/);
    await refused(['--scenario', file(`${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`, 'json')], /collections nested more than 64 levels deep/);
    await refused(['--scenario', file(Array.from({ length: 200 }, (_, i) => `${'  '.repeat(i)}a${i}:`).join('\n'))], /collections nested more than 64 levels deep/);
  });

  it('worlds: duplicate subnets, rates above 1, NaN and infinite quota, /33 CIDRs', async () => {
    const world = (w: Record<string, unknown>) => file(stringify({ name: 'w', hours: 1, regions: [{ location: 'eastus2' }], ...w }));
    const subnet = '/subscriptions/11111111-1111-1111-1111-111111111111/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/s';
    const args = (w: string) => ['--manifests', 'examples/', '--world', w];
    await refused(args(world({ subnets: [{ id: subnet, addressPrefix: '10.9.0.0/24' }, { id: subnet.toUpperCase(), addressPrefix: '10.8.0.0/24' }] })), /subnets\.1\.id: duplicate subnet/);
    await refused(args(world({ regions: [{ location: 'eastus2', allocationFailureRate: 1.5 }] })), /regions\.0\.allocationFailureRate/);
    await refused(args(file('name: w\nregions: [{ location: eastus2, familyQuotaCores: { standardDSv5Family: .nan } }]\n')), /regions\.0\.familyQuotaCores\.standardDSv5Family/);
    await refused(args(file('name: w\nregions: [{ location: eastus2, familyQuotaCores: { standardDSv5Family: .inf } }]\n')), /regions\.0\.familyQuotaCores\.standardDSv5Family/);
    await refused(args(world({ subnets: [{ id: subnet, addressPrefix: '10.0.0.0/33' }] })), /subnets\.0\.addressPrefix/);
    await refused(args(world({ clusterLocation: 'West Europe' })), /clusterLocation/);
    await refused(args(world({ faults: { schedule: [{ at: 600, fault: { kind: 'throttle', drain: true } }, { at: 60, fault: { kind: 'throttle', drain: true } }] } })), /faults\.schedule\.1\.at: 60 s comes before the previous fault's 600 s/);
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
    expect(code, cli.stderr.join('')).toBe(0);
    const out = JSON.parse(cli.stdout.join('')) as { nodePools: Record<string, { nodeClaimsCreated: number; nodesAtEnd: number }>; podsRunning: number; leakedNics: number };
    expect(Object.keys(out.nodePools)).toEqual(['cpu-d8s', 'h200-eastus2', 'h200-eastus2euap']);
    expect(out.nodePools['h200-eastus2']!.nodesAtEnd).toBe(1);
    expect(out.podsRunning).toBe(1);
    expect(out.leakedNics).toBe(0);
  });

  it('your manifests in your own world file: a Deployment gets nodes, a PDB is accepted', async () => {
    const world = file(stringify({ name: 'mine', hours: 1, regions: [{ location: 'eastus2', familyQuotaCores: { standardDSv5Family: 64 } }], subnets: [{ id: nodeClass().spec.subnetID, addressPrefix: '10.9.0.0/28' }] }));
    const pdb = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web' }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } } };
    const code = await main(['simulate', '--manifests', manifests([nodeClass(), nodePool(), deployment(), pdb]), '--world', world, '--json', '--assert-no-leaks']);
    expect(code, cli.stderr.join('')).toBe(0);
    const out = JSON.parse(cli.stdout.join('')) as { podsRunning: number; nodePools: Record<string, { nodesAtEnd: number }> };
    expect(out.podsRunning).toBe(3);
    expect(out.nodePools.gpu!.nodesAtEnd).toBeGreaterThan(0);
  });

  it('a Deployment with hostname anti-affinity gets one node per replica, though all would fit on one', async () => {
    const world = file(stringify({ name: 'mine', hours: 1, regions: [{ location: 'eastus2', familyQuotaCores: { standardDSv5Family: 64 } }], subnets: [{ id: nodeClass().spec.subnetID, addressPrefix: '10.9.0.0/28' }] }));
    const spread = deployment({ cpu: '1' }, 3);
    const template = spread.spec.template as { spec: Record<string, unknown> };
    template.spec.affinity = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'kubernetes.io/hostname' }] } };
    const code = await main(['simulate', '--manifests', manifests([nodeClass(), nodePool(), spread]), '--world', world, '--json', '--assert-no-leaks']);
    expect(code, cli.stderr.join('')).toBe(0);
    const out = JSON.parse(cli.stdout.join('')) as { podsRunning: number; nodePools: Record<string, { nodesAtEnd: number }>; podTimeToRunningSeconds: { count: number } };
    expect(out.podsRunning).toBe(3);
    expect(out.nodePools.gpu!.nodesAtEnd).toBe(3);
    expect(out.podTimeToRunningSeconds.count).toBe(3);
  });

  it('refuses bad manifests the way the API server and the controller would, naming file, object and field', async () => {
    await refused(['--manifests', manifests([nodeClass(), nodePool({ limitz: { cpu: '1' } })])], /all\.yaml \(document 2\): NodePool gpu: spec: must NOT have additional properties "limitz"/);
    await refused(['--manifests', manifests([nodeClass({ subscriptionID: 'not-a-guid' }), nodePool()])], /AzureFlexNodeClass gpu: /);
    await refused(['--manifests', manifests([nodeClass(), nodePool({ disruption: { consolidateAfter: '5 minutes' } })])], /NodePool gpu: spec\.disruption\.consolidateAfter/);
    await refused(['--manifests', manifests([nodeClass(), nodePool(), deployment({ cpu: 'lots' })])], /Deployment web: spec\.template\.spec\.containers\.0\.resources\.requests\.cpu: "lots" is not a Kubernetes quantity/);
    await refused(['--manifests', manifests([nodeClass(), nodePool(), deployment({ cpu: '1' }, 1e9)])], /Deployment web: spec\.replicas: must be a whole number from 0 to 100000/);
    await refused(['--manifests', manifests([nodeClass(), nodePool(), nodePool()])], /NodePool gpu: duplicate name/);
    await refused(['--manifests', manifests([nodeClass(), nodePool(), { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'x' } }])], /kind ReplicationController \(v1\) is not simulated: take it out of --manifests/);
    await refused(['--manifests', manifests([nodeClass({ location: 'westus9' }), nodePool()]), '--world', 'quota-storm'], /AzureFlexNodeClass gpu: location "westus9" is not a region of world quota-storm/);
    await refused(['--manifests', manifests([nodeClass(), nodePool()]), '--scenario', 'quota-storm'], /--scenario and --manifests do not go together/);
    await refused(['--world', 'quota-storm'], /--world goes with --manifests/);
    await refused(['--manifests', 'examples/', '--world', 'nowhere'], /unknown world "nowhere"/);
  });

  it('refuses a NodePool the API server would refuse for its CEL rules, with the CRD\'s message', async () => {
    const reqs = (r: object[]) => nodePool({ template: { spec: { nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'gpu' }, requirements: r } } });
    await refused(['--manifests', manifests([nodeClass(), reqs([{ key: 'karpenter.azure.com/sku-cpu', operator: 'Gte', values: ['many'] }])])], /NodePool gpu: spec\.template\.spec\.requirements: requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value/);
    await refused(['--manifests', manifests([nodeClass(), reqs([{ key: 'karpenter.azure.com/sku-cpu', operator: 'Gt', values: ['1', '2'] }])])], /must have a single positive integer value/);
    await refused(['--manifests', manifests([nodeClass(), reqs([{ key: 'karpenter.sh/team', operator: 'In', values: ['x'] }])])], /spec\.template\.spec\.requirements\.0\.key: label domain "karpenter\.sh" is restricted/);
    await refused(['--manifests', manifests([nodeClass(), reqs([{ key: 'node.k8s.io/x', operator: 'In', values: ['x'] }])])], /label domain "k8s\.io" is restricted/);
    await refused(['--manifests', manifests([nodeClass(), reqs([{ key: 'kubernetes.io/hostname', operator: 'In', values: ['x'] }])])], /label "kubernetes\.io\/hostname" is restricted/);
    await refused(['--manifests', manifests([nodeClass(), reqs([{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: [] }])])], /requirements with operator 'In' must have a value defined/);
    await refused(['--manifests', manifests([nodeClass(), nodePool({ disruption: { consolidateAfter: '30s', budgets: [{ nodes: '1', duration: '1h' }] } })])], /spec\.disruption\.budgets: 'schedule' must be set with 'duration'/);
    await refused(['--manifests', manifests([nodeClass(), nodePool({ disruption: { consolidateAfter: '30s', budgets: [{ nodes: '150%' }] } })])], /budgets\.0\.nodes/);
    await refused(['--manifests', manifests([nodeClass(), nodePool({ replicas: 2, weight: 10 })])], /NodePool gpu: spec: a static NodePool \(replicas set\) takes no weight/);
    await refused(['--manifests', manifests([nodeClass(), nodePool({ replicas: 2, limits: { cpu: '64' } })])], /NodePool gpu: spec: a static NodePool \(replicas set\) takes only a nodes limit/);
  });

  it('refuses pods the API server would refuse, and pods no VM size could hold', async () => {
    const withSpec = (extra: Record<string, unknown>) => {
      const d = deployment({ cpu: '1' }, 1);
      Object.assign((d.spec.template as { spec: Record<string, unknown> }).spec, extra);
      return d;
    };
    await refused(['--manifests', manifests([nodeClass(), nodePool(), deployment({ cpu: '10000' }, 1)])], /Deployment web: spec\.template\.spec\.containers: the pod's requests \(cpu 10000.*fit no VM size in the catalog/);
    await refused(['--manifests', manifests([nodeClass(), nodePool(), deployment({ cpu: '1', memory: '1.5.3Gi' }, 1)])], /containers\.0\.resources\.requests\.memory: "1\.5\.3Gi" is not a Kubernetes quantity/);
    await refused(['--manifests', manifests([nodeClass(), nodePool(), withSpec({ tolerations: [{ key: 'a', operator: 'Maybe' }] })])], /tolerations\.0\.operator: "Maybe" is not Equal or Exists/);
    await refused(['--manifests', manifests([nodeClass(), nodePool(), withSpec({ tolerations: [{ key: 'a', effect: 'Sometimes' }] })])], /tolerations\.0\.effect: "Sometimes" is not NoSchedule/);
    await refused(['--manifests', manifests([nodeClass(), nodePool(), withSpec({ topologySpreadConstraints: [{ maxSkew: 0, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' }] })])], /topologySpreadConstraints\.0\.maxSkew: must be a whole number greater than zero/);
    const bySelector = deployment({ cpu: '1' }, 1);
    bySelector.spec.selector = { matchExpressions: [{ key: 'app', operator: 'Near', values: ['web'] }] } as never;
    await refused(['--manifests', manifests([nodeClass(), nodePool(), bySelector])], /spec\.selector\.matchExpressions\.0\.operator: "Near" is not In, NotIn, Exists, DoesNotExist/);
    const badNs = { ...deployment({ cpu: '1' }, 1), metadata: { name: 'web', namespace: 'Bad NS' } };
    await refused(['--manifests', manifests([nodeClass(), nodePool(), badNs])], /Deployment web: metadata\.namespace "Bad NS" is not a lower-case DNS label/);
  });
});
