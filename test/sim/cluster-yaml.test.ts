import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { FakeCluster } from '../../src/sim/cluster.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { clusterYaml } from '../../src/sim/cluster-yaml.js';
import type { Node, Pod } from '../../src/ports/cluster.js';

const T0 = Date.UTC(2026, 0, 1);
const meta = (name: string) => ({ name, uid: `uid-${name}`, labels: { app: 'web' }, annotations: {}, finalizers: [], creationTimestamp: new Date(T0).toISOString() });
const node = (name: string): Node => ({
  metadata: meta(name),
  spec: { providerID: `azure:///vm/${name}`, taints: [] },
  status: { capacity: { cpu: '4' }, allocatable: { cpu: '4' }, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: '', lastTransitionTime: '' }] },
});
const pod = (name: string, nodeName?: string): Pod => ({
  metadata: { ...meta(name), namespace: 'default' },
  spec: { ...(nodeName ? { nodeName } : {}), nodeSelector: {}, tolerations: [], containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }], initContainers: [] },
  status: { phase: nodeName ? 'Running' : 'Pending', conditions: [] },
  ownerKind: 'ReplicaSet',
  owner: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1' },
});

describe('clusterYaml', () => {
  it('is a v1 List of Nodes then Pods in name order, with spec.nodeName first and empty fields left out', () => {
    const cluster = new FakeCluster(new VirtualClock(T0));
    cluster.putNode(node('b'));
    cluster.putNode(node('a'));
    cluster.putPod(pod('web-2'));
    cluster.putPod(pod('web-1', 'a'));
    const text = clusterYaml(cluster);
    const list = parse(text) as { apiVersion: string; kind: string; items: Array<{ kind: string; metadata: Record<string, unknown>; spec: Record<string, unknown>; status: Record<string, unknown> }> };
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    expect(list.items.map((i) => `${i.kind}/${String(i.metadata.name)}`)).toEqual(['Node/a', 'Node/b', 'Pod/web-1', 'Pod/web-2']);
    const [, , bound, pending] = list.items;
    expect(Object.keys(bound!.spec)[0]).toBe('nodeName');
    expect(bound!.spec.nodeName).toBe('a');
    expect(bound!.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', controller: true }]);
    expect(pending!.spec).not.toHaveProperty('nodeName');
    expect(pending!.status).toEqual({ phase: 'Pending' });
    // What only an API server adds is left out, so the same world gives the same bytes.
    expect(text).not.toMatch(/resourceVersion: "?\d|managedFields|tolerations: \[\]|finalizers/);
    expect(clusterYaml(cluster)).toBe(text);
  });
});
