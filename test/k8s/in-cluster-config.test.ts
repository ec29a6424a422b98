import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { AuthenticationV1Api, Watch, type KubeConfig } from '@kubernetes/client-node';
import { describe, expect, inject, it } from 'vitest';
import { inClusterKubeConfig } from '../../src/k8s/client.js';
import { adminRequest, eventually, mintServiceAccountToken } from './harness.js';
import { ensureNamespace } from './fixtures.js';

const info = inject('k8s');
const ns = 'azflex-in-cluster';

/**
 * The controller's in-cluster config as a pod sees it, against the real API server. A
 * ServiceAccount token Secret mounted by hand often ends in a newline (kubelet's projected
 * tokens do not; client-go trims). client-node sends requests and watches through undici's
 * fetch, which strips leading and trailing whitespace from header values as the Fetch
 * standard requires, so the newline never reaches the Authorization header: no trimming of
 * our own is needed. This test keeps it that way if the transport ever changes.
 */
describe('in-cluster config with a newline-terminated ServiceAccount token', () => {
  async function inClusterFiles(token: string): Promise<string> {
    const prefix = await fs.mkdtemp(path.join(os.tmpdir(), 'sa-newline-'));
    const dir = path.join(prefix, 'var/run/secrets/kubernetes.io/serviceaccount');
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, 'token'), token);
    await fs.writeFile(path.join(dir, 'ca.crt'), Buffer.from(info.caData, 'base64'));
    await fs.writeFile(path.join(dir, 'namespace'), `${ns}\n`);
    return prefix;
  }

  async function whoAmI(kc: KubeConfig): Promise<string | undefined> {
    const review = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
    return review.status?.userInfo?.username;
  }

  it('authenticates API calls and watches as the ServiceAccount', async () => {
    await ensureNamespace(info, ns);
    await adminRequest(info, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'controller' } })
      .catch((e: { code?: number }) => {
        if (e.code !== 409) throw e;
      });
    const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}`;
    for (const [kind, body] of [
      ['roles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'watch-configmaps' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch'] }] }],
      ['rolebindings', {
        apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'watch-configmaps' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'watch-configmaps' },
        subjects: [{ kind: 'ServiceAccount', name: 'controller', namespace: ns }],
      }],
    ] as const) {
      await adminRequest(info, 'POST', `${rbac}/${kind}`, body).catch((e: { code?: number }) => {
        if (e.code !== 409) throw e;
      });
    }
    const token = await mintServiceAccountToken(info, ns, 'controller');
    const prefix = await inClusterFiles(`${token}\n`);
    const server = new URL(info.server);
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    process.env.KUBERNETES_SERVICE_HOST = server.hostname;
    process.env.KUBERNETES_SERVICE_PORT = server.port;
    try {
      const kc = inClusterKubeConfig(prefix);
      expect(await whoAmI(kc)).toBe(`system:serviceaccount:${ns}:controller`);
      const seen: string[] = [];
      let failure: unknown;
      const watch = await new Watch(kc).watch(`/api/v1/namespaces/${ns}/configmaps`, {}, (phase, obj) => {
        seen.push(`${phase} ${(obj as { metadata?: { name?: string } }).metadata?.name}`);
      }, (err) => (failure = err));
      try {
        await adminRequest(info, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe' } });
        await eventually('the watch delivers the ConfigMap', async () => seen.includes('ADDED probe') || failure !== undefined);
        expect(failure).toBeUndefined();
      } finally {
        watch.abort();
        await adminRequest(info, 'DELETE', `/api/v1/namespaces/${ns}/configmaps/probe`).catch(() => undefined);
      }
    } finally {
      if (saved.host === undefined) delete process.env.KUBERNETES_SERVICE_HOST;
      else process.env.KUBERNETES_SERVICE_HOST = saved.host;
      if (saved.port === undefined) delete process.env.KUBERNETES_SERVICE_PORT;
      else process.env.KUBERNETES_SERVICE_PORT = saved.port;
      await fs.rm(prefix, { recursive: true, force: true });
    }
  });
});
