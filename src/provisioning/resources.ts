/**
 * Kubernetes resource quantities as exact integers.
 *
 * `cpu` is held in millicores and every other resource in base units (bytes for memory and
 * ephemeral-storage, counts for pods and extended resources like nvidia.com/gpu), rounded up
 * the way resource.Quantity's MilliValue()/Value() do. Plain numbers rather than BigInt keep
 * the scheduler's inner loop cheap; they are exact below 2^53 (8 PiB of memory per sum), and
 * parsing refuses anything larger rather than silently losing precision.
 */
import type { Container, Pod, ResourceList } from '../ports/cluster.js';

export const RESOURCE_CPU = 'cpu';
export const RESOURCE_MEMORY = 'memory';
export const RESOURCE_PODS = 'pods';
export const RESOURCE_EPHEMERAL_STORAGE = 'ephemeral-storage';
export const RESOURCE_GPU = 'nvidia.com/gpu';

/** Resource name → integer amount (millicores for cpu, base units otherwise). */
export type Resources = Record<string, number>;

const BINARY_SUFFIX_EXP2: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_SUFFIX_EXP10: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const QUANTITY_PATTERN = /^([+-]?)(\d*)(?:\.(\d*))?(?:([eE])([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/;

/** Quantity strings repeat endlessly across pods ("1", "500m", "4Gi"); parse each once. */
const MAX_CACHE_ENTRIES = 20_000;
const milliCache = new Map<string, number>();
const unitCache = new Map<string, number>();

export class QuantityError extends Error {
  override readonly name = 'QuantityError';
}

function usesMilliUnits(resourceName: string): boolean {
  return resourceName === RESOURCE_CPU;
}

/** Exact parse with BigInt (cached, so its cost is paid once per distinct string). */
function parseExact(quantity: string, milli: boolean): number {
  const match = QUANTITY_PATTERN.exec(quantity.trim());
  const whole = match?.[2] ?? '';
  const fraction = match?.[3] ?? '';
  if (!match || (whole === '' && fraction === '')) throw new QuantityError(`invalid quantity "${quantity}"`);
  const negative = match[1] === '-';
  let exp10 = -fraction.length + (milli ? 3 : 0);
  let exp2 = 0;
  if (match[4] !== undefined) exp10 += Number(match[5]);
  else if (match[6] !== undefined) {
    const suffix = match[6];
    if (suffix in BINARY_SUFFIX_EXP2) exp2 = BINARY_SUFFIX_EXP2[suffix]!;
    else exp10 += DECIMAL_SUFFIX_EXP10[suffix]!;
  }
  let numerator = BigInt(whole + fraction || '0') * (1n << BigInt(exp2));
  let denominator = 1n;
  if (exp10 >= 0) numerator *= 10n ** BigInt(exp10);
  else denominator = 10n ** BigInt(-exp10);
  // Round away from zero like resource.Quantity: a request of "0.5m" cpu still needs 1m.
  let magnitude = numerator / denominator;
  if (magnitude * denominator !== numerator) magnitude += 1n;
  if (magnitude > BigInt(Number.MAX_SAFE_INTEGER)) throw new QuantityError(`quantity "${quantity}" is too large`);
  const value = Number(magnitude);
  return negative && value !== 0 ? -value : value;
}

/** Integer with an optional integral-scale suffix: the overwhelmingly common spelling. */
const SIMPLE_PATTERN = /^(\d{1,15})(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;
const SIMPLE_SCALE: Record<string, number> = {
  '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40,
};

/**
 * "500m", "4", "512Mi" without BigInt: with at most 15 digits and an integral scale the
 * product is exact whenever it is a safe integer. Anything else takes the exact path.
 */
function parseSimple(quantity: string, milli: boolean): number | undefined {
  const match = SIMPLE_PATTERN.exec(quantity);
  if (!match) return undefined;
  const digits = Number(match[1]);
  const suffix = match[2] ?? '';
  let value: number;
  if (suffix === 'm') {
    if (!milli) return undefined; // fractional base units round up: leave to the exact path
    value = digits;
  } else {
    value = digits * SIMPLE_SCALE[suffix]! * (milli ? 1000 : 1);
  }
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Parses a quantity into the canonical integer unit for `resourceName`. */
export function parseQuantity(quantity: string, resourceName: string): number {
  const milli = usesMilliUnits(resourceName);
  const cache = milli ? milliCache : unitCache;
  const cached = cache.get(quantity);
  if (cached !== undefined) return cached;
  const value = parseSimple(quantity, milli) ?? parseExact(quantity, milli);
  if (cache.size >= MAX_CACHE_ENTRIES) cache.clear();
  cache.set(quantity, value);
  return value;
}

const BINARY_UNITS: ReadonlyArray<[string, number]> = [
  ['Ei', 2 ** 60], ['Pi', 2 ** 50], ['Ti', 2 ** 40], ['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 2 ** 10],
];

/** Formats a canonical amount back into a quantity string that parses to the same value. */
export function formatQuantity(value: number, resourceName: string): string {
  if (usesMilliUnits(resourceName)) return value % 1000 === 0 ? String(value / 1000) : `${value}m`;
  if (resourceName === RESOURCE_MEMORY || resourceName === RESOURCE_EPHEMERAL_STORAGE) {
    for (const [suffix, size] of BINARY_UNITS) {
      if (value !== 0 && value % size === 0) return `${value / size}${suffix}`;
    }
  }
  return String(value);
}

export function resourcesFromList(list: ResourceList | undefined): Resources {
  const out: Resources = {};
  if (!list) return out;
  for (const name in list) out[name] = parseQuantity(list[name]!, name);
  return out;
}

/**
 * NodePool limits: a bound beyond exact integer range (Karpenter's own benchmark sets
 * memory: 10000000Gi, ~1.1e16 bytes) can never be reached, so it parses as Infinity instead
 * of failing the whole scheduling run.
 */
export function limitsFromList(list: ResourceList | undefined): Resources {
  const out: Resources = {};
  if (!list) return out;
  for (const name in list) {
    try {
      out[name] = parseQuantity(list[name]!, name);
    } catch (error) {
      if (!(error instanceof QuantityError) || !/too large/.test(error.message) || list[name]!.trim().startsWith('-')) throw error;
      out[name] = Infinity;
    }
  }
  return out;
}

export function resourcesToList(resources: Resources): ResourceList {
  const out: ResourceList = {};
  for (const name of Object.keys(resources).sort()) out[name] = formatQuantity(resources[name]!, name);
  return out;
}

/** target += source, in place (the hot path sums many requests into one accumulator). */
export function addInto(target: Resources, source: Resources, times = 1): Resources {
  for (const name in source) target[name] = (target[name] ?? 0) + source[name]! * times;
  return target;
}

export function addResources(a: Resources, b: Resources): Resources {
  return addInto(addInto({}, a), b);
}

export function subtractResources(a: Resources, b: Resources): Resources {
  const out: Resources = { ...a };
  for (const name in b) out[name] = (out[name] ?? 0) - b[name]!;
  return out;
}

/** target[r] = max(target[r], source[r]), in place. */
export function maxInto(target: Resources, source: Resources): Resources {
  for (const name in source) {
    const value = source[name]!;
    const current = target[name];
    if (current === undefined || value > current) target[name] = value;
  }
  return target;
}

/** Whether every positive request fits into what is available (absent means none). */
export function fitsWithin(request: Resources, available: Resources): boolean {
  for (const name in request) {
    const amount = request[name]!;
    if (amount > 0 && amount > (available[name] ?? 0)) return false;
  }
  return true;
}

/** Whether used + request fits into capacity, without allocating the sum. */
export function fitsOnTop(used: Resources, request: Resources, capacity: Resources): boolean {
  for (const name in request) {
    const amount = request[name]!;
    if (amount > 0 && (used[name] ?? 0) + amount > (capacity[name] ?? 0)) return false;
  }
  return true;
}

/** How many copies of `unit` fit into capacity − used (Infinity when unit asks for nothing). */
export function copiesThatFit(unit: Resources, used: Resources, capacity: Resources): number {
  let copies = Infinity;
  for (const name in unit) {
    const amount = unit[name]!;
    if (amount <= 0) continue;
    const free = (capacity[name] ?? 0) - (used[name] ?? 0);
    const n = free < amount ? 0 : Math.floor(free / amount);
    if (n < copies) copies = n;
    if (copies === 0) return 0;
  }
  return copies;
}

/** Names of resources whose request exceeds what is available, for error messages. */
export function exceededResources(request: Resources, available: Resources): string[] {
  const out: string[] = [];
  for (const name in request) {
    if (request[name]! > 0 && request[name]! > (available[name] ?? 0)) out.push(name);
  }
  return out;
}

function sumContainers(containers: readonly Container[]): Resources {
  const total: Resources = {};
  for (const container of containers) addInto(total, resourcesFromList(container.resources.requests));
  return total;
}

/**
 * Effective pod requests as the kube-scheduler computes them: init containers run one at a
 * time before the app containers, so the pod needs max(largest init container, sum of
 * containers) per resource, plus the RuntimeClass overhead, plus one `pods` slot.
 */
export function podRequests(pod: Pod): Readonly<Resources> {
  // Per spec object (writers replace a pod's spec, never mutate it): every scheduling pass and
  // kubelet tick sums the requests of every bound pod, and with 10,000 pods parsing their
  // quantities again each time was a tenth of a fleet simulation's CPU. Frozen: shared.
  const cached = requestsBySpec.get(pod.spec);
  if (cached) return cached;
  const requests = sumContainers(pod.spec.containers);
  for (const init of pod.spec.initContainers) maxInto(requests, resourcesFromList(init.resources.requests));
  if (pod.spec.overhead) addInto(requests, resourcesFromList(pod.spec.overhead));
  requests[RESOURCE_PODS] = (requests[RESOURCE_PODS] ?? 0) + 1;
  Object.freeze(requests);
  requestsBySpec.set(pod.spec, requests);
  return requests;
}

const requestsBySpec = new WeakMap<Pod['spec'], Readonly<Resources>>();
