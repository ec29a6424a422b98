/**
 * Which aks-flex-node a node downloads and runs as root, pinned by version and by the sha256 of
 * each architecture's release tarball: the node checks the digest before it unpacks anything,
 * so a swapped release, a compromised mirror or a man in the middle stops the bootstrap instead
 * of owning the node. There is deliberately no built-in digest: the operator pins the tarball
 * they verified (chart values nodeAgent.*), and a mirror for air-gapped clusters is a URL base.
 */
export interface NodeAgentPin {
  /** Release tag, e.g. v0.0.18 (the version proven on the H200 nodes). */
  version: string;
  /** Hex sha256 of aks-flex-node-linux-<arch>.tar.gz of that release, per architecture. */
  sha256: Partial<Record<NodeArch, string>>;
  /** Where releases live: `<baseUrl>/<version>/aks-flex-node-linux-<arch>.tar.gz`. Default: the GitHub releases. */
  baseUrl?: string;
}

export type NodeArch = 'amd64' | 'arm64';

/** The agent version proven on the H200 nodes (seed PR: bumped from v0.0.17). */
export const AKS_FLEX_NODE_VERSION = 'v0.0.18';
export const AKS_FLEX_NODE_RELEASES = 'https://github.com/Azure/AKSFlexNode/releases/download';

const SHA256_HEX = /^[0-9a-f]{64}$/;

export function agentDownloadUrl(agent: NodeAgentPin, arch: NodeArch): string {
  const base = (agent.baseUrl ?? AKS_FLEX_NODE_RELEASES).replace(/\/+$/, '');
  return `${base}/${agent.version}/aks-flex-node-linux-${arch}.tar.gz`;
}

export function agentSha256(agent: NodeAgentPin, arch: NodeArch): string {
  return (agent.sha256[arch] ?? '').toLowerCase();
}

/** Why this pin cannot bootstrap a node of `arch` (undefined: it can). */
export function nodeAgentProblem(agent: NodeAgentPin, arch: NodeArch): string | undefined {
  if (!/^v?\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$/.test(agent.version)) return `node agent version ${JSON.stringify(agent.version)} is not a release tag like v0.0.18`;
  if (!SHA256_HEX.test(agentSha256(agent, arch))) {
    return `no sha256 pinned for aks-flex-node ${agent.version} linux/${arch} (set the chart value nodeAgent.sha256.${arch})`;
  }
  if (agent.baseUrl !== undefined && !/^https:\/\/[^\s'"`$\\]+$/.test(agent.baseUrl)) return 'node agent baseUrl must be an https URL without quotes, spaces or shell characters';
  return undefined;
}

/**
 * Parses `amd64=<hex>,arm64=<hex>` (the controller's --node-agent-sha256 flag) into a pin's
 * sha256 map.
 */
export function parseAgentSha256(text: string): Partial<Record<NodeArch, string>> {
  const out: Partial<Record<NodeArch, string>> = {};
  for (const part of text.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const [arch, hex] = part.split('=', 2).map((s) => s.trim());
    if ((arch !== 'amd64' && arch !== 'arm64') || !hex || !SHA256_HEX.test(hex.toLowerCase())) {
      throw new Error(`--node-agent-sha256: expected arch=<64 hex digits> (arch amd64 or arm64), got ${JSON.stringify(part)}`);
    }
    out[arch] = hex.toLowerCase();
  }
  return out;
}
