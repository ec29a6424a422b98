/**
 * What the scheduler derives from one existing NodeClaim: what it holds against its pool's
 * limits, the room it offers pending pods, and its topology. Derived once per claim version
 * and pool context, and kept on the memo.
 */
import type { AzureFlexNodeClass, NodeClaim, NodeSelectorRequirement } from '../../ports/cluster.js';
import type { InstanceType } from '../../catalog/skus.js';
import { addInto, resourcesFromList, subtractResources, type Resources } from '../resources.js';
import { Requirements, instanceTypeRequirements } from '../requirements.js';
import { indexVector } from './first-fit-index.js';
import { domainsFor, type DomainSource } from './topology.js';
import { LABEL_HOSTNAME, LABEL_INSTANCE_TYPE } from '../../apis/well-known.js';
import { candidateOf, type KubeReserved } from './nodepools.js';
import { claimLimitUsage, maxCapacity } from './limits.js';
import type { NodeUsage } from './bound-pods.js';
import type { ExistingClaimState, InFlightClaim } from './memo.js';
import type { Candidate, PoolTemplate } from './types.js';

/** How a pass turns instance type names into candidates. */
export interface CatalogLookup {
  typesByName: ReadonlyMap<string, InstanceType>;
  kubeReserved: KubeReserved;
  /** kubernetes.azure.com/cluster's value on the nodes, part of every instance type's labels. */
  cluster: string | undefined;
}

/**
 * Everything about an existing NodeClaim that does not depend on the pods bound to it:
 * every one counts against its pool's limits (until it is gone), and those not being
 * deleted are capacity that pending pods can land on.
 */
export function existingClaimState(claim: NodeClaim, pool: PoolTemplate, context: string, catalog: CatalogLookup): ExistingClaimState {
  const version = { uid: claim.metadata.uid, resourceVersion: claim.metadata.resourceVersion, object: claim };
  const options = resolveInstanceTypes(claim, pool, catalog);
  const limitUsage = pool.limits ? (claim.status.capacity ? claimLimitUsage(resourcesFromList(claim.status.capacity), pool.limits) : maxCapacity(options, pool.limits)) : undefined;
  if (claim.metadata.deletionTimestamp) return { version, context, limitUsage, capacity: undefined };
  let allocatable: Resources | undefined;
  const baseUsed: Resources = {};
  if (claim.status.allocatable) {
    // Launched: allocatable is known. Once the node registers its DaemonSet pods are
    // bound and counted with the bound pods; until then they are still to come.
    allocatable = resourcesFromList(claim.status.allocatable);
    if (!claim.status.nodeName) addInto(baseUsed, pool.daemonOverhead);
  } else if (options.length > 0) {
    // Not launched yet: any option may come up, so only the smallest is promised.
    allocatable = { ...options[0]!.allocatable };
    for (const option of options.slice(1)) {
      for (const name in allocatable) allocatable[name] = Math.min(allocatable[name]!, option.allocatable[name] ?? 0);
    }
    addInto(baseUsed, pool.daemonOverhead);
  }
  if (!allocatable) return { version, context, limitUsage, capacity: undefined };
  const requirements = claimRequirements(claim);
  const variants = options.length > 0 ? options.map((o) => intersected(requirements, o.requirements)) : [requirements];
  return { version, context, limitUsage, capacity: { allocatable, baseUsed, variants, source: inFlightSource(claim, requirements, variants) } };
}

/** The instance types a claim may come up as: the one it launched as, else those its requirements allow. */
function resolveInstanceTypes(claim: NodeClaim, pool: PoolTemplate, catalog: CatalogLookup): Candidate[] {
  const launched = claim.metadata.labels[LABEL_INSTANCE_TYPE];
  const names = launched ? [launched] : [...(Requirements.fromSelectors(claim.spec.requirements).get(LABEL_INSTANCE_TYPE)?.values ?? [])];
  const out: Candidate[] = [];
  for (const name of names) {
    const instanceType = catalog.typesByName.get(name);
    if (!instanceType) continue;
    out.push(candidateOf(instanceType, pool.nodeClass, instanceTypeRequirements(instanceType, pool.region, undefined, catalog.cluster), catalog.kubeReserved));
  }
  return out;
}

/** An existing NodeClaim's topology: its node's name (or its own) as hostname, its labels, else its requirements. */
function inFlightSource(claim: NodeClaim, requirements: Requirements, variants: readonly Requirements[]): DomainSource {
  const hostname = claim.status.nodeName ?? claim.metadata.name;
  return {
    requirements,
    taints: claim.spec.taints,
    domains: (key) => {
      if (key === LABEL_HOSTNAME) return [hostname];
      const label = claim.metadata.labels[key];
      if (label !== undefined) return [label];
      return domainsFor(key, requirements, variants.map((v) => ({ requirements: v })));
    },
  };
}

/** A claim's usage with the pods bound to its node, per node usage version (kept on its state). */
export function withBoundOf(state: ExistingClaimState, usage: ReadonlyMap<string, NodeUsage>, nodeName: string | undefined): InFlightClaim['base'] {
  const capacity = state.capacity!;
  const node = nodeName ? usage.get(nodeName) : undefined;
  const version = node?.version ?? 0;
  let withBound = state.withBound;
  if (withBound?.version !== version) {
    const summed: Resources = { ...capacity.baseUsed };
    if (node) addInto(summed, node.used);
    state.withBound = withBound = { version, used: summed, free: indexVector(subtractResources(capacity.allocatable, summed)) };
  }
  return withBound;
}

/**
 * A NodeClaim's requirements with its labels, per (requirements list, labels) object pair:
 * writers replace a NodeClaim and what they change, never mutate them, and a status write
 * keeps the spec and labels it does not touch (Requirements are immutable). With 1,000
 * NodeClaims parsing their selectors again was most of a pass; per pair, a status write does
 * not parse them again either, and the intersections with each SKU (keyed by the result)
 * are found again.
 */
const requirementsOfClaim = new WeakMap<readonly NodeSelectorRequirement[], WeakMap<Record<string, string>, Requirements>>();

/**
 * a ∩ b, per pair of Requirements objects: a NodeClaim's requirements (above) and an
 * instance type's (cached per type and region) are the same objects pass after pass.
 */
const intersections = new WeakMap<Requirements, WeakMap<Requirements, Requirements>>();

function intersected(a: Requirements, b: Requirements): Requirements {
  let withA = intersections.get(a);
  if (!withA) intersections.set(a, (withA = new WeakMap()));
  let r = withA.get(b);
  if (!r) withA.set(b, (r = a.intersect(b)));
  return r;
}

function claimRequirements(claim: NodeClaim): Requirements {
  let byLabels = requirementsOfClaim.get(claim.spec.requirements);
  if (!byLabels) requirementsOfClaim.set(claim.spec.requirements, (byLabels = new WeakMap()));
  let r = byLabels.get(claim.metadata.labels);
  if (!r) byLabels.set(claim.metadata.labels, (r = Requirements.fromSelectors(claim.spec.requirements).intersect(Requirements.fromLabels(claim.metadata.labels))));
  return r;
}

/**
 * What an existing NodeClaim's derived state depends on besides the claim: its NodeClass's
 * spec (sizes, region), which resources its NodePool limits, and the DaemonSet overhead.
 * Not their resourceVersions: status and annotation writes (node counts, offering marks)
 * bump those pass after pass without changing any of it.
 */
export function poolContext(pool: PoolTemplate): string {
  const overhead = Object.keys(pool.daemonOverhead).sort().map((k) => `${k}=${pool.daemonOverhead[k]}`).join(',');
  const limited = pool.limits ? Object.keys(pool.limits).sort().join(',') : '-';
  return `${pool.nodeClass.metadata.name}|${specKey(pool.nodeClass)}|${limited}|${overhead}`;
}

/** A NodeClass's spec as text, per object (a pass reads each NodeClass once per pool). */
const specKeys = new WeakMap<AzureFlexNodeClass, string>();

function specKey(nodeClass: AzureFlexNodeClass): string {
  let key = specKeys.get(nodeClass);
  if (key === undefined) specKeys.set(nodeClass, (key = JSON.stringify(nodeClass.spec)));
  return key;
}

/** Writers replace a NodeClaim and the API server bumps its resourceVersion; one without is known by identity only. */
export function sameVersion(state: ExistingClaimState, claim: NodeClaim): boolean {
  const v = state.version;
  const rv = claim.metadata.resourceVersion;
  return v.uid === claim.metadata.uid && v.resourceVersion === rv && (rv !== undefined || v.object === claim);
}

