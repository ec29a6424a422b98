import { describe, expect, it } from 'vitest';
import { installGracefulShutdown, type SignalSource } from '../../src/app/shutdown.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';

describe('graceful shutdown', () => {
  class FakeSignals implements SignalSource {
    readonly handlers = new Map<string, Array<() => void>>();
    on(sig: 'SIGTERM' | 'SIGINT', fn: () => void): void {
      this.handlers.set(sig, [...(this.handlers.get(sig) ?? []), fn]);
    }
    off(sig: 'SIGTERM' | 'SIGINT', fn: () => void): void {
      this.handlers.set(sig, (this.handlers.get(sig) ?? []).filter((f) => f !== fn));
    }
    emit(sig: 'SIGTERM' | 'SIGINT'): void {
      for (const f of this.handlers.get(sig) ?? []) f();
    }
  }

  it('runs the steps in order on SIGTERM, then exits 0 and uninstalls', async () => {
    const signals = new FakeSignals();
    const order: string[] = [];
    const exits: number[] = [];
    const sd = installGracefulShutdown({
      clock: new VirtualClock(0),
      signals,
      exit: (c) => exits.push(c),
      steps: [
        { name: 'fence', run: () => void order.push('fence') },
        { name: 'controllers', run: async () => void order.push('controllers') },
        { name: 'release-lease', run: async () => void order.push('release-lease') },
      ],
    });
    signals.emit('SIGTERM');
    expect(await sd.done).toBe(0);
    expect(order).toEqual(['fence', 'controllers', 'release-lease']);
    expect(exits).toEqual([0]);
    expect(signals.handlers.get('SIGTERM')).toEqual([]);
  });

  it('stops at the deadline with exit 1, and a second signal exits at once', async () => {
    const signals = new FakeSignals();
    const clock = new VirtualClock(0);
    const exits: number[] = [];
    const sd = installGracefulShutdown({
      clock,
      signals,
      deadlineMs: 1000,
      exit: (c) => exits.push(c),
      steps: [{ name: 'hangs', run: () => new Promise<void>(() => undefined) }],
    });
    signals.emit('SIGTERM');
    signals.emit('SIGINT');
    expect(exits).toEqual([1]);
    await clock.runUntil(1000);
    expect(await sd.done).toBe(1);
  });
});
