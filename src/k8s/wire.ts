/** Tiny total accessors of the wire format (untrusted JSON), shared by the converters. */

export type Dict = Record<string, unknown>;

export function obj(v: unknown): Dict {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Dict) : {};
}
export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
/**
 * A timestamp as the API server writes it. Typed client-node reads (core kinds) deserialize
 * timestamps to Date while watch events carry strings; both map to RFC 3339 seconds.
 */
export function time(v: unknown): string | undefined {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? undefined : shared(v.toISOString().replace(/\.\d{3}Z$/, 'Z'));
  return sharedStr(v);
}
export function strMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  // Keys need no sharing: JSON.parse makes property names unique strings already.
  for (const [k, x] of Object.entries(obj(v))) out[k] = shared(typeof x === 'string' ? x : String(x));
  return out;
}

/**
 * One copy of each short string the converters keep: at most POOL_MAX, cleared when full, so
 * it stays bounded however long the process runs. JSON.parse makes a new string of every value, so 10,000 pods
 * of one Deployment held 10,000 copies of each label value, toleration, owner and condition
 * (10.8 MiB of duplicate strings at 1,000 nodes / 10,000 pods, from a heap snapshot). Names,
 * uids and resourceVersions are unique and never pass through here.
 */
const POOL_MAX = 32_768;
const POOL_MAX_LENGTH = 96;
const pool = new Map<string, string>();

export function shared(s: string): string {
  if (s.length > POOL_MAX_LENGTH) return s;
  const hit = pool.get(s);
  if (hit !== undefined) return hit;
  if (pool.size >= POOL_MAX) pool.clear();
  pool.set(s, s);
  return s;
}

/** str(), shared: for values many objects repeat. */
export function sharedStr(v: unknown): string | undefined {
  return typeof v === 'string' ? shared(v) : undefined;
}

export function setOpt<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}
