import { inspect } from 'node:util';
import type { Clock } from '../../ports/clock.js';
import { REDACTED, secrets as defaultSecrets, type SecretRegistry } from '../../log/redact.js';

/**
 * What a new node needs to join the cluster: where the API server is, how to trust it,
 * and a bootstrap token (a secret: it lets any holder register a node).
 */
export interface BootstrapConfig {
  /** https://host:port of the API server as the node reaches it (cross-region: public or peered FQDN). */
  apiServerEndpoint: string;
  /** Cluster CA, base64 of the PEM (as in a kubeconfig's certificate-authority-data). */
  caCertData: string;
  /** kubeadm bootstrap token, [a-z0-9]{6}.[a-z0-9]{16}. */
  token: string;
  /** Kubernetes version of the binaries the agent installs, e.g. 1.34.2. */
  kubernetesVersion: string;
  /** When the token stops working (ms since the epoch; a kubeadm token Secret's `expiration`). Absent: it does not expire. */
  expiresAt?: number;
}

/** The only token there is has expired: a VM created with it would never join, so none is created. */
export class BootstrapTokenExpiredError extends Error {
  override readonly name = 'BootstrapTokenExpiredError';
  constructor(readonly expiresAt: number) {
    super(`the bootstrap token expired at ${new Date(expiresAt).toISOString()}: rotate it (docs/security.md)`);
  }
}

/** How often a cached token is read again, so a rotated one is used without a restart. */
export interface BootstrapRefresh {
  clock: Clock;
  /** A cached read older than this is read again on the next get(). */
  maxAgeMs: number;
}

/** Five minutes: a rotated token reaches new VMs within one boot time, for one Secret GET each. */
export const DEFAULT_BOOTSTRAP_REFRESH_MS = 5 * 60_000;

/**
 * Reads the bootstrap config from the cluster. The real implementation (src/k8s, with the
 * Kubernetes client) reads the cluster-info ConfigMap and a bootstrap-token Secret; the
 * simulator uses StaticBootstrapSource.
 */
export interface BootstrapSource {
  get(): Promise<BootstrapConfig>;
}

export class StaticBootstrapSource implements BootstrapSource {
  private readonly config: BootstrapConfig;
  constructor(config: BootstrapConfig) {
    this.config = sealBootstrapConfig(config);
  }
  async get(): Promise<BootstrapConfig> {
    return this.config;
  }
}

/**
 * Caches the cluster read (the upstream design: "cache the FromAKS result per controller
 * process to avoid hammering the bootstrap secret on every Create"), but not forever: with a
 * refresh, a read older than maxAgeMs, or one whose token has since expired, is dropped and
 * read again, so a rotated token reaches the next VM without a restart. Concurrent callers
 * share one in-flight read; a failed read is not cached, so the next call retries. An expired
 * token fails get() (re-read at most once per maxAgeMs) rather than create a VM that can never
 * join. Every token read is registered with the secret registry, so it is scrubbed from logs.
 */
export class CachedBootstrapSource implements BootstrapSource {
  private cached: { config: Promise<BootstrapConfig>; readAt: number; expiresAt?: number } | undefined;
  private reads = 0;

  constructor(
    private readonly inner: BootstrapSource,
    private readonly secrets: SecretRegistry = defaultSecrets,
    private readonly refresh?: BootstrapRefresh,
  ) {}

  async get(): Promise<BootstrapConfig> {
    const now = this.refresh?.clock.now();
    if (this.cached && now !== undefined && this.stale(this.cached, now)) this.invalidate();
    const entry = this.cached ?? this.read(now ?? 0);
    const config = await entry.config;
    if (now !== undefined && config.expiresAt !== undefined && now >= config.expiresAt) throw new BootstrapTokenExpiredError(config.expiresAt);
    return config;
  }

  /** Drop the cache (the token expired or was rotated); the next get() reads again. */
  invalidate(): void {
    this.cached = undefined;
  }

  /** How many times the cluster was read (for tests and metrics). */
  get readCount(): number {
    return this.reads;
  }

  private stale(entry: { readAt: number; expiresAt?: number }, now: number): boolean {
    if (now - entry.readAt >= this.refresh!.maxAgeMs) return true;
    // Expired since it was read: read once more at once (a rotation may already be there).
    return entry.expiresAt !== undefined && entry.readAt < entry.expiresAt && now >= entry.expiresAt;
  }

  private read(now: number): NonNullable<CachedBootstrapSource['cached']> {
    this.reads++;
    const entry: NonNullable<CachedBootstrapSource['cached']> = {
      readAt: now,
      config: this.inner.get().then(
        (config) => {
          this.secrets.add(config.token);
          if (config.expiresAt !== undefined) entry.expiresAt = config.expiresAt;
          return sealBootstrapConfig(config);
        },
        (err: unknown) => {
          if (this.cached === entry) this.cached = undefined;
          throw err;
        },
      ),
    };
    this.cached = entry;
    return entry;
  }
}

/**
 * A copy whose token is non-enumerable, so JSON.stringify, pino and util.inspect of the
 * config never print it; code that needs it reads `config.token` explicitly.
 */
export function sealBootstrapConfig(config: BootstrapConfig): BootstrapConfig {
  const sealed = {
    apiServerEndpoint: config.apiServerEndpoint,
    caCertData: config.caCertData,
    kubernetesVersion: config.kubernetesVersion,
    ...(config.expiresAt !== undefined ? { expiresAt: config.expiresAt } : {}),
  } as BootstrapConfig;
  const token = config.token;
  Object.defineProperty(sealed, 'token', { get: () => token, enumerable: false });
  Object.defineProperty(sealed, 'toJSON', {
    value: () => ({ apiServerEndpoint: sealed.apiServerEndpoint, kubernetesVersion: sealed.kubernetesVersion, token: REDACTED }),
    enumerable: false,
  });
  Object.defineProperty(sealed, inspect.custom, {
    value: () => `BootstrapConfig { apiServerEndpoint: '${sealed.apiServerEndpoint}', token: ${REDACTED} }`,
    enumerable: false,
  });
  return sealed;
}
