import { inspect } from 'node:util';
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
}

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
 * Reads once per process and caches (the upstream design: "cache the FromAKS result per
 * controller process to avoid hammering the bootstrap secret on every Create"). Concurrent
 * callers share one in-flight read; a failed read is not cached, so the next call retries.
 * The token is registered with the secret registry so it is scrubbed from every log line.
 */
export class CachedBootstrapSource implements BootstrapSource {
  private cached: Promise<BootstrapConfig> | undefined;
  private reads = 0;

  constructor(
    private readonly inner: BootstrapSource,
    private readonly secrets: SecretRegistry = defaultSecrets,
  ) {}

  get(): Promise<BootstrapConfig> {
    if (!this.cached) {
      this.reads++;
      const pending = this.inner.get().then(
        (config) => {
          this.secrets.add(config.token);
          return sealBootstrapConfig(config);
        },
        (err: unknown) => {
          this.cached = undefined;
          throw err;
        },
      );
      this.cached = pending;
    }
    return this.cached;
  }

  /** Drop the cache (e.g. the token expired or was rotated); the next get() reads again. */
  invalidate(): void {
    this.cached = undefined;
  }

  /** How many times the cluster was read (for tests and metrics). */
  get readCount(): number {
    return this.reads;
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
