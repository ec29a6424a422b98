import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { parseYamlDocuments } from '../../../src/sim/input-files.js';
import { cliHarness } from './cli-harness.js';

/**
 * A second round of hostile input to `azflex simulate` (issue 13, part 5): the classes a
 * fresh audit found that simulate-inputs.test.ts did not cover. Each gets exit code 2 and
 * exactly one line naming the file and field, before any simulation starts.
 */
const { out: cli, dir, file, scenario, refused } = cliHarness('azflex-hostile-');
const SUB = '11111111-1111-1111-1111-111111111111';
const SUBNET = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/s`;
const world = (w: Record<string, unknown>) => file(stringify({ name: 'w', hours: 1, regions: [{ location: 'eastus2' }, { location: 'eastus2euap' }], ...w }));
const withWorld = (w: string) => ['--manifests', 'examples/', '--world', w];


describe('file contents', () => {
  it('binary, UTF-16 and non-UTF-8 files are refused as such', async () => {
    await refused(['--scenario', file(Buffer.from([0x6e, 0x61, 0x6d, 0x65, 0x3a, 0x00, 0xff, 0x10]))], /a binary file \(a NUL byte at offset 5\), not YAML or JSON text/);
    await refused(withWorld(file(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('name: w\n', 'utf16le')]))), /UTF-16 text; save it as UTF-8/);
    await refused(withWorld(file(Buffer.from([0x6e, 0x3a, 0x20, 0xc3, 0x28]))), /not UTF-8 text/);
  });

  it('YAML tags other than the core schema\'s are refused, not turned into strings or Buffers', async () => {
    await refused(withWorld(file("name: !!js/function 'function(){}'\nregions: [{location: eastus2}]\n")), /not valid YAML: unknown scalar tag .*js\/function> \(line 1, column 7\)/);
    await refused(withWorld(file('name: !!binary aGVsbG8=\nregions: [{location: eastus2}]\n')), /unknown scalar tag .*binary/);
    await refused(withWorld(file('name: w\nregions: !mine [{location: eastus2}]\n')), /unknown sequence tag !<!mine>/);
  });

  it('aliases: an expansion past a million values (few aliases, wide anchors) and an alias inside its own anchor', async () => {
    const wide = `name: w\nregions: [{location: eastus2}]\ndescription: &big [${Array.from({ length: 20_000 }, () => '1').join(',')}]\n`;
    await refused(['--scenario', file(`${wide}${Array.from({ length: 60 }, (_, i) => `x${i}: *big`).join('\n')}\n`)], /YAML aliases expand it to more than 1000000 values/);
    await refused(withWorld(file('name: &a [*a]\nregions: [{location: eastus2}]\n')), /a YAML alias refers to its own anchor \(a cycle\)/);
  });

  it('merge keys resolve as kubectl reads them; duplicate keys are refused', () => {
    expect(parseYamlDocuments('a: &a {x: 1, y: 2}\nb: {<<: *a, y: 3}\n', 't')).toEqual([{ a: { x: 1, y: 2 }, b: { x: 1, y: 3 } }]);
    expect(() => parseYamlDocuments('a: 1\na: 2\n', 't')).toThrow(/t: not valid YAML: duplicated mapping key \(line 2, column 1\)/);
  });

  it('manifests add up to at most 8 MiB (refused at the file that passes it)', async () => {
    const d = mkdtempSync(join(dir, 'big-'));
    for (let i = 0; i < 9; i++) writeFileSync(join(d, `m${i}.yaml`), `# ${'z'.repeat(1024 * 1024 - 8)}\n`);
    await refused(['--manifests', d, '--world', world({})], /m8\.yaml: the manifests add up to more than 8388608 bytes/);
  });

  it('an oversized file is refused from its size, before it is read', async () => {
    const sparse = join(dir, 'sparse.yaml');
    closeSync(openSync(sparse, 'w'));
    truncateSync(sparse, 4 * 1024 ** 3);
    await refused(['--scenario', sparse], /4294967296 bytes, more than the 1048576-byte limit/);
  });
});

describe('flags', () => {
  it('--report: a name is required, its directory must take a file, and nothing is left behind', async () => {
    await refused(['--hours', '1', '--report', ''], /--report needs a file name/);
    await refused(['--hours', '1', '--report', '/proc/azflex-report.html'], /--report \/proc\/azflex-report\.html: cannot write in \/proc \(E[A-Z]+\)/);
    const out = mkdtempSync(join(tmpdir(), 'azflex-report-'));
    await refused(['--scenario', file('name: [\n'), '--report', join(out, 'r.html')], /not valid YAML/);
    expect(readdirSync(out)).toEqual([]);
  });

  it('--seed does not go with --seeds (a sweep would ignore it); --ui not with --strategy all, refused before the inputs load', async () => {
    await refused(['--seed', '5', '--seeds', '1..3'], /--seed and --seeds do not go together/);
    await refused(['--ui', '--strategy', 'all'], /--ui runs one strategy at a time: pass --strategy <name>/);
  });

  it('a message quoting a huge input stays one bounded line', async () => {
    await refused(withWorld(world({ subnets: [{ id: SUBNET, addressPrefix: 'x'.repeat(100_000) }] })), /subnets\.0\.addressPrefix: "x+… \(\d+ more characters\)$/m);
    expect(cli.stderr.join('').length).toBeLessThan(2200);
  });
});

describe('worlds and scenarios', () => {
  it('scenario NodePools and waves: label syntax, whole extended resources, pods that fit a VM size', async () => {
    await refused(['--scenario', scenario((s) => void (s.nodePools[0]!.labels = { 'bad key!': 'x' }))], /nodePools\.0\.labels: "bad key!" is not a label key/);
    await refused(['--scenario', scenario((s) => void (s.nodePools[0]!.taints = [{ key: 'gpu', value: 'not ok!', effect: 'NoSchedule' }]))], /nodePools\.0\.taints\.0: "not ok!" is not a label value/);
    await refused(['--scenario', scenario((s) => void (s.workload[0]!.nodeSelector = { 'a b': 'c' }))], /workload\.0\.nodeSelector: "a b" is not a label key/);
    await refused(['--scenario', scenario((s) => void (s.workload[0]!.requests = { ...s.workload[0]!.requests, 'nvidia.com/gpu': '1.5' }))], /workload\.0\.requests\.nvidia\.com\/gpu: "1\.5" must be a whole number/);
    await refused(['--scenario', scenario((s) => void (s.workload[0]!.requests = { cpu: '5000' }))], /workload\.0\.requests: the pod's requests \(cpu 5000000, pods 1\) fit no VM size in the catalog/);
  });

  it('regions the catalog has no VM size in, and quota families it does not know', async () => {
    await refused(withWorld(world({ regions: [{ location: 'eastus2' }, { location: 'westus9' }] })), /regions\.1\.location: no VM size of the catalog is offered in "westus9" \(its regions: eastus, eastus2/);
    await refused(withWorld(world({ regions: [{ location: 'eastus2', familyQuotaCores: { standardDSV5Family: 64 } }] })), /regions\.0\.familyQuotaCores\.standardDSV5Family: unknown quota family "standardDSV5Family" \(did you mean standardDSv5Family\?\)/);
    await refused(withWorld(world({ regions: [{ location: 'eastus2', regionalQuotaCores: 1e300 }] })), /regions\.0\.regionalQuotaCores: Too big: expected number to be <=10000000/);
  });

  it('faults: a subscription, a quota family or a Compute policy the world does not have', async () => {
    const fault = (f: Record<string, unknown>) => world({ faults: { schedule: [{ at: 60, fault: f }] } });
    await refused(withWorld(fault({ kind: 'quota', location: 'eastus2', subscriptionId: '99999999-9999-9999-9999-999999999999', cores: 0 })), /faults\.schedule\.0\.fault\.subscriptionId: no region "eastus2" in subscription 99999999-9999-9999-9999-999999999999/);
    await refused(['--scenario', scenario((s) => void (s.faults = { schedule: [{ at: 60, fault: { kind: 'capacity', location: 'eastus2', subscriptionId: '99999999-9999-9999-9999-999999999999', allocationFailureRate: 1 } }] }))], /faults\.schedule\.0\.fault\.subscriptionId: no region "eastus2" in subscription 9999/);
    await refused(withWorld(fault({ kind: 'quota', location: 'eastus2', family: 'standardNopeFamily', cores: 0 })), /faults\.schedule\.0\.fault\.family: unknown quota family "standardNopeFamily"/);
    await refused(withWorld(fault({ kind: 'computeThrottle', location: 'eastus2', policy: 'PutVM1Min' })), /faults\.schedule\.0\.fault\.policy: unknown Compute throttling policy "PutVM1Min" \(PutVM3Min, /);
  });

  it('subnets: overlapping in one VNet, leading zeros; regions: one subscription in two cases, pinned beside unpinned', async () => {
    await refused(withWorld(world({ subnets: [{ id: SUBNET, addressPrefix: '10.0.0.0/24' }, { id: `${SUBNET}2`, addressPrefix: '10.0.0.128/25' }] })), /subnets\.1\.addressPrefix: 10\.0\.0\.128\/25 overlaps 10\.0\.0\.0\/24 \(subnets\.0\.addressPrefix\) in the same virtual network/);
    await refused(['--scenario', scenario((s) => void s.nodeClasses.push({ ...s.nodeClasses[0]!, name: 'second', subnet: 'other', subnetPrefix: '10.1.0.0/25' }))], /nodeClasses\.1\.subnetPrefix: 10\.1\.0\.0\/25 overlaps 10\.1\.0\.0\/24/);
    await refused(withWorld(world({ subnets: [{ id: SUBNET, addressPrefix: '010.0.0.0/24' }] })), /"010\.0\.0\.0\/24" has a leading zero in a number/);
    await refused(withWorld(world({ regions: [{ location: 'eastus2', subscriptionId: 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa' }, { location: 'eastus2', subscriptionId: 'AAAAAAAA-AAAA-AAAA-AAAA-AAAAAAAAAAAA' }] })), /regions\.1: duplicate region "eastus2"/);
    await refused(withWorld(world({ regions: [{ location: 'eastus2' }, { location: 'eastus2', subscriptionId: SUB }] })), /regions\.1: region "eastus2" is already given for every subscription by regions\.0/);
  });

  it('scenario NodeClasses sharing a subnet with two address ranges, or a virtual network in two regions', async () => {
    await refused(['--scenario', scenario((s) => void s.nodeClasses.push({ ...s.nodeClasses[0]!, name: 'second', subnetPrefix: '10.2.0.0/24' }))], /nodeClasses\.1\.subnetPrefix: 10\.2\.0\.0\/24 differs from 10\.1\.0\.0\/24 \(nodeClasses\.0\) for the same subnet "nodes" .*: one subnet has one address range$/m);
    // An absent subnetPrefix is the default, which differs from the first's.
    await refused(['--scenario', scenario((s) => void s.nodeClasses.splice(0, 1, { ...s.nodeClasses[0]!, subnetPrefix: '10.9.0.0/24' }, { name: 'second', location: 'eastus2', subscriptionID: s.nodeClasses[0]!.subscriptionID }))], /nodeClasses\.1\.subnetPrefix: 10\.1\.0\.0\/24 differs from 10\.9\.0\.0\/24 .*\(an absent subnetPrefix is 10\.1\.0\.0\/24\)/);
    await refused(['--scenario', scenario((s) => {
      s.regions.push({ location: 'swedencentral', subscriptionId: s.regions[0]!.subscriptionId });
      s.nodeClasses.push({ ...s.nodeClasses[0]!, name: 'sweden', location: 'swedencentral', subnet: 'sweden', subnetPrefix: '10.2.0.0/24' });
    })], /nodeClasses\.1\.location: swedencentral, but nodeClasses\.0 puts this NodeClass's virtual network \(subscription .*, resource group azflex-nodes\) in eastus2: a virtual network and its subnets are in one region/);
  });
});

describe('manifests', () => {
  const manifests = (docs: object[]): string => file(docs.map((x) => stringify(x)).join('---\n'));
  const nodeClass = {
    apiVersion: 'flex.aks.azure.com/v1alpha1', kind: 'AzureFlexNodeClass', metadata: { name: 'gpu' },
    spec: { subscriptionID: SUB, location: 'eastus2', resourceGroup: 'rg', subnetID: SUBNET, imageReference: { publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' } },
  };
  const nodePool = (name = 'gpu') => ({
    apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name },
    spec: { template: { spec: { nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'gpu' }, requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D8s_v5'] }] } } },
  });
  const container = (resources: object = { requests: { cpu: '1' } }) => ({ name: 'c', image: 'nginx', resources });
  const deployment = (podSpec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', ...meta },
    spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [container()], ...podSpec } } },
  });
  const run = (...docs: object[]) => ['--manifests', manifests([nodeClass, nodePool(), ...docs]), '--world', world({})];

  it('kinds: built-ins at an apiVersion the API server no longer serves, kinds that make pods the simulation does not model', async () => {
    await refused(run({ ...deployment(), apiVersion: 'apps/v1beta1' }), /Deployment web: no matches for kind "Deployment" in version "apps\/v1beta1" \(Deployment is apps\/v1\)/);
    await refused(run({ apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget', metadata: { name: 'p' }, spec: { minAvailable: 1 } }), /no matches for kind "PodDisruptionBudget" in version "policy\/v1beta1"/);
    await refused(run({ apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'ds' }, spec: {} }), /DaemonSet ds: kind DaemonSet \(apps\/v1\) is not simulated: take it out of --manifests/);
    await refused(run({ apiVersion: 'karpenter.sh/v1alpha1', kind: 'NodeOverlay', metadata: { name: 'o' }, spec: {} }), /kind NodeOverlay \(karpenter\.sh\/v1alpha1\) is not simulated/);
    // A NodeClaim is a running cluster's (a snapshot's): checked against its CRD like a NodePool.
    await refused(run({ apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', metadata: { name: 'nc' }, spec: {} }), /NodeClaim nc: spec: must have required property 'nodeClassRef'/);
  });

  it('metadata: names that are not strings, generateName, labels that are not strings or not labels, NodePool and StatefulSet names too long to label', async () => {
    await refused(run({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 123 } }), /ConfigMap: metadata\.name must be a string, got 123/);
    await refused(run({ ...deployment(), metadata: { generateName: 'web-' } }), /Deployment: metadata\.name is required \(kubectl apply does not take generateName\)/);
    await refused(run(deployment({}, { labels: { on: true } })), /Deployment web: metadata\.labels\.on: must be a string, got true \(quote it\)/);
    await refused(run(deployment({}, { labels: { app: 'not a value!' } })), /metadata\.labels\.app: "not a value!" is not a label value/);
    await refused(run({ ...deployment(), spec: { ...deployment().spec, selector: { matchLabels: { app: 5 } } } }), /Deployment web: spec\.selector\.matchLabels\.app: must be a string, got 5/);
    await refused(['--manifests', manifests([nodeClass, nodePool('p'.repeat(64))]), '--world', world({})], /NodePool p{64}: metadata\.name: .* cannot be a label value \(at most 63 characters, no dots\)/);
    const sts = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 's'.repeat(62) }, spec: { replicas: 10, serviceName: 's', selector: { matchLabels: { app: 's' } }, template: { metadata: { labels: { app: 's' } }, spec: { containers: [container()] } } } };
    await refused(run(sts), /StatefulSet s+: metadata\.name: a StatefulSet's pods are named "<name>-<ordinal>" and must be DNS labels/);
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'db-1' }, spec: { containers: [container()] } };
    await refused(run({ ...sts, metadata: { name: 'db' } }, pod), /Pod db-1: StatefulSet db \(.*\) creates a pod of that name/);
  });

  it('pod specs: shapes the core API refuses, and resources as the API server checks them', async () => {
    await refused(run(deployment({ containers: [{ image: 'x' }] })), /spec\.template\.spec\.containers\.0\.name: Invalid input: expected string, received undefined/);
    await refused(run(deployment({ containers: [container(), container()] })), /containers\.1\.name: duplicate container name "c"/);
    await refused(run(deployment({ tolerations: { key: 'a' } })), /spec\.template\.spec\.tolerations: Invalid input: expected array, received object/);
    await refused(run(deployment({ nodeSelector: { gpu: 8 } })), /spec\.template\.spec\.nodeSelector\.gpu: Invalid input: expected string, received number/);
    await refused(run(deployment({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['x'] }] }] } } } })), /matchExpressions\.0\.values: must be one integer for Gt/);
    await refused(run(deployment({ containers: [container({ requests: 'lots' })] })), /containers\.0\.resources\.requests: Invalid input: expected record, received string/);
    await refused(run(deployment({ containers: [container({ requests: { 'bad name!': '1' } })] })), /resources\.requests\.bad name!: "bad name!" is not a standard resource/);
    await refused(run(deployment({ containers: [container({ requests: { 'nvidia.com/gpu': '1.5' }, limits: { 'nvidia.com/gpu': '1.5' } })] })), /resources\.requests\.nvidia\.com\/gpu: "1\.5" must be a whole number/);
    await refused(run(deployment({ containers: [container({ requests: { 'nvidia.com/gpu': '1' } })] })), /resources\.limits\.nvidia\.com\/gpu: is required: nvidia\.com\/gpu cannot be overcommitted/);
    await refused(run(deployment({ containers: [container({ requests: { 'nvidia.com/gpu': '1' }, limits: { 'nvidia.com/gpu': '2' } })] })), /resources\.requests\.nvidia\.com\/gpu: 1 must equal the limit 2/);
    await refused(run(deployment({ containers: [container({ requests: { cpu: '4' }, limits: { cpu: '2' } })] })), /resources\.requests\.cpu: 4 must be at most the cpu limit of 2/);
    await refused(run(deployment({ containers: [container({ requests: { memory: '-1Gi' } })] })), /resources\.requests\.memory: "-1Gi" is not a non-negative quantity$/m);
    // A GPU given only in limits (as the Kubernetes docs ask) is requested: 16 GPUs fit no VM size.
    await refused(run(deployment({ containers: [container({ limits: { 'nvidia.com/gpu': '16' } })] })), /the pod's requests \(.*nvidia\.com\/gpu 16.*\) fit no VM size/);
  });

  it('storage: claim templates, PVs and StorageClasses neither in the manifests nor AKS\'s', async () => {
    const sts = (claim: object) => ({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db' }, spec: { replicas: 1, serviceName: 'db', selector: { matchLabels: { app: 'db' } }, template: { metadata: { labels: { app: 'db' } }, spec: { containers: [container()] } }, volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: claim }] } });
    await refused(run(sts({ storageClassName: 'premium-nope', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } } })), /StatefulSet db: spec\.volumeClaimTemplates\.0\.spec\.storageClassName: StorageClass "premium-nope" is neither in the manifests nor one AKS has/);
    await refused(run(sts({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '-10Gi' } } })), /spec\.volumeClaimTemplates\.0\.spec\.resources\.requests\.storage: "-10Gi" is not a non-negative quantity/);
    await refused(run({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv' }, spec: { accessModes: ['ReadWriteOnce'] } }), /PersistentVolume pv: spec\.capacity\.storage: is required/);
  });

  it('counts: at most 100 NodePools; nulls are absent fields, Lists nest, other projects\' custom resources are ignored', async () => {
    await refused(['--manifests', manifests([nodeClass, ...Array.from({ length: 101 }, (_, i) => nodePool(`p${i}`))]), '--world', world({})], /NodePool p100: more than 100 NodePools/);
    const { loadManifests } = await import('../../../src/sim/manifests.js');
    const loaded = loadManifests([manifests([
      { apiVersion: 'v1', kind: 'List', items: [nodeClass, { apiVersion: 'v1', kind: 'List', items: [nodePool()] }, { apiVersion: 'v1', kind: 'List', items: null }] },
      { ...deployment(), spec: { ...deployment().spec, replicas: null } },
      { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'm' }, spec: {} },
    ])]);
    expect(loaded.nodePools.map((p) => p.metadata.name)).toEqual(['gpu']);
    expect(loaded.workloads.map((w) => [w.name, w.replicas])).toEqual([['web', 1]]);
    expect(loaded.ignored).toEqual(['ServiceMonitor/m']);
  });
});

describe('manifest paths, read as kubectl apply -f [-R] reads them', () => {
  const tree = (files: Record<string, string>): string => {
    const root = mkdtempSync(join(dir, 'tree-'));
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return root;
  };
  const examples = Object.fromEntries(readdirSync('examples').filter((n) => n.endsWith('.yaml')).map((n) => [n, readFileSync(join('examples', n), 'utf8')]));
  const names = async (paths: string[], recursive = false) => {
    const { loadManifests } = await import('../../../src/sim/manifests.js');
    const loaded = loadManifests(paths, { recursive });
    return { files: loaded.files.map((f) => relative(paths[0]!.replace(/[*?[].*$/, ''), f)), workloads: loaded.workloads.map((w) => w.name) };
  };

  it('a directory: its .json/.yaml/.yml files in name order, not a README or .YAML (kubectl compares extensions exactly), subdirectories only with -R, depth first', async () => {
    const root = tree({
      'a-classes.yaml': examples['azureflexnodeclass-h200-eastus2.yaml']!, 'b-pool.yml': examples['nodepool-h200-eastus2.yaml']!, 'README.md': '# not YAML: [', 'notes.txt': 'x: [',
      'UPPER.YAML': examples['h200-deployment.yaml']!, 'apps/web.yaml': examples['h200-deployment.yaml']!, 'apps/deeper/more.json': '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}', 'c-last.yaml': '# comments only\n',
    });
    expect(await names([root])).toEqual({ files: ['a-classes.yaml', 'b-pool.yml', 'c-last.yaml'], workloads: [] });
    expect(await names([root], true)).toEqual({ files: ['a-classes.yaml', 'apps/deeper/more.json', 'apps/web.yaml', 'b-pool.yml', 'c-last.yaml'], workloads: ['h200-trainer'] });
    // A file named on its own is read whatever its extension; a file reached twice is read once (not a duplicate object).
    expect((await names([root, join(root, 'UPPER.YAML'), join(root, 'a-classes.yaml')])).files).toEqual(['a-classes.yaml', 'b-pool.yml', 'c-last.yaml', 'UPPER.YAML']);
    // A path that does not exist is a glob, as kubectl expands it.
    expect((await names([join(root, '[ab]-*')])).files).toEqual(['a-classes.yaml', 'b-pool.yml']);
  });

  it('examples/ with -R (the topology examples in westeurope too) fit every built-in world', async () => {
    const { loadManifests } = await import('../../../src/sim/manifests.js');
    const { BUILT_IN_WORLDS, loadWorld, scenarioOfWorld } = await import('../../../src/sim/world.js');
    const cluster = loadManifests(['examples'], { recursive: true });
    expect(cluster.files.some((f) => f.includes('topology'))).toBe(true);
    for (const w of BUILT_IN_WORLDS) expect(() => scenarioOfWorld(loadWorld(w), cluster, w), w).not.toThrow();
  });

  it('refusals: -R without --manifests, ** patterns and globs that match nothing, a kustomization, a directory with only subdirectories', async () => {
    await refused(['-R'], /-R goes with --manifests/);
    await refused(['--manifests', ''], /--manifests "": an empty path/);
    const root = tree({ 'pools/pool.yaml': examples['nodepool-h200-eastus2.yaml']!, 'kustomize/kustomization.yaml': 'resources: [a.yaml]\n', 'kustomize/a.yaml': examples['azureflexnodeclass-h200-eastus2.yaml']! });
    await refused(['--manifests', join(root, '**/*.yaml')], /kubectl's patterns match within one directory \(\*, \?, \[\.\.\.\]\); for subdirectories pass the directory with -R/);
    await refused(['--manifests', join(root, 'nope-*.yaml')], /nope-\*\.yaml: the path does not exist and the pattern matches no file/);
    await refused(['--manifests', join(root, 'kustomize')], /kustomization\.yaml: a kustomization is kustomize's input, not an object to apply \(kubectl apply -f refuses it too\): pass what `kubectl kustomize .*kustomize` prints instead/);
    await refused(['--manifests', root], /no \.yaml, \.yml or \.json manifest files \(pass -R for their subdirectories\)/);
  });
});

describe('sim serve-arm --scenario (a FakeArmConfig file)', () => {
  it('bounds every number and refuses unknown fields', async () => {
    const { defaultFakeArmConfig } = await import('../../../src/sim/arm/defaults.js');
    const cfg = defaultFakeArmConfig();
    const serve = async (over: Record<string, unknown>, message: RegExp) => {
      cli.stderr = [];
      const code = await main(['sim', 'serve-arm', '--scenario', file(JSON.stringify({ ...cfg, ...over }), 'json')]);
      expect(code, cli.stderr.join('')).toBe(2);
      expect(cli.stderr.join('').trimEnd().split('\n')).toHaveLength(1);
      expect(cli.stderr.join('')).toMatch(message);
    };
    await serve({ latencyMs: { read: { min: 0, max: 1e308 } } }, /latencyMs\.read\.max: Too big: expected number to be <=3600000/);
    await serve({ computeThrottling: [{ name: 'p', ops: ['vm.put'], limit: 1, windowSeconds: 1e-9 }] }, /computeThrottling/);
    await serve({ regions: [{ ...cfg.regions[0], familyQuotaCores: { x: -1 } }] }, /regions\.0\.familyQuotaCores\.x: Too small/);
    await serve({ latencyMz: {} }, /Unrecognized key: "latencyMz"/);
    await serve({ subnets: 'none' }, /subnets: Invalid input: expected array/);
  });
});
