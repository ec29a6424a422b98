import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminKubeConfig, adminRequest } from './harness.js';
import { makeAdapter, type Adapter } from './fixtures.js';

/**
 * Every Kubernetes Event azflex writes passes through KubeCluster.recordEvent, which scrubs its
 * text like a log line: Events are readable by far more people than the controller's logs.
 */
const info = inject('k8s');

describe('KubeCluster Events', () => {
  let a: Adapter;

  beforeAll(() => {
    a = makeAdapter(adminKubeConfig(info), 'events-test');
  });

  afterAll(async () => {
    await a.cluster.stop();
  });

  it('scrubs secrets from every Event message before it reaches the API server', async () => {
    const token = 'abcdef.0123456789abcdef';
    const jwt = 'eyJ0eXAiOiJKV1QifQ.eyJhdWQiOiJhcm0ifQ.c2lnbmF0dXJlLXZhbHVl';
    const message = `ARM refused: kubeadm join --token ${token}; AZURE_CLIENT_SECRET=Q~abc.def; {"access_token":"${jwt}"}`;
    await a.cluster.recordEvent({ involvedObject: { kind: 'NodeClaim', name: 'events-scrub', uid: 'uid-1' }, type: 'Warning', reason: 'LaunchFailed', message });
    const list = (await adminRequest(info, 'GET', '/apis/events.k8s.io/v1/namespaces/default/events')) as { items: Array<{ reason: string; note: string; regarding: { name: string } }> };
    const ev = list.items.find((e) => e.regarding.name === 'events-scrub');
    expect(ev?.reason).toBe('LaunchFailed');
    expect(ev!.note).toContain('ARM refused');
    for (const secret of [token, 'Q~abc.def', jwt.slice(0, 20)]) expect(ev!.note).not.toContain(secret);
    expect(ev!.note).toContain('AZURE_CLIENT_SECRET=[REDACTED]');
    expect(a.errors).toEqual([]);
  });
});
