import { describe, it } from 'vitest';
import { assertLeakFreedom } from './leak-freedom.js';

describe('machine strategy is leak-free over generated worlds, fault schedules and crash points (2/2)', () => {
  it('settles with no leaked NIC, VM or disk, no stuck NodeClaim, no Failed VM left, no delete of an attached NIC (500 worlds)', async () => {
    await assertLeakFreedom(500, 4242, 1);
  }, 1_800_000);
});
