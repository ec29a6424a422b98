import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  AKS_FLEX_NODE_VERSION,
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
} from '../../src/azure/userdata/index.js';
import { SecretRegistry } from '../../src/log/redact.js';

const TOKEN = 'abcdef.0123456789abcdef';
const bootstrap: BootstrapConfig = {
  apiServerEndpoint: 'https://voice-agent-flex-dns-12345678.hcp.westeurope.azmk8s.io:443',
  caCertData: Buffer.from('-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n').toString('base64'),
  token: TOKEN,
  kubernetesVersion: '1.34.2',
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
      renderCloudInit({ bootstrap, region: 'westeurope', instanceType: 'Standard_D8s_v5', nodePool: 'cpu', nodeClass: 'cpu-we', maxPods: 30, nvidiaRuntime: false }),
    );
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
        k8sRegisterTaints: ['nvidia.com/gpu=present:NoSchedule', 'node.cilium.io/agent-not-ready:NoExecute'],
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

describe('userdata from Karpenter objects', () => {
  it('maps NodeClaim + NodeClass + instance type, reading the bootstrap config once per process', async () => {
    const { userDataInputFor } = await import('../../src/azure/userdata/index.js');
    const { createUserDataRenderer } = await import('../../src/lifecycle/nodeclaim/userdata.js');
    const { STATIC_INSTANCE_TYPES } = await import('../../src/catalog/skus.js');
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
    const input = userDataInputFor({ nodeClaim, nodeClass, instanceType }, bootstrap);
    expect(input).toMatchObject({ region: 'eastus2', nodePool: 'h200', nodeClass: 'h200-eastus2', maxPods: 64, nvidiaRuntime: true, instanceType: 'Standard_ND96isr_H200_v5' });
    // A single-valued In requirement is a node label; a multi-valued one is not.
    expect(input.labels).toMatchObject({ gpu: 'h200', 'topology.kubernetes.io/zone': 'eastus2-2' });
    expect(input.labels).not.toHaveProperty('karpenter.azure.com/sku-family');
    // An AMD Instinct size gets no NVIDIA runtime.
    expect(userDataInputFor({ nodeClaim, nodeClass, instanceType: { ...instanceType, name: 'Standard_ND96isr_MI300X_v5', gpuModel: 'MI300X' } }, bootstrap).nvidiaRuntime).toBe(false);
    let reads = 0;
    const source = new CachedBootstrapSource({ get: async () => (reads++, bootstrap) }, new SecretRegistry());
    const render = createUserDataRenderer(source);
    const [a, b] = await Promise.all([render({ nodeClaim, nodeClass, instanceType }), render({ nodeClaim, nodeClass, instanceType })]);
    expect(a).toBe(b);
    expect(reads).toBe(1);
    const text = decodeCustomData(a);
    expect(text).toContain('"example.com/warming=true:NoSchedule"');
    expect(text).toContain('--max-pods=64');
  });
});
