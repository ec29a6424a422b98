/**
 * Unavailable-offering marks kept in the world, and the canary rule built on them.
 *
 * The in-memory offerings cache forgets everything on a restart, and when a mark expires it
 * lets every pending pod through at once: both sent a burst of VM creates bound to fail. So
 * each mark is also written to the AzureFlexNodeClass whose launch failed (annotation
 * flex.aks.azure.com/unavailable-offerings) and stays there after it expires, until a VM of
 * that offering launches. While a mark is live the offering is unavailable; once it has
 * expired the offering is on probation: one NodeClaim may try it (the canary) and the rest
 * wait until that one launches. Whether a canary is in flight is read from the NodeClaims
 * themselves, so a restarted controller sends no second one.
 */
import type { AzureFlexNodeClass, NodeClaim } from '../ports/cluster.js';
import type { InstanceType } from '../catalog/skus.js';
import { isCapacityType, type CapacityType } from '../catalog/offerings.js';
import { Requirements } from './requirements.js';
import { sameNamespacedName, walkAlongside } from '../utils/list-walk.js';
import { ANNOTATION_OFFERING_MARKS, CAPACITY_TYPE_ON_DEMAND, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_ZONE } from '../apis/well-known.js';

/** One mark: a SKU, every SKU of a family ('*' + family) or a whole region ('*'). */
export interface OfferingMark {
  sku: string;
  family?: string;
  /** Zone label ("eastus2-1"): only that zone of the SKU (a zonal allocation failure). */
  zone?: string;
  capacityType: CapacityType;
  reason: string;
  markedAt: number;
  expiresAt: number;
}

function isMark(value: unknown): value is OfferingMark {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  return typeof m.sku === 'string' && typeof m.capacityType === 'string' && isCapacityType(m.capacityType) && typeof m.reason === 'string' &&
    typeof m.markedAt === 'number' && typeof m.expiresAt === 'number' && (m.family === undefined || typeof m.family === 'string') &&
    (m.zone === undefined || typeof m.zone === 'string');
}

/** Marks on a NodeClass; a malformed annotation (edited by hand) counts as none. */
export function readMarks(nodeClass: AzureFlexNodeClass): OfferingMark[] {
  const raw = nodeClass.metadata.annotations[ANNOTATION_OFFERING_MARKS];
  if (!raw) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed.filter(isMark) : [];
  } catch {
    return [];
  }
}

export function formatMarks(marks: readonly OfferingMark[]): string | null {
  if (marks.length === 0) return null;
  const sorted = [...marks].sort((a, b) => markKey(a).localeCompare(markKey(b)));
  return JSON.stringify(sorted.map((m) => ({ sku: m.sku, ...(m.family ? { family: m.family } : {}), ...(m.zone ? { zone: m.zone } : {}), capacityType: m.capacityType, reason: m.reason, markedAt: m.markedAt, expiresAt: m.expiresAt })));
}

export function markKey(m: Pick<OfferingMark, 'sku' | 'family' | 'capacityType' | 'zone'>): string {
  return `${m.capacityType}:${m.family ? `family=${m.family.toLowerCase()}` : m.sku.toLowerCase()}${m.zone ? `:${m.zone.toLowerCase()}` : ''}`;
}

/** Adds or extends marks (a mark is only ever extended by a later one, never shortened). */
export function mergeMarks(existing: readonly OfferingMark[], added: readonly OfferingMark[]): OfferingMark[] {
  const byKey = new Map(existing.map((m) => [markKey(m), m]));
  for (const m of added) {
    const old = byKey.get(markKey(m));
    if (!old || old.expiresAt < m.expiresAt) byKey.set(markKey(m), { ...m });
  }
  return [...byKey.values()];
}

/**
 * The TTL of a new allocation mark for the offering `key`: `base`, or twice the TTL of the
 * offering's previous mark still on the NodeClass (live, or expired and not yet proven) when
 * the attempt that failed was made after that mark (the canary, or a NodeClaim already
 * planned) and no VM of the offering has launched since it was made; at most `max`. So a
 * crunch that outlasts a short mark gets longer ones, while a failure among launches that
 * succeed (a blip) keeps the short one, and attempts already in flight when the mark was made
 * lengthen nothing. Read from the world, so a restart keeps the escalation.
 */
export function allocationTtlSeconds(
  marks: readonly OfferingMark[], key: Pick<OfferingMark, 'sku' | 'capacityType' | 'zone'>, attemptAt: number | undefined,
  launchedSince: (at: number) => boolean, base: number, max: number,
): number {
  const k = markKey(key);
  const previous = marks.find((m) => m.family === undefined && markKey(m) === k);
  if (!previous || attemptAt === undefined || attemptAt < previous.markedAt || launchedSince(previous.markedAt)) return base;
  return Math.min(max, Math.max(base, (2 * (previous.expiresAt - previous.markedAt)) / 1000));
}

/**
 * Whether one of the NodeClaims launched as `sku` (in `zone`, if given) after `at`: its
 * Launched condition turned True then. `vmSizeOf` names the size its VM has (the NodeClaim
 * may allow several and carry no instance-type label yet).
 */
export function launchedAfter(claims: Iterable<NodeClaim>, vmSizeOf: (claim: NodeClaim) => string | undefined, sku: string, zone: string | undefined, at: number): boolean {
  for (const c of claims) {
    const launched = c.status.conditions.find((x) => x.type === 'Launched');
    if (launched?.status !== 'True' || !(Date.parse(launched.lastTransitionTime) >= at)) continue;
    if (zone !== undefined && c.metadata.labels[LABEL_ZONE]?.toLowerCase() !== zone.toLowerCase()) continue;
    if ((c.metadata.labels[LABEL_INSTANCE_TYPE] ?? vmSizeOf(c))?.toLowerCase() === sku.toLowerCase()) return true;
  }
  return false;
}

/** A zone mark covers only a question about that zone; other marks cover every zone. */
function covers(mark: OfferingMark, sku: string, family: string | undefined, capacityType: string, zone?: string): boolean {
  if (mark.capacityType !== capacityType) return false;
  if (mark.zone && mark.zone.toLowerCase() !== zone?.toLowerCase()) return false;
  if (mark.family) return family !== undefined && mark.family.toLowerCase() === family.toLowerCase();
  return mark.sku === '*' || mark.sku.toLowerCase() === sku.toLowerCase();
}

/** A NodeClaim whose VM is up and whose size is known: what can prove a probation mark wrong. */
function isLaunched(claim: NodeClaim): boolean {
  return Boolean(claim.status.providerID && claim.metadata.labels[LABEL_INSTANCE_TYPE]);
}

/** What mayLaunchAs reads of a NodeClaim not launched yet: the sizes it may take and where it may land (lowercased). */
interface LaunchOptions {
  names: readonly string[];
  /** Its zone label, once chosen. */
  chosenZone: string | undefined;
  zones: ReturnType<Requirements['get']>;
}

/**
 * Per NodeClaim object and resourceVersion: a pass asks each offering on probation about every
 * NodeClaim in flight, and parsing one's requirements each time was most of what that cost. A
 * claim without a resourceVersion (it may be changed in place) is read afresh.
 */
const launchOptions = new WeakMap<NodeClaim, { rv: string; options: LaunchOptions }>();

function launchOptionsOf(claim: NodeClaim): LaunchOptions {
  const rv = claim.metadata.resourceVersion;
  const kept = rv === undefined ? undefined : launchOptions.get(claim);
  if (kept && kept.rv === rv) return kept.options;
  const requirements = Requirements.fromSelectors(claim.spec.requirements);
  const launched = claim.metadata.labels[LABEL_INSTANCE_TYPE];
  const names = (launched ? [launched] : [...(requirements.get(LABEL_INSTANCE_TYPE)?.values ?? [])]).map((n) => n.toLowerCase());
  const options: LaunchOptions = { names, chosenZone: claim.metadata.labels[LABEL_ZONE]?.toLowerCase(), zones: requirements.get(LABEL_ZONE) };
  if (rv !== undefined) launchOptions.set(claim, { rv, options });
  return options;
}

/** Where a NodeClaim is not launched yet and may still launch as `sku` (in `zone`, if given): a canary in flight. */
function mayLaunchAs(claim: NodeClaim, sku: string, zone?: string): boolean {
  if (claim.metadata.deletionTimestamp || claim.status.providerID) return false;
  const { names, chosenZone, zones } = launchOptionsOf(claim);
  if (!names.includes(sku.toLowerCase())) return false;
  if (zone === undefined) return true;
  if (chosenZone) return chosenZone === zone.toLowerCase();
  return zones?.has(zone) ?? true;
}

export interface MarkState {
  /** Live marks and probation marks, per region. */
  marks: ReadonlyMap<string, readonly { mark: OfferingMark; nodeClass: string }[]>;
  familyOf: (sku: string) => string | undefined;
  now: number;
  /** NodeClaims by the location of their NodeClass, worked out on first use (most passes ask about no mark). */
  claimsByRegion: () => ReadonlyMap<string, readonly NodeClaim[]>;
  /** What proven() reads besides the marks: every NodeClaim, where each NodeClass is, the catalog (families). */
  nodeClaims: readonly NodeClaim[];
  locations: ReadonlyMap<string, string>;
  instanceTypes: readonly InstanceType[];
}

/**
 * What proven() found on the last pass, for the next one: the NodeClaims it looked at and the
 * probation marks none of them proves. A NodeClaim that is the same object cannot prove one
 * now either (whether it does reads only the claim, the mark, its NodeClass's location and
 * the catalog's families), so such a mark is checked against the NodeClaims written or added
 * since, not the whole fleet pass after pass while it waits for its canary.
 */
export class ProbationMemo {
  /** @internal */
  last: { nodeClaims: readonly NodeClaim[]; locations: ReadonlyMap<string, string>; instanceTypes: readonly InstanceType[]; unproven: Set<string> } | undefined;
}

function probationKey(region: string, nodeClass: string, mark: OfferingMark): string {
  return `${region}\u0000${nodeClass}\u0000${markKey(mark)}\u0000${mark.markedAt}`;
}

/** The catalog hands out a new list each pass; its entries are the same objects until it changes. */
function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameLocations(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, region] of a) if (b.get(name) !== region) return false;
  return true;
}

/** Family by lowercased SKU name, per catalog list (the catalog hands out the same list until it changes). */
const familiesOf = new WeakMap<readonly InstanceType[], ReadonlyMap<string, string | undefined>>();

/** Parsed creationTimestamps: proven() compares every launched NodeClaim's with each probation mark, pass after pass. */
const createdAt = new Map<string, number>();

function parseCreated(timestamp: string): number {
  let at = createdAt.get(timestamp);
  if (at === undefined) {
    if (createdAt.size >= 10_000) createdAt.clear();
    createdAt.set(timestamp, (at = Date.parse(timestamp)));
  }
  return at;
}

export class OfferingMarks {
  private constructor(private readonly state: MarkState) {}

  /** Marks of every NodeClass, by location; NodeClaims by the location of their NodeClass. */
  static observe(nodeClasses: readonly AzureFlexNodeClass[], nodeClaims: readonly NodeClaim[], instanceTypes: readonly InstanceType[], now: number): OfferingMarks {
    const marks = new Map<string, { mark: OfferingMark; nodeClass: string }[]>();
    const locationOf = new Map<string, string>();
    for (const nc of nodeClasses) {
      const region = nc.spec.location.toLowerCase();
      locationOf.set(nc.metadata.name, region);
      for (const mark of readMarks(nc)) {
        let list = marks.get(region);
        if (!list) marks.set(region, (list = []));
        list.push({ mark, nodeClass: nc.metadata.name });
      }
    }
    let claimsByRegion: Map<string, NodeClaim[]> | undefined;
    const byRegion = (): ReadonlyMap<string, readonly NodeClaim[]> => {
      claimsByRegion ??= groupByRegion(nodeClaims, locationOf);
      return claimsByRegion;
    };
    let families = familiesOf.get(instanceTypes);
    if (!families) familiesOf.set(instanceTypes, (families = new Map(instanceTypes.map((t) => [t.name.toLowerCase(), t.family]))));
    const known = families;
    return new OfferingMarks({
      marks, familyOf: (sku) => known.get(sku.toLowerCase()), now, claimsByRegion: byRegion, nodeClaims, locations: locationOf, instanceTypes,
    });
  }

  private matching(sku: string, region: string, capacityType: string, zone?: string): { mark: OfferingMark; nodeClass: string }[] {
    const family = this.state.familyOf(sku);
    return (this.state.marks.get(region.toLowerCase()) ?? []).filter((m) => covers(m.mark, sku, family, capacityType, zone));
  }

  /** A live mark recorded in the world (survives restarts, unlike the in-memory cache). */
  isMarked(sku: string, region: string, capacityType: string, zone?: string): boolean {
    return this.matching(sku, region, capacityType, zone).some((m) => m.mark.expiresAt > this.state.now);
  }

  /** Expired but not yet proven: one canary may try it (asked with a zone, that zone's marks count too). */
  onProbation(sku: string, region: string, capacityType: string, zone?: string): boolean {
    const found = this.matching(sku, region, capacityType, zone);
    return found.length > 0 && found.every((m) => m.mark.expiresAt <= this.state.now);
  }

  private readonly canaries = new Map<string, boolean>();

  /** Whether a NodeClaim not launched yet may launch as this SKU in the region, or in that zone (the canary). */
  canaryInFlight(sku: string, region: string, zone?: string): boolean {
    // Asked once per offering and zone by each scheduling question of a pass: answered once per pass.
    const key = `${sku}\u0000${region}\u0000${zone ?? ''}`;
    let found = this.canaries.get(key);
    if (found === undefined) {
      found = (this.state.claimsByRegion().get(region.toLowerCase()) ?? []).some((c) => mayLaunchAs(c, sku, zone));
      this.canaries.set(key, found);
    }
    return found;
  }

  /**
   * What to tell the scheduler: unavailable while marked, and on probation once a canary flies:
   * for a zone mark a canary that may land in that zone, for a regional mark one anywhere.
   */
  isUnavailable(sku: string, region: string, capacityType: string, zone?: string): boolean {
    if (this.isMarked(sku, region, capacityType, zone)) return true;
    const found = this.matching(sku, region, capacityType, zone);
    if (found.length === 0) return false;
    const regional = found.some((m) => m.mark.zone === undefined);
    return (regional && this.canaryInFlight(sku, region)) || (zone !== undefined && this.canaryInFlight(sku, region, zone));
  }

  /**
   * Probation marks a launch has proven wrong: a VM of a covered SKU came up in the region
   * after the mark was made. Returned per NodeClass, to be removed from its annotation.
   */
  proven(memo?: ProbationMemo): Map<string, OfferingMark[]> {
    const out = new Map<string, OfferingMark[]>();
    const { nodeClaims, locations, instanceTypes } = this.state;
    const last = memo?.last;
    // The NodeClaims that are other objects than the last pass's (written or added), by region; undefined: look at all.
    let fresh: Map<string, NodeClaim[]> | undefined;
    if (last && sameItems(last.instanceTypes, instanceTypes) && sameLocations(last.locations, locations)) {
      const changed: NodeClaim[] = [];
      walkAlongside(last.nodeClaims, nodeClaims, sameNamespacedName, {
        replaced: (_old, claim) => {
          changed.push(claim);
        },
        added: (claim) => {
          changed.push(claim);
        },
        removed: () => {},
      });
      fresh = groupByRegion(changed, locations);
    }
    const unproven = new Set<string>();
    for (const [region, list] of this.state.marks) {
      let launched: NodeClaim[] | undefined;
      let launchedFresh: NodeClaim[] | undefined;
      for (const { mark, nodeClass } of list) {
        if (mark.expiresAt > this.state.now) continue;
        const key = probationKey(region, nodeClass, mark);
        let candidates: NodeClaim[];
        if (fresh && last!.unproven.has(key)) {
          candidates = launchedFresh ??= (fresh.get(region) ?? []).filter(isLaunched);
        } else {
          candidates = launched ??= (this.state.claimsByRegion().get(region) ?? []).filter(isLaunched);
        }
        const ok = candidates.some((c) => parseCreated(c.metadata.creationTimestamp) >= mark.markedAt - 1000 &&
          // Only a launch of the mark's capacity type proves it: an on-demand VM says nothing of spot capacity.
          covers(mark, c.metadata.labels[LABEL_INSTANCE_TYPE]!, this.state.familyOf(c.metadata.labels[LABEL_INSTANCE_TYPE]!), c.metadata.labels[LABEL_CAPACITY_TYPE] ?? CAPACITY_TYPE_ON_DEMAND, c.metadata.labels[LABEL_ZONE]));
        if (!ok) {
          unproven.add(key);
          continue;
        }
        let marks = out.get(nodeClass);
        if (!marks) out.set(nodeClass, (marks = []));
        marks.push(mark);
      }
    }
    if (memo) memo.last = unproven.size > 0 ? { nodeClaims: [...nodeClaims], locations, instanceTypes: [...instanceTypes], unproven } : undefined;
    return out;
  }

  /**
   * Live on-demand SkuNotAvailable marks (for a re-check against the Resource SKUs
   * restrictions). A spot one says the spot capacity ran out, which Resource SKUs never shows.
   */
  skuNotAvailable(): { region: string; nodeClass: string; mark: OfferingMark }[] {
    const out: { region: string; nodeClass: string; mark: OfferingMark }[] = [];
    for (const [region, list] of this.state.marks) {
      for (const { mark, nodeClass } of list) if (mark.reason === 'SkuNotAvailable' && mark.capacityType !== 'spot' && mark.expiresAt > this.state.now && mark.sku !== '*') out.push({ region, nodeClass, mark });
    }
    return out;
  }
}

/** NodeClaims by the region of their NodeClass (`locations`: NodeClass name → region); others left out. */
function groupByRegion(claims: Iterable<NodeClaim>, locations: ReadonlyMap<string, string>): Map<string, NodeClaim[]> {
  const out = new Map<string, NodeClaim[]>();
  for (const claim of claims) {
    const region = locations.get(claim.spec.nodeClassRef.name);
    if (!region) continue;
    let list = out.get(region);
    if (!list) out.set(region, (list = []));
    list.push(claim);
  }
  return out;
}

