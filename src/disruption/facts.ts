/**
 * What a disruption pass asks about every NodeClaim, worked out once per change instead of on
 * every pass: a 1,000-node fleet re-derived its pod sets, do-not-disrupt pods, expiry and drift
 * 120 times an hour while almost nothing changed. Each NodeClaim has a record that lives from
 * pass to pass; each part of it is recomputed only when what it is derived from changed: the
 * claim's or node's resourceVersion (which the API server bumps on every write; an informer
 * port may hand out copies, so object identity would not do), the node it pairs with, or its
 * node's PodIndex version. An object without a resourceVersion is never cached.
 */
import type { AzureFlexNodeClass, Node, NodeClaim, NodePool, Pod } from '../ports/cluster.js';
import { nodeClaimDoNotDisruptReason, nodeDoNotDisruptReason, podDoNotDisruptReason } from './do-not-disrupt.js';
import { driftReason, type DriftReason } from './drift.js';
import { isReschedulable, reschedulableSignature } from './emptiness.js';
import { expiresAt } from './expiration.js';
import type { PodIndex, PodsOnNode } from './pod-index.js';
import { nodeClassHash } from '../apis/nodeclass-hash.js';
import { nodePoolTemplateHash } from '../provisioning/nodepool-hash.js';
import { KeptList, sameNamespacedName, walkAlongside } from '../utils/list-walk.js';
import { ANNOTATION_CONSOLIDATION_REPLACEMENT, LABEL_NODEPOOL, TAINT_DISRUPTED } from '../apis/well-known.js';

export interface NodeClaimFacts {
  /** Launched=True: drift is looked at from then on (upstream's Drifted needs it). */
  launched: boolean;
  initialized: boolean;
  /** When Initialized became True (ms since epoch): consolidateAfter counts from it until a pod event. */
  initializedAt: number | undefined;
  /** status.lastPodEventTime (ms since epoch). */
  lastPodEventTime: number | undefined;
  /** ms since epoch; undefined: never. */
  expiresAt: number | undefined;
  /** The NodeClaim's own karpenter.sh/do-not-disrupt. */
  doNotDisrupt: string | undefined;
  /** status.providerID lowercased (ARM ids compare case-insensitively). */
  providerId: string | undefined;
}

export interface NodeFacts {
  ready: boolean;
  /** spec.providerID lowercased. */
  providerId: string | undefined;
  /** The Node's own karpenter.sh/do-not-disrupt. */
  doNotDisrupt: string | undefined;
  /** It carries the karpenter.sh/disrupted:NoSchedule taint. */
  disrupted: boolean;
}

/** The pods bound to one node, as disruption sees them. */
export interface PodSetFacts {
  /** Pods that would need a new home if the node went away. */
  reschedulable: number;
  /** Their identity: a new one is a pod event (see lastPodEvent in emptiness.ts). */
  signature: string;
  /** A pod's karpenter.sh/do-not-disrupt, if one blocks voluntary disruption. */
  doNotDisrupt: string | undefined;
}

const NO_PODS: PodSetFacts = { reschedulable: 0, signature: '', doNotDisrupt: undefined };

/** One NodeClaim in a pass: the claim as the pass uses it, its node, and their facts. */
export interface ClaimRecord {
  /** As listed, except that a claim paired with its node by providerID gets the node's name (status.nodeName). */
  claim: NodeClaim;
  node: Node | undefined;
  /** Its node is Ready. */
  ready: boolean;
  facts: NodeClaimFacts;
  pods: PodSetFacts;
  /** Why voluntary disruption is blocked (karpenter.sh/do-not-disrupt), if it is. */
  doNotDisrupt: string | undefined;
  /** Its last pod event as this process knows it (lastPodEvent in emptiness.ts): ahead of the listed status.lastPodEventTime until that is written. */
  lastPodEvent: number | undefined;
  /** This pass's drift reason (looked at for launched claims not being deleted), else undefined. */
  drifted: DriftReason | undefined;
  /**
   * The disruption conditions last looked at (src/disruption/conditions.ts), for the claim's
   * resourceVersion: while it and the wants are the same, they are shown already or were sent
   * and the list has not caught up, so the claim is not looked at (or written) again.
   */
  conditionsSeen: {
    rv: string; drifted: DriftReason | undefined; consolidatable: boolean; disruptionReason: string | undefined; podEvent: number | undefined;
  } | undefined;
  /** The claim object as listed. */
  listed: NodeClaim;
  /** Read off the listed claim once per version of it: its name, NodePool, whether it is being deleted, the claim it replaces. */
  name: string;
  poolName: string | undefined;
  deleting: boolean;
  replaces: string | undefined;
  /** What its node is looked up by: status.nodeName, else the lowercased providerID (NodeIndex.of). */
  nodeKey: string | undefined;
  /** The listed claim has a resourceVersion (without one it may change in place, and nothing about it is kept). */
  versioned: boolean;
  /** Its node's name, while it has one. */
  nodeName: string | undefined;
  /** The pod set lastPodEvent was last worked out from (a pod event when its signature differs). */
  churnPods: PodSetFacts | undefined;
  nodeFacts: NodeFacts | undefined;
  onNode: PodsOnNode | undefined;
  podsVersion: number;
  drift: { key: string; reason: DriftReason | undefined } | undefined;
  pass: number;
}

interface NodeEntry {
  node: Node;
  facts: NodeFacts;
}

/**
 * The listed nodes by name and by (lowercased) providerID, brought up to date only when the
 * nodes list changed, and then by walking it alongside the last one (src/utils/list-walk.ts):
 * a pass pays for the nodes written, added or gone, not for each of a fleet's 1,000. Two nodes
 * with one providerID (the later one in the list wins) make it rebuild while that lasts.
 */
export class NodeIndex {
  private byName = new Map<string, NodeEntry>();
  private byProviderId = new Map<string, NodeEntry>();
  private version: string | undefined;
  private readonly last = new KeptList<Node>();
  /** Some providerID (or name) is on two listed nodes. */
  private shared = false;
  /** Names and providerIDs of the nodes added, written or gone since takeChanged() last answered; 'all' after a rebuild. */
  private changed: Set<string> | 'all' = 'all';

  /** What changed since the last call (see `changed`): a NodeClaim looked up by none of it pairs with the same entry. */
  takeChanged(): ReadonlySet<string> | 'all' {
    const changed = this.changed;
    this.changed = new Set();
    return changed;
  }

  /** Brings the index to `nodes`; `version` is the nodes cache's version (undefined: unknown, always rebuild). */
  update(nodes: readonly Node[], version: string | undefined): void {
    if (version !== undefined && version === this.version) return;
    this.version = version;
    if (this.shared || !this.walk(nodes) || this.shared) this.rebuild(nodes);
    this.last.keep(nodes);
  }

  private walk(nodes: readonly Node[]): boolean {
    return walkAlongside(this.last.list, nodes, sameNodeName, {
      replaced: (old, node) => {
        const before = this.byName.get(old.metadata.name);
        this.remove(old);
        this.add(node, before);
      },
      removed: (old) => this.remove(old),
      added: (node) => this.add(node, undefined),
    }, Math.max(64, nodes.length >> 2));
  }

  private rebuild(nodes: readonly Node[]): void {
    this.changed = 'all';
    const previous = this.byName;
    this.byName = new Map();
    this.byProviderId = new Map();
    this.shared = false;
    for (const node of nodes) this.add(node, previous.get(node.metadata.name));
  }

  /** Indexes a node; `before` is the entry its name had (its facts are kept while the resourceVersion is the same). */
  private add(node: Node, before: NodeEntry | undefined): void {
    const rv = node.metadata.resourceVersion;
    const facts = rv !== undefined && before?.node.metadata.resourceVersion === rv ? before.facts : nodeFacts(node);
    const entry = before?.node === node ? before : { node, facts };
    this.noteChanged(node.metadata.name, facts.providerId);
    if (this.byName.has(node.metadata.name)) this.shared = true; // a name listed twice: rebuild (the later one wins)
    this.byName.set(node.metadata.name, entry);
    if (!facts.providerId) return;
    const holder = this.byProviderId.get(facts.providerId);
    if (holder && holder.node.metadata.name !== node.metadata.name) this.shared = true;
    this.byProviderId.set(facts.providerId, entry);
  }

  /** Takes a node out, keeping its entry by name for `add` while the walk replaces it. */
  private remove(node: Node): void {
    const entry = this.byName.get(node.metadata.name);
    if (!entry) return;
    const pid = entry.facts.providerId;
    this.noteChanged(node.metadata.name, pid);
    if (pid && this.byProviderId.get(pid) === entry) this.byProviderId.delete(pid);
    this.byName.delete(node.metadata.name);
  }

  private noteChanged(name: string, providerId: string | undefined): void {
    if (this.changed === 'all') return;
    this.changed.add(name);
    if (providerId) this.changed.add(providerId);
  }

  /**
   * A NodeClaim's node by name once its status says so, by providerID before (Karpenter's
   * cluster state pairs them by providerID): a node that just registered already has pods
   * bound while the NodeClaim's status.nodeName is not written yet.
   */
  of(claim: NodeClaim, facts: NodeClaimFacts): NodeEntry | undefined {
    const nodeName = claim.status.nodeName;
    if (nodeName) return this.byName.get(nodeName);
    return facts.providerId ? this.byProviderId.get(facts.providerId) : undefined;
  }
}

/** The records of the NodeClaims of the latest pass, by name. */
export class ClaimRecords {
  private readonly records = new Map<string, ClaimRecord>();
  private readonly pools = new Map<string, { version: string; key: string; full?: { nodeClassHash: string; key: string } }>();
  private pass = 0;
  private seen = 0;
  /** The last list observeAll walked, and its records in that order. */
  private readonly lastListed = new KeptList<NodeClaim>();
  private lastRecords: ClaimRecord[] = [];

  /**
   * The records of `listed`, in its order. The list is walked alongside the last one: a claim
   * that is the very object it was (informer caches hand out unchanged objects so) keeps its
   * record, whose node and pods are looked at again only where NodeIndex or PodIndex says they
   * changed. A fleet pass touched 1,000 NodeClaims and their nodes to find the few that moved.
   */
  observeAll(listed: readonly NodeClaim[], nodes: NodeIndex, pods: PodIndex): ClaimRecord[] {
    const nodesChanged = nodes.takeChanged();
    const podsChanged = pods.takeChanged();
    const out = new Array<ClaimRecord>(listed.length);
    const last = this.lastRecords;
    walkAlongside(this.lastListed.list, listed, sameNamespacedName, {
      unchanged: (i, j, count) => {
        for (let k = 0; k < count; k++) out[j + k] = this.revisit(last[i + k]!, nodes, pods, nodesChanged, podsChanged);
      },
      replaced: (_old, claim, _i, j) => {
        out[j] = this.observe(claim, nodes, pods);
      },
      added: (claim, j) => {
        out[j] = this.observe(claim, nodes, pods);
      },
      removed: () => {},
    });
    this.lastListed.keep(listed);
    this.lastRecords = out;
    return out;
  }

  /** A record whose claim is the object it was in the last pass: its node and pods again where they may have changed. */
  private revisit(record: ClaimRecord, nodes: NodeIndex, pods: PodIndex, nodesChanged: ReadonlySet<string> | 'all', podsChanged: ReadonlySet<string> | 'all'): ClaimRecord {
    // Without a resourceVersion the object may have been changed in place: observe it whole.
    if (!record.versioned) return this.observe(record.listed, nodes, pods);
    record.pass = this.pass;
    this.seen++;
    let changed = false;
    if (nodesChanged === 'all' || (record.nodeKey !== undefined && nodesChanged.has(record.nodeKey))) changed = this.pairNode(record, nodes, false);
    if (changed || podsChanged === 'all' || (record.nodeName !== undefined && podsChanged.has(record.nodeName))) changed = this.countPods(record, pods) || changed;
    if (changed) record.doNotDisrupt = record.facts.doNotDisrupt ?? record.nodeFacts?.doNotDisrupt ?? record.pods.doNotDisrupt;
    return record;
  }

  get(name: string): ClaimRecord | undefined {
    return this.records.get(name);
  }

  /** The record of a listed claim in this pass, brought up to date with its node and that node's pods. */
  observe(listed: NodeClaim, nodes: NodeIndex, pods: PodIndex): ClaimRecord {
    const name = listed.metadata.name;
    let record = this.records.get(name);
    const rv = listed.metadata.resourceVersion;
    let claimChanged = false;
    if (!record) {
      const facts = nodeClaimFacts(listed);
      record = {
        claim: listed, node: undefined, ready: false, facts, pods: NO_PODS, doNotDisrupt: undefined, lastPodEvent: undefined, drifted: undefined, conditionsSeen: undefined,
        listed, name, poolName: undefined, deleting: false, replaces: undefined, nodeKey: undefined, versioned: false, nodeName: undefined, churnPods: undefined,
        nodeFacts: undefined, onNode: undefined, podsVersion: -1, drift: undefined, pass: -1,
      };
      this.records.set(name, record);
      claimChanged = true;
    } else if (record.listed !== listed) {
      if (rv === undefined || record.listed.metadata.resourceVersion !== rv) {
        record.facts = nodeClaimFacts(listed);
        record.drift = undefined;
      }
      record.listed = listed;
      claimChanged = true;
    } else if (rv === undefined) {
      record.facts = nodeClaimFacts(listed);
      record.drift = undefined;
    }
    if (claimChanged || rv === undefined) {
      record.poolName = listed.metadata.labels[LABEL_NODEPOOL];
      record.deleting = Boolean(listed.metadata.deletionTimestamp);
      record.replaces = listed.metadata.annotations[ANNOTATION_CONSOLIDATION_REPLACEMENT];
      record.nodeKey = listed.status.nodeName || record.facts.providerId;
      record.versioned = rv !== undefined;
    }
    record.pass = this.pass;
    this.seen++;
    this.pairNode(record, nodes, claimChanged);
    this.countPods(record, pods);
    record.doNotDisrupt = record.facts.doNotDisrupt ?? record.nodeFacts?.doNotDisrupt ?? record.pods.doNotDisrupt;
    return record;
  }

  /** Pairs the record with its node (NodeIndex.of); whether anything changed. */
  private pairNode(record: ClaimRecord, nodes: NodeIndex, claimChanged: boolean): boolean {
    const listed = record.listed;
    const entry = nodes.of(listed, record.facts);
    const node = entry?.node;
    if (!claimChanged && node === record.node && entry?.facts === record.nodeFacts) return false;
    record.node = node;
    record.nodeName = node?.metadata.name;
    record.nodeFacts = entry?.facts;
    record.ready = entry?.facts.ready ?? false;
    // The simulation places pods by node name (hostname anti-affinity, bound pods): give every paired claim its node's.
    record.claim = !listed.status.nodeName && node ? { ...listed, status: { ...listed.status, nodeName: node.metadata.name } } : listed;
    return true;
  }

  /** The pods on the record's node (PodIndex), worked out again when they changed; whether they did. */
  private countPods(record: ClaimRecord, pods: PodIndex): boolean {
    const onNode = record.nodeName === undefined ? undefined : pods.onNode(record.nodeName);
    if (!onNode || onNode.pods.size === 0) {
      if (record.pods === NO_PODS && record.onNode === undefined) return false;
      record.pods = NO_PODS;
      record.onNode = undefined;
      record.podsVersion = -1;
      return true;
    }
    if (onNode === record.onNode && onNode.version === record.podsVersion) return false;
    record.pods = podSetFacts([...onNode.pods]);
    record.onNode = onNode;
    record.podsVersion = onNode.version;
    return true;
  }

  /** Ends a pass: records not observed in it belong to NodeClaims that are gone, and are dropped. */
  endPass(): void {
    if (this.records.size > this.seen) {
      for (const [name, record] of this.records) {
        if (record.pass === this.pass) continue;
        this.records.delete(name);
      }
    }
    this.pass++;
    this.seen = 0;
  }

  /**
   * What drift reads of a NodePool (the template's hash and requirements: status writes do not
   * count) and its NodeClass (its hash), once per pass and pool: driftOf's cache key.
   */
  driftKey(pool: NodePool, nodeClass: AzureFlexNodeClass | undefined): string | undefined {
    const rv = pool.metadata.resourceVersion;
    let cached = this.pools.get(pool.metadata.name);
    if (rv === undefined || cached?.version !== rv) {
      const poolKey = `${nodePoolTemplateHash(pool)}/${JSON.stringify(pool.spec.template.spec.requirements)}`;
      cached = rv === undefined ? undefined : { version: rv, key: poolKey };
      if (cached) this.pools.set(pool.metadata.name, cached);
      else {
        this.pools.delete(pool.metadata.name);
        return undefined;
      }
    }
    // The same string object pass after pass while neither changed: each claim's cached drift
    // answer is then checked with a pointer comparison, not by comparing a long key's characters.
    const classHash = nodeClass ? nodeClassHash(nodeClass) : '-';
    if (cached.full?.nodeClassHash !== classHash) cached.full = { nodeClassHash: classHash, key: `${cached.key}/${classHash}` };
    return cached.full.key;
  }

  /** driftReason, once per version of the claim and of its pool's driftKey. */
  driftOf(record: ClaimRecord, pool: NodePool, nodeClass: AzureFlexNodeClass | undefined, driftKey: string | undefined): DriftReason | undefined {
    if (!record.versioned || driftKey === undefined) return driftReason(record.claim, pool, nodeClass);
    if (record.drift?.key !== driftKey) record.drift = { key: driftKey, reason: driftReason(record.claim, pool, nodeClass) };
    return record.drift.reason;
  }

  /** Forgets pools that no longer exist. */
  retainPools(names: ReadonlySet<string>): void {
    for (const name of this.pools.keys()) if (!names.has(name)) this.pools.delete(name);
  }
}

function nodeClaimFacts(claim: NodeClaim): NodeClaimFacts {
  const initialized = claim.status.conditions.find((c) => c.type === 'Initialized' && c.status === 'True');
  const lastPodEventTime = claim.status.lastPodEventTime === undefined ? undefined : Date.parse(claim.status.lastPodEventTime);
  return {
    launched: claim.status.conditions.some((c) => c.type === 'Launched' && c.status === 'True'),
    initialized: initialized !== undefined,
    initializedAt: initialized === undefined ? undefined : finiteOrUndefined(Date.parse(initialized.lastTransitionTime)),
    lastPodEventTime: lastPodEventTime === undefined ? undefined : finiteOrUndefined(lastPodEventTime),
    expiresAt: expiresAt(claim),
    doNotDisrupt: nodeClaimDoNotDisruptReason(claim),
    providerId: claim.status.providerID?.toLowerCase(),
  };
}

function finiteOrUndefined(ms: number): number | undefined {
  return Number.isFinite(ms) ? ms : undefined;
}

function nodeFacts(node: Node): NodeFacts {
  return {
    ready: node.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True'),
    providerId: node.spec.providerID?.toLowerCase(),
    doNotDisrupt: nodeDoNotDisruptReason(node),
    disrupted: node.spec.taints.some((t) => t.key === TAINT_DISRUPTED.key && t.effect === TAINT_DISRUPTED.effect),
  };
}

function podSetFacts(pods: readonly Pod[]): PodSetFacts {
  let reschedulable = 0;
  for (const pod of pods) if (isReschedulable(pod)) reschedulable++;
  return { reschedulable, signature: reschedulableSignature(pods), doNotDisrupt: podDoNotDisruptReason(pods) };
}

function sameNodeName(a: Node, b: Node): boolean {
  return a.metadata.name === b.metadata.name;
}
