import { gunzipSync, gzipSync } from 'node:zlib';
import { stringify } from 'yaml';
import type { Taint } from '../../ports/cluster.js';
import type { CapacityType } from '../../catalog/offerings.js';
import type { BootstrapConfig } from './bootstrap.js';
import {
  CNI_FIX_PATH_UNIT,
  CNI_FIX_SCRIPT_PATH,
  CNI_FIX_SERVICE_UNIT,
  CONTAINERD_CONFIG_PATH,
  DEFAULT_SANDBOX_IMAGE,
  renderCniFixScript,
  renderContainerdConfig,
} from './containerd.js';
import { AKS_LABEL_ROLE, AKS_ROLE_AGENT, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_NODECLASS, LABEL_NODEPOOL, LABEL_REGION, UNREGISTERED_TAINT_KEY } from '../../apis/well-known.js';
import { agentDownloadUrl, agentSha256, nodeAgentProblem, type NodeAgentPin } from './node-agent.js';

/**
 * Cloud-init for an azflex node: install the AKS flex node agent, let it join the cluster
 * with kubeadm (bootstrap token), then repair containerd's config as the seed PR learned
 * the hard way (see containerd.ts). Rendering is deterministic: the same input gives the
 * same bytes, so golden tests pin it and drift hashes stay stable.
 */

/** What aks-flex-node v0.0.18 installs next to itself (upstream flex.go). */
export const CONTAINERD_VERSION = '2.0.4';
export const RUNC_VERSION = '1.2.5';

/** Azure's custom data limit: 64 KiB of binary, i.e. 87,380 characters of base64. */
export const CUSTOM_DATA_MAX_BASE64_CHARS = 87_380;

export const FLEX_CONFIG_PATH = '/etc/aks-flex-node/flex-config.json';
export const BOOTSTRAP_SCRIPT_PATH = '/usr/local/sbin/azflex-bootstrap';
const STAGED_CONTAINERD_CONFIG = '/etc/azflex/containerd-config.toml';

export interface UserDataInput {
  bootstrap: BootstrapConfig;
  /** The VM's region (not the control plane's): that is the whole point of flex nodes. */
  region: string;
  /** VM size as ARM and Karpenter requirements spell it, e.g. Standard_ND96isr_H200_v5. */
  instanceType: string;
  nodePool: string;
  nodeClass: string;
  capacityType?: CapacityType;
  /** NodePool template labels; ours win on conflict. */
  labels?: Record<string, string>;
  taints?: Taint[];
  /** Karpenter startup taints: registered with the node, removed by whoever owns them. */
  startupTaints?: Taint[];
  maxPods: number;
  /** Configure the NVIDIA container runtime (GPU SKUs). */
  nvidiaRuntime: boolean;
  arch?: 'amd64' | 'arm64';
  sandboxImage?: string;
  /** Which aks-flex-node to run and the sha256 it must have: the node refuses any other. */
  agent: NodeAgentPin;
}

export class UserDataError extends Error {
  override readonly name = 'UserDataError';
}

export class CustomDataTooLargeError extends UserDataError {
  constructor(readonly base64Chars: number) {
    super(`customData is ${base64Chars} base64 characters; Azure accepts at most ${CUSTOM_DATA_MAX_BASE64_CHARS}`);
  }
}

/** Cloud-config text (the secret token is inside: never log it; see src/log/redact.ts). */
export function renderCloudInit(input: UserDataInput): string {
  validate(input);
  const { labels } = nodeLabels(input);
  const taints = registerTaints(input).map(formatTaint);
  const arch = input.arch ?? 'amd64';
  const cloudConfig = {
    package_update: true,
    packages: ['curl', 'ca-certificates'],
    write_files: [
      // 0600: the upstream wrote this to /tmp world-readable, with the bootstrap token in it.
      { path: FLEX_CONFIG_PATH, owner: 'root:root', permissions: '0600', content: flexActions(input, labels, taints) },
      // kubeadm's kubelet drop-in sources this; labels and taints go through kubeadm instead,
      // because a --node-labels here would replace the ones kubeadm passes.
      { path: '/etc/default/kubelet', owner: 'root:root', permissions: '0644', content: `KUBELET_EXTRA_ARGS="--max-pods=${input.maxPods}"\n` },
      {
        path: STAGED_CONTAINERD_CONFIG,
        owner: 'root:root',
        permissions: '0644',
        content: renderContainerdConfig({ sandboxImage: input.sandboxImage ?? DEFAULT_SANDBOX_IMAGE }),
      },
      { path: CNI_FIX_SCRIPT_PATH, owner: 'root:root', permissions: '0755', content: renderCniFixScript() },
      { path: '/etc/systemd/system/azflex-containerd-cni-fix.path', owner: 'root:root', permissions: '0644', content: CNI_FIX_PATH_UNIT },
      { path: '/etc/systemd/system/azflex-containerd-cni-fix.service', owner: 'root:root', permissions: '0644', content: CNI_FIX_SERVICE_UNIT },
      { path: BOOTSTRAP_SCRIPT_PATH, owner: 'root:root', permissions: '0700', content: bootstrapScript(input.agent, arch) },
    ],
    runcmd: [[BOOTSTRAP_SCRIPT_PATH]],
  };
  return `#cloud-config\n${stringify(cloudConfig, { lineWidth: 0 })}`;
}

/** gzip + base64, checked against Azure's limit. */
export function encodeCustomData(cloudInit: string): string {
  // level and header are fixed, so the same text always encodes to the same string.
  const encoded = gzipSync(Buffer.from(cloudInit, 'utf8'), { level: 9 }).toString('base64');
  if (encoded.length > CUSTOM_DATA_MAX_BASE64_CHARS) throw new CustomDataTooLargeError(encoded.length);
  return encoded;
}

export function decodeCustomData(customData: string): string {
  return gunzipSync(Buffer.from(customData, 'base64')).toString('utf8');
}

/** The VmSpec.customData for a node. */
export function renderCustomData(input: UserDataInput): string {
  return encodeCustomData(renderCloudInit(input));
}

// --- labels and taints ----------------------------------------------------------------------

/**
 * The NodeRestriction admission plugin refuses a node that registers labels under
 * kubernetes.io / k8s.io other than these; such template labels are dropped here (the
 * NodeClaim → Node sync applies them) rather than making the node fail to register.
 */
const KUBELET_ALLOWED_KUBERNETES_LABELS: ReadonlySet<string> = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
]);

export function isKubeletSettableLabel(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return true;
  const prefix = key.slice(0, slash);
  const restricted = /(^|\.)kubernetes\.io$/.test(prefix) || /(^|\.)k8s\.io$/.test(prefix);
  if (!restricted) return true;
  return (
    KUBELET_ALLOWED_KUBERNETES_LABELS.has(key) ||
    /(^|\.)kubelet\.kubernetes\.io$/.test(prefix) ||
    /(^|\.)node\.kubernetes\.io$/.test(prefix)
  );
}

export function nodeLabels(input: UserDataInput): { labels: Record<string, string>; dropped: string[] } {
  const ours: Record<string, string> = {
    // AKS writes it on every node of its own; the Azure provider has the kubelet write it too.
    [AKS_LABEL_ROLE]: AKS_ROLE_AGENT,
    [LABEL_REGION]: input.region.toLowerCase(),
    [LABEL_INSTANCE_TYPE]: input.instanceType,
    [LABEL_NODEPOOL]: input.nodePool,
    [LABEL_NODECLASS]: input.nodeClass,
    ...(input.capacityType ? { [LABEL_CAPACITY_TYPE]: input.capacityType } : {}),
  };
  const dropped: string[] = [];
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.labels ?? {})) {
    if (isKubeletSettableLabel(k)) merged[k] = v;
    else dropped.push(k);
  }
  Object.assign(merged, ours);
  const labels: Record<string, string> = {};
  for (const k of Object.keys(merged).sort()) labels[k] = merged[k]!;
  return { labels, dropped: dropped.sort() };
}

/**
 * What the kubelet registers with (kubeadm's nodeRegistration.taints, i.e. --register-with-taints):
 * the NodePool's taints, its startup taints, and karpenter.sh/unregistered, which keeps every pod
 * off the node until registration has synced the NodeClaim's labels and taints and removed it
 * (upstream Karpenter's registration contract).
 */
export function registerTaints(input: Pick<UserDataInput, 'taints' | 'startupTaints'>): Taint[] {
  return [...(input.taints ?? []), ...(input.startupTaints ?? []), { key: UNREGISTERED_TAINT_KEY, effect: 'NoExecute' }];
}

export function formatTaint(taint: Taint): string {
  return taint.value !== undefined && taint.value !== '' ? `${taint.key}=${taint.value}:${taint.effect}` : `${taint.key}:${taint.effect}`;
}

// --- agent actions and scripts ----------------------------------------------------------------

/** The agent's `apply -f` action list (protojson), as the upstream flex userdata builds it. */
function flexActions(input: UserDataInput, labels: Record<string, string>, taints: string[]): string {
  const meta = (type: string, name: string): { type: string; name: string } => ({ type: `aks.flex.components.${type}`, name });
  const steps = [
    { metadata: meta('linux.ConfigureBaseOS', 'configure-base-os'), spec: {} },
    { metadata: meta('linux.DisableDocker', 'disable-docker'), spec: {} },
    {
      metadata: meta('cri.DownloadCRIBinaries', 'download-cri-binaries'),
      spec: { containerdVersion: CONTAINERD_VERSION, runcVersion: RUNC_VERSION },
    },
    {
      metadata: meta('kubebins.DownloadKubeBinaries', 'download-kube-binaries'),
      spec: { kubernetesVersion: input.bootstrap.kubernetesVersion.replace(/^v/, '') },
    },
    {
      metadata: meta('cri.StartContainerdService', 'start-cri'),
      spec: input.nvidiaRuntime ? { gpuConfig: { nvidiaRuntime: {} } } : {},
    },
    { metadata: meta('linux.ConfigureIPTables', 'configure-iptables'), spec: {} },
    {
      metadata: meta('kubeadm.KubeadmNodeJoin', 'kubeadm-node-join'),
      spec: {
        controlPlane: { server: input.bootstrap.apiServerEndpoint, certificateAuthorityData: input.bootstrap.caCertData },
        kubelet: {
          bootstrapAuthInfo: { token: input.bootstrap.token },
          nodeLabels: labels,
          k8sRegisterTaints: taints,
        },
      },
    },
  ];
  return `${JSON.stringify(steps, null, 2)}\n`;
}

/**
 * Cloud-init keeps its own copies of the user data (and so of the token) under /var/lib/cloud:
 * the raw text and its processed form are deleted after the join; what cannot be deleted without
 * breaking a reboot (its cached datasource, obj.pkl, and the Azure agent's ovf-env.xml, both
 * root-only) is listed in docs/security.md, with why the token's expiry is what protects it.
 */
const CLOUD_INIT_USER_DATA_COPIES = '/var/lib/cloud/instance/user-data.txt /var/lib/cloud/instance/user-data.txt.i';

function bootstrapScript(agent: NodeAgentPin, arch: 'amd64' | 'arm64'): string {
  const tarball = '/opt/aks-flex-node/aks-flex-node.tar.gz';
  return `#!/bin/bash
# azflex node bootstrap: install aks-flex-node ${agent.version}, join, repair containerd.
set -euo pipefail
exec >>/var/log/azflex-bootstrap.log 2>&1

mkdir -p /opt/aks-flex-node
curl -fsSL --retry 10 --retry-delay 5 --retry-all-errors -o ${tarball} ${agentDownloadUrl(agent, arch)}
# Runs as root: refuse any tarball but the pinned one (set -e stops the bootstrap here).
echo "${agentSha256(agent, arch)}  ${tarball}" | sha256sum -c --strict -
tar -xzf ${tarball} -C /opt/aks-flex-node
install -m 0755 /opt/aks-flex-node/aks-flex-node /usr/local/bin/aks-flex-node

# Installs containerd/runc/kube binaries and runs kubeadm join with the bootstrap token.
/usr/local/bin/aks-flex-node apply -f ${FLEX_CONFIG_PATH}
# The join is done: delete the agent's copy of the token and cloud-init's plain copies of the
# user data (the copies that remain are in docs/security.md).
shred -u ${FLEX_CONFIG_PATH} || rm -f ${FLEX_CONFIG_PATH}
shred -u ${CLOUD_INIT_USER_DATA_COPIES} 2>/dev/null || rm -f ${CLOUD_INIT_USER_DATA_COPIES}

# The agent writes a v1-schema containerd config that containerd 2.x half-ignores (empty CNI
# bin_dir): replace it after the agent, not before (the agent would clobber it).
install -m 0644 ${STAGED_CONTAINERD_CONFIG} ${CONTAINERD_CONFIG_PATH}
# Repair any drop-in with an empty bin_dir now, and again whenever gpu-operator writes one.
${CNI_FIX_SCRIPT_PATH} --restart
systemctl daemon-reload
systemctl enable --now azflex-containerd-cni-fix.path
`;
}

// --- validation (messages never include the token) ----------------------------------------------

const BOOTSTRAP_TOKEN = /^[a-z0-9]{6}\.[a-z0-9]{16}$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

function validLabelKey(key: string): boolean {
  const slash = key.lastIndexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  return LABEL_NAME.test(name) && (prefix === undefined || (prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix)));
}

function validate(input: UserDataInput): void {
  const b = input.bootstrap;
  let url: URL;
  try {
    url = new URL(b.apiServerEndpoint);
  } catch {
    throw new UserDataError('bootstrap.apiServerEndpoint is not a URL');
  }
  if (url.protocol !== 'https:') throw new UserDataError('bootstrap.apiServerEndpoint must be https');
  if (!BOOTSTRAP_TOKEN.test(b.token)) throw new UserDataError('bootstrap.token is not a kubeadm bootstrap token ([a-z0-9]{6}.[a-z0-9]{16})');
  if (!/^[A-Za-z0-9+/]+=*$/.test(b.caCertData)) throw new UserDataError('bootstrap.caCertData must be base64 (certificate-authority-data)');
  if (!/^v?\d+\.\d+\.\d+$/.test(b.kubernetesVersion)) throw new UserDataError('bootstrap.kubernetesVersion must look like 1.34.2');
  if (!Number.isInteger(input.maxPods) || input.maxPods < 1 || input.maxPods > 250) throw new UserDataError('maxPods must be an integer in 1..250');
  const labels = { ...(input.labels ?? {}), [LABEL_NODEPOOL]: input.nodePool, [LABEL_NODECLASS]: input.nodeClass, [LABEL_INSTANCE_TYPE]: input.instanceType };
  for (const [k, v] of Object.entries(labels)) {
    if (!validLabelKey(k)) throw new UserDataError(`invalid node label key ${JSON.stringify(k)}`);
    if (!LABEL_VALUE.test(v)) throw new UserDataError(`invalid value for node label ${JSON.stringify(k)}`);
  }
  if (!/^[a-z0-9]+$/.test(input.region.toLowerCase())) throw new UserDataError('region must be an Azure region name like eastus2');
  const agentProblem = nodeAgentProblem(input.agent, input.arch ?? 'amd64');
  if (agentProblem) throw new UserDataError(agentProblem);
  for (const t of [...(input.taints ?? []), ...(input.startupTaints ?? [])]) {
    if (!validLabelKey(t.key)) throw new UserDataError(`invalid taint key ${JSON.stringify(t.key)}`);
    if (t.value !== undefined && !LABEL_VALUE.test(t.value)) throw new UserDataError(`invalid value for taint ${JSON.stringify(t.key)}`);
  }
}
