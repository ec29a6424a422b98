/**
 * Runs `fn` on each item, at most `limit` at a time, started in the items' order. A limit of 1
 * (or less) is the plain sequential loop: the same calls, in the same order, one after another.
 */
export async function forEachBounded<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  if (limit <= 1 || items.length <= 1) {
    for (const item of items) await fn(item);
    return;
  }
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Tasks run at most `limit` at a time, in the order pushed, without the pusher waiting for them
 * (Karpenter's asynchronous event recorder). Tasks handle their own errors.
 */
export class BackgroundQueue {
  private readonly waiting: Array<() => Promise<void>> = [];
  private running = 0;

  constructor(private readonly limit: number) {}

  push(task: () => Promise<void>): void {
    this.waiting.push(task);
    this.pump();
  }

  private pump(): void {
    while (this.running < Math.max(1, this.limit) && this.waiting.length > 0) {
      const task = this.waiting.shift()!;
      this.running++;
      void task().finally(() => {
        this.running--;
        this.pump();
      });
    }
  }
}
