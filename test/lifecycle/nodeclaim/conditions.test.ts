import { describe, expect, it } from 'vitest';
import { withLifecycleConditions } from '../../../src/lifecycle/nodeclaim/conditions.js';
import type { Condition } from '../../../src/ports/cluster.js';

const T = '2026-01-01T00:00:00.000Z';
const LATER = '2026-01-01T00:05:00.000Z';
const c = (type: string, status: Condition['status'], reason = type): Condition => ({ type, status, reason, message: '', lastTransitionTime: T });
const get = (conditions: Condition[], type: string) => conditions.find((x) => x.type === type);

describe('NodeClaim lifecycle conditions as upstream shows them', () => {
  it('has Launched, Registered, Initialized from the start and Ready as their root', () => {
    const launching = withLifecycleConditions([c('Launched', 'Unknown', 'Launching')], T);
    expect(launching.map((x) => x.type).sort()).toEqual(['Initialized', 'Launched', 'Ready', 'Registered']);
    expect(get(launching, 'Registered')).toMatchObject({ status: 'Unknown', reason: 'AwaitingReconciliation' });
    expect(get(launching, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'ReconcilingDependents', message: 'Launched=Unknown, Registered=Unknown, Initialized=Unknown' });

    const failed = withLifecycleConditions(launching.map((x) => (x.type === 'Launched' ? c('Launched', 'False', 'QuotaExceeded') : x)), LATER);
    expect(get(failed, 'Ready')).toMatchObject({ status: 'False', reason: 'UnhealthyDependents', message: 'Launched=False, Registered=Unknown, Initialized=Unknown', lastTransitionTime: LATER });

    const ready = withLifecycleConditions([c('Launched', 'True'), c('Registered', 'True'), c('Initialized', 'True'), ...launching.filter((x) => x.type === 'Ready')], LATER);
    expect(get(ready, 'Ready')).toMatchObject({ status: 'True', reason: 'Ready', message: '', lastTransitionTime: LATER });
    // Nothing to change: the same array (callers skip the status write).
    expect(withLifecycleConditions(ready, LATER)).toBe(ready);
  });
});
