import { readFileSync } from 'node:fs';
import { sealBootstrapConfig, type BootstrapConfig, type BootstrapSource } from '../azure/userdata/bootstrap.js';
import type { KubeClient } from './client.js';

export interface KubeBootstrapOptions {
  /** The API server as a node in another region reaches it (the AKS FQDN, not kubernetes.default.svc). */
  apiServerEndpoint: string;
  /** PEM of the cluster CA; in-cluster, the ServiceAccount's ca.crt is that CA. */
  caCertFile: string;
  /** Secret in `namespace` holding a kubeadm bootstrap token: `token`, or `token-id` + `token-secret`. */
  namespace: string;
  secretName: string;
  /** Kubernetes version for the node's binaries; default: the API server's /version. */
  kubernetesVersion?: string;
}

interface SecretObject {
  data?: Record<string, string>;
}

/**
 * Reads what a new node needs to join from the cluster itself. Wrap it in
 * CachedBootstrapSource with a refresh: it is read every few minutes, not on every VM create.
 */
export class KubeBootstrapSource implements BootstrapSource {
  constructor(
    private readonly client: KubeClient,
    private readonly options: KubeBootstrapOptions,
  ) {}

  async get(): Promise<BootstrapConfig> {
    const { namespace, secretName } = this.options;
    const client = this.client;
    const secret: SecretObject = await client.call(`get secret ${namespace}/${secretName}`, (o) => client.core.readNamespacedSecret({ namespace, name: secretName }, o));
    const data = secret.data ?? {};
    const decode = (key: string): string | undefined => (data[key] ? Buffer.from(data[key], 'base64').toString('utf8').trim() : undefined);
    const token = decode('token') ?? (decode('token-id') && decode('token-secret') ? `${decode('token-id')}.${decode('token-secret')}` : undefined);
    if (!token) throw new Error(`secret ${namespace}/${secretName} has neither "token" nor "token-id"/"token-secret"`);
    // kubeadm's own token Secrets carry `expiration` (RFC 3339); copied here, the controller
    // stops using the token when it runs out instead of creating VMs that cannot join.
    const expiration = decode('expiration');
    const expiresAt = expiration ? Date.parse(expiration) : undefined;
    if (expiresAt !== undefined && Number.isNaN(expiresAt)) throw new Error(`secret ${namespace}/${secretName}: "expiration" is not an RFC 3339 time`);
    // /version is readable by every authenticated user (system:public-info-viewer), outside our RBAC.
    const version = this.options.kubernetesVersion ?? (await client.call('get /version', (o) => client.version.getCode(undefined, o))).gitVersion ?? '';
    return sealBootstrapConfig({
      apiServerEndpoint: this.options.apiServerEndpoint,
      caCertData: Buffer.from(readFileSync(this.options.caCertFile)).toString('base64'),
      token,
      kubernetesVersion: version.replace(/^v/, '').replace(/[-+].*$/, ''),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
    });
  }
}
