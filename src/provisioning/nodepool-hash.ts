/**
 * NodePool template hash for drift (karpenter.sh/nodepool-hash on each NodeClaim).
 *
 * Like Karpenter v1 it covers what a node is built from but not requirements (checked
 * against the NodeClaim's labels separately, so widening a requirement does not replace
 * every node) nor expireAfter/terminationGracePeriod (they apply to existing claims as-is).
 */
import { createHash } from 'node:crypto';
import type { NodePool } from '../ports/cluster.js';

/** Bump when the hashed fields change so old claims are re-stamped instead of drifted. */
export const NODEPOOL_HASH_VERSION = 'v1';

/** JSON with object keys sorted, so equal templates hash equally whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * NodePools are replaced, never mutated, on every write, and a status write keeps the spec:
 * the hash is a function of the template object, so the provisioner's status write on every
 * pass does not make the next pass hash it again.
 */
type NodePoolTemplate = NodePool['spec']['template'];
const templateHashes = new WeakMap<NodePoolTemplate, string>();

export function nodePoolTemplateHash(nodePool: NodePool): string {
  const template = nodePool.spec.template;
  let hash = templateHashes.get(template);
  if (hash === undefined) templateHashes.set(template, (hash = computeTemplateHash(template)));
  return hash;
}

function computeTemplateHash(template: NodePoolTemplate): string {
  const hashed = {
    labels: template.metadata.labels,
    annotations: template.metadata.annotations,
    nodeClassRef: template.spec.nodeClassRef,
    taints: template.spec.taints,
    startupTaints: template.spec.startupTaints,
  };
  return createHash('sha256').update(canonicalJson(hashed)).digest('hex').slice(0, 16);
}
