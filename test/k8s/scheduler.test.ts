import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminRequest, eventually, startControlPlane, type ControlPlane } from './harness.js';
import { gpuPodBody } from './fixtures.js';

const shared = inject('k8s');

/**
 * The harness can also run kube-scheduler (what `azflex dev` needs to place pods on nodes
 * that azflex's simulated kubelet registers). Its own control plane: a scheduler must not
 * place other test files' pods.
 */
describe('harness with kube-scheduler', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startControlPlane({ binaries: shared.binaries, scheduler: true });
  });
  afterAll(async () => {
    await cp?.stop();
  });

  it('binds a pending GPU pod to a matching Ready node', async () => {
    await adminRequest(cp, 'POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'h200-node', labels: { gpu: 'h200', 'kubernetes.io/hostname': 'h200-node' } },
      spec: { taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] },
    });
    await adminRequest(cp, 'PATCH', '/api/v1/nodes/h200-node/status', {
      status: {
        capacity: { cpu: '96', memory: '1800Gi', pods: '110', 'nvidia.com/gpu': '8' },
        allocatable: { cpu: '95', memory: '1790Gi', pods: '110', 'nvidia.com/gpu': '8' },
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ok', lastHeartbeatTime: new Date().toISOString(), lastTransitionTime: new Date().toISOString() }],
      },
    });
    // The TaintNodesByCondition admission plugin taints every new Node not-ready; the node
    // lifecycle controller (not run here) would lift it once Ready. Do its job.
    await adminRequest(cp, 'PATCH', '/api/v1/nodes/h200-node', { spec: { taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] } });
    await adminRequest(cp, 'POST', '/api/v1/namespaces/default/pods', gpuPodBody('trainer', 'h200'));
    const nodeName = await eventually(
      'scheduler binds the pod',
      async () => ((await adminRequest(cp, 'GET', '/api/v1/namespaces/default/pods/trainer')) as { spec: { nodeName?: string } }).spec.nodeName,
      30_000,
      200,
    ).catch(async (e: unknown) => {
      const pod = await adminRequest(cp, 'GET', '/api/v1/namespaces/default/pods/trainer');
      throw new Error(`${String(e)}\n${JSON.stringify((pod as { status: unknown }).status)}`);
    });
    expect(nodeName).toBe('h200-node');
  });
});
