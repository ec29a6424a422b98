/**
 * What a provisioning pass reads and whether it needs to plan at all: the cluster's lists with
 * the NodeClaims created here that the cache does not show yet, the offerings ruled out now,
 * and the fingerprint of it all. A pass whose inputs and every offering it asked about are as
 * the last complete one found them would decide the same, and is skipped.
 */
import type {
  AzureFlexNodeClass, CachedKind, ClusterPort, Node, NodeClaim, NodePool, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass,
} from '../ports/cluster.js';
import type { InstanceType, InstanceTypeCatalog } from '../catalog/skus.js';
import type { SupportIssue } from './nodepool-support.js';
import type { OfferingMarks } from './offering-marks.js';
import type { QuotaLedger } from './quota.js';
import type { ReservationLedger } from './reservations.js';
import type { SchedulingResult } from './scheduler.js';
import type { PodsView } from './pods-view.js';
import type { Launch } from './launch.js';
import { inputsKey } from './inputs-key.js';

/** What a provisioning pass reads; their cache versions together say whether anything it read changed. */
const PLANNED_KINDS: readonly CachedKind[] = [
  'pods', 'nodePools', 'nodeClasses', 'nodeClaims', 'persistentVolumeClaims', 'persistentVolumes', 'storageClasses',
];

type ListsRead = [Pod[], Node[], NodePool[], AzureFlexNodeClass[], NodeClaim[], InstanceType[], PersistentVolumeClaim[], PersistentVolume[], StorageClass[]];

export interface PassLists {
  pods: Pod[];
  nodes: Node[];
  nodePools: NodePool[];
  nodeClasses: AzureFlexNodeClass[];
  /** The informer's NodeClaims. */
  listedNodeClaims: NodeClaim[];
  /** The informer's, then those created here that it does not show yet. */
  nodeClaims: NodeClaim[];
  instanceTypes: InstanceType[];
  claims: PersistentVolumeClaim[];
  volumes: PersistentVolume[];
  classes: StorageClass[];
}

/** Whether an offering (with a zone: that zone's) is ruled out now: blocked, marked or beyond quota. */
export type UnavailableCheck = (sku: string, region: string, capacityType: string, zone?: string) => boolean;

/** One planning pass: what it read, and what it has decided so far. */
export interface Pass {
  versions: string[] | undefined;
  lists: PassLists;
  offerings: OfferingQueries;
  /** NodePools azflex can honour (the others are explained on their status). */
  usablePools: NodePool[];
  /** Of those, the ones pending pods plan (static pools keep their replicas whatever is pending). */
  dynamicPools: NodePool[];
  pods: PodsView & { goneUids: readonly string[] };
  launch: Launch;
  created: NodeClaim[];
  /** Pools a failure in this pass left out, with why (explained on their status). */
  issues: Map<string, SupportIssue>;
  result: SchedulingResult;
}

/** Every list a pass reads, all at once (Promise.all's own promise: awaiting it costs what awaiting the lists does). */
export function readPassLists(cluster: ClusterPort, catalog: InstanceTypeCatalog): Promise<ListsRead> {
  return Promise.all([
    cluster.listPods(),
    cluster.listNodes(),
    cluster.listNodePools(),
    cluster.listNodeClasses(),
    cluster.listNodeClaims(),
    catalog.list(),
    cluster.listPersistentVolumeClaims(),
    cluster.listPersistentVolumes(),
    cluster.listStorageClasses(),
  ]);
}

export function passLists(read: ListsRead, withInFlight: (listed: NodeClaim[]) => NodeClaim[]): PassLists {
  const [pods, nodes, nodePools, nodeClasses, listedNodeClaims, instanceTypes, claims, volumes, classes] = read;
  return { pods, nodes, nodePools, nodeClasses, listedNodeClaims, nodeClaims: withInFlight(listedNodeClaims), instanceTypes, claims, volumes, classes };
}

/** Every cache's version (pods first), or undefined when the port cannot say for one of them. */
export function cacheVersions(cluster: ClusterPort): string[] | undefined {
  if (!cluster.cacheVersion) return undefined;
  const out: string[] = [];
  for (const kind of PLANNED_KINDS) {
    const v = cluster.cacheVersion(kind);
    if (v === undefined) return undefined;
    out.push(v);
  }
  return out;
}

/** Ruled out by the port's cache of unavailable offerings, a mark on a NodeClass, or the quota left. */
export function unavailableWith(isOfferingUnavailable: UnavailableCheck, marks: OfferingMarks | undefined, ledger: QuotaLedger | undefined): UnavailableCheck {
  return (sku, region, type, zone) =>
    isOfferingUnavailable(sku, region, type, zone) || (marks?.isUnavailable(sku, region, type, zone) ?? false) ||
    (ledger?.blocks(sku, region, type) ?? false);
}

/**
 * The fingerprint of a pass's inputs. With the caches' versions, only what they do not cover
 * is fingerprinted: NodeClaims created here that the cache does not show yet, and the catalog.
 */
export function passKey(versions: string[] | undefined, lists: PassLists, reserved: ReservationLedger | undefined): string {
  const { pods, nodePools, nodeClasses, nodeClaims, listedNodeClaims, instanceTypes, claims, volumes, classes } = lists;
  const key = versions !== undefined
    ? `${versions.join(',')}|${inputsKey(instanceTypes, nodeClaims.slice(listedNodeClaims.length))}`
    : inputsKey(pods, nodePools, nodeClasses, nodeClaims, instanceTypes, claims, volumes, classes);
  // Free reservation slots come from ARM, not the inputs: other counts plan differently.
  return reserved ? `${key}|${reserved.fingerprint()}` : key;
}

/**
 * What NodePool status reads: NodePools, NodeClasses, NodeClaims and the catalog, not pods. A
 * pass where only pods moved would compute what the last sync wrote (or found) again.
 * Undefined when the caches cannot say, or the pass created NodeClaims or met a pool's failure.
 */
export function statusKey(pass: Pass): string | undefined {
  const { versions, lists } = pass;
  if (versions === undefined || pass.created.length > 0 || pass.issues.size > 0) return undefined;
  const version = (kind: CachedKind): string | undefined => versions[PLANNED_KINDS.indexOf(kind)];
  return `${version('nodePools')},${version('nodeClasses')},${version('nodeClaims')}|${inputsKey(lists.instanceTypes, lists.nodeClaims.slice(lists.listedNodeClaims.length))}`;
}

type OfferingQuery = [sku: string, region: string, capacityType: string, unavailable: boolean, zone?: string];

/** The scheduler's questions about offerings in one pass, each with the answer it got. */
export class OfferingQueries {
  readonly asked: OfferingQuery[] = [];

  constructor(private readonly unavailableNow: UnavailableCheck) {}

  readonly isOfferingUnavailable = (sku: string, region: string, type: string): boolean => {
    const unavailable = this.unavailableNow(sku, region, type);
    this.asked.push([sku, region, type, unavailable]);
    return unavailable;
  };

  readonly isZoneUnavailable = (sku: string, region: string, zone: string, capacityType: string): boolean => {
    const unavailable = this.unavailableNow(sku, region, capacityType, zone);
    this.asked.push([sku, region, capacityType, unavailable, zone]);
    return unavailable;
  };
}

/** What the last complete plan read: its inputs' fingerprint and every offering it asked about. */
export class PlannedInputs {
  private last: { key: string; offerings: readonly OfferingQuery[] } | undefined;

  /** Whether a plan from `key` would decide what the last one did: same inputs, and each offering answered as it was. */
  unchanged(key: string, unavailableNow: UnavailableCheck): boolean {
    const seen = this.last;
    return seen?.key === key && seen.offerings.every(([sku, region, type, was, zone]) => unavailableNow(sku, region, type, zone) === was);
  }

  forget(): void {
    this.last = undefined;
  }

  /** A plan that created nothing and failed nothing: made again from the same inputs, it would decide the same. */
  remember(key: string, offerings: OfferingQueries): void {
    this.last = { key, offerings: offerings.asked };
  }
}
