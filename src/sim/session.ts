import type { Clock, TimerId } from '../ports/clock.js';
import type { VirtualClock } from './virtual-clock.js';

/**
 * A reply that never comes. A fresh promise each time: everything awaiting one shared
 * never-settling promise would stay reachable from it (its reactions), and with it every
 * dead incarnation's actors and closures (≈0.2 MB per crash).
 */
function never(): Promise<never> {
  return new Promise<never>(() => undefined);
}

/**
 * One incarnation of the controller process. Its ports and timers go through the session,
 * so killing it is exact: the call that was in flight reaches the world (ARM applies it),
 * but the process never sees the answer, its timers never fire and its promises never
 * settle — as when a pod is OOM-killed between sending a request and reading the reply.
 */
export class ControllerSession {
  alive = true;
  calls = 0;
  private crashAtCall: number | undefined;
  private readonly timers = new Set<TimerId>();
  readonly clock: Clock;

  constructor(
    readonly incarnation: number,
    private readonly world: VirtualClock,
    private readonly onCrash: (session: ControllerSession) => void,
    /**
     * False when the run schedules no crash at all: then nothing can ever be dropped, and the
     * ports and clock are handed out as they are (a wrapper per call and per timer was a few
     * percent of a simulation's CPU for nothing).
     */
    private readonly mayCrash = true,
  ) {
    if (!mayCrash) {
      this.clock = world;
      return;
    }
    this.clock = {
      now: () => world.now(),
      setTimer: (delayMs, fn) => {
        const id = world.setTimer(delayMs, () => {
          this.timers.delete(id);
          if (this.alive) fn();
        });
        this.timers.add(id);
        return id;
      },
      clearTimer: (id) => {
        this.timers.delete(id);
        world.clearTimer(id);
      },
    };
  }

  get crashArmed(): boolean {
    return this.crashAtCall !== undefined;
  }

  /** Crash right after the port call that is `skip` calls from now has been sent. */
  crashAfter(skip: number): void {
    if (!this.mayCrash) throw new Error('this session was built for a run without crashes');
    this.crashAtCall = this.calls + 1 + skip;
  }

  /** Wraps every async method of a port (each wrapper built once: ports are called on every step). */
  wrap<T extends object>(port: T): T {
    if (!this.mayCrash) return port;
    const wrappers = new Map<PropertyKey, unknown>();
    return new Proxy(port, {
      get: (target, prop, receiver) => {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        let wrapper = wrappers.get(prop);
        if (wrapper === undefined) wrappers.set(prop, (wrapper = this.wrapCall(target, value as (...a: unknown[]) => unknown)));
        return wrapper;
      },
    });
  }

  private wrapCall(target: object, fn: (...a: unknown[]) => unknown): (...args: unknown[]) => unknown {
    const onValue = (v: unknown): unknown => (this.alive ? v : never());
    const onError = (e: unknown): unknown => (this.alive ? Promise.reject(e) : never());
    return (...args: unknown[]) => {
      if (!this.alive) return never();
      const result: unknown = fn.apply(target, args);
      this.calls++;
      if (this.crashAtCall !== undefined && this.calls >= this.crashAtCall) this.kill();
      if (!(result instanceof Promise)) return result;
      return result.then(onValue, onError);
    };
  }

  kill(): void {
    if (!this.alive) return;
    this.alive = false;
    for (const id of this.timers) this.world.clearTimer(id);
    this.timers.clear();
    this.onCrash(this);
  }
}
