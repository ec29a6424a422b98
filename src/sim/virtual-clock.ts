import type { Clock, Random, TimerId } from '../ports/clock.js';

interface Timer {
  at: number;
  seq: number;
  id: TimerId;
  fn: () => void;
}

export interface VirtualClockOptions {
  /**
   * How `runUntil` lets the work a timer caused finish before the next timer fires:
   * - 'macrotask' (default): a turn of the event loop (setImmediate) after every timer, which
   *   drains promise reactions and process.nextTick callbacks alike, whatever started them;
   * - 'microtasks': a process.nextTick after every timer. Queued from inside a promise
   *   reaction (where `runUntil` always is after its first await), it runs only once V8 has
   *   drained every promise reaction, however deep the chains: the same order as a macrotask,
   *   at about a quarter of the cost (a quota-storm run fires ~21,000 timers, and the event-loop turns
   *   were ~5% of its CPU). It is only exact when nothing the timers run queues nextTick
   *   callbacks of its own (one queued before ours would let the next timer fire ahead of the
   *   reactions it caused): the simulator's in-memory ARM and cluster, not an SDK pipeline.
   *   A macrotask turn is still taken every YIELD_EVERY timers, so I/O (a live view, a worker's
   *   messages) is served during a long run.
   */
  drain?: 'macrotask' | 'microtasks';
}

/** With the 'microtasks' drain, a turn of the event loop after this many timers. */
const YIELD_EVERY = 256;

/**
 * Discrete-event virtual clock: timers fire in (time, insertion order), so a run is a
 * pure function of its seed. `runUntil` fires one timer at a time and lets the work it
 * caused settle before the next, so awaiting code sees the same interleaving every time.
 */
export class VirtualClock implements Clock {
  private heap: Timer[] = [];
  private seq = 0;
  private cancelled = new Set<TimerId>();
  private t: number;
  private readonly microtasks: boolean;

  constructor(startMs: number, options: VirtualClockOptions = {}) {
    this.t = startMs;
    this.microtasks = options.drain === 'microtasks';
  }

  now(): number {
    return this.t;
  }

  setTimer(delayMs: number, fn: () => void): TimerId {
    const id = ++this.seq;
    this.push({ at: this.t + Math.max(0, delayMs), seq: id, id, fn });
    return id;
  }

  clearTimer(id: TimerId): void {
    this.cancelled.add(id);
  }

  /** Time of the next live timer, or undefined when idle. */
  peek(): number | undefined {
    while (this.heap.length > 0 && this.cancelled.has(this.heap[0]!.id)) {
      this.cancelled.delete(this.pop()!.id);
    }
    return this.heap[0]?.at;
  }

  /** Fires every timer due at or before `until`, in order; returns how many fired. */
  async runUntil(until: number, onStep?: () => void): Promise<number> {
    let fired = 0;
    // Work started just before this call may not have reached its first timer yet.
    await settle();
    for (;;) {
      const next = this.peek();
      if (next === undefined || next > until) break;
      const timer = this.pop()!;
      this.t = Math.max(this.t, timer.at);
      timer.fn();
      fired++;
      await (this.microtasks && fired % YIELD_EVERY !== 0 ? afterMicrotasks() : settle());
      onStep?.();
    }
    this.t = Math.max(this.t, until);
    return fired;
  }

  get pending(): number {
    return this.heap.length - this.cancelled.size;
  }

  // Sifts move a hole along the path and write the timer once at its end: the same heap as
  // swapping at each level, without the swaps (every timer of a run passes through both).
  private push(timer: Timer): void {
    const h = this.heap;
    let i = h.length;
    h.push(timer);
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = h[p]!;
      if (less(parent, timer)) break;
      h[i] = parent;
      i = p;
    }
    h[i] = timer;
  }

  private pop(): Timer | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    const n = h.length;
    if (n > 0 && last) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        let m = l;
        let child = h[l]!;
        if (r < n && less(h[r]!, child)) {
          m = r;
          child = h[r]!;
        }
        if (!less(child, last)) break;
        h[i] = child;
        i = m;
      }
      h[i] = last;
    }
    return top;
  }
}

function less(a: Timer, b: Timer): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/**
 * Lets every promise continuation caused by a timer run before the next timer fires.
 * A macrotask boundary drains the microtask queue completely, whatever the depth of
 * the await chains, and nothing else is scheduled on the real event loop in a
 * simulation, so the order stays deterministic.
 */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Resolves once every promise reaction queued so far, and those they queue, has run (see VirtualClockOptions.drain). */
function afterMicrotasks(): Promise<void> {
  return new Promise((resolve) => process.nextTick(resolve));
}

/** Seeded PRNG (mulberry32): small, fast and good enough for fault schedules. */
export class SeededRandom implements Random {
  private state: number;
  /**
   * The seed is the whole 32-bit state (mulberry32 is fine from 0), so every seed from 0 to
   * 2^32 - 1 gives a different stream; callers validate that range (larger seeds would wrap).
   */
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An independent stream, so adding draws in one component does not shift another's. */
  fork(label: string): SeededRandom {
    let h = this.state;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
    return new SeededRandom(h);
  }
}
