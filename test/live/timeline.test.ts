import { describe, expect, it } from 'vitest';
import { Timelines } from '../../src/live/timeline.js';
import { machineGraph } from '../../src/viz/machines.js';

const nic = machineGraph('nic');
const nodeclaim = machineGraph('nodeclaim');

describe('Timelines', () => {
  it('files transitions with causes, effects and the ARM calls on the actor’s own resources', () => {
    const t = new Timelines(new Map([['nic', nic], ['nodeclaim', nodeclaim]]));
    t.ingest({ t: 1, actor: 'nic/n1', kind: 'transition', to: 'pending' });
    t.ingest({ t: 2, actor: 'arm/n1', kind: 'world', event: 'nic.put', detail: '201' });
    t.ingest({ t: 2, actor: 'arm/someone-else', kind: 'world', event: 'nic.put', detail: '201' });
    t.ingest({ t: 3, actor: 'nic/n1', kind: 'effect', event: 'deleteNic', detail: 'ok' });
    t.ingest({ t: 3, actor: 'nic/n1', kind: 'transition', from: 'deleting', to: 'reaped' });
    const rows = t.timeline('nic/n1');
    expect(rows.map((r) => r.kind)).toEqual(['transition', 'arm', 'effect', 'transition']);
    expect(rows[3]?.cause).toBe('deleteNic ok (done: deleteNic)');
    expect(t.recentlyFinished()).toEqual(['nic/n1']);
  });

  it('stays bounded and scrubs secret-shaped details', () => {
    const t = new Timelines(new Map([['nic', nic]]), { perActor: 3, maxActors: 2 });
    for (let i = 0; i < 5; i++) t.ingest({ t: i, actor: 'nic/a', kind: 'effect', event: 'putNic', detail: `e${i}` });
    t.ingest({ t: 9, actor: 'nic/b', kind: 'effect', event: 'putNic', detail: 'Bearer abcdefghijklmnop' });
    t.ingest({ t: 9, actor: 'nic/c', kind: 'effect', event: 'putNic', detail: 'x' });
    expect(t.timeline('nic/a')).toEqual([]);
    expect(t.timeline('nic/b')[0]?.detail).toBe('Bearer [REDACTED]');
    expect(t.timeline('nic/c')).toHaveLength(1);
  });
});
