/**
 * What a disruption pass asks about every NodeClaim, worked out once per change instead of on
 * every pass: a 1,000-node fleet re-derived its pod sets, do-not-disrupt pods, expiry and drift
 * 120 times an hour while almost nothing changed. An object's facts are keyed by its
 * resourceVersion, which the API server bumps on every write (the informer port hands out
 * copies, so object identity would not do); a node's pod facts by its PodIndex version. An
 * object without a resourceVersion is never cached.
 */
import type { AzureFlexNodeClass, Node, NodeClaim, NodePool, Pod } from '../ports/cluster.js';
import { nodeClaimDoNotDisruptReason, nodeDoNotDisruptReason, podDoNotDisruptReason } from './do-not-disrupt.js';
import { driftReason, type DriftReason } from './drift.js';
import { isReschedulable, reschedulableSignature } from './emptiness.js';
import { expiresAt } from './expiration.js';
import type { PodsOnNode } from './pod-index.js';
import { nodeClassHash } from '../controllers/nodeclass/hash.js';
import { nodePoolTemplateHash } from '../provisioning/nodepool-hash.js';

export interface NodeClaimFacts {
  initialized: boolean;
  /** ms since epoch; undefined: never. */
  expiresAt: number | undefined;
  /** The NodeClaim's own karpenter.sh/do-not-disrupt. */
  doNotDisrupt: string | undefined;
}

export interface NodeFacts {
  ready: boolean;
  /** spec.providerID lowercased (ARM ids compare case-insensitively). */
  providerId: string | undefined;
  /** The Node's own karpenter.sh/do-not-disrupt. */
  doNotDisrupt: string | undefined;
}

/** The pods bound to one node, as disruption sees them. */
export interface PodSetFacts {
  /** Pods that would need a new home if the node went away. */
  reschedulable: number;
  /** Their identity, for consolidateAfter's "unchanged since" (see PodChurnTracker). */
  signature: string;
  /** A pod's karpenter.sh/do-not-disrupt, if one blocks voluntary disruption. */
  doNotDisrupt: string | undefined;
}

const NO_PODS: PodSetFacts = { reschedulable: 0, signature: '', doNotDisrupt: undefined };

/** A value per key, kept while the version it was computed for is current. */
class VersionMemo<V> {
  private readonly entries = new Map<string, { version: string | number; value: V; pass: number }>();
  private pass = 0;
  private touched = 0;

  get(key: string, version: string | number | undefined, compute: () => V): V {
    if (version === undefined) return compute();
    let entry = this.entries.get(key);
    if (entry?.version !== version) this.entries.set(key, (entry = { version, value: compute(), pass: -1 }));
    if (entry.pass !== this.pass) {
      entry.pass = this.pass;
      this.touched++;
    }
    return entry.value;
  }

  /** Ends a pass: entries not asked for in it belong to objects that are gone. */
  endPass(): void {
    if (this.entries.size > this.touched) for (const [key, entry] of this.entries) if (entry.pass !== this.pass) this.entries.delete(key);
    this.pass++;
    this.touched = 0;
  }
}

export class DisruptionFacts {
  private readonly claims = new VersionMemo<NodeClaimFacts>();
  private readonly nodes = new VersionMemo<NodeFacts>();
  private readonly pools = new VersionMemo<string>();
  private readonly drift = new VersionMemo<DriftReason | undefined>();
  private readonly podSets = new VersionMemo<PodSetFacts>();

  nodeClaim(claim: NodeClaim): NodeClaimFacts {
    return this.claims.get(claim.metadata.name, claim.metadata.resourceVersion, () => ({
      initialized: claim.status.conditions.some((c) => c.type === 'Initialized' && c.status === 'True'),
      expiresAt: expiresAt(claim),
      doNotDisrupt: nodeClaimDoNotDisruptReason(claim),
    }));
  }

  node(node: Node): NodeFacts {
    return this.nodes.get(node.metadata.name, node.metadata.resourceVersion, () => ({
      ready: node.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True'),
      providerId: node.spec.providerID?.toLowerCase(),
      doNotDisrupt: nodeDoNotDisruptReason(node),
    }));
  }

  /**
   * driftReason, once per version of the claim and of what drift reads of its NodePool (the
   * template's hash and requirements: status writes do not count) and NodeClass (its hash).
   */
  driftOf(claim: NodeClaim, pool: NodePool, nodeClass: AzureFlexNodeClass | undefined): DriftReason | undefined {
    const claimVersion = claim.metadata.resourceVersion;
    const poolKey = this.pools.get(pool.metadata.name, pool.metadata.resourceVersion, () =>
      `${nodePoolTemplateHash(pool)}/${JSON.stringify(pool.spec.template.spec.requirements)}`);
    const version = claimVersion === undefined ? undefined : `${claimVersion}/${poolKey}/${nodeClass ? nodeClassHash(nodeClass) : '-'}`;
    return this.drift.get(claim.metadata.name, version, () => driftReason(claim, pool, nodeClass));
  }

  /** Facts of the pods bound to `nodeName`, recomputed when one of them changed. */
  podSet(nodeName: string, onNode: PodsOnNode | undefined): PodSetFacts {
    if (!onNode || onNode.pods.size === 0) return NO_PODS;
    return this.podSets.get(nodeName, onNode.version, () => podSetFacts([...onNode.pods]));
  }

  /** Ends a pass, forgetting objects that were not asked about in it (they are gone). */
  endPass(): void {
    this.claims.endPass();
    this.nodes.endPass();
    this.pools.endPass();
    this.drift.endPass();
    this.podSets.endPass();
  }
}

function podSetFacts(pods: readonly Pod[]): PodSetFacts {
  let reschedulable = 0;
  for (const pod of pods) if (isReschedulable(pod)) reschedulable++;
  return { reschedulable, signature: reschedulableSignature(pods), doNotDisrupt: podDoNotDisruptReason(pods) };
}
