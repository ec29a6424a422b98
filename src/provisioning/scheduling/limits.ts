/** NodePool limits as a pass counts them: what a NodeClaim's options may hold against them. */
import type { Resources } from '../resources.js';
import type { Candidate } from './types.js';

export function capacityForLimits(capacity: Resources, limits: Resources): Resources {
  const out: Resources = {};
  for (const name in limits) out[name] = capacity[name] ?? 0;
  return out;
}

export function maxCapacity(options: readonly Candidate[], limits: Resources): Resources {
  const out: Resources = {};
  for (const name in limits) {
    let most = 0;
    for (const option of options) most = Math.max(most, option.capacity[name] ?? 0);
    out[name] = most;
  }
  return out;
}

/** fitsWithin(capacityForLimits(capacity, remaining), remaining) without the intermediate object. */
export function withinLimits(capacity: Resources, remaining: Resources): boolean {
  for (const name in remaining) {
    const amount = capacity[name] ?? 0;
    if (amount > 0 && amount > remaining[name]!) return false;
  }
  return true;
}
