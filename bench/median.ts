/** The middle of repeated timings (the upper middle for an even count): robust to one noisy run. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
