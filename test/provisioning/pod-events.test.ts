import { describe, expect, it } from 'vitest';
import type { ClusterPort, KubeEvent, NodeClaim } from '../../src/ports/cluster.js';
import {
  EVENT_REASON_FAILED_SCHEDULING, EVENT_REASON_INSUFFICIENT_QUOTA, EVENT_REASON_NOMINATED, PodEvents,
} from '../../src/provisioning/pod-events.js';
import { podKey, type NodeClaimPlan } from '../../src/provisioning/scheduler.js';
import { makeNodeClaim, makePod, silentLog } from './fixtures.js';

/** A port that records events, failing the next `failures` of them. */
function eventSink(): { cluster: ClusterPort; sent: KubeEvent[]; failNext: (n: number) => void } {
  const sent: KubeEvent[] = [];
  let failures = 0;
  const cluster = {
    recordEvent: async (event: KubeEvent): Promise<void> => {
      if (failures > 0) {
        failures--;
        throw new Error('events API unavailable');
      }
      sent.push(event);
    },
  } as unknown as ClusterPort;
  return { cluster, sent, failNext: (n) => (failures = n) };
}

function podEvents(cluster: ClusterPort): { events: PodEvents; failed: () => number } {
  let failed = 0;
  const events = new PodEvents({ cluster, log: silentLog, concurrency: 1, onFailure: () => failed++ });
  return { events, failed: () => failed };
}

describe('PodEvents', () => {
  it('tells a refused pod once per reason and message, and again when the reason changes', async () => {
    const { cluster, sent } = eventSink();
    const { events } = podEvents(cluster);
    const pod = makePod('web-0');
    await events.refused([{ pod, reason: 'no NodePool fits' }], 'cores quota: 8 of 10 used, 4 asked');
    await events.refused([{ pod, reason: 'no NodePool fits' }], 'cores quota: 8 of 10 used, 4 asked');
    expect(sent.map((e) => [e.reason, e.message])).toEqual([
      [EVENT_REASON_FAILED_SCHEDULING, 'Failed to schedule pod, no NodePool fits'],
      [EVENT_REASON_INSUFFICIENT_QUOTA, 'cores quota: 8 of 10 used, 4 asked'],
    ]);
    await events.refused([{ pod, reason: 'all offerings unavailable' }], undefined);
    expect(sent.at(-1)?.message).toBe('Failed to schedule pod, all offerings unavailable');
    expect(sent).toHaveLength(3);
  });

  it('a pod that stops being pending is forgotten: told again if it comes back', async () => {
    const { cluster, sent } = eventSink();
    const { events } = podEvents(cluster);
    const pod = makePod('web-0');
    await events.refused([{ pod, reason: 'no NodePool fits' }], undefined);
    events.forget([pod.metadata.uid]);
    await events.refused([{ pod, reason: 'no NodePool fits' }], undefined);
    expect(sent).toHaveLength(2);
  });

  it('an event that failed counts as a failure and is sent again next time', async () => {
    const { cluster, sent, failNext } = eventSink();
    const { events, failed } = podEvents(cluster);
    const pod = makePod('web-0');
    failNext(1);
    await events.refused([{ pod, reason: 'no NodePool fits' }], undefined);
    expect([sent.length, failed()]).toEqual([0, 1]);
    await events.refused([{ pod, reason: 'no NodePool fits' }], undefined);
    expect([sent.length, failed()]).toEqual([1, 1]);
  });

  it('nominates each pod of each launched NodeClaim, in the background, and none of a plan that launched nothing', async () => {
    const { cluster, sent } = eventSink();
    const { events } = podEvents(cluster);
    const [a, b, c] = [makePod('a'), makePod('b'), makePod('c')];
    const plans = [{ podKeys: [podKey(a), podKey(b)] }, { podKeys: [podKey(c)] }] as unknown as NodeClaimPlan[];
    const launched: Array<NodeClaim | undefined> = [makeNodeClaim('default-abcde', { nodePool: 'default' }), undefined];
    events.nominate(launched, plans, [a, b, c]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent.map((e) => [e.reason, e.involvedObject.name, e.message])).toEqual([
      [EVENT_REASON_NOMINATED, 'a', 'Pod should schedule on: nodeclaim/default-abcde'],
      [EVENT_REASON_NOMINATED, 'b', 'Pod should schedule on: nodeclaim/default-abcde'],
    ]);
  });
});
