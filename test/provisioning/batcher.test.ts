import { describe, expect, it } from 'vitest';
import { BATCH_IDLE_MS, BATCH_MAX_MS, ProvisioningBatcher } from '../../src/provisioning/batcher.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';

/** Karpenter's batcher semantics (pkg/controllers/provisioning/batcher.go): idle window, capped by a maximum. */
describe('ProvisioningBatcher', () => {
  const setup = (): { clock: VirtualClock; fired: number[]; batcher: ProvisioningBatcher } => {
    const clock = new VirtualClock(0);
    const fired: number[] = [];
    return { clock, fired, batcher: new ProvisioningBatcher({ clock, fire: () => fired.push(clock.now()) }) };
  };

  it('fires once, an idle period after the last trigger', async () => {
    const { clock, fired, batcher } = setup();
    batcher.trigger();
    await clock.runUntil(500);
    batcher.trigger();
    await clock.runUntil(800);
    batcher.trigger();
    await clock.runUntil(10_000);
    expect(fired).toEqual([800 + BATCH_IDLE_MS]);
  });

  it('fires at the window maximum while triggers keep coming, then opens a new window', async () => {
    const { clock, fired, batcher } = setup();
    for (let t = 0; t <= 15_000; t += 500) {
      await clock.runUntil(t);
      batcher.trigger();
    }
    await clock.runUntil(30_000);
    expect(fired).toEqual([BATCH_MAX_MS, 15_000 + BATCH_IDLE_MS]);
  });

  it('fires nothing once stopped', async () => {
    const { clock, fired, batcher } = setup();
    batcher.trigger();
    batcher.stop();
    batcher.trigger();
    await clock.runUntil(20_000);
    expect(fired).toEqual([]);
  });
});
