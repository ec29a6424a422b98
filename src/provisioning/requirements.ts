/**
 * Node selector requirement sets with Karpenter's semantics (pkg/scheduling/requirements.go).
 *
 * A requirement is a set of allowed label values, stored either as the values themselves or
 * as their complement (NotIn/Exists), optionally bounded by integer Gt/Lt. That shape makes
 * intersection closed and cheap, which is what the scheduler does all day: NodePool ∩ pod ∩
 * instance type. Objects are immutable so they can be shared between pods of the same shape.
 */
import type { NodeSelectorRequirement, SelectorOperator, Taint, Toleration } from '../ports/cluster.js';
import type { InstanceType } from '../catalog/skus.js';
import { offeredCapacityTypes } from '../catalog/offerings.js';
import { gpuManufacturerOf, parseVmSize } from '../catalog/vm-size.js';
import {
  AKS_LABEL_CLUSTER, AKS_LABEL_MODE, AKS_LABEL_PRIORITY, AKS_LABEL_SCALESET_PRIORITY, AKS_LABEL_SKU_CPU, AKS_LABEL_SKU_MEMORY,
  AKS_MODE_SYSTEM, AKS_MODE_USER, AKS_PRIORITY_REGULAR, AKS_PRIORITY_SPOT, CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT, LABEL_ARCH,
  LABEL_CAPACITY_TYPE, LABEL_GPU_COUNT, LABEL_GPU_MANUFACTURER, LABEL_GPU_NAME, LABEL_INSTANCE_TYPE, LABEL_NODEPOOL, LABEL_OS,
  LABEL_PLACEMENT_SCOPE, LABEL_REGION, LABEL_SKU_ACCELERATED_NETWORKING, LABEL_SKU_CPU, LABEL_SKU_FAMILY, LABEL_SKU_MEMORY,
  LABEL_SKU_NAME, LABEL_SKU_SERIES, LABEL_SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE, LABEL_SKU_STORAGE_PREMIUM_CAPABLE,
  LABEL_SKU_VERSION, LABEL_ZONE, PLACEMENT_SCOPE_REGIONAL, PLACEMENT_SCOPE_ZONAL,
} from '../apis/well-known.js';


/**
 * Labels whose values come from the instance type at launch, so a pod may require them even
 * when the NodePool says nothing about them (Karpenter's AllowUndefinedWellKnownLabels). The
 * Azure provider's set (pkg/apis/v1beta1/labels.go AzureWellKnownLabels) less the keys whose
 * value azflex cannot know: os-sku (a marketplace image is no AKS OS SKU) and fips_enabled
 * (azflex never enables FIPS). README "Karpenter compatibility" says why for each.
 */
export const WELL_KNOWN_LABELS: ReadonlySet<string> = new Set([
  LABEL_INSTANCE_TYPE, LABEL_REGION, LABEL_ZONE, LABEL_CAPACITY_TYPE, LABEL_ARCH, LABEL_OS, LABEL_NODEPOOL,
  LABEL_SKU_NAME, LABEL_SKU_FAMILY, LABEL_SKU_SERIES, LABEL_SKU_VERSION, LABEL_SKU_CPU, LABEL_SKU_MEMORY,
  LABEL_GPU_COUNT, LABEL_GPU_NAME, LABEL_GPU_MANUFACTURER,
  LABEL_SKU_ACCELERATED_NETWORKING, LABEL_SKU_STORAGE_PREMIUM_CAPABLE, LABEL_SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE,
  LABEL_PLACEMENT_SCOPE, AKS_LABEL_SKU_CPU, AKS_LABEL_SKU_MEMORY,
  AKS_LABEL_CLUSTER, AKS_LABEL_MODE, AKS_LABEL_SCALESET_PRIORITY, AKS_LABEL_PRIORITY,
]);

/**
 * The values a NodePool `In` requirement on these keys may name (karpenter.sh/v1
 * WellKnownValuesForRequirements, as the Azure provider registers them): a requirement naming
 * none of them is refused, as upstream's NodePool validation refuses it.
 */
export const WELL_KNOWN_VALUES: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  [LABEL_CAPACITY_TYPE, new Set([CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT])],
  [LABEL_SKU_ACCELERATED_NETWORKING, new Set(['true', 'false'])],
  [LABEL_SKU_STORAGE_PREMIUM_CAPABLE, new Set(['true', 'false'])],
  [LABEL_GPU_MANUFACTURER, new Set(['nvidia', 'amd'])],
  [LABEL_PLACEMENT_SCOPE, new Set([PLACEMENT_SCOPE_ZONAL, PLACEMENT_SCOPE_REGIONAL])],
  [AKS_LABEL_MODE, new Set([AKS_MODE_SYSTEM, AKS_MODE_USER])],
  [AKS_LABEL_SCALESET_PRIORITY, new Set([AKS_PRIORITY_REGULAR, AKS_PRIORITY_SPOT])],
  [AKS_LABEL_PRIORITY, new Set([AKS_PRIORITY_REGULAR, AKS_PRIORITY_SPOT])],
]);

/** kubernetes.azure.com/scalesetpriority and priority of a capacity type, as the Azure provider's offerings pair them. */
export function aksPriorityOf(capacityType: string): string {
  return capacityType === AKS_PRIORITY_SPOT ? AKS_PRIORITY_SPOT : AKS_PRIORITY_REGULAR;
}

/**
 * kubernetes.azure.com/cluster's value: the node resource group as AKS writes it on its nodes
 * (parentheses become "-", at most 63 characters, a trailing "-", "_" or "." made "z" so the
 * value is a valid label value). Undefined when no node resource group is configured.
 */
export function clusterLabelValue(nodeResourceGroup: string | undefined): string | undefined {
  if (!nodeResourceGroup) return undefined;
  let value = nodeResourceGroup.replace(/[()]/g, '-').slice(0, 63);
  if (/[-_.]$/.test(value)) value = value.length > 62 ? `${value.slice(0, 62)}z` : `${value}z`;
  return value;
}

const EMPTY_VALUES: ReadonlySet<string> = new Set();
const REQUIREMENT_POOL_MAX = 32_768;

function parseInteger(value: string): number | undefined {
  if (!/^[+-]?\d+$/.test(value)) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

export class Requirement {
  private constructor(
    readonly key: string,
    /** True when `values` lists what is excluded rather than what is allowed. */
    readonly complement: boolean,
    readonly values: ReadonlySet<string>,
    /** Exclusive integer bounds; only meaningful on complement sets (finite sets are pre-filtered). */
    readonly greaterThan: number | undefined,
    readonly lessThan: number | undefined,
    readonly minValues: number | undefined,
  ) {}

  static of(key: string, complement: boolean, values: ReadonlySet<string>, greaterThan?: number, lessThan?: number, minValues?: number): Requirement {
    return new Requirement(key, complement, values, greaterThan, lessThan, minValues);
  }

  static in(key: string, values: Iterable<string>): Requirement {
    return Requirement.pooled(key, false, [...values]);
  }

  static exists(key: string): Requirement {
    return Requirement.pooled(key, true, []);
  }

  static doesNotExist(key: string): Requirement {
    return Requirement.pooled(key, false, []);
  }

  /**
   * Requirements from selectors, labels and the catalog, one object per key and values:
   * immutable, so equal ones can be one. A NodeClaim's 21 keys are mostly its pool's and its
   * neighbours', and an instance type's mostly every other type's; unshared, 1,000 NodeClaims
   * and the catalog held 87,000 of them with their Sets (about 25 MiB, from heap snapshots).
   * Cleared when full, so the pool stays bounded however many values pass through.
   */
  private static readonly pool = new Map<string, Requirement>();

  private static pooled(key: string, complement: boolean, values: readonly string[], greaterThan?: number, lessThan?: number, minValues?: number): Requirement {
    const id = `${key}\u0000${complement ? '!' : '='}${greaterThan ?? ''}\u0000${lessThan ?? ''}\u0000${minValues ?? ''}\u0000${values.join('\u0000')}`;
    let requirement = Requirement.pool.get(id);
    if (!requirement) {
      if (Requirement.pool.size >= REQUIREMENT_POOL_MAX) Requirement.pool.clear();
      requirement = new Requirement(key, complement, values.length === 0 ? EMPTY_VALUES : new Set(values), greaterThan, lessThan, minValues);
      Requirement.pool.set(id, requirement);
    }
    return requirement;
  }

  static fromSelector(r: NodeSelectorRequirement): Requirement {
    const values = r.values ?? [];
    switch (r.operator) {
      case 'In': return Requirement.pooled(r.key, false, values, undefined, undefined, r.minValues);
      case 'NotIn': return Requirement.pooled(r.key, true, values, undefined, undefined, r.minValues);
      case 'Exists': return Requirement.pooled(r.key, true, [], undefined, undefined, r.minValues);
      case 'DoesNotExist': return Requirement.pooled(r.key, false, [], undefined, undefined, r.minValues);
      case 'Gt':
      case 'Lt':
      case 'Gte':
      case 'Lte': {
        const bound = values.length === 1 ? parseInteger(values[0]!) : undefined;
        // An unparseable bound can match nothing, as in the kube-scheduler.
        if (bound === undefined) return Requirement.doesNotExist(r.key);
        // Bounds are integers, so the inclusive forms are the exclusive ones moved by one.
        if (r.operator === 'Gt' || r.operator === 'Gte') {
          return Requirement.pooled(r.key, true, [], r.operator === 'Gt' ? bound : bound - 1, undefined, r.minValues);
        }
        return Requirement.pooled(r.key, true, [], undefined, r.operator === 'Lt' ? bound : bound + 1, r.minValues);
      }
      default:
        // The API server's enum keeps other operators out; a newer upstream operator matches nothing
        // rather than throwing (NodePool validation reports it on the NodePool).
        return Requirement.doesNotExist(r.key);
    }
  }

  private withinBounds(value: string): boolean {
    if (this.greaterThan === undefined && this.lessThan === undefined) return true;
    const n = parseInteger(value);
    if (n === undefined) return false;
    return (this.greaterThan === undefined || n > this.greaterThan) && (this.lessThan === undefined || n < this.lessThan);
  }

  has(value: string): boolean {
    if (this.complement) return !this.values.has(value) && this.withinBounds(value);
    return this.values.has(value);
  }

  /** True when no label value (including absence, see DoesNotExist handling) satisfies it. */
  isEmpty(): boolean {
    if (!this.complement) return this.values.size === 0;
    if (this.greaterThan === undefined || this.lessThan === undefined) return false;
    const span = this.lessThan - this.greaterThan - 1;
    if (span <= 0) return true;
    // Bounded complement: empty only if NotIn removes every integer in range.
    if (span > this.values.size) return false;
    for (let n = this.greaterThan + 1; n < this.lessThan; n++) if (!this.values.has(String(n))) return false;
    return true;
  }

  operator(): SelectorOperator {
    if (this.complement) {
      if (this.values.size > 0) return 'NotIn';
      if (this.greaterThan !== undefined) return 'Gt';
      if (this.lessThan !== undefined) return 'Lt';
      return 'Exists';
    }
    return this.values.size > 0 ? 'In' : 'DoesNotExist';
  }

  intersection(other: Requirement): Requirement {
    if (this === other) return this;
    const minValues = maxDefined(this.minValues, other.minValues);
    if (this.complement && other.complement) {
      const greaterThan = maxDefined(this.greaterThan, other.greaterThan);
      const lessThan = minDefined(this.lessThan, other.lessThan);
      const values = this.values.size === 0 ? other.values : other.values.size === 0 ? this.values : new Set([...this.values, ...other.values]);
      return new Requirement(this.key, true, values, greaterThan, lessThan, minValues);
    }
    const [finite, filter] = this.complement ? [other, this as Requirement] : [this as Requirement, other];
    const values = new Set<string>();
    for (const value of finite.values) if (filter.has(value)) values.add(value);
    return new Requirement(this.key, false, values, undefined, undefined, minValues);
  }

  /** As selectors; a bounded NotIn needs several (their intersection is this requirement). */
  toSelectors(): NodeSelectorRequirement[] {
    const out: NodeSelectorRequirement[] = [];
    if (!this.complement) {
      out.push(this.values.size > 0 ? { key: this.key, operator: 'In', values: [...this.values].sort() } : { key: this.key, operator: 'DoesNotExist' });
    } else {
      if (this.values.size > 0) out.push({ key: this.key, operator: 'NotIn', values: [...this.values].sort() });
      if (this.greaterThan !== undefined) out.push({ key: this.key, operator: 'Gt', values: [String(this.greaterThan)] });
      if (this.lessThan !== undefined) out.push({ key: this.key, operator: 'Lt', values: [String(this.lessThan)] });
      if (out.length === 0) out.push({ key: this.key, operator: 'Exists' });
    }
    if (this.minValues !== undefined) for (const selector of out) selector.minValues = this.minValues;
    return out;
  }

  toString(): string {
    return this.toSelectors().map((s) => `${s.key} ${s.operator}${s.values ? ` [${s.values.join(',')}]` : ''}`).join(', ');
  }
}

function maxDefined(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

function isNotInOrDoesNotExist(r: Requirement): boolean {
  const op = r.operator();
  return op === 'NotIn' || op === 'DoesNotExist';
}

/** An immutable set of requirements, at most one per key (repeated keys are intersected). */
export class Requirements {
  static readonly EMPTY: Requirements = new Requirements(new Map());

  private constructor(private readonly byKey: ReadonlyMap<string, Requirement>) {}

  static fromSelectors(selectors: readonly NodeSelectorRequirement[]): Requirements {
    const map = new Map<string, Requirement>();
    for (const selector of selectors) {
      const r = Requirement.fromSelector(selector);
      const existing = map.get(r.key);
      map.set(r.key, existing ? existing.intersection(r) : r);
    }
    return new Requirements(map);
  }

  static fromLabels(labels: Record<string, string>): Requirements {
    const map = new Map<string, Requirement>();
    for (const key in labels) map.set(key, Requirement.in(key, [labels[key]!]));
    return new Requirements(map);
  }

  static of(requirements: Iterable<Requirement>): Requirements {
    const map = new Map<string, Requirement>();
    for (const r of requirements) {
      const existing = map.get(r.key);
      map.set(r.key, existing ? existing.intersection(r) : r);
    }
    return new Requirements(map);
  }

  get size(): number {
    return this.byKey.size;
  }

  get(key: string): Requirement | undefined {
    return this.byKey.get(key);
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  keys(): IterableIterator<string> {
    return this.byKey.keys();
  }

  values(): IterableIterator<Requirement> {
    return this.byKey.values();
  }

  /** Set intersection per key; keys present on one side only are kept as they are. */
  intersect(other: Requirements): Requirements {
    if (other.byKey.size === 0 || other === this) return this;
    if (this.byKey.size === 0) return other;
    const map = new Map(this.byKey);
    for (const [key, r] of other.byKey) {
      const existing = map.get(key);
      map.set(key, existing ? existing.intersection(r) : r);
    }
    return new Requirements(map);
  }

  /**
   * Karpenter's Intersects: every key both sides constrain must have a common value, except
   * that two "label absent is fine" requirements (NotIn/DoesNotExist) are compatible even
   * when their value sets do not overlap. Returns the reason on failure.
   */
  intersects(incoming: Requirements): string | undefined {
    const [small, large] = this.byKey.size <= incoming.byKey.size ? [this.byKey, incoming.byKey] : [incoming.byKey, this.byKey];
    for (const [key, r] of small) {
      const s = large.get(key);
      if (!s) continue;
      const existing = small === this.byKey ? r : s;
      const wanted = small === this.byKey ? s : r;
      if (!existing.intersection(wanted).isEmpty()) continue;
      if (isNotInOrDoesNotExist(wanted) && isNotInOrDoesNotExist(existing)) continue;
      return `${wanted.toString()} not satisfiable by ${existing.toString()}`;
    }
    return undefined;
  }

  /**
   * Karpenter's Compatible: like intersects, but a key the incoming side requires and this
   * side does not define is only acceptable when it is a well-known label (resolved by the
   * instance type later) or when absence satisfies it.
   */
  compatible(incoming: Requirements, allowUndefined: ReadonlySet<string> = WELL_KNOWN_LABELS): string | undefined {
    for (const [key, wanted] of incoming.byKey) {
      if (this.byKey.has(key) || allowUndefined.has(key)) continue;
      if (isNotInOrDoesNotExist(wanted)) continue;
      return `label "${key}" does not have known values`;
    }
    return this.intersects(incoming);
  }

  /** Labels a node created from these requirements will certainly carry (single-valued In). */
  labels(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, r] of this.byKey) {
      if (!r.complement && r.values.size === 1) out[key] = r.values.values().next().value!;
    }
    return out;
  }

  toSelectors(): NodeSelectorRequirement[] {
    const out: NodeSelectorRequirement[] = [];
    for (const key of [...this.byKey.keys()].sort()) out.push(...this.byKey.get(key)!.toSelectors());
    return out;
  }

  toString(): string {
    return [...this.byKey.values()].map((r) => r.toString()).join('; ');
  }
}

/**
 * The labels an instance type carries in a region, as requirements, with the Azure
 * Karpenter provider's values: sku-family is the size's family letter ("D", "N"), sku-series
 * "Ds_v5", sku-version the number after "v" (1 when unversioned), sku-memory MiB. GPU labels
 * are explicit on CPU SKUs too (count 0, no GPU name) so "sku-gpu-name Exists" excludes them;
 * so is the ephemeral OS disk size on sizes that cannot hold one.
 */
/**
 * Every plan asks for the labels of every offered instance type; Requirements are immutable
 * and catalog entries are replaced rather than changed, so each answer is remembered per
 * instance type object and region.
 */
const requirementsOfType = new WeakMap<InstanceType, Map<string, Requirements>>();

export function instanceTypeRequirements(
  instanceType: InstanceType, region: string, offeredZones?: readonly string[], cluster?: string, capacityTypes?: readonly string[],
): Requirements {
  const types = capacityTypes ?? offeredCapacityTypes(instanceType);
  // Zones some marks left out: a fresh answer (rare; marks are few), never remembered.
  if (offeredZones && offeredZones.length > 0) return computeInstanceTypeRequirements(instanceType, region, offeredZones, cluster, types);
  let byRegion = requirementsOfType.get(instanceType);
  if (!byRegion) requirementsOfType.set(instanceType, (byRegion = new Map()));
  const key = `${region}\u0000${cluster ?? ''}\u0000${types.join(',')}`;
  let requirements = byRegion.get(key);
  if (!requirements) byRegion.set(key, (requirements = computeInstanceTypeRequirements(instanceType, region, undefined, cluster, types)));
  return requirements;
}

/** A zonal type offered without a zone (every zone of it is marked): no zone label, placement-scope regional. */
export function regionalRequirements(instanceType: InstanceType, region: string, cluster?: string, capacityTypes?: readonly string[]): Requirements {
  return computeInstanceTypeRequirements(instanceType, region, [], cluster, capacityTypes ?? offeredCapacityTypes(instanceType));
}

/**
 * `cluster` is kubernetes.azure.com/cluster's value (clusterLabelValue of the configured node
 * resource group); without one the label is DoesNotExist, so a pod that requires it is not
 * planned onto a node that will not carry it.
 */
function computeInstanceTypeRequirements(
  instanceType: InstanceType, region: string, offeredZones: readonly string[] | undefined, cluster: string | undefined, capacityTypes: readonly string[],
): Requirements {
  const zones = offeredZones ?? instanceType.zones?.[region];
  const size = parseVmSize(instanceType.name);
  const list: Requirement[] = [
    Requirement.in(LABEL_INSTANCE_TYPE, [instanceType.name]),
    Requirement.in(LABEL_SKU_NAME, [instanceType.name]),
    size ? Requirement.in(LABEL_SKU_FAMILY, [size.family]) : Requirement.doesNotExist(LABEL_SKU_FAMILY),
    size ? Requirement.in(LABEL_SKU_SERIES, [size.series]) : Requirement.doesNotExist(LABEL_SKU_SERIES),
    size ? Requirement.in(LABEL_SKU_VERSION, [size.version]) : Requirement.doesNotExist(LABEL_SKU_VERSION),
    Requirement.in(LABEL_REGION, [region]),
    // Regional offerings carry no zone label, so "zone Exists" (a zone spread) excludes them.
    zones && zones.length > 0 ? Requirement.in(LABEL_ZONE, zones) : Requirement.doesNotExist(LABEL_ZONE),
    Requirement.in(LABEL_CAPACITY_TYPE, capacityTypes),
    Requirement.in(LABEL_ARCH, [instanceType.arch]),
    Requirement.in(LABEL_OS, ['linux']),
    Requirement.in(LABEL_SKU_CPU, [String(instanceType.vcpu)]),
    Requirement.in(LABEL_SKU_MEMORY, [String(instanceType.memoryMiB)]),
    Requirement.in(LABEL_GPU_COUNT, [String(instanceType.gpuCount)]),
    Requirement.in(LABEL_SKU_ACCELERATED_NETWORKING, [String(instanceType.acceleratedNetworking ?? false)]),
    Requirement.in(LABEL_SKU_STORAGE_PREMIUM_CAPABLE, [String(instanceType.premiumIO ?? false)]),
    (instanceType.ephemeralOSDiskMaxGiB ?? 0) > 0
      ? Requirement.in(LABEL_SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE, [String(instanceType.ephemeralOSDiskMaxGiB)])
      : Requirement.doesNotExist(LABEL_SKU_STORAGE_EPHEMERAL_OS_MAX_SIZE),
    // A zonal type is launched in one of its zones (the VM PUT names it), any other without one.
    Requirement.in(LABEL_PLACEMENT_SCOPE, [zones && zones.length > 0 ? PLACEMENT_SCOPE_ZONAL : PLACEMENT_SCOPE_REGIONAL]),
    Requirement.in(AKS_LABEL_SKU_CPU, [String(instanceType.vcpu)]),
    Requirement.in(AKS_LABEL_SKU_MEMORY, [String(instanceType.memoryMiB)]),
    // Either mode: a NodePool or pod may ask for system nodes; launch writes `user` otherwise.
    Requirement.in(AKS_LABEL_MODE, [AKS_MODE_SYSTEM, AKS_MODE_USER]),
    Requirement.in(AKS_LABEL_SCALESET_PRIORITY, capacityTypes.map(aksPriorityOf)),
    Requirement.in(AKS_LABEL_PRIORITY, capacityTypes.map(aksPriorityOf)),
    cluster !== undefined ? Requirement.in(AKS_LABEL_CLUSTER, [cluster]) : Requirement.doesNotExist(AKS_LABEL_CLUSTER),
  ];
  const gpuName = instanceType.gpuModel ?? size?.accelerator;
  if (instanceType.gpuCount > 0 && gpuName) {
    list.push(Requirement.in(LABEL_GPU_NAME, [gpuName]), Requirement.in(LABEL_GPU_MANUFACTURER, [gpuManufacturerOf(gpuName)!]));
  } else {
    list.push(Requirement.doesNotExist(LABEL_GPU_NAME), Requirement.doesNotExist(LABEL_GPU_MANUFACTURER));
  }
  return Requirements.of(list);
}

/** core/v1 Toleration.ToleratesTaint. */
export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  // An empty key with Exists tolerates everything; an empty key with Equal is invalid.
  if (!toleration.key && toleration.operator !== 'Exists') return false;
  if (toleration.operator === 'Exists') return true;
  return (toleration.value ?? '') === (taint.value ?? '');
}

/**
 * The first taint that keeps the pod off the node, or undefined. PreferNoSchedule only
 * discourages, so it blocks only when `preferNoSchedule` says so (the scheduler, which
 * tolerates it as its last relaxation, as Karpenter does); callers pass NodePool `taints`,
 * not `startupTaints` (those are removed once the node is initialised, so pods need not
 * tolerate them).
 */
export function firstUntoleratedTaint(tolerations: readonly Toleration[], taints: readonly Taint[], preferNoSchedule = false): Taint | undefined {
  for (const taint of taints) {
    if (taint.effect === 'PreferNoSchedule' && !preferNoSchedule) continue;
    if (!tolerations.some((t) => toleratesTaint(t, taint))) return taint;
  }
  return undefined;
}

export function formatTaint(taint: Taint): string {
  return `${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`;
}
