import { describe, it } from 'vitest';
import { assertLeakFreedom } from './leak-freedom.js';

describe('machine strategy is leak-free over generated worlds, fault schedules and crash points', () => {
  it('settles with no leaked NIC, VM or disk, no stuck NodeClaim, no Failed VM left, no delete of an attached NIC (1,500 worlds, on every core)', async () => {
    await assertLeakFreedom(1500, 20261122);
  }, 1_800_000);
});
