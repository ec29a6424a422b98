import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/**
 * Secrets out of logs and error messages. A VM's customData carries the cluster's bootstrap
 * token (it can join nodes to the cluster), and kubeconfigs carry credentials: none of them
 * may reach a log line, an event message or an error string. Kubernetes Events get it too:
 * the real ClusterPort scrubs every Event's text where it writes it (src/k8s/cluster.ts).
 * Three layers:
 *  - keys: any property whose name says secret (customData, token, kubeconfig, anything ending
 *    in secret, password or token such as AZURE_CLIENT_SECRET...) is censored wherever it sits
 *    in an object;
 *  - shapes: strings are scrubbed of kubeadm bootstrap tokens, bearer tokens, JWTs (OAuth
 *    access tokens), gzip+base64 blobs (rendered cloud-init), PEM private keys, kubeconfig and
 *    OAuth credential fields and secret environment assignments (AZURE_CLIENT_SECRET=...);
 *  - values: exact secrets registered at runtime (the token read from the cluster) are
 *    scrubbed wherever they appear, whatever their shape.
 */
export const REDACTED = '[REDACTED]';

/** Property names whose values are secret, compared case-insensitively without '-' and '_'. */
const SECRET_KEYS: ReadonlySet<string> = new Set(
  [
    'customData',
    'userData',
    'cloudInit',
    'bootstrapToken',
    'token',
    'tokenSecret',
    'accessToken',
    'refreshToken',
    'idToken',
    'kubeconfig',
    'kubeConfig',
    'clientSecret',
    'clientKeyData',
    'clientCertificateData',
    'password',
    'adminPassword',
    'authorization',
    'privateKey',
    'secret',
  ].map(normalizeKey),
);

function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[-_]/g, '');
}

/** Endings that make any name secret: AZURE_CLIENT_SECRET, db_password, x-ms-token... */
const SECRET_KEY_ENDINGS = /(secret|password|token)$/;

export function isSecretKey(key: string): boolean {
  const k = normalizeKey(key);
  return SECRET_KEYS.has(k) || SECRET_KEY_ENDINGS.test(k);
}

/** Secret shapes in free text, each with how to censor it (keeping field names readable). */
const STRING_PATTERNS: ReadonlyArray<{ re: RegExp; replace: (match: string, ...groups: string[]) => string }> = [
  // kubeadm bootstrap token: [a-z0-9]{6}.[a-z0-9]{16}
  { re: /\b[a-z0-9]{6}\.[a-z0-9]{16}\b/g, replace: () => REDACTED },
  // Authorization headers and bearer tokens.
  { re: /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, replace: (_m, scheme) => `${scheme} ${REDACTED}` },
  // JWTs (Entra ID access and ID tokens, ServiceAccount tokens): header.payload.signature, base64url.
  { re: /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, replace: () => REDACTED },
  // Secret environment assignments, as a shell, a .env file or a process dump shows them.
  {
    re: /\b([A-Z][A-Z0-9_]*(?:SECRET|PASSWORD|TOKEN))(\s*=\s*["']?|"?\s*:\s*"?)[^\s"',}]+/g,
    replace: (_m, name, sep) => `${name}${sep}${REDACTED}`,
  },
  // gzip + base64 (rendered customData starts with H4sI).
  { re: /H4sI[A-Za-z0-9+/=]{16,}/g, replace: () => REDACTED },
  // PEM private keys.
  { re: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g, replace: () => REDACTED },
  // kubeconfig / YAML / JSON credential fields: token: x, client-key-data: x, "token":"x".
  {
    re: /\b(token|access_token|refresh_token|id_token|client_secret|client-key-data|client-certificate-data|password|tokenSecret|bootstrapToken)("?\s*[:=]\s*"?)[^\s",}&]+/gi,
    replace: (_m, field, sep) => `${field}${sep}${REDACTED}`,
  },
  // kubeadm join --token x.
  { re: /(--token[= ])\S+/g, replace: (_m, flag) => `${flag}${REDACTED}` },
];

/** Exact secret values seen at runtime (e.g. the bootstrap token read from the cluster). */
export class SecretRegistry {
  private readonly values = new Set<string>();
  add(secret: string): void {
    // Very short values would censor ordinary words; real secrets are long.
    if (secret.length >= 8) this.values.add(secret);
  }
  scrub(text: string): string {
    let out = text;
    for (const v of this.values) if (out.includes(v)) out = out.split(v).join(REDACTED);
    return out;
  }
}

/** Process-wide registry used by redact() unless another is passed. */
export const secrets = new SecretRegistry();

export function redactString(text: string, registry: SecretRegistry = secrets): string {
  let out = registry.scrub(text);
  for (const { re, replace } of STRING_PATTERNS) out = out.replace(re, replace as (substring: string, ...args: unknown[]) => string);
  return out;
}

/**
 * A deep copy of `value` with secret properties censored and every string scrubbed.
 * Errors become plain objects (type, message, stack, code, statusCode, cause) so their
 * messages and stacks are scrubbed too. Cycles and depth are bounded.
 */
export function redact<T>(value: T, registry: SecretRegistry = secrets): T {
  return walk(value, registry, new WeakSet<object>(), 0) as T;
}

const MAX_DEPTH = 12;

function walk(value: unknown, registry: SecretRegistry, seen: WeakSet<object>, depth: number): unknown {
  if (typeof value === 'string') return redactString(value, registry);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[Circular]';
  if (depth > MAX_DEPTH) return '[Truncated]';
  seen.add(value);
  if (value instanceof Error) return walk(errorToObject(value), registry, seen, depth + 1);
  if (value instanceof Date) return value;
  if (Buffer.isBuffer(value) || ArrayBuffer.isView(value)) return `[${value.byteLength} bytes]`;
  if (Array.isArray(value)) return value.map((v) => walk(v, registry, seen, depth + 1));
  if (value instanceof Map) {
    return Object.fromEntries([...value].map(([k, v]) => [String(k), isSecretKey(String(k)) ? REDACTED : walk(v, registry, seen, depth + 1)]));
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSecretKey(k) && v !== undefined && v !== null && v !== '' ? REDACTED : walk(v, registry, seen, depth + 1);
  }
  return out;
}

function errorToObject(err: Error): Record<string, unknown> {
  const extra = err as Error & Record<string, unknown>;
  const out: Record<string, unknown> = { type: err.name, message: err.message, stack: err.stack };
  // Only well-known, non-request fields: a RestError's request carries the PUT body (customData).
  for (const k of ['code', 'statusCode', 'retryAfterSeconds', 'reason']) if (extra[k] !== undefined) out[k] = extra[k];
  if (err.cause !== undefined) out.cause = err.cause;
  return out;
}

/**
 * pino `redact` paths: the cheap first line for the known places secrets live in our own
 * log objects. The formatter and serializers below catch everything else.
 */
export const PINO_REDACT_PATHS: readonly string[] = [
  'customData',
  '*.customData',
  '*.*.customData',
  'spec.customData',
  'osProfile.customData',
  '*.osProfile.customData',
  'userData',
  '*.userData',
  'bootstrap.token',
  '*.bootstrap.token',
  'bootstrapToken',
  '*.bootstrapToken',
  'token',
  '*.token',
  'kubeconfig',
  '*.kubeconfig',
  'headers.authorization',
  '*.headers.authorization',
  'request.body',
  '*.request.body',
];

/** Serializers for the conventional keys; errors are scrubbed like everything else. */
export const pinoSerializers: Record<string, (value: unknown) => unknown> = {
  err: (value) => redact(value),
  error: (value) => redact(value),
};

/**
 * Options for a logger that cannot leak: redact paths, serializers, every merged object
 * scrubbed by the `log` formatter, and string arguments (messages, printf args) scrubbed
 * by the logMethod hook.
 */
export function redactingLoggerOptions(base: LoggerOptions = {}): LoggerOptions {
  return {
    ...base,
    redact: { paths: [...PINO_REDACT_PATHS], censor: REDACTED },
    serializers: { ...(base.serializers ?? {}), ...pinoSerializers },
    formatters: {
      ...(base.formatters ?? {}),
      log: (obj: Record<string, unknown>) => redact(obj),
    },
    hooks: {
      ...(base.hooks ?? {}),
      logMethod(args, method) {
        const scrubbed = args.map((a: unknown) => (typeof a === 'string' ? redactString(a) : a instanceof Error ? redact(a) : a));
        method.apply(this, scrubbed as Parameters<typeof method>);
      },
    },
  };
}

export function createRedactingLogger(base: LoggerOptions = {}, destination?: DestinationStream): Logger {
  const options = redactingLoggerOptions(base);
  return destination ? pino(options, destination) : pino(options);
}
