import { availableParallelism } from 'node:os';

/** Most worker threads a sweep starts, whatever is asked: each holds a whole simulation. */
export const MAX_WORKERS = 64;

export function defaultWorkers(): number {
  return Math.max(1, Math.min(MAX_WORKERS, availableParallelism()));
}
