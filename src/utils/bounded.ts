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
