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
  '!has(self.replicas) || !has(self.weight)': (self) => (self as Raw).replicas === undefined || (self as Raw).weight === undefined,
  "!has(self.replicas) || !has(self.limits) || self.limits.all(k, k == 'nodes')": (self) => (self as Raw).replicas === undefined || keys((self as Raw).limits).every((k) => k === 'nodes'),
};

/** The first CEL rule `value` breaks, as "path: message", walking the schema with the value. */
export function celViolation(schema: Raw, value: unknown, path = ''): string | undefined {
  return violation(schema, value, path ? [path] : []);
}

/** The path (its parts, joined only for a message) is kept on one stack: the fake cluster checks every NodeClaim it stores. */
function violation(schema: Raw, value: unknown, parts: Array<string | number>): string | undefined {
  if (value === undefined || value === null) return undefined;
  const plan = planOf(schema);
  for (const { rule, message } of plan.rules) {
    if (rule && !rule(value)) return `${parts.length > 0 ? parts.join('.') : '(root)'}: ${message}`;
  }
  if (plan.properties.length > 0 && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, sub] of plan.properties) {
      parts.push(k);
      const found = violation(sub, (value as Raw)[k], parts);
      parts.pop();
      if (found) return found;
    }
  }
  if (plan.items && Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      parts.push(i);
      const found = violation(plan.items, value[i], parts);
      parts.pop();
      if (found) return found;
    }
  }
  if (plan.additionalProperties && typeof value === 'object' && !Array.isArray(value)) {
    for (const k of Object.keys(value as Raw)) {
      parts.push(k);
      const found = violation(plan.additionalProperties, (value as Raw)[k], parts);
      parts.pop();
      if (found) return found;
    }
  }
  return undefined;
}

/** What celViolation looks at in a schema: its rules, and only the parts under it that carry rules (worked out once per schema object). */
interface RulePlan {
  rules: Array<{ rule: Rule | undefined; message: string }>;
  properties: Array<[string, Raw]>;
  items: Raw | undefined;
  additionalProperties: Raw | undefined;
}
const plans = new WeakMap<Raw, RulePlan>();
function planOf(schema: Raw): RulePlan {
  let plan = plans.get(schema);
  if (plan) return plan;
  const ruled = (s: unknown): Raw | undefined => (typeof s === 'object' && s !== null && hasRules(s as Raw) ? (s as Raw) : undefined);
  plan = {
    rules: items(schema['x-kubernetes-validations']).map((v) => ({
      rule: KNOWN_RULES[String(v.rule).trim()],
      message: typeof v.message === 'string' ? v.message : `failed rule: ${String(v.rule)}`,
    })),
    properties: schema.properties
      ? Object.entries(schema.properties as Record<string, Raw>).filter(([, sub]) => ruled(sub) !== undefined)
      : [],
    items: schema.items ? ruled(schema.items) : undefined,
    additionalProperties: schema.additionalProperties && typeof schema.additionalProperties === 'object' ? ruled(schema.additionalProperties) : undefined,
  };
  plans.set(schema, plan);
  return plan;
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
