/**
 * The CEL rules (`x-kubernetes-validations`) of the CRDs the simulator validates manifests
 * against, evaluated as the API server would, with the CRD's own message. There is no CEL
 * interpreter here: each rule the NodePool CRD carries has a TypeScript twin, keyed by the
 * rule's exact text, so a CRD whose rules change shows up as an unknown rule (skipped, and
 * `KNOWN_RULES` says which are checked) rather than as a silently different check.
 */
type Raw = Record<string, unknown>;
type Rule = (self: unknown) => boolean;

const RESERVED = ['karpenter.sh/capacity-type', 'karpenter.sh/nodepool'];
/** CEL's `self.find("^([^/]+)")`: the key's prefix before the first "/" (the whole key if none). */
const domain = (key: string): string => /^([^/]+)/.exec(key)?.[1] ?? '';
const keys = (self: unknown): string[] => (self && typeof self === 'object' ? Object.keys(self) : []);
const items = (self: unknown): Raw[] => (Array.isArray(self) ? (self as Raw[]) : []);
const values = (x: Raw): unknown[] => (Array.isArray(x.values) ? x.values : []);
/** CEL's int(string): a base-10 int64, else an evaluation error (which rejects the object). */
const celInt = (v: unknown): number | undefined => (typeof v === 'string' && /^[+-]?\d{1,18}$/.test(v) ? Number(v) : undefined);
const comparison = (op: unknown): boolean => op === 'Gt' || op === 'Lt' || op === 'Gte' || op === 'Lte';

export const KNOWN_RULES: Readonly<Record<string, Rule>> = {
  'self.all(x, x in ["karpenter.sh/capacity-type", "karpenter.sh/nodepool"] || !x.find("^([^/]+)").endsWith("karpenter.sh"))': (self) =>
    keys(self).every((x) => RESERVED.includes(x) || !domain(x).endsWith('karpenter.sh')),
  'self.all(x, x != "karpenter.sh/nodepool")': (self) => keys(self).every((x) => x !== 'karpenter.sh/nodepool'),
  'self.all(x, x != "kubernetes.io/hostname")': (self) => keys(self).every((x) => x !== 'kubernetes.io/hostname'),
  "self.group != ''": (self) => (self as Raw).group !== '',
  "self.kind != ''": (self) => (self as Raw).kind !== '',
  "self.name != ''": (self) => (self as Raw).name !== '',
  "self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)": (self) => items(self).every((x) => (x.operator === 'In' ? values(x).length !== 0 : true)),
  "self.all(x, (x.operator == 'Gt' || x.operator == 'Lt' || x.operator == 'Gte' || x.operator == 'Lte') ? (x.values.size() == 1 && int(x.values[0]) >= 0) : true)": (self) =>
    items(self).every((x) => (comparison(x.operator) ? values(x).length === 1 && (celInt(values(x)[0]) ?? -1) >= 0 : true)),
  "self.all(x, (x.operator == 'In' && has(x.minValues)) ? x.values.size() >= x.minValues : true)": (self) =>
    items(self).every((x) => (x.operator === 'In' && typeof x.minValues === 'number' ? values(x).length >= x.minValues : true)),
  'self in ["karpenter.sh/capacity-type", "karpenter.sh/nodepool"] || !self.find("^([^/]+)").endsWith("karpenter.sh")': (self) =>
    RESERVED.includes(String(self)) || !domain(String(self)).endsWith('karpenter.sh'),
  'self != "kubernetes.io/hostname"': (self) => self !== 'kubernetes.io/hostname',
  'self.find("^([^/]+)").endsWith("kops.k8s.io") || !self.find("^([^/]+)").endsWith("k8s.io")': (self) =>
    domain(String(self)).endsWith('kops.k8s.io') || !domain(String(self)).endsWith('k8s.io'),
  'self.all(x, has(x.schedule) == has(x.duration))': (self) => items(self).every((x) => (x.schedule !== undefined) === (x.duration !== undefined)),
};

/** The first CEL rule `value` breaks, as "path: message", walking the schema with the value. */
export function celViolation(schema: Raw, value: unknown, path = ''): string | undefined {
  if (value === undefined || value === null || !hasRules(schema)) return undefined;
  for (const v of items(schema['x-kubernetes-validations'])) {
    const rule = KNOWN_RULES[String(v.rule).trim()];
    if (rule && !rule(value)) return `${path || '(root)'}: ${typeof v.message === 'string' ? v.message : `failed rule: ${String(v.rule)}`}`;
  }
  const at = (k: string | number): string => (path ? `${path}.${k}` : String(k));
  if (schema.properties && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, sub] of Object.entries(schema.properties as Record<string, Raw>)) {
      const found = celViolation(sub, (value as Raw)[k], at(k));
      if (found) return found;
    }
  }
  if (schema.items && Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = celViolation(schema.items as Raw, item, at(i));
      if (found) return found;
    }
  }
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object' && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, item] of Object.entries(value as Raw)) {
      const found = celViolation(schema.additionalProperties as Raw, item, at(k));
      if (found) return found;
    }
  }
  return undefined;
}

/** Whether the schema or any schema under it carries rules (the fake cluster checks every NodeClaim it stores). */
const withRules = new WeakMap<Raw, boolean>();
function hasRules(schema: Raw): boolean {
  let known = withRules.get(schema);
  if (known === undefined) {
    const below = [...Object.values((schema.properties ?? {}) as Record<string, Raw>), schema.items, schema.additionalProperties];
    known = items(schema['x-kubernetes-validations']).length > 0 || below.some((s) => typeof s === 'object' && s !== null && hasRules(s as Raw));
    withRules.set(schema, known);
  }
  return known;
}
