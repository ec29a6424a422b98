import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse } from 'yaml';
import { kwokConfigYaml, schedulerConfigYaml } from '../../src/dev/component-configs.js';

interface StageDoc {
  kind: string;
  metadata?: { name: string };
  options?: Record<string, number>;
  spec?: { selector: { matchExpressions: Array<{ operator: string; values: string[] }> }; delay?: { durationMilliseconds: number; jitterDurationMilliseconds: number }; next: { statusTemplate: string } };
}

describe('control-plane component configs', () => {
  const docs = parseAllDocuments(kwokConfigYaml()).map((d) => d.toJS() as StageDoc);

  it('gives KWOK more workers per loop and two Node stages of its own (so none of its built-in ones)', () => {
    expect(docs.map((d) => d.kind)).toEqual(['KwokConfiguration', 'Stage', 'Stage']);
    expect(docs[0]!.options).toEqual({ nodePlayStageParallelism: 16, podPlayStageParallelism: 16, nodeLeaseParallelism: 16 });
  });

  it('makes a Node Ready once, then re-reports its status every 5 to 6 minutes as a kubelet with a Lease does', () => {
    const [ready, report] = [docs[1]!, docs[2]!];
    expect(ready.spec!.selector.matchExpressions[0]!.operator).toBe('NotIn');
    expect(ready.spec!.delay).toBeUndefined();
    expect(ready.spec!.next.statusTemplate).toContain('phase: Running');
    expect(report.spec!.selector.matchExpressions[0]!.operator).toBe('In');
    expect(report.spec!.delay).toEqual({ durationMilliseconds: 300_000, jitterDurationMilliseconds: 360_000 });
    // The condition's transition time stays the Node's creation: only the heartbeat time moves.
    expect(report.spec!.next.statusTemplate).toContain('lastTransitionTime: {{ $since | Quote }}');
  });

  it('runs kube-scheduler from a configuration: defaults for small worlds, the harness settings at scale', () => {
    expect(parse(schedulerConfigYaml({ kubeconfigPath: '/k/admin.kubeconfig' }))).toEqual({
      apiVersion: 'kubescheduler.config.k8s.io/v1',
      kind: 'KubeSchedulerConfiguration',
      leaderElection: { leaderElect: false },
      clientConnection: { kubeconfig: '/k/admin.kubeconfig' },
    });
    const scale = parse(schedulerConfigYaml({ kubeconfigPath: '/k', qps: 300, percentageOfNodesToScore: 10, noPreemption: true })) as Record<string, unknown>;
    expect(scale.clientConnection).toEqual({ kubeconfig: '/k', qps: 300, burst: 600 });
    expect(scale.percentageOfNodesToScore).toBe(10);
    expect(scale.profiles).toEqual([{ schedulerName: 'default-scheduler', plugins: { postFilter: { disabled: [{ name: 'DefaultPreemption' }] } } }]);
  });
});
