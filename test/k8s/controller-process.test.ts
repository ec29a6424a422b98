import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startControllerProcess, type ControllerProcess } from '../../src/app/process.js';
import type { LeaderRuntimeContext } from '../../src/app/leadership.js';
import type { SignalSource } from '../../src/app/shutdown.js';
import { RealClock } from '../../src/platform/real-clock.js';
import { adminKubeConfig, adminRequest, eventually } from './harness.js';
import { ensureNamespace, forceDelete, nodeClassBody } from './fixtures.js';

const info = inject('k8s');
const ns = 'azflex-process';
const AFNC = '/apis/flex.aks.azure.com/v1alpha1/azureflexnodeclasses';

class NoSignals implements SignalSource {
  on(): void {}
  off(): void {}
}

interface FakeRuntime {
  id: string;
  log: string[];
  /** What the runtime reports as its stalled loops (/healthz). */
  stalled?: string[];
}

async function startReplica(id: string, rt: FakeRuntime, exits: number[]): Promise<ControllerProcess> {
  return startControllerProcess({
    kubeConfig: adminKubeConfig(info),
    clock: new RealClock(),
    identity: id,
    namespace: ns,
    leaseName: 'process-test',
    leaseDurationMs: 8000,
    renewDeadlineMs: 6000,
    retryPeriodMs: 200,
    metricsPort: 0,
    metricsHost: '127.0.0.1',
    // Long period: reconciles in this test must come from watch-event kicks.
    nodeClassStatusIntervalMs: 60_000,
    signals: new NoSignals(),
    exit: (c) => exits.push(c),
    runtimeFactory: (ctx: LeaderRuntimeContext) => ({
      start: async () => {
        rt.log.push(`start leader=${ctx.isLeader()}`);
      },
      // Shutdown stops the runtime before it releases the lease.
      stop: () => void rt.log.push('stop'),
      stalledLoops: () => rt.stalled ?? [],
    }),
  });
}

describe('controller process (informers + leader election + NodeClass controllers + runtime)', () => {
  let a: ControllerProcess;
  let b: ControllerProcess;
  const ra: FakeRuntime = { id: 'a', log: [] };
  const rb: FakeRuntime = { id: 'b', log: [] };
  const exits: number[] = [];

  beforeAll(async () => {
    await ensureNamespace(info, ns);
    a = await startReplica('proc-a', ra, exits);
    await eventually('a leads', async () => a.isLeader(), 10_000);
    b = await startReplica('proc-b', rb, exits);
  });

  afterAll(async () => {
    await b?.shutdown('test end');
    await forceDelete(info, `${AFNC}/proc-class`);
  });

  it('runs the lifecycle runtime and NodeClass controllers only on the leader', async () => {
    await eventually('a runtime started', async () => ra.log.includes('start leader=true'));
    await adminRequest(info, 'POST', AFNC, nodeClassBody('proc-class'));
    await eventually('leader reconciled the class', async () => {
      const c = (await adminRequest(info, 'GET', `${AFNC}/proc-class`)) as { status?: { conditions?: Array<{ type: string; status: string }> } };
      return c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True');
    });
    expect(b.isLeader()).toBe(false);
    expect(rb.log).toEqual([]);
    const metricsA = await (await fetch(`http://127.0.0.1:${a.metricsPort}/metrics`)).text();
    const metricsB = await (await fetch(`http://127.0.0.1:${b.metricsPort}/metrics`)).text();
    expect(metricsA).toMatch(/^azflex_leader 1$/m);
    expect(metricsB).toMatch(/^azflex_leader 0$/m);
    expect(metricsA).toContain('karpenter_nodeclaims_created_total');
    // Both replicas are ready (a standby must not be restarted for not leading).
    expect((await fetch(`http://127.0.0.1:${a.metricsPort}/readyz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${b.metricsPort}/readyz`)).status).toBe(200);
  });

  it('on SIGTERM-style shutdown stops the runtime, releases the lease, and the standby takes over at once', async () => {
    const t0 = Date.now();
    expect(await a.shutdown('SIGTERM')).toBe(0);
    expect(exits).toEqual([0]);
    expect(ra.log).toEqual(['start leader=true', 'stop']);
    expect(a.isLeader()).toBe(false);
    await eventually('b leads', async () => b.isLeader(), 5000, 20);
    await eventually('b runtime started', async () => rb.log.includes('start leader=true'));
    // Far below the 8 s lease duration: the lease was released, not left to expire.
    expect(Date.now() - t0).toBeLessThan(4000);
    await expect(fetch(`http://127.0.0.1:${a.metricsPort}/healthz`)).rejects.toThrow();
  });

  it('/healthz fails when the leader\'s loops or an informer stop making progress', async () => {
    const healthz = async () => {
      const res = await fetch(`http://127.0.0.1:${b.metricsPort}/healthz?verbose`);
      return `${res.status} ${await res.text()}`;
    };
    await eventually('b runtime started', async () => rb.log.includes('start leader=true'));
    expect(await healthz()).toMatch(/^200 .*\[\+\]informers ok\n\[\+\]leader-loops ok/s);
    rb.stalled = ['provisioner'];
    expect(await healthz()).toMatch(/^503 .*\[-\]leader-loops failed/s);
    rb.stalled = [];
    await b.cluster.informers.pods.stop();
    expect(await healthz()).toMatch(/^503 .*\[-\]informers failed/s);
  });
});
