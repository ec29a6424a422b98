import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  AKS_FLEX_NODE_VERSION,
  BootstrapTokenExpiredError,
  CONTAINERD_VERSION,
  RUNC_VERSION,
  type NodeAgentPin,
  parseAgentSha256,
  CUSTOM_DATA_MAX_BASE64_CHARS,
  CachedBootstrapSource,
  CustomDataTooLargeError,
  StaticBootstrapSource,
  UserDataError,
  decodeCustomData,
  encodeCustomData,
  isKubeletSettableLabel,
  nodeLabels,
  renderCloudInit,
  renderCustomData,
  type BootstrapConfig,
  type BootstrapSource,
  type UserDataInput,
} from '../../../src/azure/userdata/index.js';
import { SecretRegistry } from '../../../src/log/redact.js';

const TOKEN = 'abcdef.0123456789abcdef';
const bootstrap: BootstrapConfig = {
  apiServerEndpoint: 'https://voice-agent-flex-dns-12345678.hcp.westeurope.azmk8s.io:443',
  caCertData: Buffer.from('-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n').toString('base64'),
  token: TOKEN,
  kubernetesVersion: '1.34.2',
};

const AGENT: NodeAgentPin = {
  version: AKS_FLEX_NODE_VERSION,
  sha256: { amd64: 'a'.repeat(64), arm64: 'b'.repeat(64) },
};

const h200: UserDataInput = {
  bootstrap,
  region: 'EastUS2',
  instanceType: 'Standard_ND96isr_H200_v5',
  nodePool: 'h200',
  nodeClass: 'h200-eastus2',
  capacityType: 'on-demand',
  labels: { gpu: 'h200', 'team.example.com/owner': 'voice', 'kubernetes.io/role': 'gpu', 'node.kubernetes.io/exclude-from-external-load-balancers': 'true' },
  taints: [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }],
  startupTaints: [{ key: 'node.cilium.io/agent-not-ready', effect: 'NoExecute' }],
  maxPods: 110,
  nvidiaRuntime: true,
  agent: AGENT,
};

const golden = (name: string) => fileURLToPath(new URL(`./golden/${name}`, import.meta.url));

function expectGolden(name: string, actual: string): void {
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(golden(name), actual);
  expect(actual).toBe(readFileSync(golden(name), 'utf8'));
}

describe('cloud-init rendering', () => {
  it('matches the golden file for an H200 GPU node', () => {
    expectGolden('cloud-init-h200.yaml', renderCloudInit(h200));
  });

  it('matches the golden file for a CPU node without taints', () => {
    expectGolden(
      'cloud-init-d8s.yaml',
      renderCloudInit({ bootstrap, region: 'westeurope', instanceType: 'Standard_D8s_v5', nodePool: 'cpu', nodeClass: 'cpu-we', maxPods: 30, nvidiaRuntime: false, agent: AGENT }),
    );
  });

  it('matches the golden file for an arm64 Grace GPU node (ND GB200 v6): the arm64 agent under its own pin, the NVIDIA runtime', () => {
    const gb200: UserDataInput = { ...h200, instanceType: 'Standard_ND128isr_NDR_GB200_v6', nodePool: 'gb200', nodeClass: 'gb200-eastus2', labels: { gpu: 'gb200' }, arch: 'arm64' };
    const text = renderCloudInit(gb200);
    expectGolden('cloud-init-gb200.yaml', text);
    const doc = parse(text) as { write_files: Array<{ path: string; content: string }> };
    const file = (path: string) => doc.write_files.find((f) => f.path === path)!.content;
    const script = file('/usr/local/sbin/azflex-bootstrap');
    expect(script).toContain(`releases/download/${AKS_FLEX_NODE_VERSION}/aks-flex-node-linux-arm64.tar.gz`);
    expect(script).toContain(`echo "${'b'.repeat(64)}  /opt/aks-flex-node/aks-flex-node.tar.gz" | sha256sum -c --strict -`);
    expect(script).not.toMatch(/amd64|a{64}/);
    const actions = JSON.parse(file('/etc/aks-flex-node/flex-config.json')) as Array<{ metadata: { type: string }; spec: Record<string, unknown> }>;
    // The agent fetches containerd and runc for the node's own architecture; the versions are the same.
    expect(actions.find((a) => a.metadata.type.endsWith('DownloadCRIBinaries'))!.spec).toEqual({ containerdVersion: CONTAINERD_VERSION, runcVersion: RUNC_VERSION });
    expect(actions.find((a) => a.metadata.type.endsWith('StartContainerdService'))!.spec).toEqual({ gpuConfig: { nvidiaRuntime: {} } });
    // The same text as amd64's but for the tarball and its pin.
    expect(text.replace(/arm64/g, 'amd64').replace(/b{64}/g, 'a'.repeat(64))).toBe(renderCloudInit({ ...gb200, arch: 'amd64' }));
  });

  it('is valid cloud-config: the agent actions join with the token, labels and taints; max pods and containerd fixes are there', () => {
    const text = renderCloudInit(h200);
    expect(text.startsWith('#cloud-config\n')).toBe(true);
    const doc = parse(text) as { write_files: Array<{ path: string; permissions: string; content: string }>; runcmd: string[][] };
    const file = (path: string) => doc.write_files.find((f) => f.path === path)!;
    const actions = JSON.parse(file('/etc/aks-flex-node/flex-config.json').content) as Array<{ metadata: { type: string }; spec: Record<string, unknown> }>;
    expect(file('/etc/aks-flex-node/flex-config.json').permissions).toBe('0600');
    expect(actions.map((a) => a.metadata.type)).toEqual([
      'aks.flex.components.linux.ConfigureBaseOS',
      'aks.flex.components.linux.DisableDocker',
      'aks.flex.components.cri.DownloadCRIBinaries',
      'aks.flex.components.kubebins.DownloadKubeBinaries',
      'aks.flex.components.cri.StartContainerdService',
      'aks.flex.components.linux.ConfigureIPTables',
      'aks.flex.components.kubeadm.KubeadmNodeJoin',
    ]);
    expect(actions[4]!.spec).toEqual({ gpuConfig: { nvidiaRuntime: {} } });
    expect(actions[6]!.spec).toEqual({
      controlPlane: { server: bootstrap.apiServerEndpoint, certificateAuthorityData: bootstrap.caCertData },
      kubelet: {
        bootstrapAuthInfo: { token: TOKEN },
        nodeLabels: {
          'flex.aks.azure.com/nodeclass': 'h200-eastus2',
          gpu: 'h200',
          'karpenter.sh/capacity-type': 'on-demand',
          'karpenter.sh/nodepool': 'h200',
          // AKS's role label, which only the kubelet writes (as the Azure provider's nodes do).
          'kubernetes.azure.com/role': 'agent',
          'node.kubernetes.io/exclude-from-external-load-balancers': 'true',
          'node.kubernetes.io/instance-type': 'Standard_ND96isr_H200_v5',
          'team.example.com/owner': 'voice',
          'topology.kubernetes.io/region': 'eastus2',
        },
        // The NodePool's taints, its startup taints, and Karpenter's registration taint.
        k8sRegisterTaints: ['nvidia.com/gpu=present:NoSchedule', 'node.cilium.io/agent-not-ready:NoExecute', 'karpenter.sh/unregistered:NoExecute'],
      },
    });
    expect(file('/etc/default/kubelet').content).toBe('KUBELET_EXTRA_ARGS="--max-pods=110"\n');
    const containerd = file('/etc/azflex/containerd-config.toml').content;
    expect(containerd).toMatch(/^version = 3$/m);
    expect(containerd).toContain('[plugins."io.containerd.cri.v1.runtime".cni]\n    bin_dir = "/opt/cni/bin"');
    expect(containerd).not.toContain('io.containerd.grpc.v1.cri');
    const script = file('/usr/local/sbin/azflex-bootstrap').content;
    expect(script).toContain(`releases/download/${AKS_FLEX_NODE_VERSION}/aks-flex-node-linux-amd64.tar.gz`);
    // Order matters (seed PR): the v3 config goes in after the agent, then the drop-in fix and the restart.
    const order = ['aks-flex-node apply -f', 'install -m 0644 /etc/azflex/containerd-config.toml /etc/containerd/config.toml', 'azflex-containerd-cni-fix --restart', 'enable --now azflex-containerd-cni-fix.path'];
    const at = order.map((s) => script.indexOf(s));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(file('/usr/local/sbin/azflex-containerd-cni-fix').content).toContain(`s#^([[:space:]]*bin_dir[[:space:]]*=[[:space:]]*)""#\\1"/opt/cni/bin"#`);
    expect(doc.runcmd).toEqual([['/usr/local/sbin/azflex-bootstrap']]);
  });

  it('verifies the pinned agent tarball with sha256sum -c before unpacking it, and a mirror replaces the URL', () => {
    const script = (input: UserDataInput) => (parse(renderCloudInit(input)) as { write_files: Array<{ path: string; content: string }> }).write_files.find((f) => f.path === '/usr/local/sbin/azflex-bootstrap')!.content;
    const text = script(h200);
    const check = `echo "${'a'.repeat(64)}  /opt/aks-flex-node/aks-flex-node.tar.gz" | sha256sum -c --strict -`;
    expect(text).toContain(check);
    // set -e makes a mismatch stop the bootstrap; the check comes before tar, install and apply.
    expect(text).toMatch(/^set -euo pipefail$/m);
    const at = ['curl ', check, 'tar -xzf', 'install -m 0755', 'aks-flex-node apply'].map((s) => text.indexOf(s));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    const arm = script({ ...h200, arch: 'arm64' });
    expect(arm).toContain(`echo "${'b'.repeat(64)}  /opt/aks-flex-node/aks-flex-node.tar.gz"`);
    expect(arm).toContain(`/${AKS_FLEX_NODE_VERSION}/aks-flex-node-linux-arm64.tar.gz`);
    const mirrored = script({ ...h200, agent: { ...AGENT, version: 'v0.0.19', baseUrl: 'https://mirror.example.com/aks-flex-node/' } });
    expect(mirrored).toContain('curl -fsSL --retry 10 --retry-delay 5 --retry-all-errors -o /opt/aks-flex-node/aks-flex-node.tar.gz https://mirror.example.com/aks-flex-node/v0.0.19/aks-flex-node-linux-amd64.tar.gz');
    expect(mirrored).not.toContain('github.com');
  });

  it('the rendered check passes the pinned tarball and stops the script on any other (run with bash and sha256sum)', async () => {
    const { execFileSync } = await import('node:child_process');
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(`${tmpdir()}/azflex-agent-`);
    const tarball = `${dir}/aks-flex-node.tar.gz`;
    writeFileSync(tarball, 'the release tarball');
    const digest = createHash('sha256').update('the release tarball').digest('hex');
    const checkLine = (pin: string) => {
      const text = (parse(renderCloudInit({ ...h200, agent: { ...AGENT, sha256: { amd64: pin } } })) as { write_files: Array<{ path: string; content: string }> }).write_files.find((f) => f.path === '/usr/local/sbin/azflex-bootstrap')!.content;
      return text.split('\n').find((l) => l.includes('sha256sum -c'))!.replace('/opt/aks-flex-node/aks-flex-node.tar.gz', tarball);
    };
    const run = (pin: string) => {
      try {
        execFileSync('bash', ['-c', `set -euo pipefail\n${checkLine(pin)}\necho unpacked`], { stdio: 'pipe' });
        return 'unpacked';
      } catch {
        return 'refused';
      }
    };
    expect(run(digest)).toBe('unpacked');
    expect(run('0'.repeat(64))).toBe('refused');
  });

  it('refuses to render for an architecture with no pinned sha256, or a mirror URL that is not plain https', () => {
    expect(() => renderCloudInit({ ...h200, agent: { version: AKS_FLEX_NODE_VERSION, sha256: { arm64: 'b'.repeat(64) } } })).toThrow(/no sha256 pinned for aks-flex-node v0\.0\.18 linux\/amd64 \(set the chart value nodeAgent\.sha256\.amd64\)/);
    expect(() => renderCloudInit({ ...h200, agent: { ...AGENT, sha256: { amd64: 'xyz' } } })).toThrow(UserDataError);
    expect(() => renderCloudInit({ ...h200, agent: { ...AGENT, baseUrl: 'http://mirror.example.com' } })).toThrow(/https/);
    expect(() => renderCloudInit({ ...h200, agent: { ...AGENT, baseUrl: 'https://m.example.com/$(reboot)' } })).toThrow(/shell/);
    expect(() => renderCloudInit({ ...h200, agent: { ...AGENT, version: 'latest' } })).toThrow(/release tag/);
    expect(parseAgentSha256(`amd64=${'A'.repeat(64)}, arm64=${'b'.repeat(64)}`)).toEqual({ amd64: 'a'.repeat(64), arm64: 'b'.repeat(64) });
    expect(() => parseAgentSha256('amd64=abc')).toThrow(/64 hex/);
    expect(() => parseAgentSha256(`riscv64=${'a'.repeat(64)}`)).toThrow(/amd64 or arm64/);
  });

  it('registers every node with karpenter.sh/unregistered:NoExecute, even without NodePool taints', () => {
    const doc = parse(renderCloudInit({ bootstrap, region: 'westeurope', instanceType: 'Standard_D8s_v5', nodePool: 'cpu', nodeClass: 'cpu-we', maxPods: 30, nvidiaRuntime: false, agent: AGENT })) as { write_files: Array<{ path: string; content: string }> };
    const actions = JSON.parse(doc.write_files.find((f) => f.path === '/etc/aks-flex-node/flex-config.json')!.content) as Array<{ spec: { kubelet?: { k8sRegisterTaints?: string[] } } }>;
    expect(actions.at(-1)!.spec.kubelet!.k8sRegisterTaints).toEqual(['karpenter.sh/unregistered:NoExecute']);
  });

  it('deletes the agent\'s and cloud-init\'s plain copies of the token after the join', () => {
    const doc = parse(renderCloudInit(h200)) as { write_files: Array<{ path: string; content: string }> };
    const script = doc.write_files.find((f) => f.path === '/usr/local/sbin/azflex-bootstrap')!.content;
    const join = script.indexOf('aks-flex-node apply -f');
    expect(script.indexOf('shred -u /etc/aks-flex-node/flex-config.json')).toBeGreaterThan(join);
    expect(script.indexOf('shred -u /var/lib/cloud/instance/user-data.txt /var/lib/cloud/instance/user-data.txt.i')).toBeGreaterThan(join);
    expect(script).not.toContain('do not leave it on disk');
  });

  it('drops template labels the NodeRestriction admission plugin would refuse, and lets ours win', () => {
    const { labels, dropped } = nodeLabels({ ...h200, labels: { ...h200.labels, 'topology.kubernetes.io/region': 'westeurope' } });
    expect(dropped).toEqual(['kubernetes.io/role']);
    expect(labels['topology.kubernetes.io/region']).toBe('eastus2');
    expect(isKubeletSettableLabel('node-role.kubernetes.io/gpu')).toBe(false);
    expect(isKubeletSettableLabel('kubelet.kubernetes.io/x')).toBe(true);
    expect(isKubeletSettableLabel('example.com/kubernetes.io')).toBe(true);
  });

  it('encodes as deterministic gzip+base64 that decodes back to the cloud-init', () => {
    const customData = renderCustomData(h200);
    expect(customData).toBe(renderCustomData(h200));
    expect(customData.startsWith('H4sI')).toBe(true);
    expect(decodeCustomData(customData)).toBe(renderCloudInit(h200));
    expect(customData.length).toBeLessThan(CUSTOM_DATA_MAX_BASE64_CHARS / 10);
  });

  it('fails clearly above the 87,380 base64 character limit', () => {
    // Incompressible but deterministic content: a chain of SHA-256 digests.
    const noise = Array.from({ length: 2_500 }, (_, i) => createHash('sha256').update(String(i)).digest('base64')).join('');
    expect(() => encodeCustomData(noise)).toThrow(CustomDataTooLargeError);
    expect(() => encodeCustomData(noise)).toThrow(/at most 87380/);
    expect(() => encodeCustomData('small')).not.toThrow();
  });

  it('rejects bad input with messages that never contain the token', () => {
    const cases: Array<[Partial<UserDataInput>, RegExp]> = [
      [{ bootstrap: { ...bootstrap, token: 'not-a-token-ABCDEF' } }, /bootstrap token/],
      [{ bootstrap: { ...bootstrap, apiServerEndpoint: 'http://insecure:6443' } }, /https/],
      [{ maxPods: 0 }, /maxPods/],
      [{ labels: { 'bad key!': 'x' } }, /label key/],
      [{ taints: [{ key: 'a', value: 'b c', effect: 'NoSchedule' }] }, /taint/],
    ];
    for (const [patch, message] of cases) {
      const err = (() => {
        try {
          renderCloudInit({ ...h200, ...patch });
          return undefined;
        } catch (e) {
          return e as Error;
        }
      })();
      expect(err).toBeInstanceOf(UserDataError);
      expect(err!.message).toMatch(message);
      expect(err!.message).not.toContain(TOKEN);
      expect(err!.message).not.toContain('not-a-token-ABCDEF');
    }
  });
});

describe('bootstrap source', () => {
  it('reads the cluster once per process, shares concurrent reads, retries after a failure', async () => {
    let reads = 0;
    let failNext = true;
    const inner: BootstrapSource = {
      async get() {
        reads++;
        if (failNext) {
          failNext = false;
          throw new Error('apiserver unavailable');
        }
        return bootstrap;
      },
    };
    const registry = new SecretRegistry();
    const cached = new CachedBootstrapSource(inner, registry);
    await expect(cached.get()).rejects.toThrow('apiserver unavailable');
    const [a, b, c] = await Promise.all([cached.get(), cached.get(), cached.get()]);
    expect(reads).toBe(2);
    expect(a).toBe(b);
    expect(b).toBe(c);
    expect(a.token).toBe(TOKEN);
    await cached.get();
    expect(reads).toBe(2);
    cached.invalidate();
    await cached.get();
    expect(reads).toBe(3);
    // The token is now scrubbed wherever it shows up, whatever the shape around it.
    expect(registry.scrub(`x${TOKEN}y`)).toBe('x[REDACTED]y');
  });

  it('re-reads on a bounded cadence of the injected clock, so a rotated token reaches the next render', async () => {
    const { VirtualClock } = await import('../../../src/sim/virtual-clock.js');
    const { createUserDataRenderer } = await import('../../../src/lifecycle/nodeclaim/userdata.js');
    const clock = new VirtualClock(1_000_000);
    let token = TOKEN;
    let reads = 0;
    const registry = new SecretRegistry();
    const cached = new CachedBootstrapSource({ get: async () => (reads++, { ...bootstrap, token }) }, registry, { clock, maxAgeMs: 60_000 });
    expect((await cached.get()).token).toBe(TOKEN);
    token = 'zyxwvu.fedcba9876543210';
    await clock.runUntil(1_000_000 + 59_999);
    expect((await cached.get()).token).toBe(TOKEN);
    expect(reads).toBe(1);
    await clock.runUntil(1_000_000 + 60_000);
    expect((await cached.get()).token).toBe('zyxwvu.fedcba9876543210');
    expect(reads).toBe(2);
    // Both tokens stay scrubbed from logs.
    expect(registry.scrub(`${TOKEN} zyxwvu.fedcba9876543210`)).toBe('[REDACTED] [REDACTED]');
    // The renderer's memo is keyed by the token too: the same NodeClaim renders the new one.
    let served = TOKEN;
    const source = new CachedBootstrapSource({ get: async () => ({ ...bootstrap, token: served }) }, registry, { clock, maxAgeMs: 60_000 });
    const render = createUserDataRenderer(source, AGENT);
    const req = await nodeClaimRequest();
    expect(decodeCustomData(await render(req))).toContain(TOKEN);
    served = 'zyxwvu.fedcba9876543210';
    await clock.runUntil(clock.now() + 60_000);
    const text = decodeCustomData(await render(req));
    expect(text).toContain('zyxwvu.fedcba9876543210');
    expect(text).not.toContain(TOKEN);
  });

  it('reads again when the token expires, and refuses an expired token instead of rendering a node that cannot join', async () => {
    const { VirtualClock } = await import('../../../src/sim/virtual-clock.js');
    const clock = new VirtualClock(0);
    let config: BootstrapConfig = { ...bootstrap, expiresAt: 10_000 };
    let reads = 0;
    const cached = new CachedBootstrapSource({ get: async () => (reads++, config) }, new SecretRegistry(), { clock, maxAgeMs: 300_000 });
    expect((await cached.get()).expiresAt).toBe(10_000);
    await clock.runUntil(10_000);
    // Expired: read once at once; the same expired token is refused, and not re-read on every call.
    await expect(cached.get()).rejects.toThrow(BootstrapTokenExpiredError);
    await expect(cached.get()).rejects.toThrow(/expired at 1970-01-01T00:00:10\.000Z/);
    expect(reads).toBe(2);
    // Rotated: picked up at the next refresh, without invalidate() from outside.
    config = { ...bootstrap, token: 'zyxwvu.fedcba9876543210', expiresAt: 1_000_000 };
    await clock.runUntil(10_000 + 300_000);
    expect((await cached.get()).token).toBe('zyxwvu.fedcba9876543210');
    expect(reads).toBe(3);
  });

  it('seals the token: JSON, util.inspect and spreads of the config do not show it', async () => {
    const { inspect } = await import('node:util');
    const config = await new StaticBootstrapSource(bootstrap).get();
    expect(config.token).toBe(TOKEN);
    expect(JSON.stringify(config)).not.toContain(TOKEN);
    expect(inspect(config)).not.toContain(TOKEN);
    expect(JSON.stringify({ ...config })).not.toContain(TOKEN);
    expect(renderCloudInit({ ...h200, bootstrap: config })).toContain(TOKEN);
  });
});

async function nodeClaimRequest() {
  const { STATIC_INSTANCE_TYPES } = await import('../../../src/catalog/skus.js');
  const meta = (name: string, labels: Record<string, string> = {}) => ({ name, uid: `uid-${name}`, labels, annotations: {}, finalizers: [], creationTimestamp: '2026-01-01T00:00:00Z' });
  return {
    nodeClaim: {
      metadata: meta('cpu-x7k2p', { 'karpenter.sh/nodepool': 'cpu' }),
      spec: { nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'cpu' }, requirements: [], resources: { requests: {} }, taints: [], startupTaints: [] },
      status: { conditions: [] },
    },
    nodeClass: {
      metadata: meta('cpu'),
      spec: { subscriptionID: 'sub', location: 'eastus2', resourceGroup: 'rg', subnetID: '/subnets/x', securityType: 'Standard' as const, osDiskSizeGB: 128, sshPublicKeys: [], allocateNodePublicIP: false, maxPodsPerNode: 30, tags: {} },
      status: { conditions: [] },
    },
    instanceType: STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_D8s_v5')!,
  };
}

describe('userdata from Karpenter objects', () => {
  it('maps NodeClaim + NodeClass + instance type, reading the bootstrap config once per process', async () => {
    const { userDataInputFor } = await import('../../../src/azure/userdata/index.js');
    const { createUserDataRenderer } = await import('../../../src/lifecycle/nodeclaim/userdata.js');
    const { STATIC_INSTANCE_TYPES } = await import('../../../src/catalog/skus.js');
    const meta = (name: string, labels: Record<string, string> = {}) => ({
      name, uid: `uid-${name}`, labels, annotations: {}, finalizers: [], creationTimestamp: '2026-01-01T00:00:00Z',
    });
    const nodeClaim = {
      metadata: meta('h200-x7k2p', { 'karpenter.sh/nodepool': 'h200', gpu: 'h200', 'node.kubernetes.io/instance-type': 'Standard_ND96isr_H200_v5' }),
      spec: {
        nodeClassRef: { group: 'flex.aks.azure.com', kind: 'AzureFlexNodeClass', name: 'h200-eastus2' },
        requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'In' as const, values: ['eastus2-2'] }, { key: 'karpenter.azure.com/sku-family', operator: 'In' as const, values: ['N', 'D'] }],
        resources: { requests: {} },
        taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' as const }],
        startupTaints: [{ key: 'example.com/warming', value: 'true', effect: 'NoSchedule' as const }],
      },
      status: { conditions: [] },
    };
    const nodeClass = {
      metadata: meta('h200-eastus2'),
      spec: {
        subscriptionID: 'sub', location: 'eastus2', resourceGroup: 'rg', subnetID: '/subnets/x', securityType: 'Standard' as const,
        osDiskSizeGB: 256, sshPublicKeys: [], allocateNodePublicIP: false, maxPodsPerNode: 64, tags: {},
      },
      status: { conditions: [] },
    };
    const instanceType = STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_ND96isr_H200_v5')!;
    const input = userDataInputFor({ nodeClaim, nodeClass, instanceType }, bootstrap, AGENT);
    expect(input).toMatchObject({ region: 'eastus2', nodePool: 'h200', nodeClass: 'h200-eastus2', maxPods: 64, nvidiaRuntime: true, instanceType: 'Standard_ND96isr_H200_v5' });
    // A single-valued In requirement is a node label; a multi-valued one is not.
    expect(input.labels).toMatchObject({ gpu: 'h200', 'topology.kubernetes.io/zone': 'eastus2-2' });
    expect(input.labels).not.toHaveProperty('karpenter.azure.com/sku-family');
    // The Grace GPU size: arm64, and the NVIDIA runtime.
    const gb200 = STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_ND128isr_NDR_GB200_v6')!;
    expect(userDataInputFor({ nodeClaim, nodeClass, instanceType: gb200 }, bootstrap, AGENT)).toMatchObject({ arch: 'arm64', nvidiaRuntime: true, instanceType: gb200.name });
    // An AMD Instinct size gets no NVIDIA runtime.
    expect(userDataInputFor({ nodeClaim, nodeClass, instanceType: { ...instanceType, name: 'Standard_ND96isr_MI300X_v5', gpuModel: 'MI300X' } }, bootstrap, AGENT).nvidiaRuntime).toBe(false);
    let reads = 0;
    const source = new CachedBootstrapSource({ get: async () => (reads++, bootstrap) }, new SecretRegistry());
    const render = createUserDataRenderer(source, AGENT);
    const [a, b] = await Promise.all([render({ nodeClaim, nodeClass, instanceType }), render({ nodeClaim, nodeClass, instanceType })]);
    expect(a).toBe(b);
    expect(reads).toBe(1);
    const text = decodeCustomData(a);
    expect(text).toContain('"example.com/warming=true:NoSchedule"');
    expect(text).toContain('--max-pods=64');
  });
});
